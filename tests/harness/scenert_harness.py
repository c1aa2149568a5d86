"""What every end-to-end test of scenert shares: processes started and stopped by their own pid, free
loopback ports, waiting on a condition, a log line or a metric with a deadline (and saying what was seen
when it did not come), the admin endpoint, the wire's frames built from net/proto's generated messages,
and one way to run a test file: unittest cases, one chosen per ctest test.

A test file ends with `harness.main()` and is run as
    FILE.py --scenert PATH --source DIR --work DIR [--protos DIR] [--case NAME]
where --case NAME runs the one `test_NAME` of the file (every case without it).
"""
import argparse
import importlib
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import unittest
import urllib.error
import urllib.request


class Config:
    """The command line's paths: the scenert binary, the source tree, the work folder (one per case)."""
    scenert = "scenert"
    source = "."
    work = "."


cfg = Config()


def fail(message):
    """Fails the running test (an AssertionError: unittest reports it as a failure, not an error)."""
    raise AssertionError(message)


def check(cond, message):
    if not cond:
        fail(message)


def report(message):
    """A line of what the test found (figures, counts), on stdout for ctest's log."""
    print(message, flush=True)


def eventually(condition, deadline, what, seen=None, period=0.05):
    """Polls condition() until it returns a true value, and returns that value; past `deadline` seconds
    fails naming `what` and what was seen: seen() when given, else the condition's last value."""
    end = time.monotonic() + deadline
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= end:
            fail(f"{what}: not within {deadline} s; saw {seen() if seen else value!r}")
        time.sleep(period)  # the poll's period


def free_port():
    """A loopback port nobody listens on now (the caller binds it soon: another may take it meanwhile)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- processes --------------------------------------------------------------------------------


class Process:
    """A child process whose stdout and stderr are read by threads of their own (a full pipe never
    blocks it), kept as lines a test can wait on; signalled and stopped by its own pid only."""

    def __init__(self, name, argv, env=None):
        self.name = name
        self.admin = None  # its admin endpoint's port, once the test read it from its log
        self._lines = {"out": [], "err": []}
        self._cond = threading.Condition()
        self.p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  encoding="utf-8", errors="replace", env=env)
        self.pid = self.p.pid
        self._readers = [threading.Thread(target=self._read, args=(self.p.stdout, "out"), daemon=True),
                         threading.Thread(target=self._read, args=(self.p.stderr, "err"), daemon=True)]
        for r in self._readers:
            r.start()

    def _read(self, stream, which):
        for line in iter(stream.readline, ""):
            with self._cond:
                self._lines[which].append(line)
                self._cond.notify_all()
        with self._cond:
            self._lines[which].append(None)  # the end of the stream
            self._cond.notify_all()

    def _ended(self, which):
        return bool(self._lines[which]) and self._lines[which][-1] is None

    def text(self, which="err"):
        with self._cond:
            return "".join(line for line in self._lines[which] if line is not None)

    def running(self):
        return self.p.poll() is None

    def wait_for_line(self, pattern, deadline=15, which="err"):
        """The first line of its stderr (or stdout) matching `pattern` (a re.Match), waiting up to
        `deadline` seconds; fails when it ends or the time is up without one, with what it wrote."""
        rx = re.compile(pattern)
        end = time.monotonic() + deadline
        at = 0
        with self._cond:
            while True:
                lines = self._lines[which]
                for line in lines[at:]:
                    m = line is not None and rx.search(line)
                    if m:
                        return m
                at = len(lines)
                if self._ended(which):
                    break
                left = end - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
        code = self.p.poll()
        state = f"exited {code}" if code is not None else f"still running after {deadline} s"
        fail(f"{self.name}: no {pattern!r} on std{which} ({state}): {self.text(which)[-4000:]}")

    def signal(self, sig):
        """Sends `sig` to this process's pid, while it runs."""
        if self.running():
            self.p.send_signal(sig)

    def wait(self, deadline):
        """Its exit code; fails when it is still running after `deadline` seconds."""
        try:
            code = self.p.wait(timeout=deadline)
        except subprocess.TimeoutExpired:
            fail(f"{self.name} did not exit within {deadline} s: {self.text()[-4000:]}")
        for r in self._readers:
            r.join(timeout=5)  # its last lines are read
        return code

    def stop(self, want=0, deadline=10):
        """SIGTERM, then it must exit within `deadline` seconds (else SIGKILL, and fail), with `want` as its
        code unless `want` is None."""
        self.signal(signal.SIGTERM)
        try:
            code = self.wait(deadline)
        except AssertionError:
            self.kill()
            raise
        check(want is None or code == want, f"{self.name} exited {code}, want {want}: {self.text()[-4000:]}")
        return code

    def kill(self):
        """SIGKILL (a SIGSTOPped process too), and reaped."""
        self.signal(signal.SIGKILL)
        self.p.wait(timeout=10)

    def close(self, log_dir=None):
        """Stops it whatever state the test left it in: SIGCONT and SIGTERM, SIGKILL past 5 s; keeps
        what it wrote in LOG_DIR/NAME.log."""
        if self.running():
            self.signal(signal.SIGCONT)
            self.signal(signal.SIGTERM)
            try:
                self.p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.kill()
        for r in self._readers:
            r.join(timeout=5)
        if log_dir:
            with open(os.path.join(log_dir, self.name.replace(" ", "_") + ".log"), "w") as f:
                f.write(self.text("out") + self.text("err"))

    # The admin endpoint (`--admin 127.0.0.1:0`, its port read from the log into `admin`).
    def get(self, path):
        return http_get(self.admin, path)

    def json(self, path):
        status, body = self.get(path)
        check(status == 200, f"{self.name} GET {path}: {status} {body[:500]}")
        return json.loads(body)

    def metrics(self, checked=True):
        """Its /metrics, which promtool must accept (unless not `checked`: a poll reads it often)."""
        return metrics(self.admin, self.name, checked)

    def metric(self, sample):
        return metric(self.metrics(checked=False), sample)

    def wait_metric(self, sample, holds, deadline, what):
        """The value of `sample` on its /metrics once holds(value), polled up to `deadline` seconds."""
        seen = []

        def ok():
            seen[:] = [metric(self.metrics(checked=False), sample, None)]
            return seen[0] is not None and holds(seen[0])
        eventually(ok, deadline, f"{self.name}: {what}", lambda: f"{sample} = {seen[0] if seen else None}")
        return seen[0]


