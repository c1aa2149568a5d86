#!/usr/bin/env python3
"""Scene nodes of a cluster, end to end: a real nats-server (JetStream, a temporary store, a free
loopback port) and real `scenert run --cluster` processes, each stopped by its own process id.

    cluster_e2e.py CASE SCENERT SOURCE_DIR WORK_DIR
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "apps"))
from e2e import check, fail, free_port  # noqa: E402  (the apps' end-to-end helpers)

TOWN = 1


def wait_until(what, predicate, seconds, detail=None):
    """Polls `predicate` until true; past `seconds` fails, with `detail()` when given (what was seen)."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    fail(f"{what}: not within {seconds} s" + (f": {detail()}" if detail else ""))


class Server:
    """nats-server -js on a free port; stopped by its pid."""

    def __init__(self):
        self.url = None
        self.store = os.path.join(WORK, "store")
        shutil.rmtree(self.store, ignore_errors=True)  # a fresh cluster: no records of an earlier run
        for _ in range(5):  # a port another test took between free_port() and the bind: another one
            self.port = free_port()
            self.url = f"nats://127.0.0.1:{self.port}"
            if self.start(give_up=False):
                return
        fail("nats-server: no free port taken in 5 tries")

    def start(self, give_up=True):
        """Starts it (again: same port, same store) and waits until it is ready: this process, by its pid
        in its log (another test's server on the port would accept as well)."""
        exe = "/usr/sbin/nats-server" if os.path.exists("/usr/sbin/nats-server") else "nats-server"
        log = os.path.join(WORK, "nats.log")
        self.p = subprocess.Popen([exe, "-js", "-a", "127.0.0.1", "-p", str(self.port), "-sd", self.store,
                                   "-l", log])
        ready = f"[{self.p.pid}] "

        def started():
            if self.p.poll() is not None:
                return "exited"
            try:
                with open(log) as f:
                    return any(line.startswith(ready) and "Server is ready" in line for line in f)
            except OSError:
                return False
        state = wait_until("nats-server ready", started, 10)
        if state == "exited":
            check(not give_up, f"nats-server exited at once on port {self.port}: {tail(log)}")
            return False
        return True

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            self.p.wait(timeout=10)


def tail(path, lines=20):
    try:
        with open(path) as f:
            return "".join(f.readlines()[-lines:])
    except OSError as e:
        return str(e)


