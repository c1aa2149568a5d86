#!/usr/bin/env python3
"""The front under real clients: `scenert run examples/mmo.json` and `scenert bots` on this machine's
loopback, one run per (protocol, client count), and a table of what the server did for them.

For each run: moves per second the bots sent, frames and bytes per second the server delivered, the
CPU seconds (user + system, every thread) the server and the bots used, the server's CPU per delivered
frame and its RSS growth per connection, move-to-viewer p50/p99/max, logins that timed out, and view
mismatches (checked at the end). With --idle, the bots log in and stay still (no moves, chats or
requests): RSS per idle connection. With --ws, the clients connect over WebSocket (`scenert run --ws`,
`scenert bots --ws`) instead of TCP. With --frame-rate F, the server runs a copy of the table whose
scenes all tick F times a second (a move waits for its line's next tick, so the table's 10 Hz alone
puts move-to-viewer p50 near 50 ms).
Every run is bounded (--seconds, then SIGTERM); every process is stopped by its own id.

  scripts/bench_clients.py [--counts 1000,5000,10000] [--seconds 20] [--hz 10] [--io-threads 2]
                           [--protocols scenert,seed002] [--idle] [--ws] [--frame-rate F]
                           [--scenert PATH] [--json FILE]
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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICK = os.sysconf("SC_CLK_TCK")
PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024
# Guests land on the town's entry point (272, 240): seed 002's bots walk in a box beside it.
SEED002_BOX = "273,200,320,239"


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def rss_kib(pid):
    return int(open(f"/proc/{pid}/statm").read().split()[1]) * PAGE_KIB


def metrics(admin):
    text = urllib.request.urlopen(f"http://127.0.0.1:{admin}/metrics", timeout=10).read().decode()
    out = {}
    for name in ("frames_out_total", "bytes_out_total", "connections"):
        m = re.search(rf"^scenert_net_{name} (\d+)", text, re.M)
        out[name] = int(m.group(1)) if m else 0
    return out


def one_run(a, protocol, clients, idle):
    transport = "ws" if a.ws else "tcp"
    server = subprocess.Popen(
        [a.scenert, "run", a.table, f"--{transport}", "127.0.0.1:0", "--admin", "127.0.0.1:0",
         "--io-threads", str(a.io_threads), "--max-connections", str(clients + 100)],
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
        rss0, cpu0, m0 = rss_kib(server.pid), cpu_seconds(server.pid), metrics(admin)
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
        peak = {"rss": rss0, "connections": 0}

        def sample():  # the server's RSS and connections at their peak, twice a second
            while bot.poll() is None:
                peak["rss"] = max(peak["rss"], rss_kib(server.pid))
                try:
                    peak["connections"] = max(peak["connections"], metrics(admin)["connections"])
                except OSError:
                    pass
                time.sleep(0.5)

        children0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        bot = subprocess.Popen(bots, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        try:
            _, err = bot.communicate(timeout=a.seconds + 180)
        except subprocess.TimeoutExpired:
            bot.kill()
            sys.exit("bench_clients: scenert bots did not end in time")
        sampler.join()
        children1 = resource.getrusage(resource.RUSAGE_CHILDREN)  # the bots (the server is not reaped yet)
        bots_cpu = (children1.ru_utime + children1.ru_stime) - (children0.ru_utime + children0.ru_stime)
        cpu, m1 = cpu_seconds(server.pid) - cpu0, metrics(admin)
        r = json.load(open(report))
        os.unlink(report)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
    frames = m1["frames_out_total"] - m0["frames_out_total"]
    mv = r["move_to_viewer"]
    return {
        "protocol": protocol, "transport": transport, "clients": clients, "idle": idle, "io_threads": a.io_threads,
        "bots_exit": bot.returncode, "connected": r["connected"], "logged_in": r["logged_in"],
        "moves_per_s": round(r["moves_sent"] / a.seconds),
        "frames_per_s": round(frames / a.seconds),
        "mb_per_s": round((m1["bytes_out_total"] - m0["bytes_out_total"]) / a.seconds / 1e6, 1),
        "server_cpu_s": round(cpu, 2), "bots_cpu_s": round(bots_cpu, 2), "cpu_ns_per_frame": round(cpu * 1e9 / frames) if frames else None,
        "rss_kib_per_connection": round((peak["rss"] - rss0) / peak["connections"], 1) if peak["connections"] else None,
        "peak_connections": peak["connections"],
        "login_p99_ms": r["login"].get("p99_ms"), "move_p50_ms": mv.get("p50_ms"), "move_p99_ms": mv.get("p99_ms"), "move_max_ms": mv.get("max_ms"),
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
    a = p.parse_args()
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
    if a.frame_rate:
        os.unlink(a.table)
    if a.json:
        json.dump(runs, open(a.json, "w"), indent=1)
    cols = ("protocol", "transport", "clients", "logged_in", "login_p99_ms", "moves_per_s", "frames_per_s", "mb_per_s",
            "server_cpu_s", "bots_cpu_s", "cpu_ns_per_frame",
            "rss_kib_per_connection", "move_p50_ms", "move_p99_ms", "move_max_ms", "view_mismatches")
    print(" ".join(f"{c:>14}" for c in cols))
    for r in runs:
        print(" ".join(f"{(round(r[c], 1) if isinstance(r[c], float) else r[c])!s:>14}" for c in cols))


if __name__ == "__main__":
    main()
