#!/usr/bin/env python3
"""End-to-end tests of the `scenert` binary (run, loadtest, bots), started the way an operator starts
it. Run through tests/harness: e2e.py --scenert PATH --source DIR --work DIR --protos DIR [--case NAME]."""
import base64
import json
import os
import pathlib
import re
import resource
import selectors
import signal
import socket
import struct
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "harness"))
import scenert_harness as harness  # noqa: E402
from scenert_harness import cfg, check, eventually, fail  # noqa: E402

ADMIN = r"admin endpoint http://127\.0\.0\.1:(\d+)"
TCP = r"clients on tcp://127\.0\.0\.1:(\d+)"


def start_run(case, *extra):
    """`scenert run` on the example table with two workers, as a process of `case`."""
    return case.scenert("run", "run", f"{cfg.source}/examples/mmo.json", "--workers", "2", *extra)


def port_of(p, pattern):
    return int(p.wait_for_line(pattern).group(1))


def with_admin(p):
    """Reads the process's admin port from its log into p.admin; returns p."""
    p.admin = port_of(p, ADMIN)
    return p


def lacking(text, samples):
    """The samples (exact lines' starts, with their values) that `text` lacks."""
    return [s for s in samples if s not in text]


def wait_for_samples(p, samples, deadline=10):
    """The process's /metrics once it has every one of `samples` (each a sample with its value)."""
    seen = {}

    def has_all():
        seen["text"] = p.metrics(checked=False)
        return not lacking(seen["text"], samples)
    eventually(has_all, deadline, f"{p.name}'s /metrics to show {samples}",
               lambda: f"lacking {lacking(seen['text'], samples)}")
    harness.promtool_accepts(seen["text"], f"{p.name}'s /metrics")
    return seen["text"]


