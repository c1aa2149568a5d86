#!/usr/bin/env python3
"""End-to-end tests of the `scenert` binary: e2e.py CASE SCENERT SOURCE_DIR WORK_DIR."""
import base64
import json
import os
import re
import resource
import selectors
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
            if not self._more(deadline):
                return None, b""
        fail("no frame within the time")

    def _recv(self, deadline):
        """What arrives before the deadline (b"" at the end of the stream), or None."""
        self.sock.settimeout(max(0.01, deadline - time.time()))
        try:
            return self.sock.recv(65536)
        except socket.timeout:
            return None

    def _more(self, deadline):
        """Reads what arrives into buf; False at the end of the stream."""
        d = self._recv(deadline)
        if d is not None:
            self.buf += d
        return d != b""

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
    check(i == 1007 and b"shutting_down" in payload, f"a goodbye before the close: {i} {payload!r}")
    try:
        code = p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        p.kill()
        fail("run did not exit within 5 s of SIGTERM with clients connected")
    check(code == 0, f"run exited {code}: {''.join(lines)}")
    print(f"run --tcp: two seed 002 clients saw each other, chatted, got a goodbye; exit 0 "
          f"{time.time() - started:.2f} s after SIGTERM")


class WebSocketClient(Seed002Client):
    """The same frames over WebSocket (one per binary message); asks for the "scenert" subprotocol."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                           f"Sec-WebSocket-Protocol: scenert\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.sock.recv(1)
        check(head.startswith(b"HTTP/1.1 101") and b"scenert" in head.lower(), f"handshake: {head!r}")
        self.buf, self.raw, self.messages = b"", b"", 0

    def _more(self, deadline):
        """Moves whole server messages (unmasked) into buf, reading more when none is whole."""
        if self._message():
            return True
        d = self._recv(deadline)
        if d is not None:
            self.raw += d
        return d != b""

    def _message(self):
        """Moves one whole server message (unmasked) from raw to buf; True when it did."""
        if len(self.raw) < 2:
            return False
        op, n, at = self.raw[0] & 0x0F, self.raw[1] & 0x7F, 2
        if n == 126:
            n, at = struct.unpack(">H", self.raw[2:4])[0], 4
        elif n == 127:
            n, at = struct.unpack(">Q", self.raw[2:10])[0], 10
        if len(self.raw) < at + n:
            return False
        body, self.raw = self.raw[at:at + n], self.raw[at + n:]
        if op == 2:
            check(len(body) >= 8 and len(body) == 8 + struct.unpack("<I", body[:4])[0],
                  f"one frame per WebSocket message: {body[:64]!r}... ({len(body)} bytes)")
            self.buf += body
            self.messages += 1
        return True

    def send(self, i, payload):
        data = struct.pack("<II", len(payload), i) + payload
        mask = os.urandom(4)
        head = bytes([0x82]) + (bytes([0x80 | len(data)]) if len(data) < 126
                                else bytes([0x80 | 126]) + struct.pack(">H", len(data)))
        self.sock.sendall(head + mask + bytes(b ^ mask[k % 4] for k, b in enumerate(data)))


def case_run_ws():
    p, lines, wait_for = start_run("--tcp", "127.0.0.1:0", "--ws", "127.0.0.1:0", "--admin", "127.0.0.1:0")
    tcp = int(wait_for(r"clients on tcp://127\.0\.0\.1:(\d+)").group(1))
    ws = int(wait_for(r"WebSocket clients on ws://127\.0\.0\.1:(\d+)").group(1))
    admin = int(wait_for(r"admin endpoint http://127\.0\.0\.1:(\d+)").group(1))
    watcher = Seed002Client(tcp)
    watcher.ids = []
    watcher.wait(202)
    web = WebSocketClient(ws)
    web.ids = []
    web.send(1000, b"\x0a\x05alice")  # Login name=alice
    ok = web.wait(1001)
    check(b"alice" in ok, f"login_ok names alice: {ok!r}")
    web.wait(202)
    appeared = watcher.wait(200)
    check(b"alice" in appeared, f"the TCP client sees alice appear: {appeared!r}")
    deadline = time.time() + 5
    while time.time() < deadline:  # connections per line are published four times a second
        status, body = get(admin, "/scenes")
        town = {s["id"]: s for s in json.loads(body)["scenes"]}[1001]
        if sum(line.get("connections", 0) for line in town["lines"]) == 2:
            break
        time.sleep(0.05)
    check(sum(line.get("connections", 0) for line in town["lines"]) == 2, f"/scenes connections: {town['lines']}")
    status, metrics = get(admin, "/metrics")
    for family in ('scenert_net_message_frames_in_total{message="login"} 1', "scenert_net_logins_total 1",
                   'scenert_net_connections_closed_total{reason="dropped"} 0'):
        check(family in metrics, f"/metrics lacks {family}")
    web.sock.close()  # the table's resume_ms keeps alice in the world for her resume token
    deadline = time.time() + 5
    while time.time() < deadline and "scenert_net_detached_players 1" not in get(admin, "/metrics")[1]:
        time.sleep(0.05)
    check("scenert_net_detached_players 1" in get(admin, "/metrics")[1], "alice waits for her resume")
    p.send_signal(signal.SIGTERM)
    check(p.wait(timeout=5) == 0, f"run exited non-zero: {''.join(lines)}")
    print(f"run --ws: a WebSocket client logged in by name ({web.messages} messages, one frame each), "
          f"a TCP client saw it come; dropped, it waits for its resume")


def raise_fd_limit(want):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def case_run_sigterm_many():
    """Thousands of clients connected: on SIGTERM every one gets a goodbye and a clean close; exit 0 in 5 s."""
    want = 2000
    check(raise_fd_limit(2 * want + 200) >= want + 100, "the fd limit is too low for this test")
    p, lines, wait_for = start_run("--tcp", "127.0.0.1:0")
    port = int(wait_for(r"clients on tcp://127\.0\.0\.1:(\d+)").group(1))
    sel = selectors.DefaultSelector()
    clients = []
    for _ in range(want):
        c = socket.create_connection(("127.0.0.1", port), timeout=5)
        c.setblocking(False)
        clients.append({"sock": c, "buf": b"", "ids": [], "eof": False})
        sel.register(c, selectors.EVENT_READ, clients[-1])

    def pump(done, seconds):
        deadline = time.time() + seconds
        while time.time() < deadline and not all(done(c) for c in clients):
            for key, _ in sel.select(timeout=0.1):
                c = key.data
                try:
                    d = c["sock"].recv(1 << 16)
                except (BlockingIOError, ConnectionResetError):
                    continue
                if not d:
                    c["eof"] = True
                    sel.unregister(c["sock"])
                    continue
                c["buf"] += d
                while len(c["buf"]) >= 8:
                    n, i = struct.unpack("<II", c["buf"][:8])
                    if len(c["buf"]) < 8 + n:
                        break
                    c["ids"].append((i, c["buf"][8:8 + n]))
                    c["buf"] = c["buf"][8 + n:]

    pump(lambda c: any(i == 202 for i, _ in c["ids"]), 60)
    landed = sum(any(i == 202 for i, _ in c["ids"]) for c in clients)
    check(landed == want, f"{landed} of {want} clients landed")
    started = time.time()
    p.send_signal(signal.SIGTERM)
    pump(lambda c: c["eof"], 10)
    elapsed = time.time() - started
    said = sum(any(i == 1007 and b"shutting_down" in body for i, body in c["ids"]) for c in clients)
    closed = sum(c["eof"] for c in clients)
    try:
        code = p.wait(timeout=max(0.1, 5 - elapsed))
    except subprocess.TimeoutExpired:
        p.kill()
        fail(f"run did not exit within 5 s of SIGTERM with {want} clients")
    check(said == want and closed == want, f"{said} goodbyes and {closed} clean closes of {want}")
    check(code == 0, f"run exited {code}")
    for c in clients:
        c["sock"].close()
    print(f"run --tcp: {want} clients connected; each got a goodbye and a close, exit 0 "
          f"{time.time() - started:.2f} s after SIGTERM")


def varint(n):
    out = b""
    while n >= 0x80:
        out += bytes([0x80 | (n & 0x7F)])
        n >>= 7
    return out + bytes([n])


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def case_run_never_reading_rss():
    """A client that never reads while others chat big messages: it is cut; the server's RSS stays flat."""
    p, lines, wait_for = start_run("--tcp", "127.0.0.1:0", "--admin", "127.0.0.1:0")
    port = int(wait_for(r"clients on tcp://127\.0\.0\.1:(\d+)").group(1))
    admin = int(wait_for(r"admin endpoint http://127\.0\.0\.1:(\d+)").group(1))
    quiet = socket.socket()
    quiet.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a small window: the server must queue
    quiet.connect(("127.0.0.1", port))
    talkers = [Seed002Client(port) for _ in range(8)]
    for t in talkers:
        t.sock.setblocking(False)
    text = b"x" * 60000
    chat = b"\x0a" + varint(len(text)) + text  # Talk: Content = 1
    samples = []
    started = time.time()
    while time.time() - started < 8:
        for t in talkers:  # every talker at its rate (2 a second), reading all it gets
            t.sock.setblocking(True)
            t.send(2, chat)
            t.sock.setblocking(False)
        end = time.time() + 0.5
        while time.time() < end:
            for t in talkers:
                try:
                    while t.sock.recv(1 << 20):
                        pass
                except BlockingIOError:
                    pass
            time.sleep(0.01)
        samples.append((time.time() - started, rss_kib(p.pid)))
    status, metrics = get(admin, "/metrics")
    m = re.search(r'scenert_net_connections_closed_total\{reason="slow_reader"\} (\d+)', metrics)
    check(m and int(m.group(1)) >= 1, f"the never-reading client was cut: {m and m.group(0)}")
    early = max(kib for at, kib in samples if 2 <= at < 4)
    late = max(kib for at, kib in samples if at >= 6)
    if not os.environ.get("SCENERT_SANITIZE"):
        check(late - early < 4096, f"RSS grew {late - early} KiB after the cut: {samples}")
    p.send_signal(signal.SIGTERM)
    check(p.wait(timeout=5) == 0, "run exited non-zero")
    print(f"run --tcp: a never-reading client was cut; RSS {early} KiB at 2-4 s, {late} KiB at 6-8 s")


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
        (["run", f"{SRC}/examples/small.json", "--ws", "nonsense"], 2, "--ws nonsense"),
        (["run", f"{SRC}/examples/small.json", "--max-frame", "8"], 2, "--max-frame"),
        (["run", f"{SRC}/examples/small.json", "--realtime", "100"], 2, "--realtime"),
        (["run", f"{SRC}/examples/small.json", "--web", "nonsense"], 2, "--web nonsense"),
        (["run", f"{SRC}/examples/small.json", "--web", "127.0.0.1:0", "--web-root", f"{WORK}/no-pages"], 2,
         "no-pages: no play.html there"),
        (["run"], 2, "table is required"),
        (["loadtest", f"{WORK}/missing.json"], 2, "missing.json"),
        (["loadtest", bad], 1, "bad.json:/scenes/0/capacity: must be >= 1"),
        (["run", bad], 1, "bad.json:/scenes/0/polcy"),
    ):
        got, out, err = run(*args, timeout=20)
        check(got == code, f"scenert {' '.join(args)}: exit {got}, want {code}: {err}")
        check(text in err, f"scenert {' '.join(args)}: stderr lacks {text!r}: {err}")
    print("usage errors exit 2, bad tables exit 1, with their messages")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(p):
    p.send_signal(signal.SIGTERM)
    try:
        code = p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        fail("run did not exit within 10 s of SIGTERM")
    check(code == 0, f"run exited {code}")


