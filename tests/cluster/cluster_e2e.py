#!/usr/bin/env python3
"""Scene nodes of a cluster, end to end: a real nats-server (JetStream, a temporary store, a free
loopback port) and real `scenert run --cluster` / `scenert gateway` / `scenert bots` processes, each
stopped by its own process id. Run through tests/harness:
    cluster_e2e.py --scenert PATH --source DIR --work DIR [--case NAME]
"""
import json
import os
import pathlib
import re
import signal
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "harness"))
import scenert_harness as harness  # noqa: E402
from scenert_harness import cfg, check, eventually  # noqa: E402

TOWN = 1


class Server:
    """nats-server -js on a free loopback port with a fresh store; started again on the same port and
    store after a stop. Each run is a process of the case, stopped by its pid."""

    def __init__(self, case):
        self.case = case
        self.store = os.path.join(case.work, "store")  # the case's work folder is new: so is the cluster
        self.p = None
        for _ in range(5):  # a port another test took between free_port() and the bind: another one
            self.port = harness.free_port()
            self.url = f"nats://127.0.0.1:{self.port}"
            if self.start(give_up=False):
                return
        harness.fail("nats-server: no free port taken in 5 tries")

    def start(self, give_up=True):
        """Starts it and waits for its "Server is ready" (its own stderr: no other server's word)."""
        exe = "/usr/sbin/nats-server" if os.path.exists("/usr/sbin/nats-server") else "nats-server"
        self.p = self.case.start(f"nats-server {self.port}",
                                 [exe, "-js", "-a", "127.0.0.1", "-p", str(self.port), "-sd", self.store])
        try:
            self.p.wait_for_line(r"Server is ready", 10)
            return True
        except AssertionError:
            if give_up or self.p.running():
                raise
            return False  # it exited at once: the port was taken

    def stop(self):
        self.p.stop(want=None, deadline=10)  # nats-server 2.9 exits 1 on SIGTERM


def node(case, server, name, table, dead_after_ms=3000, hosts=None, admin=0, start=1):
    """`scenert run TABLE --cluster URL --node NAME --admin 127.0.0.1:ADMIN`, its admin port read (ADMIN 0:
    one the system picks; a node started again keeps its port). START numbers a name's starts (its log)."""
    p = case.scenert(f"node {name}" + (f" start {start}" if start > 1 else ""), "run", table, "--workers", "1", "--admin", f"127.0.0.1:{admin}", "--cluster",
                     server.url, "--node", name, "--dead-after-ms", dead_after_ms,
                     *(["--hosts", hosts] if hosts else []))
    p.admin = int(p.wait_for_line(r"admin endpoint http://127\.0\.0\.1:(\d+)").group(1))
    p.member, p.start = name, start
    return p


def gateway(case, server, name, table, tcp=0, admin=0, start=1, *extra):
    """`scenert gateway TABLE --cluster URL --name NAME --tcp 127.0.0.1:TCP --admin 127.0.0.1:ADMIN [EXTRA]`,
    its ports read (0: ones the system picks); START numbers a name's starts (its log)."""
    p = case.scenert(f"gateway {name}" + (f" start {start}" if start > 1 else ""), "gateway", table, "--cluster", server.url, "--name", name,
                     "--tcp", f"127.0.0.1:{tcp}", "--admin", f"127.0.0.1:{admin}", *extra)
    m = p.wait_for_line(r"clients on tcp://127\.0\.0\.1:(\d+); admin endpoint http://127\.0\.0\.1:(\d+)")
    p.tcp, p.admin, p.member, p.start = int(m.group(1)), int(m.group(2)), name, start
    return p


def single(case, table):
    """`scenert run TABLE --tcp 127.0.0.1:0 --admin 127.0.0.1:0`: one process, for a side-by-side figure."""
    p = case.scenert("single", "run", table, "--workers", "1", "--admin", "127.0.0.1:0", "--tcp", "127.0.0.1:0")
    p.admin = int(p.wait_for_line(r"admin endpoint http://127\.0\.0\.1:(\d+)").group(1))
    p.tcp = int(p.wait_for_line(r"clients on tcp://127\.0\.0\.1:(\d+)").group(1))
    return p


