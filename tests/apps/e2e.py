#!/usr/bin/env python3
"""End-to-end tests of the `scenert` binary: e2e.py CASE SCENERT SOURCE_DIR WORK_DIR."""
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def check(cond, message):
    if not cond:
        fail(message)


def run(*args, timeout=60):
    p = subprocess.run([SCENERT, *args], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def get(port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def case_run_admin():
    p, lines, wait_for = start_run("--admin", "127.0.0.1:0")
    port = int(wait_for(r"admin endpoint http://127\.0\.0\.1:(\d+)").group(1))
    time.sleep(0.5)  # a few snapshots and ticks
    for path, want in (("/livez", "ok"), ("/readyz", "ready"), ("/healthz", "ok")):
        status, body = get(port, path)
        check(status == 200 and want in body, f"{path}: {status} {body!r}")
    status, metrics = get(port, "/metrics")
    check(status == 200, f"/metrics: {status}")
    for family in ('scenert_scene_open_lines{scene="1001",kind="town"} 1', "scenert_tick_duration_seconds_bucket",
                   "scenert_scene_lines_opened_total", "scenert_world_players 0"):
        check(family in metrics, f"/metrics lacks {family}")
    promtool = subprocess.run(["promtool", "check", "metrics"], input=metrics, capture_output=True, text=True)
    check(promtool.returncode == 0, f"promtool rejects /metrics: {promtool.stdout}{promtool.stderr}")
    status, body = get(port, "/scenes")
    check(status == 200, f"/scenes: {status}")
    scenes = json.loads(body)["scenes"]
    by_id = {s["id"]: s for s in scenes}
    check(by_id[1001]["kind"] == "town" and by_id[1001]["open_lines"] == 1, f"/scenes town: {by_id.get(1001)}")
    check(by_id[3002]["structure"] == "group" and by_id[3002]["slots_per_group"] == 20, "/scenes dungeon")
    check(by_id[1001]["lines"][0]["players"] == 0, "/scenes lines")
    check(len(by_id[1001]["spaces"]) == 2, "/scenes spaces bound to the town")
    check(by_id[1001]["lines"][0]["running_phases"] == [], "/scenes running phases of a town line")
    started = time.time()
    p.send_signal(signal.SIGTERM)
    try:
        code = p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        p.kill()
        fail("run did not exit within 5 s of SIGTERM")
    p.reader.join(timeout=2)
    text = "".join(lines)
    check(code == 0, f"run exited {code}: {text}")
    check("stopping" in text and "stopped in" in text, f"no stop lines: {text}")
    m = re.search(r"(\d+) lines opened and (\d+) closed", text)
    check(m and m.group(1) == m.group(2) and int(m.group(1)) >= 3, f"every opened line closed: {text}")
    check("line 1 opened" in text, f"no line-opened log line: {text}")
    print(f"run: admin on port {port}, clean exit {time.time() - started:.2f} s after SIGTERM")


def start_run(*extra):
    """Starts `scenert run` on the example table; returns the process, its stderr lines and a
    function that waits for a regular expression in them."""
    p = subprocess.Popen([SCENERT, "run", f"{SRC}/examples/mmo.json", "--workers", "2", *extra],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(iter(p.stderr.readline, "")), daemon=True)
    reader.start()
    p.reader = reader  # join it once the process ended: the last lines are read

    def wait_for(pattern, seconds=10):
        deadline = time.time() + seconds
        while time.time() < deadline:
            for line in list(lines):
                m = re.search(pattern, line)
                if m:
                    return m
            time.sleep(0.05)
        p.kill()
        fail(f"no {pattern!r} on stderr: {''.join(lines)}")
    return p, lines, wait_for


class Seed002Client:
    """A client of seed 002's protocol: 8-byte frames, ids 1/2/3 in, 200/201/202 out."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.buf = b""

    def next(self, seconds=5):
        deadline = time.time() + seconds
        while time.time() < deadline:
            if len(self.buf) >= 8:
                n, i = struct.unpack("<II", self.buf[:8])
                if len(self.buf) >= 8 + n:
                    payload, self.buf = self.buf[8:8 + n], self.buf[8 + n:]
                    return i, payload
            self.sock.settimeout(max(0.01, deadline - time.time()))
            try:
                d = self.sock.recv(65536)
            except socket.timeout:
                continue
            if not d:
                return None, b""
            self.buf += d
        fail("no frame within the time")

    def wait(self, want_id, seconds=5):
        while True:
            i, payload = self.next(seconds)
            check(i is not None, f"connection closed while waiting for frame {want_id}")
            if i == want_id:
                return payload
            self.ids.append(i)

    def send(self, i, payload):
        self.sock.sendall(struct.pack("<II", len(payload), i) + payload)

    ids = None


def case_run_tcp():
    p, lines, wait_for = start_run("--tcp", "127.0.0.1:0", "--admin", "127.0.0.1:0")
    port = int(wait_for(r"clients on tcp://127\.0\.0\.1:(\d+)").group(1))
    admin = int(wait_for(r"admin endpoint http://127\.0\.0\.1:(\d+)").group(1))
    a = Seed002Client(port)
    a.ids = []
    a.wait(1)
    a.wait(202)
    b = Seed002Client(port)
    b.ids = []
    b.wait(1)
    b.wait(202)
    a.wait(200)  # b appeared next to a
    # b walks far away (Position X, Z as fields 1 and 3): a loses it from view.
    b.send(3, b"\x0d" + struct.pack("<f", 5.5) + b"\x1d" + struct.pack("<f", 5.5))
    gone = a.wait(201)
    check(len(gone) >= 2 and gone[0] == 0x08, f"201 carries the pid: {gone!r}")
    # World chat (Talk Content=1) reaches a as 200 Tp 1.
    b.send(2, b"\x0a\x02hi")
    chat = a.wait(200)
    check(b"\x10\x01" in chat and b"hi" in chat, f"chat as 200 Tp 1: {chat!r}")
    for c in (a, b):
        check(all(i < 1000 for i in c.ids), f"a seed 002 client got ids it does not know: {c.ids}")
    status, metrics = get(admin, "/metrics")
    check(status == 200, f"/metrics: {status}")
    for family in ("scenert_net_connections 2", "scenert_net_connections_accepted_total 2",
                   "scenert_net_frames_in_total 2", "scenert_net_writes_total"):
        check(family in metrics, f"/metrics lacks {family}: {metrics}")
    promtool = subprocess.run(["promtool", "check", "metrics"], input=metrics, capture_output=True, text=True)
    check(promtool.returncode == 0, f"promtool rejects /metrics: {promtool.stdout}{promtool.stderr}")
    started = time.time()
    p.send_signal(signal.SIGTERM)
    i, payload = a.next()
    check(i == 1007 and b"shutting down" in payload, f"a goodbye before the close: {i} {payload!r}")
    try:
        code = p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        p.kill()
        fail("run did not exit within 5 s of SIGTERM with clients connected")
    check(code == 0, f"run exited {code}: {''.join(lines)}")
    print(f"run --tcp: two seed 002 clients saw each other, chatted, got a goodbye; exit 0 "
          f"{time.time() - started:.2f} s after SIGTERM")


def loadtest(table, seed, report, *extra):
    # A short idle grace so that lines also close (and get reused) within the run.
    return run("loadtest", table, "--players", "300", "--seconds", "4", "--seed", str(seed), "--report", report,
               "--idle-grace", "200", *extra)


def check_report(path, expect_line_full=False):
    r = json.load(open(path))
    inv = r["invariants"]
    check(inv["checked"] >= 3 and inv["violations"] == [], f"invariants: {inv}")
    check(r["enters"] == r["leaves"] + r["online_at_end"], f"enters != leaves + online: {r}")
    req = r["requests"]
    kinds = ("enter", "move", "transfer", "join_team", "enter_instance", "enter_phase", "leave_phase", "leave")
    check(req["total"] == sum(req[k] for k in kinds),
          f"request kinds do not add up: {req}")
    answered = r["answers"]["ok"] + sum(r["answers"]["errors"].values())
    check(answered == req["total"], f"answers {answered} != requests {req['total']}")
    check(r["line_full"] == sum(s["line_full"] for s in r["scenes"]), "line_full per scene")
    check(r["lines_opened"] >= r["lines_closed"], "lines closed more than opened")
    for key in ("p50_ms", "p99_ms", "max_ms"):
        check(key in r["tick"] and key in r["lateness"], "tick/lateness percentiles")
    if expect_line_full:
        check(r["line_full"] > 0 and r["answers"]["errors"].get("line_full", 0) > 0, f"no line_full: {r}")
        for s in r["scenes"]:
            check(s["max_open_lines"] <= 1 and s["max_players_on_line"] <= 1, f"overflow scene: {s}")
    return r


def case_loadtest():
    table = f"{SRC}/examples/mmo.json"
    code, out, err = loadtest(table, 7, f"{WORK}/a.json", "--threshold", "tick_p99_ms<100000")
    check(code == 0, f"loadtest exited {code}: {out}{err}")
    check("(all held)" in out and "1001 Stormhold" in out, f"summary: {out}")
    a = check_report(f"{WORK}/a.json")
    check(a["lines_closed"] > 0, f"no line closed within the run: {a['scenes']}")
    check(a["requests"]["enter_phase"] > 0, f"no phase requests: {a['requests']}")
    town = next(s for s in a["scenes"] if s["id"] == 1001)
    check(town["max_phases_on_line"] > 0, f"no phase ran on a town line: {town}")
    check(a["requests"]["enter_instance"] > 0, f"no party entered a private instance: {a['requests']}")
    for s in a["scenes"]:
        if s["instances"] == "shared":
            continue
        # A party always gets an instance of its own unless max_lines are open.
        check(s["line_full"] == s["line_full_at_max_lines"], f"private line_full below max_lines: {s}")
        check(0 < s["instances_opened"] <= s["party_runs"], f"instances per party run: {s}")
    check(a["requests"]["enter"] == 300 and a["seed"] == 7 and a["players"] == 300, "report header")
    code, out, err = loadtest(table, 7, f"{WORK}/b.json", "--threshold", "requests_per_second>1e12")
    check(code == 3, f"a missed threshold must exit 3, got {code}")
    check("threshold: requests_per_second>1e12 missed" in out, f"threshold message: {out}")
    b = check_report(f"{WORK}/b.json")
    check(a["requests"] == b["requests"] | {"per_second": a["requests"]["per_second"]}, "same seed, same requests")
    check(a["plan_digest"] == b["plan_digest"], "same seed, same request sequence")
    code, out, err = loadtest(table, 8, f"{WORK}/c.json", "--quiet")
    check(code == 0, f"seed 8 exited {code}")
    check(json.load(open(f"{WORK}/c.json"))["plan_digest"] != a["plan_digest"], "another seed, another sequence")
    print(f"loadtest: {a['requests']['total']} requests, {a['invariants']['checked']} checks, digest {a['plan_digest']}")


def case_loadtest_overflow():
    code, out, err = loadtest(f"{HERE}/data/overflow.json", 3, f"{WORK}/o.json", "--rate", "200")
    check(code == 0, f"overflow loadtest exited {code}: {out}{err}")
    r = check_report(f"{WORK}/o.json", expect_line_full=True)
    print(f"overflow: {r['line_full']} line_full answers, no violation")


def case_usage_and_bad_table():
    bad = f"{HERE}/data/bad.json"
    for args, code, text in (
        (["loadtest"], 2, "table is required"),
        (["loadtest", f"{SRC}/examples/small.json", "--players", "0"], 2, "--players"),
        (["loadtest", f"{SRC}/examples/small.json", "--threshold", "tick_p99_ms<<5"], 2, "threshold"),
        (["loadtest", f"{SRC}/examples/small.json", "--threshold", "bogus<5"], 2, "unknown metric 'bogus'"),
        (["run", f"{SRC}/examples/small.json", "--admin", "nonsense"], 2, "--admin nonsense"),
        (["run", f"{SRC}/examples/small.json", "--tcp", "nonsense"], 2, "--tcp nonsense"),
        (["run", f"{SRC}/examples/small.json", "--tcp", "192.0.2.1:1"], 2, "--tcp 192.0.2.1:1"),
        (["run", f"{SRC}/examples/small.json", "--realtime", "100"], 2, "--realtime"),
        (["run"], 2, "table is required"),
        (["loadtest", f"{WORK}/missing.json"], 2, "missing.json"),
        (["loadtest", bad], 1, "bad.json:/scenes/0/capacity: must be >= 1"),
        (["run", bad], 1, "bad.json:/scenes/0/polcy"),
    ):
        got, out, err = run(*args, timeout=20)
        check(got == code, f"scenert {' '.join(args)}: exit {got}, want {code}: {err}")
        check(text in err, f"scenert {' '.join(args)}: stderr lacks {text!r}: {err}")
    print("usage errors exit 2, bad tables exit 1, with their messages")


if __name__ == "__main__":
    CASE, SCENERT, SRC, WORK = sys.argv[1:5]
    HERE = os.path.dirname(os.path.abspath(__file__))
    os.makedirs(WORK, exist_ok=True)
    globals()[f"case_{CASE}"]()