class Seed002Client:
    """A client of seed 002's protocol over TCP: 8-byte frame heads, ids 1/2/3 in, 200/201/202 out."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.buf = b""
        self.frames = []  # whole frames read and not taken yet
        self.ids = []     # ids of the frames wait() skipped

    def next(self, seconds=5):
        """The next frame (id, payload), or (None, b"") at the end of the stream."""
        deadline = time.monotonic() + seconds
        while not self.frames:
            if time.monotonic() >= deadline:
                fail(f"no frame within {seconds} s")
            if not self._more(deadline):
                return None, b""
        return self.frames.pop(0)

    def _recv(self, deadline):
        """What arrives before the deadline (b"" at the end of the stream), or None."""
        self.sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            return self.sock.recv(65536)
        except socket.timeout:
            return None

    def _more(self, deadline):
        """Reads what arrives into frames; False at the end of the stream."""
        d = self._recv(deadline)
        if d is not None:
            got, self.buf = harness.split_frames(self.buf + d)
            self.frames += got
        return d != b""

    def wait(self, want_id, seconds=5):
        """The payload of the next frame `want_id`; the ids of the frames before it go to `ids`."""
        while True:
            i, payload = self.next(seconds)
            check(i is not None, f"connection closed while waiting for frame {want_id}")
            if i == want_id:
                return payload
            self.ids.append(i)

    def send(self, i, message):
        self.sock.sendall(harness.frame(i, message))


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
        self.buf, self.raw, self.messages, self.frames, self.ids = b"", b"", 0, [], []

    def _more(self, deadline):
        """Moves whole server messages (unmasked) into frames, reading more when none is whole."""
        if self._message():
            return True
        d = self._recv(deadline)
        if d is not None:
            self.raw += d
        return d != b""

    def _message(self):
        """Moves one whole server message (unmasked) from raw to frames; True when it did."""
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
            got, rest = harness.split_frames(body)
            check(len(got) == 1 and rest == b"",
                  f"one frame per WebSocket message: {body[:64]!r}... ({len(body)} bytes)")
            self.frames += got
            self.messages += 1
        return True

    def send(self, i, message):
        data = harness.frame(i, message)
        mask = os.urandom(4)
        head = bytes([0x82]) + (bytes([0x80 | len(data)]) if len(data) < 126
                                else bytes([0x80 | 126]) + struct.pack(">H", len(data)))
        self.sock.sendall(head + mask + bytes(b ^ mask[k % 4] for k, b in enumerate(data)))


def seed002_login(port):
    """A seed 002 client that got its id (1), its view (202, itself in it, as seed 002's GameRole::Init
    sends it) and its own 200 Tp 2 at the place the 202 gave it: (client, its pid)."""
    seed = harness.proto("seed002")
    c = Seed002Client(port)
    pid = seed.SyncPid.FromString(c.wait(1)).Pid
    view = seed.SyncPlayers.FromString(c.wait(202))
    itself = [p for p in view.ps if p.Pid == pid]
    check(len(itself) == 1, f"player {pid} once in its own 202: {view}")
    own = seed.BroadCast.FromString(c.wait(200))
    check(own.Pid == pid and own.Tp == 2 and own.P == itself[0].P,
          f"player {pid}'s own 200 Tp 2 right after its 202, where the 202 put it: {own}")
    return c, pid


def raise_fd_limit(want):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


class Run(harness.Case):
    """`scenert run`: the admin endpoint, clients over TCP and WebSocket, SIGTERM, a slow reader."""

    def test_run_admin(self):
        p = with_admin(start_run(self, "--admin", "127.0.0.1:0"))
        # The first snapshots and ticks are in: the town's line is open and ticks are timed.
        p.wait_metric("scenert_tick_duration_seconds_count", lambda n: n > 0, 10, "times its first ticks")
        p.wait_for_line(r"line 1 opened")  # the command's loop reports the lines the first snapshot shows
        wait_for_samples(p, ('scenert_scene_open_lines{scene="1001",kind="town"} 1',
                             "scenert_tick_duration_seconds_bucket", "scenert_scene_lines_opened_total",
                             "scenert_world_players 0"))
        for path, want in (("/livez", "ok"), ("/readyz", "ready"), ("/healthz", "ok")):
            status, body = p.get(path)
            check(status == 200 and want in body, f"{path}: {status} {body!r}")
        by_id = {s["id"]: s for s in p.json("/scenes")["scenes"]}
        check(by_id[1001]["kind"] == "town" and by_id[1001]["open_lines"] == 1, f"/scenes town: {by_id.get(1001)}")
        check(by_id[3002]["structure"] == "group" and by_id[3002]["slots_per_group"] == 20, "/scenes dungeon")
        check(by_id[1001]["lines"][0]["players"] == 0, "/scenes lines")
        check(len(by_id[1001]["spaces"]) == 2, "/scenes spaces bound to the town")
        check(by_id[1001]["lines"][0]["running_phases"] == [], "/scenes running phases of a town line")
        started = time.monotonic()
        p.stop(want=0, deadline=5)
        text = p.text()
        check("stopping" in text and "stopped in" in text, f"no stop lines: {text}")
        m = re.search(r"(\d+) lines opened and (\d+) closed", text)
        check(m and m.group(1) == m.group(2) and int(m.group(1)) >= 3, f"every opened line closed: {text}")
        harness.report(f"run: admin on port {p.admin}, clean exit {time.monotonic() - started:.2f} s after SIGTERM")

    def test_run_tcp(self):
        seed = harness.proto("seed002")
        p = start_run(self, "--tcp", "127.0.0.1:0", "--admin", "127.0.0.1:0")
        port = port_of(p, TCP)
        with_admin(p)
        a, _ = seed002_login(port)
        b, b_pid = seed002_login(port)
        appeared = seed.BroadCast.FromString(a.wait(200))
        check(appeared.Pid == b_pid and appeared.Tp == 2, f"b ({b_pid}) appears next to a: {appeared}")
        b.send(3, seed.Position(X=5.5, Z=5.5))  # b walks far away: a loses it from view
        gone = seed.SyncPid.FromString(a.wait(201))
        check(gone.Pid == b_pid, f"201 names b ({b_pid}): {gone}")
        b.send(2, seed.Talk(Content="hi"))  # world chat reaches a as 200 Tp 1
        chat = seed.BroadCast.FromString(a.wait(200))
        check(chat.Tp == 1 and chat.Content == "hi" and chat.Pid == b_pid, f"chat as 200 Tp 1: {chat}")
        for c in (a, b):
            check(all(i < 1000 for i in c.ids), f"a seed 002 client got ids it does not know: {c.ids}")
        wait_for_samples(p, ("scenert_net_connections 2", "scenert_net_connections_accepted_total 2",
                             "scenert_net_frames_in_total 2", "scenert_net_writes_total"))
        started = time.monotonic()
        p.signal(signal.SIGTERM)
        i, payload = a.next()
        check(i == 1007 and "shutting_down" in harness.proto("scenert").Goodbye.FromString(payload).reason,
              f"a goodbye before the close: {i} {payload!r}")
        check(p.wait(5) == 0, f"run exited non-zero: {p.text()}")
        harness.report(f"run --tcp: two seed 002 clients saw each other, chatted, got a goodbye; exit 0 "
                       f"{time.monotonic() - started:.2f} s after SIGTERM")

    def test_run_ws(self):
        wire, seed = harness.proto("scenert"), harness.proto("seed002")
        p = start_run(self, "--tcp", "127.0.0.1:0", "--ws", "127.0.0.1:0", "--admin", "127.0.0.1:0")
        tcp = port_of(p, TCP)
        ws = port_of(p, r"WebSocket clients on ws://127\.0\.0\.1:(\d+)")
        with_admin(p)
        watcher, _ = seed002_login(tcp)
        web = WebSocketClient(ws)
        web.send(1000, wire.Login(name="alice"))
        ok = wire.LoginOk.FromString(web.wait(1001))
        check(ok.name == "alice" and ok.pid > 0, f"login_ok names alice: {ok}")
        web.wait(202)
        appeared = seed.BroadCast.FromString(watcher.wait(200))
        check(appeared.Pid == ok.pid and appeared.Username == "alice", f"the TCP client sees alice appear: {appeared}")

        def town_connections():  # connections per line are published four times a second
            town = {s["id"]: s for s in p.json("/scenes")["scenes"]}[1001]
            return sum(line.get("connections", 0) for line in town["lines"]), town["lines"]
        eventually(lambda: town_connections()[0] == 2, 5, "/scenes: 2 connections on the town's lines",
                   lambda: town_connections()[1])
        wait_for_samples(p, ('scenert_net_message_frames_in_total{message="login"} 1', "scenert_net_logins_total 1",
                             'scenert_net_connections_closed_total{reason="dropped"} 0'))
        check(web.messages >= 2, f"login_ok and 202 came as {web.messages} WebSocket messages")
        web.sock.close()  # the table's resume_ms keeps alice in the world for her resume token
        p.wait_metric("scenert_net_detached_players", lambda v: v == 1, 5, "alice waits for her resume")
        p.stop(want=0, deadline=5)
        harness.report(f"run --ws: a WebSocket client logged in by name ({web.messages} messages, one frame each), "
                       f"a TCP client saw it come; dropped, it waits for its resume")

    def test_run_sigterm_many(self):
        """Thousands of clients connected: on SIGTERM every one gets a goodbye and a clean close; exit 0 in 5 s."""
        want = 2000
        check(raise_fd_limit(2 * want + 200) >= want + 100, "the fd limit is too low for this test")
        p = start_run(self, "--tcp", "127.0.0.1:0")
        port = port_of(p, TCP)
        sel = selectors.DefaultSelector()
        clients = []
        self.addCleanup(lambda: [c["sock"].close() for c in clients])
        for _ in range(want):
            c = socket.create_connection(("127.0.0.1", port), timeout=5)
            c.setblocking(False)
            clients.append({"sock": c, "buf": b"", "ids": [], "eof": False})
            sel.register(c, selectors.EVENT_READ, clients[-1])

        def pump(done, seconds):
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline and not all(done(c) for c in clients):
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
                    got, c["buf"] = harness.split_frames(c["buf"] + d)
                    c["ids"] += got

        pump(lambda c: any(i == 202 for i, _ in c["ids"]), 60)
        landed = sum(any(i == 202 for i, _ in c["ids"]) for c in clients)
        check(landed == want, f"{landed} of {want} clients landed")
        started = time.monotonic()
        p.signal(signal.SIGTERM)
        pump(lambda c: c["eof"], 10)
        said = sum(any(i == 1007 and b"shutting_down" in body for i, body in c["ids"]) for c in clients)
        closed = sum(c["eof"] for c in clients)
        code = p.wait(max(0.1, 5 - (time.monotonic() - started)))
        check(said == want and closed == want, f"{said} goodbyes and {closed} clean closes of {want}")
        check(code == 0, f"run exited {code}")
        harness.report(f"run --tcp: {want} clients connected; each got a goodbye and a close, exit 0 "
                       f"{time.monotonic() - started:.2f} s after SIGTERM")

    def test_run_never_reading_rss(self):
        """A client that never reads while others chat big messages: it is cut; the server's RSS stays flat."""
        seed = harness.proto("seed002")
        p = start_run(self, "--tcp", "127.0.0.1:0", "--admin", "127.0.0.1:0")
        port = port_of(p, TCP)
        with_admin(p)
        quiet = socket.socket()
        self.addCleanup(quiet.close)
        quiet.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a small window: the server must queue
        quiet.connect(("127.0.0.1", port))
        talkers = [Seed002Client(port) for _ in range(8)]
        sel = selectors.DefaultSelector()
        for t in talkers:
            sel.register(t.sock, selectors.EVENT_READ)
        chat = seed.Talk(Content="x" * 60000)
        samples = []
        started = time.monotonic()
        # The scenario's clock: for 8 s, each talker chats twice a second and reads all it gets; the
        # server's RSS is sampled after each round.
        while time.monotonic() - started < 8:
            for t in talkers:
                t.sock.setblocking(True)
                t.send(2, chat)
            end = time.monotonic() + 0.5
            while (left := end - time.monotonic()) > 0:
                for key, _ in sel.select(timeout=left):
                    key.fileobj.setblocking(False)
                    try:
                        while key.fileobj.recv(1 << 20):
                            pass
                    except BlockingIOError:
                        pass
            samples.append((time.monotonic() - started, rss_kib(p.pid)))
        m = re.search(r'scenert_net_connections_closed_total\{reason="slow_reader"\} (\d+)', p.metrics())
        check(m and int(m.group(1)) >= 1, f"the never-reading client was cut: {m and m.group(0)}")
        early = max(kib for at, kib in samples if 2 <= at < 4)
        late = max(kib for at, kib in samples if at >= 6)
        if not os.environ.get("SCENERT_SANITIZE"):
            check(late - early < 4096, f"RSS grew {late - early} KiB after the cut: {samples}")
        p.stop(want=0, deadline=5)
        harness.report(f"run --tcp: a never-reading client was cut; RSS {early} KiB at 2-4 s, {late} KiB at 6-8 s")