def town_lines(n):
    scenes = {s["id"]: s for s in n.json("/scenes")["scenes"]}
    return [line for line in scenes[TOWN]["lines"] if line["state"] == "open"]


def open_ids(n):
    return sorted(line["line"] for line in town_lines(n))


def scene_ids(n):
    return sorted(s["id"] for s in n.json("/scenes")["scenes"])


def total(procs, sample):
    return sum(p.metric(sample) for p in procs)


def wait_total(procs, sample, want, deadline, what):
    """Polls the sum of `sample` over the processes' /metrics until it is `want`."""
    eventually(lambda: total(procs, sample) == want, deadline, what,
               lambda: {p.name: p.metric(sample) for p in procs})


def wait_link_down(procs):
    """Every node and gateway noticed the server gone (the outage is now under way for them all)."""
    for p in procs:
        sample = "scenert_gateway_connected" if p.name.startswith("gateway") else "scenert_cluster_connected"
        p.wait_metric(sample, lambda v: v == 0, 20, "sees the link to nats-server down")


class Bots:
    """`scenert bots` through every gateway, their views checked against every node's lines, started
    as a process of the case; report() waits for its end and reads its report."""

    def __init__(self, case, gateways, nodes, clients, seconds, *extra):
        self.seconds = seconds
        self.path = os.path.join(case.work, "bots.json")
        self.p = case.scenert("bots", "bots", ",".join(f"127.0.0.1:{g.tcp}" for g in gateways),
                              "--clients", clients, "--seconds", seconds,
                              "--verify-views", ",".join(f"127.0.0.1:{n.admin}" for n in nodes),
                              "--report", self.path, "--quiet", *extra)

    def end(self):
        """Ends the run now (SIGTERM, by its pid): the bots check their views and report as at its end."""
        self.p.signal(signal.SIGTERM)
        self.seconds = 0

    def report(self):
        code = self.p.wait(self.seconds + 60)
        check(code == 0, f"bots exited {code}: {self.p.text('out')[-3000:]}{self.p.text()[-2000:]}")
        with open(self.path) as f:
            return json.load(f)


def check_views(r, what):
    views = r["views"]
    check(views["verified"] and views["mismatches"] == 0 and views["final"]["misplaced"] == 0,
          f"views {what}: {views}; errors: {r['errors']}")
    return views


def check_one_place_each(nodes, result, views, clients):
    """Right after a run of bots (their players wait for their resume): the nodes hold every checked
    bot's player once, and no more players than clients. A bot that logged in later than the guest
    wait played as a guest (a 1 with no LoginOk, as on a loaded or sanitized machine): it had no resume
    token, so its player left with its connection."""
    wire = result["wire"]
    guests = max(0, wire["sync_pid"]["frames_in"] - wire["login_ok"]["frames_in"])
    on = total(nodes, "scenert_world_players")
    check(views["final"]["bots"] - guests <= on <= clients,
          f"{on:.0f} players on the nodes for {views['final']['bots']} checked bots of {clients} "
          f"({guests} of them guests)")
    return on


def still_running(procs):
    for p in procs:
        check(p.running(), f"{p.name} exited: {p.text()[-4000:]}")


