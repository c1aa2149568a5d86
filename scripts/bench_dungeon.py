#!/usr/bin/python3
"""Many instances of the reference dungeon at once, through the network: `dungeon_server run` (examples/
dungeon, built against the installed package) on loopback with a copy of its table that admits them all,
and `dungeon_server bots --play crypt` with one party per instance. Each party logs in, enters an
instance of its own, fights the boss to death, opens the chest, hears its loot and finds it again.

While the parties play, the server's /metrics and its CPU (/proc) are read twice a second. The figures
are taken over the stretch when (nearly) every instance was open at once:
  - tick duration p50 / p99 / max bucket of the pool's services (the crypt's group services, which
    tick the instances, are nearly all of them; the town's lines and the world's own tick are in too),
    against the slot (the crypt's period, 100 ms at 10 Hz), and the tick lateness p99;
  - overruns (pool ticks that started a period or more late; the crypt's grouped member ticks over
    their budget);
  - the server's CPU (every thread, user + system) per instance-tick (open instances x frame rate x
    seconds) and as a share of one core;
and over the whole run: the store's grants written per second (from the first to the last grant), its
commits, and a grant's write-to-answer p50 / p99 (scenert_store_grant_seconds); the parties through,
kills, chests and items found again from the bots' report.

Server and bots run on cores of their own (scripts/pinning.py; --no-pin to share). Every process is
stopped by its own id; every wait has a deadline. One JSON report on stdout (or --json FILE), then a
short table.

  scripts/bench_dungeon.py [--parties 1000] [--party-size 2] [--seconds 180] [--quick]
                           [--server build/dungeon/dungeon_server] [--work DIR] [--json FILE] [--no-pin]
--quick: a weak boss and short cooldowns (fights of seconds, as tests/consumer/dungeon_play.py).
Exit 0 when every party got through and every figure was read (overruns are reported, not judged), 1
otherwise, 2 on a usage or start error.
"""
import argparse
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pinning  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICK = os.sysconf("SC_CLK_TCK")
CRYPT, TOWN = 2, 1


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def bench_table(a):
    """The example's table with room for every party: the crypt admits them all, the town holds every bot
    at once (they land there first)."""
    with open(os.path.join(ROOT, "examples", "dungeon", "table.json")) as f:
        table = json.load(f)
    scenes = {s["id"]: s for s in table["scenes"]}
    crypt, town = scenes[CRYPT], scenes[TOWN]
    crypt["max_lines"] = max(crypt["max_lines"], a.parties + 10)
    bots = a.parties * a.party_size
    town["max_lines"] = max(town["max_lines"], math.ceil(bots / town["capacity"]) + 2)
    if a.quick:
        crypt["module"].update(boss_health=600, attack_cooldown_ms=100, boss_step_ms=100, add_step_ms=100,
                               strike_ms=500)
    path = os.path.join(a.work, "bench_table.json")
    with open(path, "w") as f:
        json.dump(table, f)
    return path, crypt.get("frame_rate", 10)


SAMPLE = re.compile(r'^(\w+)(?:\{([^}]*)\})? (\S+)$', re.M)


def parse(text):
    """{(name, labels text): value} of every sample in a /metrics text."""
    return {(m.group(1), m.group(2) or ""): float(m.group(3)) for m in SAMPLE.finditer(text)}


def buckets(sample, name):
    """[(upper bound in seconds, cumulative count)] of histogram `name`, +Inf last."""
    out = []
    for (n, labels), v in sample.items():
        if n == f"{name}_bucket":
            le = re.search(r'le="([^"]+)"', labels).group(1)
            out.append((math.inf if le == "+Inf" else float(le), v))
    return sorted(out)


def quantile(before, after, name, q):
    """The upper bound (ms) of the bucket holding the q-th value recorded between two samples; None if none."""
    b0 = dict(buckets(before, name))
    diff = [(le, c - b0.get(le, 0)) for le, c in buckets(after, name)]
    total = diff[-1][1] if diff else 0
    if total <= 0:
        return None
    rank = max(1, math.ceil(q * total))
    for le, c in diff:
        if c >= rank:
            return round(le * 1000, 3) if le != math.inf else math.inf
    return None


