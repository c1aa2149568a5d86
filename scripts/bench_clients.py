#!/usr/bin/env python3
"""The front under real clients: `scenert run examples/mmo.json` and `scenert bots` on this machine's
loopback, one run per (protocol, client count), and a table of what the server did for them.

With two cores or more the server runs alone on core 0 and the bots on core 1 (`taskset`; every
thread of both read back from /proc and checked), so that a latency is the server's; on one core the
table says it is not pinned.

For each run: moves per second the bots sent, frames and bytes per second the server delivered, the
CPU seconds (user + system, every thread) the server and the bots used, the server's CPU per delivered
frame, per connected client and second, and per move, the share of its core it used, its RSS growth
per connection, move-to-viewer p50/p99/max, the bots' own lag (p99 of a frame waiting in their process,
and of their loops running late) and how busy their core was (a warning when the figures include their
own lag), logins that timed out, and view mismatches (checked at the end). With --idle, the bots log in and stay still (no moves, chats or
requests): RSS per idle connection. With --ws, the clients connect over WebSocket (`scenert run --ws`,
`scenert bots --ws`) instead of TCP. With --frame-rate F, the server runs a copy of the table whose
scenes all tick F times a second (a move waits for its line's next tick, so the table's 10 Hz alone
puts move-to-viewer p50 near 50 ms).
Every run is bounded (--seconds, then SIGTERM); every process is stopped by its own id.

  scripts/bench_clients.py [--counts 1000,5000,10000] [--seconds 20] [--hz 10] [--io-threads 2]
                           [--protocols scenert,seed002] [--idle] [--ws] [--frame-rate F]
                           [--scenert PATH] [--json FILE] [--no-pin]
"""
import argparse
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pinning  # noqa: E402
import server_cost  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024
# Guests land on the town's entry point (272, 240): seed 002's bots walk in a box beside it.
SEED002_BOX = "273,200,320,239"


def rss_kib(pid):
    return int(open(f"/proc/{pid}/statm").read().split()[1]) * PAGE_KIB


metrics = server_cost.metrics


def wait_for_threads(pid, n, seconds=5):
    """Until process `pid` has `n` threads (its workers started), `seconds` at most."""
    deadline = time.time() + seconds
    while time.time() < deadline and len(os.listdir(f"/proc/{pid}/task")) < n:
        time.sleep(0.05)