class Process:
    """A scenert process, its stderr collected; stopped by its pid."""

    def __init__(self, name, argv):
        self.name = name
        self.p = subprocess.Popen([SCENERT, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.lines = []
        self.reader = threading.Thread(target=lambda: self.lines.extend(iter(self.p.stderr.readline, "")),
                                       daemon=True)
        self.reader.start()

    def text(self):
        return "".join(self.lines)

    def wait_for(self, pattern, seconds=15):
        def found():
            for line in list(self.lines):
                m = re.search(pattern, line)
                if m:
                    return m
            return None
        deadline = time.time() + seconds
        while time.time() < deadline:
            m = found()
            if m:
                return m
            if self.p.poll() is not None:
                self.reader.join(timeout=2)
                m = found()
                if m:
                    return m
                fail(f"{self.name} exited {self.p.returncode} before {pattern!r}: {self.text()}")
            time.sleep(0.05)
        self.p.kill()
        fail(f"{self.name}: no {pattern!r} on stderr within {seconds} s: {self.text()}")

    def metrics(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.admin}/metrics", timeout=5) as r:
            text = r.read().decode()
        promtool = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
        check(promtool.returncode == 0, f"promtool rejects {self.name}'s /metrics: {promtool.stdout}{promtool.stderr}")
        return text

    def stop(self, want=0):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        try:
            code = self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            fail(f"{self.name} did not exit within 10 s of SIGTERM")
        self.reader.join(timeout=2)
        check(code == want, f"{self.name} exited {code}, want {want}: {self.text()}")


class Node(Process):
    """`scenert run TABLE --cluster URL --node NAME --admin 127.0.0.1:0`."""

    def __init__(self, server, name, table, dead_after_ms=1500, hosts=None):
        super().__init__(f"node {name}", ["run", table, "--workers", "1", "--admin", "127.0.0.1:0",
                                          "--cluster", server.url, "--node", name, "--dead-after-ms", str(dead_after_ms)]
                         + (["--hosts", hosts] if hosts else []))
        m = self.wait_for(r"admin endpoint http://127\.0\.0\.1:(\d+)")
        self.admin = int(m.group(1))

    def town_lines(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.admin}/scenes", timeout=5) as r:
            scenes = {s["id"]: s for s in json.loads(r.read())["scenes"]}
        return [l for l in scenes[TOWN]["lines"] if l["state"] == "open"]

    def scene_ids(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.admin}/scenes", timeout=5) as r:
            return sorted(s["id"] for s in json.loads(r.read())["scenes"])

    def open_ids(self):
        return sorted(l["line"] for l in self.town_lines())


class Gateway(Process):
    """`scenert gateway TABLE --cluster URL --name NAME --tcp 127.0.0.1:0 --admin 127.0.0.1:0`."""

    def __init__(self, server, name, table):
        super().__init__(f"gateway {name}", ["gateway", table, "--cluster", server.url, "--name", name,
                                             "--tcp", "127.0.0.1:0", "--admin", "127.0.0.1:0"])
        m = self.wait_for(r"clients on tcp://127\.0\.0\.1:(\d+); admin endpoint http://127\.0\.0\.1:(\d+)")
        self.tcp, self.admin = int(m.group(1)), int(m.group(2))


class Single(Process):
    """`scenert run TABLE --tcp 127.0.0.1:0 --admin 127.0.0.1:0`: one process, for a side-by-side figure."""

    def __init__(self, table):
        super().__init__("single", ["run", table, "--workers", "1", "--admin", "127.0.0.1:0", "--tcp", "127.0.0.1:0"])
        self.admin = int(self.wait_for(r"admin endpoint http://127\.0\.0\.1:(\d+)").group(1))
        self.tcp = int(self.wait_for(r"clients on tcp://127\.0\.0\.1:(\d+)").group(1))


def metric(text, name):
    m = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    check(m, f"/metrics lacks {name}")
    return float(m.group(1))


def kill_all(procs, server):
    """Whatever is still running after a case, by its pid; then the server. Each process's log is kept
    in the work folder (NAME.log), for a case that failed."""
    for p in procs:
        if p.p.poll() is None:
            p.p.kill()
        p.reader.join(timeout=2)
        with open(os.path.join(WORK, p.name.replace(" ", "_") + ".log"), "w") as f:
            f.write(p.text())
    server.stop()


def bots(gateways, nodes, clients, seconds, *extra):
    """`scenert bots` through every gateway, their views checked against every node's lines; its report."""
    report = os.path.join(WORK, "bots.json")
    p = subprocess.run([SCENERT, "bots", ",".join(f"127.0.0.1:{g.tcp}" for g in gateways), "--clients", str(clients),
                        "--seconds", str(seconds), "--verify-views", ",".join(f"127.0.0.1:{n.admin}" for n in nodes),
                        "--report", report, "--quiet", *extra], capture_output=True, text=True, timeout=seconds + 60)
    check(p.returncode == 0, f"bots exited {p.returncode}: {p.stdout[-3000:]}{p.stderr[-2000:]}")
    with open(report) as f:
        return json.load(f)


def table():
    """The small example with a town of min_lines 3 and max_lines 4: two nodes want 6, the cluster has 4."""
    with open(os.path.join(SRC, "examples", "small.json")) as f:
        t = json.load(f)
    t.pop("$schema", None)
    for s in t["scenes"]:
        if s["id"] == TOWN:
            s["min_lines"], s["max_lines"] = 3, 4
    path = os.path.join(WORK, "table.json")
    with open(path, "w") as f:
        json.dump(t, f)
    return path


def nodes_and_gateways(server, table_path, nodes, gateways, procs, dead_after_ms=1500):
    """Scene nodes and gateways by name, each added to `procs` as soon as it runs."""
    started = []
    for name in nodes:
        started.append(Node(server, name, table_path, dead_after_ms))
        procs.append(started[-1])
    for name in gateways:
        started.append(Gateway(server, name, table_path))
        procs.append(started[-1])
    return started


def two_nodes(server, path):
    a = Node(server, "a", path)
    wait_until("node a opens its 3 town lines", lambda: a.open_ids() == [1, 2, 3], 10)
    b = Node(server, "b", path)
    wait_until("node b opens the 4th", lambda: b.open_ids() == [4], 10)
    time.sleep(1.5)  # b keeps asking for its min_lines: the cluster still says full
    check(a.open_ids() == [1, 2, 3] and b.open_ids() == [4], f"max_lines 4 across nodes: {a.open_ids()} {b.open_ids()}")
    return a, b


def case_nodes():
    """max_lines across nodes; a SIGKILLed node's lines taken over; a restarted name gets a new epoch."""
    path = table()
    code = subprocess.run([SCENERT, "run", path, "--cluster", f"nats://127.0.0.1:{free_port()}", "--node", "x"],
                          capture_output=True, text=True, timeout=30)
    check(code.returncode == 2 and "nats://127.0.0.1" in code.stderr, f"no server: {code.returncode} {code.stderr}")
    code = subprocess.run([SCENERT, "run", path, "--cluster", "nats://127.0.0.1:1"], capture_output=True, text=True,
                          timeout=30)
    check(code.returncode == 2 and "--node" in code.stderr, f"--cluster without --node: {code.stderr}")
    server = Server()
    nodes = []
    try:
        a, b = two_nodes(server, path)
        nodes += [a, b]
        killed = time.time()
        a.p.kill()  # SIGKILL, by its pid
        a.p.wait(timeout=10)
        b.wait_for(r"node a \(epoch 1\) silent for \d+ ms: declared dead, 3 of its lines tombstoned")
        ids = wait_until("node b opens the dead node's lines", lambda: b.open_ids() == [1, 2, 4] and b.town_lines(), 10)
        recovered = time.time() - killed
        gens = {l["line"]: l["generation"] for l in ids}
        check(gens[1] == 2 and gens[2] == 2 and gens[4] == 1, f"generations after the takeover: {gens}")
        metrics = b.metrics()
        for line in ("scenert_cluster_epoch 1", "scenert_cluster_connected 1",
                     "scenert_cluster_nodes_declared_dead_total 1", "scenert_cluster_lines_tombstoned_total 3",
                     'scenert_scene_open_lines{scene="1",kind="town"} 3'):
            check(line in metrics, f"node b's /metrics lacks {line!r}")
        check(re.search(r"^scenert_cluster_beats_total [1-9]", metrics, re.M), "node b's /metrics: no beats")
        again = Node(server, "a", path)
        nodes.append(again)
        again.wait_for(r"node a joined the cluster at .* with epoch 2")
        wait_until("the restarted node gets the last free line", lambda: again.open_ids() == [3], 10)
        b.stop()
        again.stop()
        print(f"cluster: max_lines 4 held across two nodes; node a killed, its lines back on node b "
              f"{recovered:.2f} s later (dead after 1.5 s); a restarted with epoch 2")
    finally:
        for n in nodes:
            if n.p.poll() is None:
                n.p.kill()
        server.stop()


def case_fencing():
    """A node paused past its heartbeats and resumed serves nothing: it finds itself fenced and exits 4."""
    path = table()
    server = Server()
    nodes = []
    try:
        a, b = two_nodes(server, path)
        nodes += [a, b]
        a.p.send_signal(signal.SIGSTOP)
        b.wait_for(r"node a \(epoch 1\) silent for \d+ ms: declared dead, 3 of its lines tombstoned")
        wait_until("node b serves the paused node's lines", lambda: b.open_ids() == [1, 2, 4], 20,
                   lambda: f"b has {b.open_ids()}: {b.text()[-3000:]}")
        a.p.send_signal(signal.SIGCONT)
        a.wait_for(r"node 'a' epoch 1 is fenced: declared dead at epoch 1: this node stops serving")
        try:
            code = a.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            fail(f"the fenced node did not stop within 10 s: {a.text()}")
        a.reader.join(timeout=2)
        check(code == 4, f"the fenced node exited {code}, want 4: {a.text()}")
        check(b.open_ids() == [1, 2, 4], f"node b's lines after a's exit: {b.open_ids()}")
        b.stop()
        print("cluster: a node paused past its heartbeats was declared dead, fenced on waking, exit 4")
    finally:
        for n in nodes:
            if n.p.poll() is None:
                n.p.send_signal(signal.SIGCONT)
                n.p.kill()
        server.stop()


def case_gateways():
    """Bots through two gateways onto two nodes, views checked; then nats-server restarted under them."""
    mmo = os.path.join(SRC, "examples", "mmo.json")
    code = subprocess.run([SCENERT, "gateway", mmo, "--cluster", f"nats://127.0.0.1:{free_port()}", "--tcp",
                           "127.0.0.1:0"], capture_output=True, text=True, timeout=30)
    check(code.returncode == 2 and "nats://127.0.0.1" in code.stderr, f"gateway, no server: {code.stderr}")
    code = subprocess.run([SCENERT, "gateway", mmo, "--cluster", "nats://127.0.0.1:1"], capture_output=True,
                          text=True, timeout=30)
    check(code.returncode == 2 and "--tcp or --ws" in code.stderr, f"gateway without listeners: {code.stderr}")
    server = Server()
    procs = []
    try:
        # Nobody dies here: a node slow to beat again after the server's restart (a sanitizer build) is
        # not declared dead for it.
        a, b, g1, g2 = nodes_and_gateways(server, mmo, "ab", ["g1", "g2"], procs, dead_after_ms=5000)
        check(g1.wait_for(r"player ids (\d+)-").group(1) != g2.wait_for(r"player ids (\d+)-").group(1),
              "both gateways took the same player ids")
        r = bots([g1, g2], [a, b], 120, 8, "--checkpoints", "2")
        views = r["views"]
        check(views["verified"] and views["mismatches"] == 0 and views["final"]["bots"] >= 100,
              f"steady run's views: {views}; errors: {r['errors']}")
        check(len(views["checkpoints"]) == 2, f"checkpoints: {views['checkpoints']}")
        check(r["errors"]["count"] == 0, f"steady run's errors: {r['errors']}")
        for g in (g1, g2):
            m = g.metrics()
            check(metric(m, "scenert_gateway_live_nodes") == 2, f"{g.name} sees {metric(m, 'scenert_gateway_live_nodes')} nodes")
            check(metric(m, "scenert_gateway_answers_total") > 0 and metric(m, "scenert_gateway_event_batches_total") > 0,
                  f"{g.name}: no answers or events")
            check(metric(m, "scenert_gateway_bad_messages_total") == 0, f"{g.name}: bad messages")
        on = [metric(n.metrics(), "scenert_world_players") for n in (a, b)]
        print(f"cluster: {views['final']['bots']} bots through 2 gateways on 2 nodes ({on[0]:.0f} + {on[1]:.0f} players "
              f"placed at the end), 0 view mismatches at 2 checkpoints and the end")

        # nats-server restarted mid-run: nobody exits, the views are right again at the end. The first
        # run's players wait for their resume (the table's resume_ms) first: leaving in the middle of
        # the final check, they would race its reading of the nodes.
        wait_until("the first run's players gone", lambda: all(
            metric(g.metrics(), "scenert_net_detached_players") == 0 for g in (g1, g2)), 20)
        result = {}
        t = threading.Thread(target=lambda: result.update(bots([g1, g2], [a, b], 60, 8)))
        t.start()
        time.sleep(3)
        server.stop()
        time.sleep(1)
        server.start()
        t.join(timeout=80)
        views = result["views"]
        check(views["verified"] and views["mismatches"] == 0, f"views after the restart: {views}; errors: {result['errors']}")
        for g in (g1, g2):
            g.wait_for(r"came back; asking every node for its lines")
        for p in procs:
            check(p.p.poll() is None, f"{p.name} exited across the restart: {p.text()}")
        print(f"cluster: nats-server restarted under {views['final']['bots']} bots: every process stayed, "
              f"0 view mismatches at the end ({result['errors']['count']} errors during the outage)")
        for p in (g1, g2, a, b):
            p.stop()
    finally:
        kill_all(procs, server)


def case_failover():
    """Three nodes, two gateways, bots through both: one node SIGKILLed mid-run; its players are placed
    again by their gateways and every bot ends in exactly one place, its view right."""
    mmo = os.path.join(SRC, "examples", "mmo.json")
    server = Server()
    procs = []
    try:
        a, b, c, g1, g2 = nodes_and_gateways(server, mmo, "abc", ["g1", "g2"], procs)
        result = {}
        t = threading.Thread(target=lambda: result.update(bots([g1, g2], [b, c], 90, 10)))
        t.start()
        time.sleep(4)
        on_a = metric(a.metrics(), "scenert_world_players")
        killed = time.time()
        a.p.kill()  # SIGKILL, by its pid
        a.p.wait(timeout=10)
        for g in (g1, g2):
            g.wait_for(r"node a was declared dead; \d+ of its players placed again")
        recovered = time.time() - killed
        t.join(timeout=90)
        check("views" in result, "the bots did not finish")
        views = result["views"]
        check(views["verified"] and views["mismatches"] == 0 and views["final"]["misplaced"] == 0,
              f"views after node a died: {views}; errors: {result['errors']}")
        placed = sum(metric(g.metrics(), "scenert_gateway_players_placed_again_total") for g in (g1, g2))
        check(on_a > 0 and placed > 0, f"node a held {on_a} players, {placed} placed again")
        for p in (b, c, g1, g2):
            check(p.p.poll() is None, f"{p.name} exited: {p.text()}")
        print(f"cluster: node a SIGKILLed with {on_a:.0f} players on it; {placed:.0f} placed again by the gateways "
              f"{recovered:.1f} s after the kill; {views['final']['bots']} bots, 0 view mismatches at the end")
        for p in (g1, g2, b, c):
            p.stop()
    finally:
        kill_all(procs, server)


def case_gateway_failover():
    """Two nodes, two gateways, bots through both: one gateway SIGKILLed mid-run; its clients come back
    through the other with their resume tokens and get their players back where they stood."""
    gateway_leaves("SIGKILLed", lambda g: (g.p.kill(), g.p.wait(timeout=10)))


def case_gateway_drain():
    """As gateway_failover, the gateway stopped by SIGTERM (a rolling restart): it exits 0 and tells its
    clients to log in again with their tokens; their players stay in the world for them meanwhile."""
    gateway_leaves("stopped by SIGTERM", lambda g: g.stop())


def gateway_leaves(how, end):
    mmo = os.path.join(SRC, "examples", "mmo.json")
    server = Server()
    procs = []
    try:
        a, b, g1, g2 = nodes_and_gateways(server, mmo, "ab", ["g1", "g2"], procs)
        result = {}
        t = threading.Thread(target=lambda: result.update(bots([g1, g2], [a, b], 80, 10, "--resume")))
        t.start()
        time.sleep(4)
        on_g1 = metric(g1.metrics(), "scenert_net_connections")
        end(g1)  # by its pid
        t.join(timeout=90)
        check("views" in result, "the bots did not finish")
        views = result["views"]
        check(views["verified"] and views["mismatches"] == 0 and views["final"]["misplaced"] == 0,
              f"views after gateway g1 {how}: {views}; errors: {result['errors']}")
        check(result["errors"]["count"] == 0, f"errors: {result['errors']}")
        resumed, resume = result["resumed"], result["resume"]
        claims = metric(g2.metrics(), "scenert_gateway_claims_total")
        check(on_g1 > 0 and resumed == on_g1 and claims == resumed,
              f"g1 had {on_g1} clients; {resumed} resumed through g2, which claimed {claims}")
        for p in (a, b, g2):
            check(p.p.poll() is None, f"{p.name} exited: {p.text()}")
        # The nodes saw g1 fall silent; every player of it was claimed, none left behind.
        for n in (a, b):
            wait_until(f"node {n.name} declares g1 lost",
                       lambda: metric(n.metrics(), "scenert_cluster_gateways_lost_total") == 1, 10)
            check(metric(n.metrics(), "scenert_cluster_players_abandoned_total") == 0, f"{n.name} abandoned players")
        asked = sum(metric(n.metrics(), "scenert_cluster_claims_total") for n in (a, b))
        check(asked >= resumed, f"the nodes answered {asked} claims for {resumed} resumes")
        print(f"cluster: gateway g1 {how} with {on_g1:.0f} clients; all resumed through g2 with their players "
              f"(dropped to view again p50 {resume['p50_ms']:.0f} ms, p99 {resume['p99_ms']:.0f} ms); "
              f"{views['final']['bots']} bots, 0 view mismatches at the end")
        for p in (g2, a, b):
            p.stop()
    finally:
        kill_all(procs, server)


def case_journeys():
    """Team joins across nodes: bots that switch scenes and join their party's leader wherever it stands,
    through two gateways onto two nodes; every join to another node is a journey (handed over by the
    player's node). 0 view mismatches; the joins' answer times side by side with one process."""
    mmo = os.path.join(SRC, "examples", "mmo.json")
    plan = ("--mix", "enter_field=0,enter_dungeon=0,join_team=2,transfer=1,enter_phase=0,leave_phase=0,back_to_town=0",
            "--act-every", "0.5", "--party-size", "4")
    procs = []
    server = Server()
    try:
        single = Single(mmo)
        procs.append(single)
        alone = bots([single], [single], 80, 10, *plan)
        check(alone["views"]["mismatches"] == 0, f"one process's views: {alone['views']}")
        single.stop()
        a, b, g1, g2 = nodes_and_gateways(server, mmo, "ab", ["g1", "g2"], procs)
        r = bots([g1, g2], [a, b], 80, 10, *plan)
        views = r["views"]
        check(views["verified"] and views["mismatches"] == 0 and views["final"]["misplaced"] == 0,
              f"views after the journeys: {views}; errors: {r['errors']}")
        journeys = sum(metric(g.metrics(), "scenert_gateway_journeys_total") for g in (g1, g2))
        failed = sum(metric(g.metrics(), "scenert_gateway_journeys_failed_total") for g in (g1, g2))
        handed = sum(metric(n.metrics(), "scenert_cluster_handoffs_out_total") for n in (a, b))
        check(journeys >= 10, f"only {journeys:.0f} journeys between the nodes")
        # A journey the target refused (its mate switching or gone meanwhile) leaves the player where it was.
        check(handed == journeys + failed,
              f"the nodes handed over {handed:.0f} players, the gateways saw {journeys:.0f} journeys and {failed:.0f} refused")
        one, two = alone["request_rtt"]["join_team"], r["request_rtt"]["join_team"]
        print(f"cluster: {journeys:.0f} team joins took their player to the other node ({failed:.0f} refused there, "
              f"0 view mismatches); "
              f"join_team answered p50 {two['p50_ms']:.1f} ms, p99 {two['p99_ms']:.1f} ms over {two['count']} joins "
              f"(one process, same plan: p50 {one['p50_ms']:.1f} ms, p99 {one['p99_ms']:.1f} ms over {one['count']})")
        for p in (g1, g2, a, b):
            p.stop()
    finally:
        kill_all(procs, server)


def case_roles():
    """Towns and fields on one node, dungeons on another (`--hosts`): bots through two gateways enter
    dungeons, parties' instances and phases, and come back; every player goes only to a node hosting its
    scene (a journey when it crosses), 0 view mismatches."""
    mmo = os.path.join(SRC, "examples", "mmo.json")
    server = Server()
    procs = []
    try:
        code = subprocess.run([SCENERT, "run", mmo, "--cluster", server.url, "--node", "x", "--hosts", "space"],
                              capture_output=True, text=True, timeout=30)
        check(code.returncode == 2 and "space" in code.stderr, f"--hosts space: {code.returncode} {code.stderr}")
        towns = Node(server, "towns", mmo, hosts="town,field,guild")
        procs.append(towns)
        dungeons = Node(server, "dungeons", mmo, hosts="dungeon")
        procs.append(dungeons)
        g1, g2 = Gateway(server, "g1", mmo), Gateway(server, "g2", mmo)
        procs += [g1, g2]
        with open(mmo) as f:
            kinds = {s["id"]: s["kind"] for s in json.load(f)["scenes"]}
        check(all(kinds[i] in ("town", "field", "guild", "space") for i in towns.scene_ids()),
              f"the towns node hosts {towns.scene_ids()}")
        check(all(kinds[i] == "dungeon" for i in dungeons.scene_ids()), f"the dungeons node hosts {dungeons.scene_ids()}")
        r = bots([g1, g2], [towns, dungeons], 80, 10, "--party-size", "4", "--act-every", "0.5", "--mix",
                 "enter_field=1,enter_dungeon=3,join_team=1,transfer=1,enter_phase=1,leave_phase=1,back_to_town=2")
        views = r["views"]
        check(views["verified"] and views["mismatches"] == 0 and views["final"]["misplaced"] == 0,
              f"views across the two roles: {views}; errors: {r['errors']}")
        journeys = sum(metric(g.metrics(), "scenert_gateway_journeys_total") for g in (g1, g2))
        check(journeys >= 10, f"only {journeys:.0f} journeys between the towns and the dungeons")
        print(f"cluster: towns, fields and guilds on one node, dungeons on another: {journeys:.0f} journeys between "
              f"them, {views['final']['bots']} bots, 0 view mismatches")
        for p in (g1, g2, towns, dungeons):
            p.stop()
    finally:
        kill_all(procs, server)


def case_sequence():
    """The faults one after another under one run of bots through both gateways: a node SIGKILLed, then a
    gateway SIGKILLed, then nats-server restarted. Every bot ends in exactly one place with its view right,
    and the time each recovery took is reported."""
    mmo = os.path.join(SRC, "examples", "mmo.json")
    server = Server()
    procs = []
    try:
        a, b, c, g1, g2 = nodes_and_gateways(server, mmo, "abc", ["g1", "g2"], procs)
        result = {}
        t = threading.Thread(target=lambda: result.update(bots([g1, g2], [b, c], 90, 18, "--resume")))
        t.start()
        time.sleep(3)
        killed = time.time()
        a.p.kill()  # SIGKILL, by its pid
        a.p.wait(timeout=10)
        g1.wait_for(r"node a was declared dead; \d+ of its players placed again")
        node_recovery = time.time() - killed
        time.sleep(1)
        g1.p.kill()
        g1.p.wait(timeout=10)
        time.sleep(2)
        restarted = time.time()
        server.stop()
        time.sleep(1)
        server.start()
        g2.wait_for(r"every client's view sent again", 20)
        link_recovery = time.time() - restarted
        t.join(timeout=90)
        check("views" in result, "the bots did not finish")
        for p in (b, c, g2):
            check(p.p.poll() is None, f"{p.name} exited: {p.text()[-4000:]}")
        views = result["views"]
        check(views["verified"] and views["mismatches"] == 0 and views["final"]["misplaced"] == 0,
              f"views after the three faults: {views}; errors: {result['errors']}")
        check(result["resumed"] > 0, "no bot resumed after g1 died")
        on = sum(metric(n.metrics(), "scenert_world_players") for n in (b, c))
        # None lost, none twice: once the bots' players waited out their resume_ms, the nodes hold nobody.
        wait_until("every bot's player gone from the nodes", lambda: sum(
            metric(n.metrics(), "scenert_world_players") for n in (b, c)) == 0, 30)
        resume = result["resume"]
        print(f"cluster: node a SIGKILLed, its players placed again {node_recovery:.1f} s later; gateway g1 "
              f"SIGKILLed, {result['resumed']} clients back through g2 (p50 {resume['p50_ms']:.0f} ms, p99 "
              f"{resume['p99_ms']:.0f} ms); nats-server restarted, every view sent again {link_recovery:.1f} s "
              f"after; {views['final']['bots']} bots checked at the end, each in one place ({on:.0f} players on "
              f"the nodes), 0 view mismatches; all gone after their resume_ms")
        for p in (g2, b, c):
            p.stop()
    finally:
        kill_all(procs, server)


if __name__ == "__main__":
    CASE, SCENERT, SRC, WORK = sys.argv[1:5]
    os.makedirs(WORK, exist_ok=True)
    globals()[f"case_{CASE}"]()
