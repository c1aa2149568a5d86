#!/usr/bin/env python3
"""Seeded chaos under a thousand clients: a real nats-server, three scene nodes, two gateways and
`scenert bots --resume` through both, while a nemesis applies every fault kind once, one at a time, in
an order and with targets, pauses and gaps drawn from one seed, and waits after each until every bot's
player is placed again. A checker then reads the whole run: every bot ends in exactly one place with
its view right, no line was ever open above its scene's max_lines, the nodes' and gateways' counts
agreed after every recovery, and no client was lost. Run through tests/harness (the `chaos` stage of
scripts/test.sh):
    chaos.py --scenert PATH --source DIR --work DIR [--case nemesis]
The seed is printed; SCENERT_CHAOS_SEED=N replays that schedule.
"""
import json
import os
import pathlib
import random
import signal
import sys
import threading
import time
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "harness"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "cluster"))
import scenert_harness as harness  # noqa: E402
from scenert_harness import check, eventually  # noqa: E402
import cluster_e2e as cluster  # noqa: E402

CLIENTS = int(os.environ.get("SCENERT_CHAOS_CLIENTS", "1000"))
BOT_SECONDS = 150  # the bots' longest run (ended once the last fault healed); no fault starts in its
# last LAST_QUIET seconds
LAST_QUIET = 25
DEAD_AFTER_MS = 3000  # a node or gateway silent this long is declared dead (the default)
RECOVERY_DEADLINE = 60  # seconds for every bot's player to be placed again after a fault
KINDS = ("node_kill", "node_stop", "gateway_kill", "gateway_stop", "nats_restart")
# SCENERT_CHAOS_KINDS=k1,k2 limits a run to those kinds (to look into one).
TRIED = tuple(os.environ.get("SCENERT_CHAOS_KINDS", ",".join(KINDS)).split(","))


class Fault:
    """One fault of the schedule: its kind, its target's index, how long a stopped process stays
    stopped, and the quiet gap before the next fault."""

    def __init__(self, kind, target, pause, gap):
        self.kind, self.target, self.pause, self.gap = kind, target, pause, gap
        self.began = self.recovered = None
        self.window = None  # (began, recovered) by the wall clock, as the bots' request log says

    def __str__(self):
        stop = f" for {self.pause:.1f} s" if self.kind.endswith("_stop") else ""
        return f"{self.kind} #{self.target}{stop}"


def schedule(seed):
    """Every fault kind once, in a seeded order, with seeded targets, pauses and gaps. A stopped process
    stays stopped past DEAD_AFTER_MS: it is declared dead (a node wakes fenced and exits 4)."""
    rng = random.Random(seed)
    kinds = [kind for kind in KINDS if kind in TRIED]
    rng.shuffle(kinds)
    return [Fault(kind, rng.randrange(3 if kind.startswith("node") else 2),
                  round(rng.uniform(3.5, 5.0), 1), round(rng.uniform(1.0, 4.0), 1)) for kind in kinds]


def max_lines_of(table):
    """Per scene with lines of its own (a phase scene has none: its town holds it), its max_lines."""
    with open(table) as f:
        return {s["id"]: s["max_lines"] for s in json.load(f)["scenes"] if "max_lines" in s}


class LineWatch:
    """Reads every live node's /scenes twice a second on its own thread and keeps, per scene, the
    most lines ever open at once across the nodes (a node the nemesis stopped or fenced is not asked:
    its lines are being taken over)."""

    def __init__(self, nodes, max_lines):
        self.nodes, self.max_lines = nodes, max_lines
        self.lock = threading.Lock()
        self.skipped = set()
        self.most = {}
        self.rounds = 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def skip(self, name, skipped=True):
        with self.lock:
            (self.skipped.add if skipped else self.skipped.discard)(name)

    def open_lines(self, node):
        url = f"http://127.0.0.1:{node.admin}/scenes"
        with urllib.request.urlopen(url, timeout=0.5) as r:
            scenes = json.load(r)["scenes"]
        return {s["id"]: sum(1 for line in s["lines"] if line["state"] == "open") for s in scenes}

    def run(self):
        while not self.done.wait(0.5):
            with self.lock:
                asked = [n for n in self.nodes if n.name not in self.skipped and n.running()]
            counts = {}
            for n in asked:
                try:
                    for scene, lines in self.open_lines(n).items():
                        counts[scene] = counts.get(scene, 0) + lines
                except OSError:
                    pass  # a node that just died or stopped: the next round sees it gone
            with self.lock:
                self.rounds += 1
                for scene, lines in counts.items():
                    self.most[scene] = max(self.most.get(scene, 0), lines)

    def stop(self):
        self.done.set()
        self.thread.join(5)
        return {scene: (most, self.max_lines[scene]) for scene, most in self.most.items()
                if scene in self.max_lines and most > self.max_lines[scene]}