def value(sample, name, labels=""):
    """A sample's value: the one of `name` whose labels include `labels` (e.g. 'scene="2"'), else 0."""
    if not labels:
        return sample.get((name, ""), 0.0)
    return next((v for (n, l), v in sample.items() if n == name and labels in l.split(",")), 0.0)


class Watch:
    """The server's /metrics and CPU twice a second on a thread, until stop()."""

    def __init__(self, pid, admin):
        self.pid, self.admin, self.samples = pid, admin, []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def read(self):
        text = urllib.request.urlopen(f"http://127.0.0.1:{self.admin}/metrics", timeout=10).read().decode()
        return {"t": time.monotonic(), "cpu": cpu_seconds(self.pid), "m": parse(text)}

    def _run(self):
        while True:
            try:
                self.samples.append(self.read())
            except (OSError, FileNotFoundError):
                pass
            if self.done.wait(0.5):
                return

    def stop(self):
        self.done.set()
        self.thread.join(timeout=15)
        return self.samples


def open_instances(s):
    return value(s["m"], "scenert_scene_open_lines", f'scene="{CRYPT}"')


def busy_stretch(samples, parties):
    """The first and last sample of the longest run of samples with at least 95% of the parties' instances
    open (at least two samples), or None."""
    want = 0.95 * parties
    best, start = None, None
    for i, s in enumerate(samples + [None]):
        full = s is not None and open_instances(s) >= want
        if full and start is None:
            start = i
        if not full and start is not None:
            if i - 1 > start and (best is None or i - 1 - start > best[1] - best[0]):
                best = (start, i - 1)
            start = None
    return (samples[best[0]], samples[best[1]]) if best else None


def window_figures(samples, s0, s1, hz):
    m0, m1 = s0["m"], s1["m"]
    seconds = s1["t"] - s0["t"]
    cpu = s1["cpu"] - s0["cpu"]
    inside = samples[samples.index(s0):samples.index(s1) + 1]
    # Instance-ticks: the open instances between each two samples (their mean) times the ticks between.
    instance_ticks = sum((open_instances(a) + open_instances(b)) / 2 * hz * (b["t"] - a["t"])
                         for a, b in zip(inside, inside[1:]))
    instances = instance_ticks / (hz * seconds) if seconds else 0
    return {
        "seconds": round(seconds, 1), "open_instances": round(instances, 1),
        "slot_ms": round(1000 / hz, 1),
        "tick_p50_ms": quantile(m0, m1, "scenert_tick_duration_seconds", 0.50),
        "tick_p99_ms": quantile(m0, m1, "scenert_tick_duration_seconds", 0.99),
        "tick_max_bucket_ms": quantile(m0, m1, "scenert_tick_duration_seconds", 1.0),
        "lateness_p99_ms": quantile(m0, m1, "scenert_tick_lateness_seconds", 0.99),
        "ticks": round(value(m1, "scenert_ticks_total") - value(m0, "scenert_ticks_total")),
        "overruns": round(value(m1, "scenert_tick_overruns_total") - value(m0, "scenert_tick_overruns_total")),
        "crypt_member_overruns": round(value(m1, "scenert_scene_tick_overruns_total", f'scene="{CRYPT}"')
                                       - value(m0, "scenert_scene_tick_overruns_total", f'scene="{CRYPT}"')),
        "server_cpu_s": round(cpu, 2), "server_core_share": round(cpu / seconds, 3) if seconds else None,
        "cpu_us_per_instance_tick": round(cpu * 1e6 / instance_ticks, 2) if instance_ticks else None,
    }


def store_figures(samples):
    """Grants written per second from the first sample that saw one to the first that saw them all."""
    written = [(s["t"], value(s["m"], "scenert_store_grants_total", 'outcome="written"')) for s in samples]
    last = samples[-1]["m"]
    total = written[-1][1] if written else 0
    first = next((t for t, n in written if n > 0), None)
    done = next((t for t, n in written if n >= total), None)
    per_s = [round(n1 - n0) / (t1 - t0) for (t0, n0), (t1, n1) in zip(written, written[1:]) if t1 > t0]
    return {
        "grants_written": round(total),
        "grants_failed": round(value(last, "scenert_store_grants_total", 'outcome="failed"')),
        "grant_repeats": round(value(last, "scenert_store_grants_total", 'outcome="repeat"')),
        "commits": round(value(last, "scenert_store_commits_total")),
        "grants_per_s": round(total / (done - first), 1) if first is not None and done and done > first else None,
        "grants_per_s_peak_half_second": round(max(per_s), 1) if per_s else None,
        "grant_p50_ms": quantile({}, last, "scenert_store_grant_seconds", 0.50),
        "grant_p99_ms": quantile({}, last, "scenert_store_grant_seconds", 0.99),
        "grant_max_bucket_ms": quantile({}, last, "scenert_store_grant_seconds", 1.0),
    }