class Cluster(harness.Case):
    def table(self):
        """The small example with a town of min_lines 3 and max_lines 4: two nodes want 6, the cluster has 4."""
        with open(os.path.join(cfg.source, "examples", "small.json")) as f:
            t = json.load(f)
        t.pop("$schema", None)
        for s in t["scenes"]:
            if s["id"] == TOWN:
                s["min_lines"], s["max_lines"] = 3, 4
        path = os.path.join(self.work, "table.json")
        with open(path, "w") as f:
            json.dump(t, f)
        return path

    def mmo(self):
        return os.path.join(cfg.source, "examples", "mmo.json")

    def nodes_and_gateways(self, server, table, nodes, gateways, dead_after_ms=3000):
        return ([node(self, server, name, table, dead_after_ms) for name in nodes]
                + [gateway(self, server, name, table) for name in gateways])

    def two_nodes(self, server, path):
        a = node(self, server, "a", path)
        eventually(lambda: open_ids(a) == [1, 2, 3], 10, "node a opens its 3 town lines", lambda: open_ids(a))
        b = node(self, server, "b", path)
        eventually(lambda: open_ids(b) == [4], 10, "node b opens the 4th", lambda: open_ids(b))
        # b keeps asking for its min_lines as it beats: three beats on, the cluster still says full.
        beats = b.metric("scenert_cluster_beats_total")
        b.wait_metric("scenert_cluster_beats_total", lambda v: v >= beats + 3, 10, "beats three more times")
        check(open_ids(a) == [1, 2, 3] and open_ids(b) == [4], f"max_lines 4 across nodes: {open_ids(a)} {open_ids(b)}")
        return a, b

    def test_nodes(self):
        """max_lines across nodes; a SIGKILLed node's lines taken over; a restarted name gets a new epoch."""
        path = self.table()
        self.check_exits(((["run", path, "--cluster", f"nats://127.0.0.1:{harness.free_port()}", "--node", "x"], 2,
                           "nats://127.0.0.1"),  # no server there
                          (["run", path, "--cluster", "nats://127.0.0.1:1"], 2, "--node")))
        server = Server(self)
        a, b = self.two_nodes(server, path)
        killed = time.monotonic()
        a.kill()  # SIGKILL, by its pid
        b.wait_for_line(r"node a \(epoch 1\) silent for \d+ ms: declared dead, 3 of its lines tombstoned")
        lines = eventually(lambda: open_ids(b) == [1, 2, 4] and town_lines(b), 10,
                           "node b opens the dead node's lines", lambda: open_ids(b))
        recovered = time.monotonic() - killed
        gens = {line["line"]: line["generation"] for line in lines}
        check(gens[1] == 2 and gens[2] == 2 and gens[4] == 1, f"generations after the takeover: {gens}")
        metrics = b.metrics()
        for line in ("scenert_cluster_epoch 1", "scenert_cluster_connected 1",
                     "scenert_cluster_nodes_declared_dead_total 1", "scenert_cluster_lines_tombstoned_total 3",
                     'scenert_scene_open_lines{scene="1",kind="town"} 3'):
            check(line in metrics, f"node b's /metrics lacks {line!r}")
        check(re.search(r"^scenert_cluster_beats_total [1-9]", metrics, re.M), "node b's /metrics: no beats")
        again = node(self, server, "a", path)
        again.wait_for_line(r"node a joined the cluster at .* with epoch 2")
        eventually(lambda: open_ids(again) == [3], 10, "the restarted node gets the last free line",
                   lambda: open_ids(again))
        b.stop()
        again.stop()
        harness.report(f"cluster: max_lines 4 held across two nodes; node a killed, its lines back on node b "
                       f"{recovered:.2f} s later (dead after 3 s); a restarted with epoch 2")

    def test_fencing(self):
        """A node paused past its heartbeats and resumed serves nothing: it finds itself fenced and exits 4."""
        server = Server(self)
        a, b = self.two_nodes(server, self.table())
        a.signal(signal.SIGSTOP)
        b.wait_for_line(r"node a \(epoch 1\) silent for \d+ ms: declared dead, 3 of its lines tombstoned")
        eventually(lambda: open_ids(b) == [1, 2, 4], 20, "node b serves the paused node's lines",
                   lambda: f"b has {open_ids(b)}: {b.text()[-3000:]}")
        a.signal(signal.SIGCONT)
        a.wait_for_line(r"node 'a' epoch 1 is fenced: declared dead at epoch 1: this node stops serving")
        code = a.wait(10)
        check(code == 4, f"the fenced node exited {code}, want 4: {a.text()}")
        check(open_ids(b) == [1, 2, 4], f"node b's lines after a's exit: {open_ids(b)}")
        b.stop()
        harness.report("cluster: a node paused past its heartbeats was declared dead, fenced on waking, exit 4")

    def test_gateways(self):
        """Bots through two gateways onto two nodes, views checked; then nats-server restarted under them."""
        mmo = self.mmo()
        self.check_exits(((["gateway", mmo, "--cluster", f"nats://127.0.0.1:{harness.free_port()}", "--tcp",
                            "127.0.0.1:0"], 2, "nats://127.0.0.1"),  # no server there
                          (["gateway", mmo, "--cluster", "nats://127.0.0.1:1"], 2, "--tcp or --ws")))
        server = Server(self)
        # Nobody dies here: a node slow to beat again after the server's restart (a sanitizer build) is
        # not declared dead for it.
        a, b, g1, g2 = procs = self.nodes_and_gateways(server, mmo, "ab", ["g1", "g2"], dead_after_ms=5000)
        check(g1.wait_for_line(r"player ids (\d+)-").group(1) != g2.wait_for_line(r"player ids (\d+)-").group(1),
              "both gateways took the same player ids")
        r = Bots(self, [g1, g2], [a, b], 120, 8, "--checkpoints", "2").report()
        views = check_views(r, "of the steady run")
        on = check_one_place_each([a, b], r, views, 120)
        check(views["final"]["bots"] >= 100, f"steady run's views: {views}")
        check(len(views["checkpoints"]) == 2, f"checkpoints: {views['checkpoints']}")
        check(r["errors"]["count"] == 0, f"steady run's errors: {r['errors']}")
        for g in (g1, g2):
            m = g.metrics()
            live = harness.metric(m, "scenert_gateway_live_nodes")
            check(live == 2, f"{g.name} sees {live} nodes")
            check(harness.metric(m, "scenert_gateway_answers_total") > 0
                  and harness.metric(m, "scenert_gateway_event_batches_total") > 0, f"{g.name}: no answers or events")
            check(harness.metric(m, "scenert_gateway_bad_messages_total") == 0, f"{g.name}: bad messages")
        harness.report(f"cluster: {views['final']['bots']} bots through 2 gateways on 2 nodes ({on:.0f} players "
                       f"placed at the end), 0 view mismatches at 2 checkpoints and the end")

        # nats-server restarted mid-run: nobody exits, the views are right again at the end. The first
        # run's players wait for their resume (the table's resume_ms) first: leaving in the middle of
        # the final check, they would race its reading of the nodes.
        wait_total([g1, g2], "scenert_net_detached_players", 0, 20, "the first run's players gone")
        bots = Bots(self, [g1, g2], [a, b], 60, 8)
        wait_total([a, b], "scenert_world_players", 60, 20, "every bot placed before the outage")
        server.stop()
        wait_link_down(procs)
        server.start()
        for g in (g1, g2):
            g.wait_for_line(r"came back; asking every node for its lines", 20)
        result = bots.report()
        views = check_views(result, "after the restart")
        still_running(procs)
        harness.report(f"cluster: nats-server restarted under {views['final']['bots']} bots: every process stayed, "
                       f"0 view mismatches at the end ({result['errors']['count']} errors during the outage)")
        for p in (g1, g2, a, b):
            p.stop()

    def test_failover(self):
        """Three nodes, two gateways, bots through both: one node SIGKILLed mid-run; its players are placed
        again by their gateways and every bot ends in exactly one place, its view right."""
        server = Server(self)
        a, b, c, g1, g2 = self.nodes_and_gateways(server, self.mmo(), "abc", ["g1", "g2"])
        bots = Bots(self, [g1, g2], [b, c], 90, 10)
        wait_total([a, b, c], "scenert_world_players", 90, 20, "every bot placed")
        on_a = a.metric("scenert_world_players")
        killed = time.monotonic()
        a.kill()  # SIGKILL, by its pid
        for g in (g1, g2):
            g.wait_for_line(r"node a was declared dead; \d+ of its players placed again")
        recovered = time.monotonic() - killed
        r = bots.report()
        views = check_views(r, "after node a died")
        placed = total([g1, g2], "scenert_gateway_players_placed_again_total")
        check(on_a > 0 and placed > 0, f"node a held {on_a} players, {placed} placed again")
        on = check_one_place_each([b, c], r, views, 90)
        still_running([b, c, g1, g2])
        harness.report(f"cluster: node a SIGKILLed with {on_a:.0f} players on it; {placed:.0f} placed again by the "
                       f"gateways {recovered:.1f} s after the kill; {views['final']['bots']} bots ({on:.0f} players "
                       f"on the nodes), 0 view mismatches at the end")
        for p in (g1, g2, b, c):
            p.stop()

    def test_quick_restart(self):
        """A node SIGKILLed and started again under its name before the others declared it dead (a
        supervisor's restart): the new start takes its predecessor's lines, the gateways place its players
        again, and every bot ends in exactly one place, its view right."""
        server = Server(self)
        a, b, g1, g2 = self.nodes_and_gateways(server, self.mmo(), "ab", ["g1", "g2"], dead_after_ms=5000)
        bots = Bots(self, [g1, g2], [a, b], 60, 10)
        wait_total([a, b], "scenert_world_players", 60, 20, "every bot placed")
        on_a = a.metric("scenert_world_players")
        a.kill()  # SIGKILL, by its pid; started again well inside the 5 s the others wait
        again = node(self, server, "a", self.mmo(), 5000, admin=a.admin, start=2)
        again.wait_for_line(r"node a \(epoch 1\) was not declared dead before this start: \d+ of its lines tombstoned")
        for g in (g1, g2):
            g.wait_for_line(r"node a was declared dead; \d+ of its players placed again")
        r = bots.report()
        check_views(r, "after node a's quick restart")
        for n in (b, again):
            check(n.metric("scenert_cluster_nodes_declared_dead_total") == 0, f"{n.name} declared a node dead")
        placed = total([g1, g2], "scenert_gateway_players_placed_again_total")
        check(on_a > 0 and placed > 0, f"node a held {on_a} players, {placed} placed again")
        still_running([again, b, g1, g2])
        harness.report(f"cluster: node a SIGKILLed with {on_a:.0f} players and started again at once: its lines taken "
                       f"by its new start, {placed:.0f} players placed again, 0 view mismatches at the end")
        for p in (g1, g2, again, b):
            p.stop()

    def test_gateway_failover(self):
        """Two nodes, two gateways, bots through both: one gateway SIGKILLed mid-run; its clients come back
        through the other with their resume tokens and get their players back where they stood."""
        self.gateway_leaves("SIGKILLed", lambda g: g.kill())

    def test_gateway_drain(self):
        """As gateway_failover, the gateway stopped by SIGTERM (a rolling restart): it exits 0 and tells its
        clients to log in again with their tokens; their players stay in the world for them meanwhile."""
        self.gateway_leaves("stopped by SIGTERM", lambda g: g.stop())

    def gateway_leaves(self, how, end):
        server = Server(self)
        a, b, g1, g2 = self.nodes_and_gateways(server, self.mmo(), "ab", ["g1", "g2"])
        bots = Bots(self, [g1, g2], [a, b], 80, 10, "--resume")
        wait_total([a, b], "scenert_world_players", 80, 20, "every bot placed")
        on_g1 = g1.metric("scenert_net_connections")
        end(g1)  # by its pid
        result = bots.report()
        views = check_views(result, f"after gateway g1 {how}")
        check(result["errors"]["count"] == 0, f"errors: {result['errors']}")
        resumed, resume = result["resumed"], result["resume"]
        claims = g2.metric("scenert_gateway_claims_total")
        check(on_g1 > 0 and resumed == on_g1 and claims == resumed,
              f"g1 had {on_g1} clients; {resumed} resumed through g2, which claimed {claims}")
        still_running([a, b, g2])
        # The nodes saw g1 fall silent; every player of it was claimed, none left behind.
        for n in (a, b):
            n.wait_metric("scenert_cluster_gateways_lost_total", lambda v: v == 1, 10, "declares g1 lost")
            check(n.metric("scenert_cluster_players_abandoned_total") == 0, f"{n.name} abandoned players")
        asked = total([a, b], "scenert_cluster_claims_total")
        check(asked >= resumed, f"the nodes answered {asked} claims for {resumed} resumes")
        harness.report(f"cluster: gateway g1 {how} with {on_g1:.0f} clients; all resumed through g2 with their "
                       f"players (dropped to view again p50 {resume['p50_ms']:.0f} ms, p99 {resume['p99_ms']:.0f} ms); "
                       f"{views['final']['bots']} bots, 0 view mismatches at the end")
        for p in (g2, a, b):
            p.stop()

    def test_journeys(self):
        """Team joins across nodes: bots that switch scenes and join their party's leader wherever it stands,
        through two gateways onto two nodes; every join to another node is a journey (handed over by the
        player's node). 0 view mismatches; the joins' answer times side by side with one process."""
        mmo = self.mmo()
        plan = ("--mix", "enter_field=0,enter_dungeon=0,join_team=2,transfer=1,enter_phase=0,leave_phase=0,"
                "back_to_town=0", "--act-every", "0.5", "--party-size", "4")
        server = Server(self)
        one_process = single(self, mmo)
        alone = Bots(self, [one_process], [one_process], 80, 10, *plan).report()
        check(alone["views"]["mismatches"] == 0, f"one process's views: {alone['views']}")
        one_process.stop()
        a, b, g1, g2 = self.nodes_and_gateways(server, mmo, "ab", ["g1", "g2"])
        r = Bots(self, [g1, g2], [a, b], 80, 10, *plan).report()
        check_views(r, "after the journeys")
        journeys = total([g1, g2], "scenert_gateway_journeys_total")
        failed = total([g1, g2], "scenert_gateway_journeys_failed_total")
        handed = total([a, b], "scenert_cluster_handoffs_out_total")
        check(journeys >= 10, f"only {journeys:.0f} journeys between the nodes")
        # A journey the target refused (its mate switching or gone meanwhile) leaves the player where it was.
        check(handed == journeys + failed, f"the nodes handed over {handed:.0f} players, the gateways saw "
                                           f"{journeys:.0f} journeys and {failed:.0f} refused")
        one, two = alone["request_rtt"]["join_team"], r["request_rtt"]["join_team"]
        check(one["count"] > 0 and two["count"] > 0, f"join_team answered: one process {one}, the cluster {two}")
        harness.report(f"cluster: {journeys:.0f} team joins took their player to the other node ({failed:.0f} refused "
                       f"there, 0 view mismatches); join_team answered p50 {two['p50_ms']:.1f} ms, p99 "
                       f"{two['p99_ms']:.1f} ms over {two['count']} joins (one process, same plan: p50 "
                       f"{one['p50_ms']:.1f} ms, p99 {one['p99_ms']:.1f} ms over {one['count']})")
        for p in (g1, g2, a, b):
            p.stop()

    def test_roles(self):
        """Towns and fields on one node, dungeons on another (`--hosts`): bots through two gateways enter
        dungeons, parties' instances and phases, and come back; every player goes only to a node hosting its
        scene (a journey when it crosses), 0 view mismatches."""
        mmo = self.mmo()
        server = Server(self)
        self.check_exits(((["run", mmo, "--cluster", server.url, "--node", "x", "--hosts", "space"], 2, "space"),))
        towns = node(self, server, "towns", mmo, hosts="town,field,guild")
        dungeons = node(self, server, "dungeons", mmo, hosts="dungeon")
        g1, g2 = gateway(self, server, "g1", mmo), gateway(self, server, "g2", mmo)
        with open(mmo) as f:
            kinds = {s["id"]: s["kind"] for s in json.load(f)["scenes"]}
        check(all(kinds[i] in ("town", "field", "guild", "space") for i in scene_ids(towns)),
              f"the towns node hosts {scene_ids(towns)}")
        check(all(kinds[i] == "dungeon" for i in scene_ids(dungeons)), f"the dungeons node hosts {scene_ids(dungeons)}")
        r = Bots(self, [g1, g2], [towns, dungeons], 80, 10, "--party-size", "4", "--act-every", "0.5", "--mix",
                 "enter_field=1,enter_dungeon=3,join_team=1,transfer=1,enter_phase=1,leave_phase=1,back_to_town=2"
                 ).report()
        views = check_views(r, "across the two roles")
        journeys = total([g1, g2], "scenert_gateway_journeys_total")
        check(journeys >= 10, f"only {journeys:.0f} journeys between the towns and the dungeons")
        harness.report(f"cluster: towns, fields and guilds on one node, dungeons on another: {journeys:.0f} journeys "
                       f"between them, {views['final']['bots']} bots, 0 view mismatches")
        for p in (g1, g2, towns, dungeons):
            p.stop()

    def test_sequence(self):
        """The faults one after another under one run of bots through both gateways: a node SIGKILLed, then a
        gateway SIGKILLed, then nats-server restarted. Every bot ends in exactly one place with its view right,
        and the time each recovery took is reported."""
        server = Server(self)
        a, b, c, g1, g2 = self.nodes_and_gateways(server, self.mmo(), "abc", ["g1", "g2"])
        # Long enough for the three faults on a sanitized build too; ended once the last one healed.
        bots = Bots(self, [g1, g2], [b, c], 90, 120, "--resume", "--rate", 20)
        wait_total([a, b, c], "scenert_world_players", 90, 20, "every bot placed")
        killed = time.monotonic()
        a.kill()  # SIGKILL, by its pid
        g1.wait_for_line(r"node a was declared dead; \d+ of its players placed again")
        node_recovery = time.monotonic() - killed
        wait_total([b, c], "scenert_world_players", 90, 20, "every bot placed again on b and c")
        g1.kill()
        # g1's clients come back through g2 (with their tokens, those that had one): every bot's player is
        # g2's before the next fault.
        wait_total([g2], "scenert_net_connections", 90, 20, "every bot connected through g2")
        wait_total([g2], "scenert_gateway_players", 90, 20, "every bot's player routed by g2")
        restarted = time.monotonic()
        server.stop()
        wait_link_down([b, c, g2])
        server.start()
        g2.wait_for_line(r"every client's view sent again", 20)
        link_recovery = time.monotonic() - restarted
        # The bots play on for about two seconds' worth of moves (a move sent into the outage is lost,
        # and the bot's next one puts it right), then the run ends.
        played = g2.metric("scenert_net_frames_in_total")
        g2.wait_metric("scenert_net_frames_in_total", lambda v: v >= played + 90 * 10 * 2, 30, "the bots play on")
        bots.end()
        result = bots.report()
        still_running([b, c, g2])
        views = check_views(result, "after the three faults")
        check(result["resumed"] > 0, "no bot resumed after g1 died")
        on = check_one_place_each([b, c], result, views, 90)
        # None lost, none twice: once the bots' players waited out their resume_ms, the nodes hold nobody.
        wait_total([b, c], "scenert_world_players", 0, 30, "every bot's player gone from the nodes")
        resume = result["resume"]
        harness.report(f"cluster: node a SIGKILLed, its players placed again {node_recovery:.1f} s later; gateway g1 "
                       f"SIGKILLed, {result['resumed']} clients back through g2 (p50 {resume['p50_ms']:.0f} ms, p99 "
                       f"{resume['p99_ms']:.0f} ms); nats-server restarted, every view sent again "
                       f"{link_recovery:.1f} s after; {views['final']['bots']} bots checked at the end, each in one "
                       f"place ({on:.0f} players on the nodes), 0 view mismatches; all gone after their resume_ms")
        for p in (g2, b, c):
            p.stop()


if __name__ == "__main__":
    harness.main()
