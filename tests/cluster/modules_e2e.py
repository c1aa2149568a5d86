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
        """A cluster: nats-server, a node with the module and a gateway. The client's message goes from the
        gateway to the node's line, the module's frames (its greeting, an echo, a refusal) come back through
        the gateway, the module's entity with its look too."""
        wire = harness.proto("scenert")
        server = cluster.Server(self)
        table = str(data("modules.json"))
        node = self.scenert("node a", "run", table, "--workers", "1", "--cluster", server.url, "--node", "a",
                            "--module", echo_library(), "--store", f"{self.work}/node.store.sqlite")
        node.wait_for_line(r"hosting \d+ scene definitions")
        g = cluster.gateway(self, server, "g1", table)
        c = Seed002Client(g.tcp)
        c.send(1000, wire.Login(name="ann"))
        c.wait(1001)
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



if __name__ == "__main__":
    harness.main()