def check_report(path, expect_line_full=False):
    with open(path) as f:
        r = json.load(f)
    inv = r["invariants"]
    check(inv["checked"] >= 3 and inv["violations"] == [], f"invariants: {inv}")
    check(r["enters"] == r["leaves"] + r["online_at_end"], f"enters != leaves + online: {r}")
    req = r["requests"]
    kinds = ("enter", "move", "transfer", "join_team", "enter_instance", "enter_phase", "leave_phase", "leave")
    check(req["total"] == sum(req[k] for k in kinds), f"request kinds do not add up: {req}")
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


class LoadTest(harness.Case):
    """`scenert loadtest`: reports, thresholds, seeds; usage errors and bad tables."""

    def loadtest(self, table, seed, report, *extra):
        # A short idle grace so that lines also close (and get reused) within the run.
        return self.run_scenert("loadtest", table, "--players", "300", "--seconds", "4", "--seed", seed,
                                "--report", f"{self.work}/{report}", "--idle-grace", "200", *extra)

    def test_loadtest(self):
        table = f"{cfg.source}/examples/mmo.json"
        code, out, err = self.loadtest(table, 7, "a.json", "--threshold", "tick_p99_ms<100000")
        check(code == 0, f"loadtest exited {code}: {out}{err}")
        check("(all held)" in out and "1001 Stormhold" in out, f"summary: {out}")
        a = check_report(f"{self.work}/a.json")
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
        code, out, err = self.loadtest(table, 7, "b.json", "--threshold", "requests_per_second>1e12")
        check(code == 3, f"a missed threshold must exit 3, got {code}")
        check("threshold: requests_per_second>1e12 missed" in out, f"threshold message: {out}")
        b = check_report(f"{self.work}/b.json")
        check(a["requests"] == b["requests"] | {"per_second": a["requests"]["per_second"]}, "same seed, same requests")
        check(a["plan_digest"] == b["plan_digest"], "same seed, same request sequence")
        code, out, err = self.loadtest(table, 8, "c.json", "--quiet")
        check(code == 0, f"seed 8 exited {code}")
        c = check_report(f"{self.work}/c.json")
        check(c["plan_digest"] != a["plan_digest"], "another seed, another sequence")
        harness.report(f"loadtest: {a['requests']['total']} requests, {a['invariants']['checked']} checks, "
                       f"digest {a['plan_digest']}")

    def test_loadtest_overflow(self):
        code, out, err = self.loadtest(f"{cfg.source}/tests/apps/data/overflow.json", 3, "o.json", "--rate", "200")
        check(code == 0, f"overflow loadtest exited {code}: {out}{err}")
        r = check_report(f"{self.work}/o.json", expect_line_full=True)
        harness.report(f"overflow: {r['line_full']} line_full answers, no violation")

    def test_usage_and_bad_table(self):
        bad, small, work = f"{cfg.source}/tests/apps/data/bad.json", f"{cfg.source}/examples/small.json", self.work
        self.check_exits((
            (["loadtest"], 2, "table is required"),
            (["loadtest", small, "--players", "0"], 2, "--players"),
            (["loadtest", small, "--threshold", "tick_p99_ms<<5"], 2, "threshold"),
            (["loadtest", small, "--threshold", "bogus<5"], 2, "unknown metric 'bogus'"),
            (["run", small, "--admin", "nonsense"], 2, "--admin nonsense"),
            (["run", small, "--tcp", "nonsense"], 2, "--tcp nonsense"),
            (["run", small, "--tcp", "192.0.2.1:1"], 2, "--tcp 192.0.2.1:1"),
            (["run", small, "--ws", "nonsense"], 2, "--ws nonsense"),
            (["run", small, "--max-frame", "8"], 2, "--max-frame"),
            (["run", small, "--realtime", "100"], 2, "--realtime"),
            (["run", small, "--admit", "maybe"], 2, "--admit: maybe not in {on,off}"),
            (["run", small, "--guest-wait-ms", "5"], 2, "--guest-wait-ms: Value 5 not in range"),
            (["run", small, "--admit-io-busy", "1.5"], 2, "--admit-io-busy: Value 1.5 not in range"),
            (["run", small, "--admit-tick-lateness-ms", "0"], 2, "--admit-tick-lateness-ms"),
            (["run", small, "--web", "nonsense"], 2, "--web nonsense"),
            (["run", small, "--web", "127.0.0.1:0", "--web-root", f"{work}/no-pages"], 2,
             "no-pages: no play.html there"),
            (["run"], 2, "table is required"),
            (["loadtest", f"{work}/missing.json"], 2, "missing.json"),
            (["loadtest", bad], 1, "bad.json:/scenes/0/capacity: must be >= 1"),
            (["run", bad], 1, "bad.json:/scenes/0/polcy"),
        ), timeout=20)
        harness.report("usage errors exit 2, bad tables exit 1, with their messages")


