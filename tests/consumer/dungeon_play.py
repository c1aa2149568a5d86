#!/usr/bin/python3
"""The reference dungeon played end to end: `dungeon_server run` (examples/dungeon, built against the
installed package) with its table made quick (a weak boss, short cooldowns), one client over TCP; then
parties of scenert's bots playing it through the dungeon's own party script (`dungeon_server bots
--play crypt`).

Run through tests/harness:
    dungeon_play.py --scenert BUILD/dungeon/dungeon_server --source DIR --work DIR --protos DIR
The client logs in by name, enters an instance of the crypt, waits for the boss to walk to it, attacks
until the boss dies (seeing its phases 2 then 3 on the way), opens the chest (once: a second opening is
refused), hears its loot granted (1013) and finds it in its inventory (1014) after logging in again.
The bots' parties do the same, each in an instance of its own; their report counts it all, and a party
that cannot get in fails the run (exit 3) with its reason.
"""
import json
import os
import pathlib
import struct
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "harness"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "apps"))
import scenert_harness as harness  # noqa: E402
from scenert_harness import cfg, check  # noqa: E402
from e2e import Seed002Client, TCP, port_of  # noqa: E402

BOSS, CHEST = 1, 3


def quick_table(work):
    """The example's table with a fight that lasts seconds."""
    with open(os.path.join(cfg.source, "examples", "dungeon", "table.json")) as f:
        table = json.load(f)
    module = table["scenes"][1]["module"]
    module.update(boss_health=600, attack_cooldown_ms=100, boss_step_ms=100, add_step_ms=100, strike_ms=500)
    path = os.path.join(work, "quick.json")
    with open(path, "w") as f:
        json.dump(table, f)
    return path


def target(entity):
    return struct.pack("<Q", entity)


