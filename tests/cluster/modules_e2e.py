#!/usr/bin/env python3
"""A game module behind a cluster's gateway: nats-server, a node that loads the test library of modules
(`scenert run --cluster --module`) and a gateway. Run through tests/harness: modules_e2e.py --scenert PATH
--source DIR --work DIR [--case NAME]; SCENERT_TEST_MODULES names the library."""
import os
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "harness"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "apps"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import scenert_harness as harness  # noqa: E402
from scenert_harness import cfg, check  # noqa: E402
from e2e import Seed002Client  # noqa: E402
import cluster_e2e as cluster  # noqa: E402


def data(name):
    return pathlib.Path(cfg.source) / "tests/apps/data" / name


def echo_library():
    return os.environ["SCENERT_TEST_MODULES"]


class ModulesInACluster(harness.Case):
    def test_cluster_routes_client_messages_through_a_gateway(self):
        """A cluster: nats-server, a node with the module (and a front of its own) and a gateway. The client's
        message goes from the gateway to the node's line, the module's frames (its greeting, an echo, a
        refusal) come back through the gateway, the module's entity with its look too. A player of the node's
        own front and one of the gateway's have different ids (the node's front takes a block of the
        cluster's ids, as the gateway does)."""
        wire = harness.proto("scenert")
        server = cluster.Server(self)
        table = str(data("modules.json"))
        node = self.scenert("node a", "run", table, "--workers", "1", "--cluster", server.url, "--node", "a",
                            "--module", echo_library(), "--store", f"{self.work}/node.store.sqlite",
                            "--tcp", "127.0.0.1:0")
        own_port = int(node.wait_for_line(r"clients on tcp://127\.0\.0\.1:(\d+)").group(1))
        g = cluster.gateway(self, server, "g1", table)
        c = Seed002Client(g.tcp)
        c.send(1000, wire.Login(name="ann"))
        ann = wire.LoginOk.FromString(c.wait(1001)).pid
        own = Seed002Client(own_port)  # connected as it logs in: a client silent past --guest-wait-ms is a guest
        own.send(1000, wire.Login(name="bob"))
        bob = wire.LoginOk.FromString(own.wait(1001)).pid
        check(ann != bob, f"the gateway's player and the node's own front's player share id {ann}")
        totems = []
        while not totems:
            totems = [m for m in wire.MonstersSeen.FromString(c.wait(1009)).monsters if m.kind == 5]
        check(totems[0].health == 250, f"the module's entity through the gateway: {totems}")
        check(c.wait(2100) == b"welcome", "the module's greeting through the gateway")
        c.send(2001, bytes(range(256)) * 15)  # 3,840 opaque bytes, zeros included
        check(c.wait(2101) == bytes(reversed(bytes(range(256)) * 15)), "2001 comes back reversed, whole")
        c.send(2002, b"x")
        refused = wire.ModuleError.FromString(c.wait(1012))
        check(refused.opcode == 2002 and refused.code == "malformed", f"the module's refusal: {refused}")
        trips = []
        for _ in range(10):
            sent = time.monotonic()
            c.send(2001, b"ping")
            check(c.wait(2101) == b"gnip", "each echo comes back")
            trips.append(time.monotonic() - sent)
        trips.sort()
        for p in (g, node):
            p.stop()
        server.stop()
        harness.report(f"cluster: module messages gateway -> node -> gateway; 10 round trips median "
                       f"{trips[5] * 1000:.0f} ms, max {trips[-1] * 1000:.0f} ms (10 Hz line)")

    def test_loot_found_again_on_another_node_and_gateway(self):
        """The cluster's player store: `loot` grants the client an item every line tick on the node its line
        is on; that node is SIGKILLed, the gateway places the player again on the other node, whose grants
        go to the same account; a login through another gateway holds every grant the client was told of
        (1013) from both nodes (1014)."""
        wire = harness.proto("scenert")
        server = cluster.Server(self)
        table = str(data("loot_cluster.json"))  # max_lines 2: the survivor opens a line of its own at once
        nodes = {}
        for name in ("a", "b"):
            n = self.scenert(f"node {name}", "run", table, "--workers", "1", "--admin", "127.0.0.1:0", "--cluster",
                             server.url, "--node", name, "--dead-after-ms", "1000", "--module", echo_library())
            n.admin = int(n.wait_for_line(r"admin endpoint http://127\.0\.0\.1:(\d+)").group(1))
            n.wait_for_line(r"player store: the cluster's, bucket scenert-players")
            nodes[name] = n
        g1 = cluster.gateway(self, server, "g1", table)
        told = {}  # grant id -> (item, count)

        def collect(c, seconds):
            until = time.monotonic() + seconds
            while time.monotonic() < until:
                i, payload = c.next(5)
                check(i is not None, "the connection closed while collecting")
                if i == 1013:
                    g = wire.Granted.FromString(payload)
                    check(g.id not in told, f"grant {g.id} told twice")
                    told[g.id] = (g.item, g.count)

        c = Seed002Client(g1.tcp)
        c.send(1000, wire.Login(name="looter"))
        check(not wire.Inventory.FromString(c.wait(1014)).items, "a new account holds nothing")
        collect(c, 0.3)
        first = len(told)
        on = harness.eventually(lambda: [k for k, n in nodes.items() if n.metric("scenert_world_players") == 1], 10,
                                "the looter on a node")[0]
        other = "b" if on == "a" else "a"
        nodes[on].kill()  # SIGKILL, by its pid: its line and its store's worker with it
        g1.wait_for_line(rf"node {on} was declared dead; 1 of its players placed again", 15)
        harness.eventually(lambda: nodes[other].metric("scenert_world_players") == 1, 10, f"the looter on node {other}",
                           lambda: nodes[other].json("/scenes"))
        collect(c, 0.4)
        check(first > 0 and len(told) > first, f"grants heard: {first} from node {on}, {len(told) - first} after")
        g2 = cluster.gateway(self, server, "g2", table)
        again = Seed002Client(g2.tcp)
        again.send(1000, wire.Login(name="looter"))
        held = {x.item: x.count for x in wire.Inventory.FromString(again.wait(1014)).items}
        sums = {}
        for item, count in told.values():
            sums[item] = sums.get(item, 0) + count
        check(all(held.get(item, 0) >= n for item, n in sums.items()),
              f"the login through g2 holds {held}, less than the {len(told)} grants told: {sums}")
        for p in (g2, g1, nodes[other]):
            p.stop()
        server.stop()
        harness.report(f"cluster store: {first} grants told from node {on}, {len(told) - first} from node {other} "
                       f"after {on} was SIGKILLed; a login through another gateway holds them all ({held})")


if __name__ == "__main__":
    harness.main()