class Bots(harness.Case):
    """`scenert bots` against `scenert run`: views checked, thresholds, seed 002's protocol, usage."""

    def bots(self, *args, timeout=90):
        return self.run_scenert("bots", *args, "--quiet", timeout=timeout)

    def test_bots_tcp(self):
        # Two I/O threads: the bots' connections are dealt to both, so every view crosses them.
        p = start_run(self, "--tcp", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--io-threads", "2")
        port = port_of(p, TCP)
        with_admin(p)
        p.wait_for_line(r"; 2 I/O threads for clients")
        report, requests = f"{self.work}/bots.json", f"{self.work}/requests.csv"
        # Under a sanitizer the server is slow enough that a checkpoint in the run's middle finds most
        # bots still logging in: only the final check is asked for there.
        sanitized = bool(os.environ.get("SCENERT_SANITIZE"))
        checkpoints = "0" if sanitized else "1"
        code, out, err = self.bots(f"127.0.0.1:{port}", "--clients", "150", "--seconds", "4", "--seed", "3",
                                   "--verify-views", f"127.0.0.1:{p.admin}", "--checkpoints", checkpoints,
                                   "--settle-ms", "1000", "--act-every", "1",
                                   # A sanitized server on a busy machine may take longer than 10 s to log
                                   # 150 bots in: slow, not wrong.
                                   "--login-timeout-ms", "30000" if sanitized else "10000",
                                   "--report", report, "--threshold", "errors<1", "--threshold", "view_mismatches<1",
                                   "--request-log", requests)
        check(code == 0, f"bots exited {code}: {out}{err}")
        with open(report) as f:
            r = json.load(f)
        check(r["protocol"] == "scenert" and r["transport"] == "tcp", f"report run: {r['protocol']} {r['transport']}")
        # The request log holds every answered request, the report's counts by kind and code.
        with open(requests) as f:
            rows = [line.rstrip("\n").split(",") for line in f]
        check(rows[0] == ["sent_unix_ms", "rtt_ms", "kind", "code"], f"request log header: {rows[0]}")
        logged = {}
        for sent_ms, rtt_ms, kind, code_ in rows[1:]:
            check(abs(int(sent_ms) / 1000 - time.time()) < 120 and float(rtt_ms) >= 0, f"request row {sent_ms},{rtt_ms}")
            logged.setdefault(kind, {}).setdefault(code_, 0)
            logged[kind][code_] += 1
        check(logged == r["answers"] and len(rows) > 1, f"request log {logged} vs answers {r['answers']}")
        # A sanitizer build logs in slower: every bot connects, not every one plays before the end.
        check(r["logged_in"] > 0 and r["connected"] == 150 and r["connect_failed"] == 0, f"logins: {r['logged_in']}")
        views = r["views"]
        check(views["verified"] and views["mismatches"] == 0, f"views: {views}")
        check(len(views["checkpoints"]) == int(checkpoints) and views["final"]["bots"] > 0, f"views: {views}")
        # scenert's bots walk (1011: each move names its view), seed 002's move (3).
        check(r["wire"]["walk"]["frames_out"] > 0 and r["wire"]["position"]["frames_out"] == 0, "walks, no 3")
        check(r["move_to_viewer"]["count"] > 0, "deliveries")
        answered = r["answers"]
        check(any(codes.get("ok", 0) > 0 for codes in answered.values()), f"no request answered ok: {answered}")
        check(r["heartbeat_rtt"]["count"] > 0, "heartbeats")
        check("views" in out and "0 mismatches" in out, f"summary: {out}")
        # A threshold that cannot hold fails the run with exit 3, and says which.
        code, out, err = self.bots(f"127.0.0.1:{port}", "--clients", "20", "--seconds", "1",
                                   "--threshold", "move_p99_ms<0.0001")
        check(code == 3 and "move_p99_ms<0.0001" in out, f"missed threshold: exit {code}: {out}{err}")
        p.stop(want=0, deadline=10)
        harness.report(f"bots over TCP: {r['logged_in']} of 150 logged in, views {views['final']['pairs']} pairs, "
                       f"0 mismatches; move p99 {r['move_to_viewer']['p99_ms']:.1f} ms")

    def test_bots_ws_seed002(self):
        p = start_run(self, "--ws", "127.0.0.1:0", "--admin", "127.0.0.1:0")
        port = port_of(p, r"clients on ws://127\.0\.0\.1:(\d+)")
        with_admin(p)
        report = f"{self.work}/bots.json"
        # Guests land on the town's entry point (272, 240): the box lies beside it, off the blocked keep.
        code, out, err = self.bots(f"127.0.0.1:{port}", "--ws", "--protocol", "seed002", "--box", "273,200,320,239",
                                   "--clients", "60", "--seconds", "3", "--verify-views", f"127.0.0.1:{p.admin}",
                                   "--report", report, "--threshold", "errors<1")
        check(code == 0, f"bots exited {code}: {out}{err}")
        with open(report) as f:
            r = json.load(f)
        check(r["protocol"] == "seed002" and r["transport"] == "ws", f"report run: {r['protocol']} {r['transport']}")
        for own in ("login", "request", "heartbeat", "walk"):
            check(r["wire"][own]["frames_out"] == 0, f"seed002 bots sent {own}")
        check(r["wire"]["sync_players"]["frames_in"] > 0, "the bots got their 202")
        check(r["views"]["verified"] and r["views"]["mismatches"] == 0, f"views: {r['views']}")
        check(r["moves_sent"] > 0 and not r["moves_refused"], f"moves: {r['moves_sent']} refused {r['moves_refused']}")
        p.stop(want=0, deadline=10)
        harness.report("bots over WebSocket, seed 002's protocol: 60 guests, views checked, 0 mismatches")

    def test_bots_hostile(self):
        # Short timeouts and small write buffers (the kernel's own grows to megabytes on loopback), so
        # that each hostile kind meets its cut within the run.
        p = start_run(self, "--tcp", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--io-threads", "2",
                      "--read-timeout-ms", "1000", "--max-outbound-bytes", "32768", "--send-buffer-bytes", "8192",
                      "--resume-ms", "0")
        port = port_of(p, TCP)
        with_admin(p)
        report = f"{self.work}/hostile.json"
        seconds = "14" if os.environ.get("SCENERT_SANITIZE") else "6"  # sanitized moves fill a queue slower
        code, out, err = self.bots(f"127.0.0.1:{port}", "--clients", "60", "--seconds", seconds, "--seed", "5",
                                   "--hostile", "30", "--verify-views", f"127.0.0.1:{p.admin}",
                                   "--settle-ms", "1000", "--report", report, "--threshold", "errors<1",
                                   "--threshold", "view_mismatches<1", "--threshold", "hostile_unexpected<1")
        check(code == 0, f"bots exited {code}: {out}{err}")
        with open(report) as f:
            r = json.load(f)
        h = r["hostile"]
        check(h["bots"] == 18 and h["well_behaved"] == 42 and h["unexpected"] == 0, f"hostile: {h}")
        # Each kind ended the way the server must end it, with the reason it gave.
        expected = {"garbage": ("cut", {"oversize", "bad_frames"}), "oversize": ("cut", {"oversize"}),
                    "lying_length": ("cut", {"bad_frames"}), "half_frame": ("cut", {"half_frame"}),
                    "flood": ("cut", {"flooding"}), "never_reading": ("cut", {"no goodbye", "none"}),
                    "slow_login": ("answered", {"login_ok"}), "guessed_token": ("answered", {"login_ok afresh"}),
                    "module_junk": ("answered", {"1012 too_large", "1012 no_module", "1012 not_in_scene",
                                                 "1012 unknown_opcode"})}
        for kind, (ending, reasons) in expected.items():
            got = h["by_kind"].get(kind)
            check(got is not None and got["bots"] == 2, f"{kind}: {got}")
            if kind == "never_reading":
                # Cut once the others' moves fill its queue past the cap: one may still be open at the end.
                check(got["endings"].get("cut", 0) >= 1 and set(got["endings"]) <= {"cut", "open at the end"},
                      f"{kind} ended {got['endings']}, none cut")
            else:
                check(got["endings"] == {ending: 2}, f"{kind} ended {got['endings']}, not {ending}")
            check(set(got["reasons"]) <= reasons, f"{kind}: reasons {got['reasons']}, expected among {reasons}")
        # The well-behaved bots' figures are theirs alone: no error, every view right, moves delivered.
        check(r["errors"]["count"] == 0 and r["views"]["mismatches"] == 0, f"errors {r['errors']}")
        check(r["move_to_viewer"]["count"] > 0, "deliveries")
        # The server is alive, and counted each cut by its reason.
        text = wait_for_samples(p, ['scenert_net_connections_closed_total{reason="flooding"} 2',
                                    'scenert_net_connections_closed_total{reason="half_frame"} 2'])
        slow = harness.metric(text, 'scenert_net_connections_closed_total{reason="slow_reader"}', 0)
        cut_slow = h["by_kind"]["never_reading"]["endings"]["cut"]
        check(cut_slow <= slow <= 2, f"{slow} connections cut slow_reader, {cut_slow} never-reading bots saw it")
        check("hostile" in out and "0 unexpected" in out, f"summary: {out}")
        p.stop(want=0, deadline=10)
        harness.report(f"bots --hostile 30: 18 hostile bots of 9 kinds each cut or answered with its reason; "
                       f"42 well-behaved: 0 errors, 0 view mismatches, move p99 {r['move_to_viewer']['p99_ms']:.1f} ms")

    def test_bots_usage(self):
        port = harness.free_port()
        self.check_exits(((["bots", *args, "--quiet"], 2, text) for args, text in (
            (["127.0.0.1:1", "--protocol", "seed002"], "--box"),
            (["127.0.0.1:1", "--protocol", "seed002", "--box", "1,2,3"], "--box '1,2,3'"),
            (["127.0.0.1:1", "--box", "5,0,1,1"], "X0 < X1"),
            (["localhost:1"], "IP address"),
            (["127.0.0.1:1", "--mix", "dance=3"], "--mix 'dance=3'"),
            (["127.0.0.1:1", "--threshold", "bogus<1"], "unknown metric 'bogus'"),
            (["127.0.0.1:1", "--checkpoints", "2"], "--verify-views"),
            (["127.0.0.1:1", "--login-timeout-ms", "0"], "--login-timeout-ms"),
            (["127.0.0.1:1", "--verify-views", f"127.0.0.1:{port}"], f"127.0.0.1:{port}/scenes"),
        )))
        harness.report("bots: usage errors and an unreachable admin endpoint exit 2, naming the input")


if __name__ == "__main__":
    harness.main()