def bots(*args, timeout=90):
    return run("bots", *args, "--quiet", timeout=timeout)


def case_bots_tcp():
    # Two I/O threads: the bots' connections are dealt to both, so every view crosses them.
    p, lines, wait_for = start_run("--tcp", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--io-threads", "2")
    port = int(wait_for(r"clients on tcp://127\.0\.0\.1:(\d+)").group(1))
    admin = int(wait_for(r"admin endpoint http://127\.0\.0\.1:(\d+)").group(1))
    wait_for(r"; 2 I/O threads for clients")
    report = f"{WORK}/bots.json"
    # Under a sanitizer the server is slow enough that a checkpoint in the run's middle finds most
    # bots still logging in: only the final check is asked for there.
    sanitized = bool(os.environ.get("SCENERT_SANITIZE"))
    checkpoints = "0" if sanitized else "1"
    code, out, err = bots(f"127.0.0.1:{port}", "--clients", "150", "--seconds", "4", "--seed", "3",
                          "--verify-views", f"127.0.0.1:{admin}", "--checkpoints", checkpoints,
                          "--settle-ms", "1000", "--act-every", "1",
                          # A sanitized server on a busy machine may take longer than 10 s to log
                          # 150 bots in: slow, not wrong.
                          "--login-timeout-ms", "30000" if sanitized else "10000",
                          "--report", report, "--threshold", "errors<1", "--threshold", "view_mismatches<1")
    check(code == 0, f"bots exited {code}: {out}{err}")
    r = json.load(open(report))
    check(r["protocol"] == "scenert" and r["transport"] == "tcp", f"report run: {r['protocol']} {r['transport']}")
    # A sanitizer build logs in slower: every bot connects, not every one plays before the end.
    check(r["logged_in"] > 0 and r["connected"] == 150 and r["connect_failed"] == 0, f"logins: {r['logged_in']}")
    views = r["views"]
    check(views["verified"] and views["mismatches"] == 0, f"views: {views}")
    check(len(views["checkpoints"]) == int(checkpoints) and views["final"]["bots"] > 0, f"views: {views}")
    # scenert's bots walk (1011: each move names its view), seed 002's move (3).
    check(r["wire"]["walk"]["frames_out"] > 0 and r["wire"]["position"]["frames_out"] == 0, "walks, no 3")
    check(r["move_to_viewer"]["count"] > 0, "deliveries")
    answered = {kind: codes for kind, codes in r["answers"].items()}
    check(any(codes.get("ok", 0) > 0 for codes in answered.values()), f"no request answered ok: {answered}")
    check(r["heartbeat_rtt"]["count"] > 0, "heartbeats")
    check("views" in out and "0 mismatches" in out, f"summary: {out}")
    # A threshold that cannot hold fails the run with exit 3, and says which.
    code, out, err = bots(f"127.0.0.1:{port}", "--clients", "20", "--seconds", "1",
                          "--threshold", "move_p99_ms<0.0001")
    check(code == 3 and "move_p99_ms<0.0001" in out, f"missed threshold: exit {code}: {out}{err}")
    stop(p)
    print(f"bots over TCP: {r['logged_in']} of 150 logged in, views {views['final']['pairs']} pairs, 0 mismatches; "
          f"move p99 {r['move_to_viewer']['p99_ms']:.1f} ms")


def case_bots_ws_seed002():
    p, lines, wait_for = start_run("--ws", "127.0.0.1:0", "--admin", "127.0.0.1:0")
    port = int(wait_for(r"clients on ws://127\.0\.0\.1:(\d+)").group(1))
    admin = int(wait_for(r"admin endpoint http://127\.0\.0\.1:(\d+)").group(1))
    report = f"{WORK}/bots.json"
    # Guests land on the town's entry point (272, 240): the box lies beside it, off the blocked keep.
    code, out, err = bots(f"127.0.0.1:{port}", "--ws", "--protocol", "seed002", "--box", "273,200,320,239",
                          "--clients", "60", "--seconds", "3", "--verify-views", f"127.0.0.1:{admin}",
                          "--report", report, "--threshold", "errors<1")
    check(code == 0, f"bots exited {code}: {out}{err}")
    r = json.load(open(report))
    check(r["protocol"] == "seed002" and r["transport"] == "ws", f"report run: {r['protocol']} {r['transport']}")
    for own in ("login", "request", "heartbeat", "walk"):
        check(r["wire"][own]["frames_out"] == 0, f"seed002 bots sent {own}")
    check(r["wire"]["sync_players"]["frames_in"] > 0, "the bots got their 202")
    check(r["views"]["verified"] and r["views"]["mismatches"] == 0, f"views: {r['views']}")
    check(r["moves_sent"] > 0 and not r["moves_refused"], f"moves: {r['moves_sent']} refused {r['moves_refused']}")
    stop(p)
    print(f"bots over WebSocket, seed 002's protocol: 60 guests, views checked, 0 mismatches")


def case_bots_usage():
    port = free_port()
    for args, text in (
        (["127.0.0.1:1", "--protocol", "seed002"], "--box"),
        (["127.0.0.1:1", "--protocol", "seed002", "--box", "1,2,3"], "--box '1,2,3'"),
        (["127.0.0.1:1", "--box", "5,0,1,1"], "X0 < X1"),
        (["localhost:1"], "IP address"),
        (["127.0.0.1:1", "--mix", "dance=3"], "--mix 'dance=3'"),
        (["127.0.0.1:1", "--threshold", "bogus<1"], "unknown metric 'bogus'"),
        (["127.0.0.1:1", "--checkpoints", "2"], "--verify-views"),
        (["127.0.0.1:1", "--login-timeout-ms", "0"], "--login-timeout-ms"),
        (["127.0.0.1:1", "--verify-views", f"127.0.0.1:{port}"], f"127.0.0.1:{port}/scenes"),
    ):
        code, out, err = bots(*args, timeout=30)
        check(code == 2, f"scenert bots {' '.join(args)}: exit {code}, want 2: {err}")
        check(text in err, f"scenert bots {' '.join(args)}: stderr lacks {text!r}: {err}")
    print("bots: usage errors and an unreachable admin endpoint exit 2, naming the input")


if __name__ == "__main__":
    CASE, SCENERT, SRC, WORK = sys.argv[1:5]
    HERE = os.path.dirname(os.path.abspath(__file__))
    os.makedirs(WORK, exist_ok=True)
    globals()[f"case_{CASE}"]()