def start_server(a, table):
    store = os.path.join(a.work, "crypt.store.sqlite")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(store + suffix):
            os.unlink(store + suffix)
    log = open(os.path.join(a.work, "server.log"), "w+")
    server = subprocess.Popen(pinning.pinned(
        [a.server, "run", table, "--tcp", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--store", store,
         "--max-connections", str(a.parties * a.party_size + 100)], a.pin and a.pin[0]),
        stdout=subprocess.DEVNULL, stderr=log, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and server.poll() is None:
        log.seek(0)
        text = log.read()
        tcp = re.search(r"clients on tcp://127\.0\.0\.1:(\d+)", text)
        admin = re.search(r"admin endpoint http://127\.0\.0\.1:(\d+)", text)
        if tcp and admin:
            return server, int(tcp.group(1)), int(admin.group(1))
        time.sleep(0.1)
    stop(server)
    log.seek(0)
    sys.exit(f"bench_dungeon: {a.server} run did not start within 30 s:\n{log.read()[-3000:]}")


def stop(p, deadline=20):
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=deadline)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=10)
    return p.returncode


def loadavg():
    return open("/proc/loadavg").read().split()[:3]


def run(a):
    table, hz = bench_table(a)
    server, tcp, admin = start_server(a, table)
    report_path = os.path.join(a.work, "play.json")
    pins = []
    load0 = loadavg()
    try:
        watch = Watch(server.pid, admin)
        bots = subprocess.Popen(pinning.pinned(
            [a.server, "bots", f"127.0.0.1:{tcp}", "--play", "crypt", "--play-scene", str(CRYPT),
             "--parties", str(a.parties), "--party-size", str(a.party_size), "--seconds", str(a.seconds),
             "--seed", "1", "--report", report_path, "--quiet"], a.pin and a.pin[1]),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if a.pin:
            time.sleep(1)  # the server's workers and I/O threads have started by now
            pins = [pinning.check("dungeon_server run", server.pid, a.pin[0]),
                    pinning.check("dungeon_server bots", bots.pid, a.pin[1])]
        try:
            out, err = bots.communicate(timeout=a.seconds + 60)
        except subprocess.TimeoutExpired:
            bots.kill()
            out, err = bots.communicate(timeout=10)
        samples = watch.stop()
    finally:
        server_exit = stop(server)
    load1 = loadavg()
    try:
        with open(report_path) as f:
            play = json.load(f)
    except (OSError, ValueError):
        sys.exit(f"bench_dungeon: the bots wrote no report (exit {bots.returncode}):\n{out[-2000:]}\n{err[-2000:]}")
    stretch = busy_stretch(samples, a.parties)
    r = {
        "bench": "dungeon", "parties": a.parties, "party_size": a.party_size, "quick": a.quick, "frame_rate": hz,
        "server": a.server, "pinned": bool(a.pin), "pinning": [line for _, line in pins],
        "loadavg_before": load0, "loadavg_after": load1, "samples": len(samples),
        "peak_open_instances": round(max((open_instances(s) for s in samples), default=0)),
        "all_open": window_figures(samples, *stretch, hz) if stretch else None,
        "whole_run": window_figures(samples, samples[0], samples[-1], hz) if len(samples) > 1 else None,
        "store": store_figures(samples) if samples else None,
        "play": {k: play.get(k) for k in ("parties_through", "parties_failed", "kills", "chests_opened",
                                          "phases_in_order", "grants", "items_granted", "items_found",
                                          "items_missing", "refused", "errors", "wall_seconds", "fight_p50_s",
                                          "fight_max_s", "module_messages", "phase_orders")},
        "error_examples": play.get("error_examples", [])[:5],
        "bots_exit": bots.returncode, "server_exit": server_exit,
    }
    return r


def table_text(r):
    w, s, p = r["all_open"] or r["whole_run"] or {}, r["store"] or {}, r["play"]
    rows = [
        ("parties x size", f"{r['parties']} x {r['party_size']}" + (" (quick)" if r["quick"] else "")),
        ("through / failed", f"{p['parties_through']} / {p['parties_failed']} (kills {p['kills']}, "
                             f"chests {p['chests_opened']}, items found again {p['items_found']} of {p['items_granted']})"),
        ("all open", f"{w.get('open_instances')} instances for {w.get('seconds')} s"
                     + ("" if r["all_open"] else " (never 95% open at once: whole run)")),
        ("tick p50/p99/max", f"{w.get('tick_p50_ms')} / {w.get('tick_p99_ms')} / {w.get('tick_max_bucket_ms')} ms "
                             f"(slot {w.get('slot_ms')} ms); lateness p99 {w.get('lateness_p99_ms')} ms"),
        ("overruns", f"{w.get('overruns')} pool, {w.get('crypt_member_overruns')} crypt members"),
        ("server CPU", f"{w.get('cpu_us_per_instance_tick')} us per instance-tick, "
                       f"{w.get('server_core_share')} of a core"),
        ("store", f"{s.get('grants_written')} grants in {s.get('commits')} commits, {s.get('grants_per_s')}/s "
                  f"(peak {s.get('grants_per_s_peak_half_second')}/s), p50 {s.get('grant_p50_ms')} ms, "
                  f"p99 {s.get('grant_p99_ms')} ms, failed {s.get('grants_failed')}"),
        ("load average", f"{' '.join(r['loadavg_before'])} -> {' '.join(r['loadavg_after'])}"),
    ]
    return "\n".join(f"{k:>18}  {v}" for k, v in rows)


def run_problems(r):
    """What makes the run fail (exit 1): a party not through, a process that did not exit 0, a figure
    missing, a grant the bots heard that the store's counters lack. Overruns are reported, not judged."""
    p, s, w = r["play"], r["store"] or {}, r["all_open"] or r["whole_run"] or {}
    out = []
    if p["parties_through"] != r["parties"] or p["parties_failed"]:
        out.append(f"{p['parties_through']} of {r['parties']} parties through, {p['parties_failed']} failed: "
                   f"{r['error_examples']}")
    if r["bots_exit"] != 0 or r["server_exit"] != 0:
        out.append(f"the bots exited {r['bots_exit']}, the server {r['server_exit']}")
    if w.get("tick_p99_ms") is None or w.get("cpu_us_per_instance_tick") is None:
        out.append(f"no tick or CPU figures: {w}")
    if s.get("grants_written", 0) < (p["grants"] or 0) or s.get("grant_p99_ms") is None:
        out.append(f"the store counted {s.get('grants_written')} grants written, the bots heard {p['grants']}")
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--parties", type=int, default=1000)
    p.add_argument("--party-size", type=int, default=2)
    p.add_argument("--seconds", type=float, default=180, help="the bots' deadline for every party")
    p.add_argument("--quick", action="store_true", help="a weak boss and short cooldowns")
    p.add_argument("--server", default=f"{ROOT}/build/dungeon/dungeon_server")
    p.add_argument("--work", help="where the table copy, the store and the logs go (default: a new temp folder)")
    p.add_argument("--json", help="write the report to this file too")
    p.add_argument("--no-pin", action="store_true", help="let the server and the bots share every core")
    a = p.parse_args()
    if a.parties < 1 or a.party_size < 1 or a.seconds <= 0:
        p.error("--parties, --party-size and --seconds must be positive")
    if not os.access(a.server, os.X_OK):
        p.error(f"--server {a.server}: not an executable (build examples/dungeon against the installed package)")
    made = a.work is None
    a.work = a.work or tempfile.mkdtemp(prefix="bench_dungeon.")
    os.makedirs(a.work, exist_ok=True)
    a.pin = None if a.no_pin else pinning.plan(pinning.usable_cores())
    print(pinning.announce(a.pin) if not a.no_pin else "not pinned (--no-pin)", file=sys.stderr, flush=True)
    r = run(a)
    text = json.dumps(r, indent=1)
    print(text)
    if a.json:
        with open(a.json, "w") as f:
            f.write(text + "\n")
    print(table_text(r))
    if made and r["play"]["parties_failed"] == 0:
        shutil.rmtree(a.work, ignore_errors=True)
    problems = run_problems(r)
    for problem in problems:
        print(f"bench_dungeon: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