class Chaos(harness.Case):
    def start_node(self, server, table, name, admin, start=1):
        return cluster.node(self, server, name, table, DEAD_AFTER_MS, admin=admin, start=start)

    def start_gateway(self, server, table, name, tcp, admin, start=1):
        # Every bot logs in, from a process as loaded as the servers: one whose login left later than the
        # default 50 ms would play as a guest, with no token to come back with when its gateway dies.
        return cluster.gateway(self, server, name, table, tcp, admin, start, "--guest-wait-ms", 2000)

    def placed(self, nodes, gateways):
        """Players on the live nodes and players routed by the live gateways."""
        live = [p for p in nodes + gateways if p.running()]
        on = sum(p.metric("scenert_world_players") for p in live if p in nodes)
        routed = sum(p.metric("scenert_gateway_players") for p in live if p in gateways)
        return on, routed

    def wait_placed(self, nodes, gateways, what):
        """Waits until every bot's player is on exactly one live node and routed by exactly one live
        gateway; past the deadline, says what it saw (the run goes on to its report)."""
        def seen():
            try:
                return self.placed(nodes, gateways)
            except OSError:
                return None  # a process just stopped or started: asked again
        try:
            eventually(lambda: seen() == (CLIENTS, CLIENTS), RECOVERY_DEADLINE, what, seen, period=0.1)
            return None
        except AssertionError as e:
            return str(e)

    def apply(self, fault, server, nodes, gateways, watch, table):
        """Applies one fault and brings the cluster back to full strength (a killed or fenced process is
        started again under its name and ports)."""
        fault.began = time.monotonic()
        fault.window = (time.time(), None)
        if fault.kind == "nats_restart":
            server.stop()
            cluster.wait_link_down([p for p in nodes + gateways])
            server.start()
            return
        group = nodes if fault.kind.startswith("node") else gateways
        victim = group[fault.target]
        if fault.kind.endswith("_kill"):
            victim.kill()  # SIGKILL, by its pid
        else:
            watch.skip(victim.name)
            victim.signal(signal.SIGSTOP)
            time.sleep(fault.pause)  # the fault itself: the process stays stopped this long
            victim.signal(signal.SIGCONT)
            if group is gateways:
                watch.skip(victim.name, False)
                return
            code = victim.wait(15)
            check(code == 4, f"node {victim.name} woke from {fault.pause} s stopped and exited {code}, want 4 "
                             f"(fenced): {victim.text()[-3000:]}")
        watch.skip(victim.name)
        if group is nodes:
            group[fault.target] = self.start_node(server, table, victim.member, victim.admin, victim.start + 1)
        else:
            group[fault.target] = self.start_gateway(server, table, victim.member, victim.tcp, victim.admin,
                                                     victim.start + 1)
        watch.nodes[:] = nodes
        watch.skip(victim.name, False)

    def test_nemesis(self):
        seed = int(os.environ.get("SCENERT_CHAOS_SEED") or random.SystemRandom().randrange(1, 1 << 31))
        faults = schedule(seed)
        harness.report(f"chaos: seed {seed} (SCENERT_CHAOS_SEED={seed} replays it): "
                       + ", ".join(map(str, faults)))
        table = os.path.join(harness.cfg.source, "examples", "mmo.json")
        server = cluster.Server(self)
        nodes = [self.start_node(server, table, name, harness.free_port()) for name in "abc"]
        gateways = [self.start_gateway(server, table, name, harness.free_port(), harness.free_port())
                    for name in ("g1", "g2")]
        watch = LineWatch(list(nodes), max_lines_of(table))
        requests = os.path.join(self.work, "requests.csv")
        bots = cluster.Bots(self, gateways, nodes, CLIENTS, BOT_SECONDS, "--resume", "--seed", seed,
                            "--login-timeout-ms", RECOVERY_DEADLINE * 1000, "--request-log", requests)
        started = time.monotonic()
        stuck = self.wait_placed(nodes, gateways, "every bot placed before the first fault")
        done = []
        for fault in faults:
            if stuck or time.monotonic() - started > BOT_SECONDS - LAST_QUIET:
                break  # not recovered, or too late in the bots' run to see this one recover
            self.apply(fault, server, nodes, gateways, watch, table)
            stuck = self.wait_placed(nodes, gateways, f"every bot placed again after {fault}")
            fault.recovered = time.monotonic()
            fault.window = (fault.window[0], time.time())
            done.append(fault)
            time.sleep(fault.gap)  # the seeded quiet gap between two faults
        if not stuck:  # the bots play on for about two seconds' worth of frames, then the run ends
            played = cluster.total(gateways, "scenert_net_frames_in_total")
            eventually(lambda: cluster.total(gateways, "scenert_net_frames_in_total") >= played + CLIENTS * 4, 30,
                       "the bots play on after the last fault")
            bots.end()
        result = bots.report()
        over = watch.stop()
        check(not stuck, f"{stuck}; the bots' errors: {result['errors']}, disconnects: {result['disconnects']}")
        self.judge(result, nodes, gateways, faults, done, over, watch.rounds, requests)

    def judge(self, result, nodes, gateways, faults, done, over, rounds, requests):
        cluster.still_running(nodes + gateways)
        views = cluster.check_views(result, "after the faults")
        check(views["final"]["bots"] == CLIENTS, f"{views['final']['bots']} bots checked at the end of {CLIENTS}")
        check(result["errors"]["count"] == 0, f"clients lost: {result['errors']}")
        check(not over, f"lines open above max_lines (scene: (most, max)): {over}")
        check(rounds > 10, f"the line watch read the nodes only {rounds} times")
        check(len(done) == len(faults), f"only {len(done)} of {len(faults)} faults fitted in the run")
        resume = result["resume"]
        harness.report(
            f"chaos: {CLIENTS} bots, {len(done)} faults, each recovered (every player placed again) in: "
            + ", ".join(f"{f.kind} {f.recovered - f.began:.1f} s" for f in done)
            + f"; {result['resumed']} resumes (p50 {resume['p50_ms']:.0f} ms, p99 {resume['p99_ms']:.0f} ms); "
            f"requests' p99 {request_p99(result):.0f} ms ({windowed_p99(requests, done)}); "
            f"disconnects {result['disconnects']}; "
            f"0 clients lost, 0 view mismatches, lines within max_lines over {rounds} reads")


def request_p99(result):
    return max((r["p99_ms"] for r in result["request_rtt"].values() if r["count"]), default=0)


def windowed_p99(path, faults):
    """The requests' p99 apart for those sent inside a fault's window (from the fault until every
    player was placed again) and outside every window, from the bots' request log."""
    inside, outside = [], []
    with open(path) as f:
        next(f)  # the header
        for line in f:
            sent_ms, rtt_ms = line.split(",")[:2]
            sent = int(sent_ms) / 1000.0
            hit = any(began <= sent <= recovered for began, recovered in (f.window for f in faults))
            (inside if hit else outside).append(float(rtt_ms))

    def p99(values):
        return f"{sorted(values)[min(len(values) - 1, int(len(values) * 0.99))]:.0f} ms" if values else "none"
    return (f"inside the faults' windows {p99(inside)} of {len(inside)}, "
            f"outside {p99(outside)} of {len(outside)}")


if __name__ == "__main__":
    harness.main()
