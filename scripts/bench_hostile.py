#!/usr/bin/env python3
"""Hostile clients beside well-behaved ones: `scenert run examples/mmo.json` and `scenert bots` on this
machine's loopback, a clean run and a run with P percent hostile bots (`scenert bots --hostile P`: garbage
bytes, oversize or lying headers, half frames, floods, never reading, slow logins, guessed resume tokens,
junk module messages) of the same client count, interleaved, each on a fresh server.

For each run: the well-behaved bots' move-to-viewer p50/p99 and its ratio to the clean runs' median
p99 of the same count (the goal: at most 1.25x), how the hostile bots were cut (by the server's reason),
errors and view mismatches of the well-behaved bots, whether the server survived (it must exit 0 on
SIGTERM), and its RSS a third of the way into the bots' run and at their end (flat: no growth with the
hostile bots' cuts). Every run is bounded (--seconds); every process is stopped by its own id.
On two cores or more the server runs on core 0 and the bots on core 1, every thread checked
(scripts/pinning.py), so that a latency is the server's and not the bots' own lag; --no-pin shares them.

  scripts/bench_hostile.py [--counts 1000,2000] [--hostile 10] [--repeat 3] [--seconds 30]
                           [--scenert PATH] [--json FILE] [--no-pin]
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pinning  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024


def rss_kib(pid):
    return int(open(f"/proc/{pid}/statm").read().split()[1]) * PAGE_KIB


def start_server(a, clients):
    server = subprocess.Popen(pinning.pinned(
        [a.scenert, "run", a.table, "--tcp", "127.0.0.1:0", "--admin", "127.0.0.1:0",
         "--max-connections", str(clients + 100)], a.pin and a.pin[0]),
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    lines = []
    threading.Thread(target=lambda: lines.extend(iter(server.stderr.readline, "")), daemon=True).start()
    deadline = time.time() + 30
    while time.time() < deadline:
        text = "".join(lines)
        tcp = re.search(r"clients on tcp://127\.0\.0\.1:(\d+)", text)
        admin = re.search(r"admin endpoint http://127\.0\.0\.1:(\d+)", text)
        if tcp and admin:
            return server, int(tcp.group(1)), int(admin.group(1)), lines
        if server.poll() is not None:
            break
        time.sleep(0.05)  # polling the server's log for its ports, bounded by the deadline
    server.kill()
    sys.exit(f"bench_hostile: scenert run did not start: {''.join(lines)}")


def one_run(a, clients, hostile):
    server, tcp, admin, lines = start_server(a, clients)
    report = tempfile.mktemp(suffix=".json")
    rss = {}
    try:
        bots = subprocess.Popen(pinning.pinned(
            [a.scenert, "bots", f"127.0.0.1:{tcp}", "--clients", str(clients), "--seconds", str(a.seconds),
             "--seed", "1", "--quiet", "--report", report, "--verify-views", f"127.0.0.1:{admin}",
             "--hostile", str(hostile)], a.pin and a.pin[1]),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        started = time.time()
        pins = []
        while bots.poll() is None and time.time() - started < a.seconds + 180:
            t = time.time() - started
            if a.pin and not pins and t >= 3:  # every thread of both has started by now
                pins = [pinning.check("scenert run", server.pid, a.pin[0]),
                        pinning.check("scenert bots", bots.pid, a.pin[1])]
            key = "third" if t < a.seconds * 2 / 3 else "end"
            if t >= a.seconds / 3 and server.poll() is None and (key == "end" or "third" not in rss):
                rss[key] = rss_kib(server.pid)  # the last sample before the bots' end stays
            time.sleep(0.25)  # a sample four times a second, until the bots end (bounded above)
        if bots.poll() is None:
            bots.kill()
            sys.exit("bench_hostile: scenert bots did not end in time")
        err = bots.stderr.read()
        alive = server.poll() is None
        r = json.load(open(report))
        os.unlink(report)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            code = server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            code = "hung"
    mv, h = r["move_to_viewer"], r["hostile"]
    return {
        "clients": clients, "hostile_percent": hostile, "bots_exit": bots.returncode,
        "pinned": bool(a.pin), "pinning": [line for _, line in pins], "pinning_ok": all(ok for ok, _ in pins),
        "bots_warnings": r.get("own_load", {}).get("warnings", []),
        "server_alive_at_end": alive, "server_exit": code,
        "well_behaved": h.get("well_behaved"), "logged_in": r["logged_in"],
        "move_p50_ms": mv.get("p50_ms"), "move_p99_ms": mv.get("p99_ms"), "deliveries": mv.get("count"),
        "errors": r["errors"]["count"], "error_examples": r["errors"]["examples"][:3],
        "view_mismatches": r["views"]["mismatches"], "view_examples": r["views"]["final"].get("examples", [])[:3],
        "hostile_bots": h.get("bots", 0), "hostile_unexpected": h.get("unexpected", 0),
        "hostile_cut": {kind: o["reasons"] for kind, o in h.get("by_kind", {}).items()},
        "rss_mib_third": round(rss.get("third", 0) / 1024, 1), "rss_mib_end": round(rss.get("end", 0) / 1024, 1),
        "bots_stderr": err.strip()[-300:],
    }


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--counts", default="1000,2000")
    p.add_argument("--hostile", type=float, default=10)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--seconds", type=float, default=30)
    p.add_argument("--scenert", default=f"{ROOT}/build/release/apps/scenert")
    p.add_argument("--json", help="write every run's figures to this file")
    p.add_argument("--no-pin", action="store_true", help="let the server and the bots share every core")
    a = p.parse_args()
    a.pin = None if a.no_pin else pinning.plan(pinning.usable_cores())
    print(pinning.announce(a.pin) if not a.no_pin else "not pinned (--no-pin)", flush=True)
    a.table = f"{ROOT}/examples/mmo.json"
    runs = []
    for n in (int(c) for c in a.counts.split(",")):
        for _ in range(a.repeat):
            for hostile in (0, a.hostile):  # interleaved: the machine's drift hits both alike
                r = one_run(a, n, hostile)
                runs.append(r)
                hidden = ("bots_stderr", "hostile_cut", "error_examples", "view_examples", "pinning", "bots_warnings")
                print(json.dumps({k: v for k, v in r.items() if k not in hidden}), flush=True)
                for line in r["pinning"] + [f"warning: {w}" for w in r["bots_warnings"]]:
                    print(f"  {n} clients, {hostile}% hostile: {line}", flush=True)
                if r["errors"]:
                    print(f"  errors, e.g.: {r['error_examples']}", flush=True)
                if r["view_mismatches"]:
                    print(f"  view mismatches, e.g.: {r['view_examples']}", flush=True)
    for n in {r["clients"] for r in runs}:
        clean = [r["move_p99_ms"] for r in runs if r["clients"] == n and r["hostile_percent"] == 0]
        base = statistics.median(clean) if clean else None
        for r in runs:
            if r["clients"] == n and base:
                r["p99_vs_clean"] = round(r["move_p99_ms"] / base, 2)
    if a.json:
        json.dump(runs, open(a.json, "w"), indent=1)
    cols = ("clients", "hostile_percent", "logged_in", "move_p50_ms", "move_p99_ms", "p99_vs_clean", "errors",
            "view_mismatches", "hostile_bots", "hostile_unexpected", "server_exit", "rss_mib_third", "rss_mib_end")
    print(" ".join(f"{c:>17}" for c in cols))
    for r in runs:
        print(" ".join(f"{(round(r.get(c), 1) if isinstance(r.get(c), float) else r.get(c))!s:>17}" for c in cols))


if __name__ == "__main__":
    main()