class DungeonPlay(harness.Case):
    def log_in(self, port, wire):
        c = Seed002Client(port)
        c.send(1000, wire.Login(name="ann"))
        c.wait(1001)
        return c

    def fight(self, c, wire, boss):
        """Attacks until the chest stands; the phases the line announced, and the chest's id."""
        phases, next_attack, deadline = [], 0.0, time.monotonic() + 60
        while time.monotonic() < deadline:
            if time.monotonic() >= next_attack:
                c.send(2001, target(boss))
                next_attack = time.monotonic() + 0.15
            i, payload = c.next(5)
            check(i is not None, "the connection closed during the fight")
            if i == 2100:
                phases.append(payload[8])
            elif i == 1012:
                refused = wire.ModuleError.FromString(payload)
                check(refused.code == "refused" and ("cells away" in refused.reason or "cooldown" in refused.reason),
                      f"an attack refused for another reason: {refused}")
            elif i == 2102:
                return phases, struct.unpack("<Q", payload)[0]
        harness.fail("the boss did not die within 60 s")

    def test_a_client_kills_the_boss_opens_the_chest_and_keeps_its_loot(self):
        wire = harness.proto("scenert")
        p = self.scenert("server", "run", quick_table(self.work), "--tcp", "127.0.0.1:0",
                         "--store", f"{self.work}/crypt.sqlite")
        port = port_of(p, TCP)
        c = self.log_in(port, wire)
        c.send(1002, wire.Request(request_id=1, kind=wire.Request.ENTER_INSTANCE, scene=2))
        answer = wire.Answer.FromString(c.wait(1003))
        check(answer.code == "ok" and answer.scene == 2, f"entering the crypt: {answer}")
        boss = None
        while boss is None:  # the boss walks into view
            seen = wire.MonstersSeen.FromString(c.wait(1009, 20))
            boss = next((m.id for m in seen.monsters if m.kind == BOSS), None)
        phases, chest = self.fight(c, wire, boss)
        check(phases == [2, 3], f"the boss's phases in order: {phases}")
        c.send(2002, target(chest))
        c.send(2002, target(chest))
        granted, refused = [], None
        while len(granted) < 2 or refused is None:
            i, payload = c.next(5)
            check(i is not None, "the connection closed at the chest")
            if i == 1013:
                granted.append(wire.Granted.FromString(payload))
            elif i == 1012 and wire.ModuleError.FromString(payload).opcode == 2002:  # not a late attack's
                refused = wire.ModuleError.FromString(payload)
        check(refused.reason == "the chest was opened already", f"the second opening: {refused}")
        check(all(g.id.startswith("crypt-") and g.id.endswith(f"-{k}") for k, g in enumerate(granted)),
              f"grant ids: {[g.id for g in granted]}")
        c.sock.close()
        again = self.log_in(port, wire)
        held = {x.item: x.count for x in wire.Inventory.FromString(again.wait(1014)).items}
        want = {}
        for g in granted:
            want[g.item] = want.get(g.item, 0) + g.count
        check(held == want, f"after logging in again ann holds {held}, was granted {want}")
        p.stop(want=0)
        harness.report(f"dungeon played: phases {phases}, chest {chest} opened once, loot {want} kept")


    def start_quick_server(self):
        p = self.scenert("server", "run", quick_table(self.work), "--tcp", "127.0.0.1:0",
                         "--store", f"{self.work}/crypt.sqlite")
        return p, port_of(p, TCP)

    def test_parties_of_bots_fight_loot_and_find_their_loot_again(self):
        p, port = self.start_quick_server()
        report = f"{self.work}/play.json"
        code, out, err = self.run_scenert("bots", f"127.0.0.1:{port}", "--play", "crypt", "--play-scene", "2",
                                          "--parties", "3", "--party-size", "3", "--seconds", "40",
                                          "--report", report, "--quiet", timeout=60)
        check(code == 0, f"dungeon_server bots --play crypt exited {code}:\n{out}\n{err}")
        with open(report) as f:
            r = json.load(f)
        check(r["parties_through"] == 3 and r["parties_failed"] == 0 and r["errors"] == 0, f"the parties: {r}")
        check(r["kills"] == 3 and r["chests_opened"] == 3, f"kills and chests: {r}")
        check(r["phases_in_order"] == 3 and r["phase_orders"] == {"1,2,3": 3}, f"the phases: {r['phase_orders']}")
        # Each member gets loot_rolls (2) grants; each one held again after logging in anew.
        check(r["grants"] == 3 * 3 * 2, f"grants: {r['grants']}")
        check(r["items_found"] == r["items_granted"] > 0 and r["items_missing"] == 0, f"the loot: {r}")
        check("phases in order    3 parties" in out, f"the summary:\n{out}")
        p.stop(want=0)
        harness.report(f"bots played the crypt: 3 parties of 3 through in {r['wall_seconds']:.1f} s, "
                       f"{r['items_granted']} items granted and found again, refused {r['refused']}")

    def test_a_party_that_cannot_get_in_fails_the_run(self):
        p, port = self.start_quick_server()
        # Scene 1 is the town: no private instance there, so the party's entry is refused.
        code, out, err = self.run_scenert("bots", f"127.0.0.1:{port}", "--play", "crypt", "--play-scene", "1",
                                          "--parties", "1", "--party-size", "2", "--seconds", "20", "--quiet",
                                          timeout=40)
        check(code == 3 and "party 0: member 0: entering scene 1:" in out and "parties through    0 (failed 1)" in out,
              f"exit {code}:\n{out}\n{err}")
        code, _, err = self.run_scenert("bots", f"127.0.0.1:{port}", "--play", "raid", "--play-scene", "2")
        check(code == 2 and "--play 'raid': no such party script (known: crypt)" in err, f"exit {code}: {err}")
        code, _, err = self.run_scenert("bots", f"127.0.0.1:{port}", "--play", "crypt", "--play-scene", "2", "--ws")
        check(code == 2 and "--play speaks scenert's protocol over TCP" in err, f"exit {code}: {err}")
        p.stop(want=0)


if __name__ == "__main__":
    harness.main()