def one_run(a, protocol, clients, idle):
    transport = "ws" if a.ws else "tcp"
    server = subprocess.Popen(pinning.pinned(
        [a.scenert, "run", a.table, f"--{transport}", "127.0.0.1:0", "--admin", "127.0.0.1:0",
         "--io-threads", str(a.io_threads), "--max-connections", str(clients + 100)], a.pin and a.pin[0]),
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    lines = []
    threading.Thread(target=lambda: lines.extend(iter(server.stderr.readline, "")), daemon=True).start()
    try:
        deadline = time.time() + 20
        tcp = admin = None
        while time.time() < deadline and not (tcp and admin):
            text = "".join(lines)
            tcp = re.search(rf"clients on {transport}://127\.0\.0\.1:(\d+)", text)
            admin = re.search(r"admin endpoint http://127\.0\.0\.1:(\d+)", text)
            time.sleep(0.05)
        if not (tcp and admin):
            sys.exit(f"bench_clients: scenert run did not start: {''.join(lines)}")
        tcp, admin = int(tcp.group(1)), int(admin.group(1))
        rss0 = rss_kib(server.pid)
        report = tempfile.mktemp(suffix=".json")
        bots = [a.scenert, "bots", f"127.0.0.1:{tcp}", "--clients", str(clients), "--seconds", str(a.seconds),
                "--threads", "2", "--seed", "1", "--quiet", "--report", report,
                "--verify-views", f"127.0.0.1:{admin}", "--protocol", protocol]
        if protocol == "seed002":
            bots += ["--box", SEED002_BOX]
        if a.ws:
            bots += ["--ws"]
        if idle:
            bots += ["--move-hz", "0.01", "--chat-every", "0", "--act-every", "0"]
        else:
            bots += ["--move-hz", str(a.hz)]
        peak = {"rss": rss0}

        def sample():  # the server's RSS at its peak, twice a second
            while bot.poll() is None:
                peak["rss"] = max(peak["rss"], rss_kib(server.pid))
                time.sleep(0.5)

        children0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cost = server_cost.watch(server.pid, admin, a.pin)
        bot = subprocess.Popen(pinning.pinned(bots, a.pin and a.pin[1]), stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        pins = []
        if a.pin:
            wait_for_threads(bot.pid, 3)
            pins.append(pinning.check("scenert bots", bot.pid, a.pin[1]))
        try:
            _, err = bot.communicate(timeout=a.seconds + 180)
        except subprocess.TimeoutExpired:
            bot.kill()
            sys.exit("bench_clients: scenert bots did not end in time")
        sampler.join()
        spent = cost.finish()
        if a.pin:  # the server's threads once every one has started
            pins.append(pinning.check("scenert run", server.pid, a.pin[0]))
        children1 = resource.getrusage(resource.RUSAGE_CHILDREN)  # the bots (the server is not reaped yet)
        bots_cpu = (children1.ru_utime + children1.ru_stime) - (children0.ru_utime + children0.ru_stime)
        r = json.load(open(report))
        os.unlink(report)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
    mv, own = r["move_to_viewer"], r.get("own_load", {})
    return {
        "protocol": protocol, "transport": transport, "clients": clients, "idle": idle, "io_threads": a.io_threads,
        "pinned": bool(a.pin), "pinning": [line for _, line in pins], "pinning_ok": all(ok for ok, _ in pins),
        "bots_exit": bot.returncode, "connected": r["connected"], "logged_in": r["logged_in"],
        "moves_per_s": round(r["moves_sent"] / a.seconds),
        "frames_per_s": round(spent["frames"] / a.seconds),
        "mb_per_s": round(spent["bytes_out"] / a.seconds / 1e6, 1),
        "server_cpu_s": spent["server_cpu_s"], "server_core": spent["server_core_share"],
        "server_wait_s": spent["server_wait_s"],
        "core_busy": {who: share for who, _, share in spent["cores"]},
        "server_core_busy": next((share for who, _, share in spent["cores"] if who == "the server's"), None),
        "bots_cpu_s": round(bots_cpu, 2),
        "cpu_ns_per_frame": spent["cpu_ns_per_frame"], "cpu_us_per_client_s": spent["cpu_us_per_client_s"],
        "cpu_us_per_move": spent["cpu_us_per_move"], "mean_clients": spent["mean_clients"],
        "rss_kib_per_connection": round((peak["rss"] - rss0) / spent["peak_clients"], 1) if spent["peak_clients"] else None,
        "peak_connections": spent["peak_clients"],
        "login_p99_ms": r["login"].get("p99_ms"), "move_p50_ms": mv.get("p50_ms"), "move_p99_ms": mv.get("p99_ms"), "move_max_ms": mv.get("max_ms"),
        "bots_read_lag_p99_ms": own.get("read_lag", {}).get("p99_ms"),
        "bots_loop_lag_p99_ms": own.get("loop_lag", {}).get("p99_ms"),
        "bots_busy": own.get("busy_share"), "bots_warnings": own.get("warnings", []),
        "deliveries": mv.get("count"), "view_mismatches": r["views"]["mismatches"],
        "bots_stderr": err.strip()[-300:],
    }


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--counts", default="1000,5000,10000")
    p.add_argument("--seconds", type=float, default=20)
    p.add_argument("--hz", type=float, default=10)
    p.add_argument("--io-threads", type=int, default=2)
    p.add_argument("--protocols", default="scenert,seed002")
    p.add_argument("--idle", action="store_true")
    p.add_argument("--ws", action="store_true", help="clients over WebSocket")
    p.add_argument("--scenert", default=f"{ROOT}/build/release/apps/scenert")
    p.add_argument("--frame-rate", type=float, help="every scene of the table ticks this often")
    p.add_argument("--json", help="write every run's figures to this file")
    p.add_argument("--no-pin", action="store_true", help="let the server and the bots share every core")
    a = p.parse_args()
    a.pin = None if a.no_pin else pinning.plan(pinning.usable_cores())
    print(pinning.announce(a.pin) if not a.no_pin else "not pinned (--no-pin)", flush=True)
    a.table = f"{ROOT}/examples/mmo.json"
    if a.frame_rate:
        table = json.load(open(a.table))
        for scene in table["scenes"]:
            scene["frame_rate"] = a.frame_rate
        a.table = tempfile.mktemp(suffix=".json")
        json.dump(table, open(a.table, "w"))
    runs = []
    for protocol in a.protocols.split(","):
        for n in (int(c) for c in a.counts.split(",")):
            r = one_run(a, protocol, n, a.idle)
            runs.append(r)
            print(json.dumps({k: v for k, v in r.items() if k != "bots_stderr"}), flush=True)
            for line in r["pinning"] + [f"warning: {w}" for w in r["bots_warnings"]]:
                print(f"  {protocol} {n}: {line}", flush=True)
    if a.frame_rate:
        os.unlink(a.table)
    if a.json:
        json.dump(runs, open(a.json, "w"), indent=1)
    cols = ("protocol", "transport", "clients", "logged_in", "login_p99_ms", "moves_per_s", "frames_per_s", "mb_per_s",
            "server_cpu_s", "server_core", "server_core_busy", "server_wait_s", "cpu_ns_per_frame", "cpu_us_per_client_s", "cpu_us_per_move",
            "bots_cpu_s", "bots_busy", "bots_read_lag_p99_ms", "bots_loop_lag_p99_ms",
            "rss_kib_per_connection", "move_p50_ms", "move_p99_ms", "move_max_ms", "view_mismatches")
    print(" ".join(f"{c:>14}" for c in cols))
    for r in runs:
        print(" ".join(f"{(round(r[c], 2) if isinstance(r[c], float) else r[c])!s:>14}" for c in cols))


if __name__ == "__main__":
    main()
