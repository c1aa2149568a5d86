#!/usr/bin/env python3
"""Server and bots on cores of their own, so that a latency the bots measure is the server's.

On a machine with two cores or more the server runs on core 0 and the bots on core 1 (`taskset -c`);
every thread of each process (oneTBB's workers and the I/O threads included, which inherit the mask
of the thread that made them) is then read back from /proc/PID/task/*/status (Cpus_allowed_list) and
checked. On one core nothing is pinned, and the scripts say so.

  scripts/pinning.py plan                 prints "SERVER_CORES BOTS_CORES", or nothing on one core
  scripts/pinning.py check NAME PID CORES prints NAME's threads and their cores; exits 1 when a thread
                                          may run elsewhere (or the process is gone)
"""
import os
import sys

SERVER_CORE, BOTS_CORE = "0", "1"


def plan(cores):
    """(server cores, bots cores) for a machine with `cores` usable cores, or None: nothing pinned."""
    return (SERVER_CORE, BOTS_CORE) if cores >= 2 else None


def usable_cores():
    return len(os.sched_getaffinity(0))


def pinned(cmd, cores):
    """`cmd` run on `cores` (taskset), or as it is when cores is None."""
    return cmd if cores is None else ["taskset", "-c", cores] + list(cmd)


def announce(p):
    return ("server pinned to core {}, bots to core {}".format(*p) if p else
            "not pinned: one core, the server and the bots share it (latency figures include the bots' own lag)")


def parse_cpu_list(text):
    """'0-2,5' -> {0, 1, 2, 5}."""
    cores = set()
    for part in text.strip().split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        cores.update(range(int(lo), int(hi or lo) + 1))
    return cores


def threads_of(pid, proc="/proc"):
    """{tid: (thread name, set of cores it may run on)} of every thread of process `pid`."""
    out = {}
    task = os.path.join(proc, str(pid), "task")
    for tid in sorted(os.listdir(task), key=int):
        try:
            fields = dict(line.split(":", 1) for line in open(os.path.join(task, tid, "status")) if ":" in line)
        except FileNotFoundError:  # the thread ended while being read
            continue
        out[int(tid)] = (fields["Name"].strip(), parse_cpu_list(fields["Cpus_allowed_list"]))
    return out


def stray_threads(threads, cores):
    """The threads (tid, name, their cores) that may run outside `cores` (a cpu list such as '0')."""
    want = parse_cpu_list(cores)
    return [(tid, name, allowed) for tid, (name, allowed) in threads.items() if allowed != want]


def check(name, pid, cores, proc="/proc"):
    """(ok, one line saying so) for process `pid` pinned to `cores`."""
    try:
        threads = threads_of(pid, proc)
    except FileNotFoundError:
        return False, f"{name} (pid {pid}): gone before its threads were read"
    stray = stray_threads(threads, cores)
    names = sorted({n for n, _ in threads.values()})
    if stray:
        shown = ", ".join(f"{n} ({tid}) on {sorted(c)}" for tid, n, c in stray[:5])
        return False, f"{name} (pid {pid}): {len(stray)} of {len(threads)} threads not on core {cores}: {shown}"
    return True, f"{name} (pid {pid}): all {len(threads)} threads on core {cores} ({', '.join(names)})"


def main(argv):
    if argv[1:2] == ["plan"]:
        p = plan(usable_cores())
        if p:
            print(*p)
        return 0
    if len(argv) == 5 and argv[1] == "check":
        ok, line = check(argv[2], int(argv[3]), argv[4])
        print(line)
        return 0 if ok else 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
