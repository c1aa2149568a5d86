#!/usr/bin/env python3
"""End-to-end tests of game modules loaded by `scenert run --module` and `scenert check --module`:
parameters checked with their pointers, a library of another version refused, client messages routed.
Run through tests/harness: modules_cli_test.py --scenert PATH --source DIR --work DIR [--case NAME];
SCENERT_TEST_MODULES and SCENERT_TEST_OTHER_MODULES name the two test libraries."""
import os
import pathlib
import random
import sqlite3
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "harness"))
import scenert_harness as harness  # noqa: E402
from scenert_harness import cfg, check  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from e2e import Seed002Client, TCP, port_of  # noqa: E402


def data(name):
    return pathlib.Path(cfg.source) / "tests/apps/data" / name


def echo_library():
    return os.environ["SCENERT_TEST_MODULES"]


def other_version_library():
    return os.environ["SCENERT_TEST_OTHER_MODULES"]


class Modules(harness.Case):
    def test_check_reports_unknown_modules_and_wrong_parameters_by_pointer(self):
        code, out, err = self.run_scenert("check", data("modules.json"), "--module", echo_library())
        self.assertEqual(code, 0, err)
        self.assertIn("valid scene table", out)
        code, _, err = self.run_scenert("check", data("modules.json"))
        self.assertEqual(code, 1)
        self.assertIn('/scenes/0/module/name: unknown module "echo" (no module is registered', err)
        code, _, err = self.run_scenert("check", data("modules_bad.json"), "--module", echo_library())
        self.assertEqual(code, 1, err)
        table = data("modules_bad.json")
        self.assertEqual(err.splitlines(), [
            f"{table}:/scenes/0/module/greeting: must be a string, got 7",
            f"{table}:/scenes/0/module/health: must be in 1..1000, got 5000",
            f"{table}:/scenes/0/module/helth: unknown parameter of this module",
            f'{table}:/scenes/1/module/name: unknown module "ehco" (known: echo, loot)'])

    def test_a_library_of_another_version_or_none_at_all_exits_2(self):
        self.check_exits([
            (("run", data("modules.json"), "--module", other_version_library()), 2,
             "built against scenert 0.0.0-other (module ABI 3), this is scenert"),
            (("check", data("modules.json"), "--module", other_version_library()), 2, "rebuild it against"),
            (("run", data("modules.json"), "--module", f"{self.work}/missing.so"), 2, "cannot load it"),
            (("run", data("modules_bad.json"), "--module", echo_library()), 1, "/scenes/0/module/health"),
        ])

    def test_run_routes_client_messages_to_the_module_and_back(self):
        wire = harness.proto("scenert")
        p = self.scenert("run", "run", data("modules.json"), "--tcp", "127.0.0.1:0", "--module", echo_library(),
                         "--store", f"{self.work}/modules.store.sqlite")
        c = Seed002Client(port_of(p, TCP))
        c.send(1000, wire.Login(name="ann"))
        c.wait(1001)
        # The line's events come first (the player, then the totem the module put beside it), then the
        # module's greeting: a client hears of an entity before any frame about it.
        totems = []
        while not totems:
            seen = wire.MonstersSeen.FromString(c.wait(1009))
            totems = [m for m in seen.monsters if m.kind == 5]
        check(len(totems) == 1 and totems[0].health == 250 and totems[0].state == 1,
              f"the module's entity with its look: {totems}")
        check(c.wait(2100) == b"welcome", "the module greets the player with its table's parameter")
        c.send(2001, b"abc")
        check(c.wait(2101) == b"cba", "2001 comes back reversed")
        c.send(2002, b"x")
        refused = wire.ModuleError.FromString(c.wait(1012))
        check(refused.opcode == 2002 and refused.code == "malformed" and refused.reason == "2002 takes no bytes",
              f"2002 is refused by the module: {refused}")
        c.send(2500, b"")
        check(wire.ModuleError.FromString(c.wait(1012)).code == "unknown_opcode", "2500 is nobody's")
        c.send(2001, b"ok")
        check(c.wait(2101) == b"ko", "the connection and the line go on")
        # Round trips one at a time: the world's tick (100 Hz) then the line's (the town's 10 Hz).
        trips = []
        for _ in range(20):
            sent = time.monotonic()
            c.send(2001, b"ping")
            check(c.wait(2101) == b"gnip", "each echo comes back")
            trips.append(time.monotonic() - sent)
        trips.sort()
        p.stop()
        harness.report(f"run --module: greeting, entity, echo, refusals and a clean stop; 20 round trips "
                       f"median {trips[10] * 1000:.0f} ms, max {trips[-1] * 1000:.0f} ms (10 Hz line)")

    def test_grants_told_to_a_client_survive_sigkill(self):
        """`loot` grants the client an item every line tick; the server is SIGKILLed at random moments
        and started again on the same store: every grant the client heard of (1013) is in the store,
        in the client's holdings when it logs in again (1014), and none is applied twice."""
        wire = harness.proto("scenert")
        store = f"{self.work}/loot.store.sqlite"
        rng = random.Random(38)
        told = {}  # grant id -> (item, count), over every run

        def told_sums():
            sums = {}
            for item, count in told.values():
                sums[item] = sums.get(item, 0) + count
            return sums

        def log_in(run):
            p = self.scenert(f"run{run}", "run", data("loot.json"), "--tcp", "127.0.0.1:0",
                             "--module", echo_library(), "--store", store)
            c = Seed002Client(port_of(p, TCP))
            c.send(1000, wire.Login(name="looter"))
            return p, c

        def hear(c, i, payload):
            if i == 1013:
                g = wire.Granted.FromString(payload)
                check(g.id not in told, f"grant {g.id} told twice")
                told[g.id] = (g.item, g.count)

        for run in range(4):
            p, c = log_in(run)
            while True:  # up to the inventory; a grant heard before it counts as well
                i, payload = c.next(5)
                check(i is not None, "the connection closed before the inventory")
                if i == 1014:
                    break
                hear(c, i, payload)
            held = {x.item: x.count for x in wire.Inventory.FromString(payload).items}
            check(all(held.get(item, 0) >= n for item, n in told_sums().items()),
                  f"run {run}: the holdings {held} lack grants told before, {told_sums()}")
            heard_before = len(told)
            until = time.monotonic() + rng.uniform(0.15, 0.6)
            while time.monotonic() < until:
                i, payload = c.next(5)
                check(i is not None, "the connection closed while collecting")
                hear(c, i, payload)
            check(len(told) > heard_before, f"run {run}: no grant heard")
            p.kill()  # SIGKILL: whatever the writer was doing
            c.sock.close()

        db = sqlite3.connect(store)
        rows = {r[0]: (r[1], r[2]) for r in db.execute("SELECT id, item, count FROM grants WHERE owner = 'looter'")}
        missing = [g for g in told if rows.get(g) != told[g]]
        check(not missing, f"{len(missing)} grants told to the client are not in the store: {missing[:5]}")
        sums = {}
        for item, count in rows.values():
            sums[item] = sums.get(item, 0) + count
        holdings = dict(db.execute("SELECT item, count FROM holdings WHERE owner = 'looter'"))
        check(holdings == sums, f"holdings {holdings} differ from the sums of the grants {sums}: one applied twice")
        db.close()
        p, c = log_in("last")
        last = wire.Inventory.FromString(c.wait(1014))
        held = {x.item: x.count for x in last.items}
        check(all(held.get(item, 0) >= n for item, n in sums.items()), f"the last login holds {held}, {sums}")
        p.stop()
        harness.report(f"loot under SIGKILL: {len(told)} grants told over 4 killed runs, all in the store "
                       f"({len(rows)} written), none twice")


if __name__ == "__main__":
    harness.main()