def run(argv, timeout=60):
    """Runs a command to its end: (exit code, stdout, stderr)."""
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, encoding="utf-8", errors="replace",
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


# ---- the admin endpoint -----------------------------------------------------------------------


def http_get(port, path, raw=False):
    """(status, body) of GET http://127.0.0.1:PORT/PATH; the body as text, or bytes when `raw`."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            status, body = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, body = e.code, e.read()
    return status, body if raw else body.decode()


def promtool_accepts(text, who="/metrics"):
    p = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, f"promtool rejects {who}: {p.stdout}{p.stderr}")


def metrics(port, who="/metrics", checked=True):
    status, text = http_get(port, "/metrics")
    check(status == 200, f"{who}: GET /metrics: {status}")
    if checked:
        promtool_accepts(text, f"{who}'s /metrics")
    return text


_MISSING = object()


def metric(text, sample, default=_MISSING):
    """The value of one sample (`name` or `name{labels}` as printed) in Prometheus text; without a
    default, a missing sample fails the test."""
    m = re.search(rf"^{re.escape(sample)} (\S+)$", text, re.M)
    if m:
        return float(m.group(1))
    check(default is not _MISSING, f"/metrics lacks {sample}")
    return default


# ---- the wire ---------------------------------------------------------------------------------


def proto(name):
    """The module protoc generated from net/proto/NAME.proto (scenert, seed002): --protos is on sys.path."""
    return importlib.import_module(f"{name}_pb2")


def frame(msg_id, message=b""):
    """One frame of the wire: length and id (little-endian u32 each), then the message's bytes."""
    payload = message if isinstance(message, bytes) else message.SerializeToString()
    return struct.pack("<II", len(payload), msg_id) + payload


def split_frames(buf):
    """The whole frames at the start of `buf` as [(id, payload)], and the bytes after them."""
    frames = []
    while len(buf) >= 8:
        n, msg_id = struct.unpack_from("<II", buf)
        if len(buf) < 8 + n:
            break
        frames.append((msg_id, buf[8:8 + n]))
        buf = buf[8 + n:]
    return frames, buf


# ---- test cases and the runner ----------------------------------------------------------------


class Case(unittest.TestCase):
    """A test case with a work folder of its own (emptied at its start); every process it starts is
    stopped when it ends, passed or failed, and its output kept there."""

    def setUp(self):
        self.work = os.path.join(cfg.work, self._testMethodName)
        shutil.rmtree(self.work, ignore_errors=True)  # what is there is this run's only
        os.makedirs(self.work)

    def start(self, name, argv, env=None):
        p = Process(name, argv, env)
        self.addCleanup(p.close, self.work)
        return p

    def scenert(self, name, *args):
        """`scenert ARGS...` started as a process of this case."""
        return self.start(name, [cfg.scenert, *map(str, args)])

    def run_scenert(self, *args, timeout=60):
        """`scenert ARGS...` run to its end: (exit code, stdout, stderr)."""
        return run([cfg.scenert, *map(str, args)], timeout)

    def check_exits(self, cases, timeout=30):
        """For each (args, code, text): `scenert ARGS...` exits `code` with `text` in its stderr."""
        for args, code, text in cases:
            got, _, err = self.run_scenert(*args, timeout=timeout)
            check(got == code and text in err,
                  f"scenert {' '.join(map(str, args))}: exit {got}, want {code} with {text!r} on stderr: {err}")


def main():
    """Runs the calling file's cases (one with --case) and exits 0 when every one passed."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenert", default=cfg.scenert)
    parser.add_argument("--source", default=cfg.source)
    parser.add_argument("--work", default=cfg.work)
    parser.add_argument("--protos", help="protoc's Python output for net/proto")
    parser.add_argument("--case", help="run test_CASE only")
    args = parser.parse_args()
    cfg.scenert, cfg.source, cfg.work = args.scenert, os.path.abspath(args.source), os.path.abspath(args.work)
    if args.protos:
        sys.path.insert(0, os.path.abspath(args.protos))
    os.makedirs(cfg.work, exist_ok=True)
    suite = unittest.TestLoader().loadTestsFromModule(sys.modules["__main__"])
    tests = [t for s in suite for t in s]
    if args.case:
        tests = [t for t in tests if t._testMethodName == f"test_{args.case}"]
        if not tests:
            print(f"no test_{args.case} in {sys.argv[0]}", file=sys.stderr)
            sys.exit(2)
    result = unittest.TextTestRunner(stream=sys.stdout, verbosity=2).run(unittest.TestSuite(tests))
    sys.exit(0 if result.wasSuccessful() and result.testsRun else 1)
