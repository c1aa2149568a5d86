#!/usr/bin/env python3
"""What the server spent on its clients over a run: its CPU (user + system, every thread) per delivered
frame, per connected client and second, and per move, the share of one core it used, and how long its
threads waited, runnable, for a core busy with other work (their scheduler statistics: other processes
on the server's core make it late without its CPU showing it).

With the cores the server and the bots were pinned to, it also says how busy each core was over the
run and how much of that was the server (the rest of the server's core: other processes).

  scripts/server_cost.py watch PID ADMIN_PORT [SERVER_CORE BOTS_CORE]
      reads the server now and prints "watching", then reads its connections twice a second until
      SIGTERM or SIGINT, then prints its table
"""
import os
import re
import signal
import sys
import threading
import time
import urllib.request

TICK = os.sysconf("SC_CLK_TCK")
MOVES = ("position", "walk")  # seed 002's move (3) and scenert's walk (1011)


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def wait_seconds(pid, proc="/proc"):
    """How long the threads of `pid` alive now have waited, runnable, for a core (schedstat's second field)."""
    total = 0
    task = os.path.join(proc, str(pid), "task")
    for tid in os.listdir(task):
        try:
            total += int(open(os.path.join(task, tid, "schedstat")).read().split()[1])
        except (FileNotFoundError, IndexError):  # the thread ended, or no scheduler statistics
            pass
    return total / 1e9


def core_ticks(proc="/proc"):
    """{core: (busy ticks, all ticks)} from /proc/stat (idle and iowait are not busy)."""
    out = {}
    for line in open(os.path.join(proc, "stat")):
        name, *values = line.split()
        if name.startswith("cpu") and name != "cpu":
            v = [int(x) for x in values]
            out[int(name[3:])] = (sum(v) - v[3] - v[4], sum(v))
    return out


def core_shares(before, after):
    """{core: share of its time busy} between two core_ticks readings."""
    return {c: round((after[c][0] - before[c][0]) / max(after[c][1] - before[c][1], 1), 2)
            for c in after if c in before}


def parse_metrics(text):
    """The counters the table needs, from the text of /metrics."""
    out = {}
    for name in ("frames_out_total", "bytes_out_total", "connections"):
        m = re.search(rf"^scenert_net_{name} (\d+)", text, re.M)
        out[name] = int(m.group(1)) if m else 0
    out["moves"] = sum(int(float(v)) for k, v in re.findall(
        r'^scenert_net_message_frames_in_total\{message="(\w+)"\} (\S+)', text, re.M) if k in MOVES)
    return out


def metrics(admin):
    return parse_metrics(urllib.request.urlopen(f"http://127.0.0.1:{admin}/metrics", timeout=10).read().decode())


def figures(cpu_s, seconds, frames, moves, mean_clients, wait_s=0.0):
    """The server's cost: ns of CPU per delivered frame, µs per connected client and second, µs per move,
    its share of one core (1.0: a core full) and its threads' wait for a core."""
    def per(total, n, unit):
        return round(total * unit / n, 1) if n else None
    return {
        "server_cpu_s": round(cpu_s, 2),
        "server_core_share": round(cpu_s / seconds, 2) if seconds else None,
        "server_wait_s": round(wait_s, 2),
        "cpu_ns_per_frame": per(cpu_s, frames, 1e9),
        "cpu_us_per_client_s": per(cpu_s, mean_clients * seconds, 1e6),
        "cpu_us_per_move": per(cpu_s, moves, 1e6),
        "frames": frames, "moves": moves, "mean_clients": round(mean_clients, 1), "seconds": round(seconds, 1),
    }


def table(f):
    cores = [f"  core {c} ({who}) {share} busy" + (
        f", {f['server_core_share']} of it the server" if who == "the server's" else "")
        for who, c, share in f.get("cores", [])]
    return "\n".join([
        "server cost  cpu {server_cpu_s} s over {seconds} s ({server_core_share} of a core); its threads waited "
        "{server_wait_s} s for a core (each other's turns included)".format(**f),
        "  per delivered frame       {} ns  ({} frames)".format(f["cpu_ns_per_frame"], f["frames"]),
        "  per connected client      {} us per second  ({} clients on average)".format(
            f["cpu_us_per_client_s"], f["mean_clients"]),
        "  per move                  {} us  ({} moves)".format(f["cpu_us_per_move"], f["moves"]),
    ] + cores)


class watch:
    """The server's counters from now on, its connections sampled twice a second on a thread."""

    def __init__(self, pid, admin, cores=None):
        """cores: (the server's core, the bots' core) when pinned."""
        self.pid, self.admin, self.cores, self.ticks0 = pid, admin, cores, core_ticks()
        self.t0, self.cpu0, self.m0 = time.time(), cpu_seconds(pid), metrics(admin)
        self.wait0 = wait_seconds(pid)
        self.samples, self.peak = [], 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()

    def _sample(self):
        while not self.done.wait(0.5):
            try:
                n = metrics(self.admin)["connections"]
            except OSError:
                continue
            self.samples.append(n)
            self.peak = max(self.peak, n)

    def finish(self):
        self.done.set()
        self.thread.join()
        cpu, m1, seconds = cpu_seconds(self.pid) - self.cpu0, metrics(self.admin), time.time() - self.t0
        mean = sum(self.samples) / len(self.samples) if self.samples else m1["connections"]
        return figures(cpu, seconds, m1["frames_out_total"] - self.m0["frames_out_total"],
                       m1["moves"] - self.m0["moves"], mean, wait_seconds(self.pid) - self.wait0) | {
            "cores": [(who, int(c), core_shares(self.ticks0, core_ticks()).get(int(c)))
                      for who, c in zip(("the server's", "the bots'"), self.cores or ())],
            "bytes_out": m1["bytes_out_total"] - self.m0["bytes_out_total"], "peak_clients": self.peak}


def main(argv):
    if len(argv) not in (4, 6) or argv[1] != "watch":
        print(__doc__, file=sys.stderr)
        return 2
    stop = threading.Event()
    for s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(s, lambda *_: stop.set())
    w = watch(int(argv[2]), int(argv[3]), argv[4:6] or None)
    print("watching", flush=True)  # the caller starts its load once this line is out
    while not stop.wait(0.2):
        pass
    print(table(w.finish()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
