#!/usr/bin/python3
"""The play page on the reference dungeon, in a real headless Chromium: `scenert run --module` with the
crypt's module (examples/dungeon, built as a library; SCENERT_DUNGEON_LIBRARY names it) and its table
made quick.

Run through tests/harness: dungeon_page_test.py --scenert PATH --source DIR --work DIR --protos DIR.

The page is opened without clicks in its query (it knows no opcode of its own): on entering the crypt
the server tells it what the crypt's module declares a click sends (1015: boss and adds 2001, the chest
2002, each within 2 cells). A player logs in by name, enters the crypt, sees the boss with a health bar,
attacks it by clicking it on the map until it dies, clicks the chest, sees its loot listed (1013) and,
logged in again, held (1014); no SEVERE browser console entry.
"""
import json
import os
import pathlib
import sys
import time

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "harness"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import scenert_harness as harness  # noqa: E402
from scenert_harness import cfg, check, eventually, fail  # noqa: E402
from browser_test import CANVAS_COLOURS, START_TIMEOUT_S, WAIT_S, Console, js, start_browser  # noqa: E402

BOSS, CHEST = 1, 3
BAR_RGB = [39, 174, 96]  # map_view.js COLOURS.bar
NAMES = "names=1:boss,2:add,3:chest"  # no ?click=: the server's 1015 says what a click sends
CRYPT_CLICKS = {"1": {"opcode": 2001, "range": 2}, "2": {"opcode": 2001, "range": 2}, "3": {"opcode": 2002, "range": 2}}

ENTITIES = """const s = window.scenert;
return {me: s.myCell, refusals: s.refusals.length, sent: s.actionsSent, loot: s.loot, inventory: s.inventory,
  entities: [...s.monsters].map(([id, m]) => ({id, kind: m.kind, state: m.state, health: m.health,
                                                cell: s.cellOf(m), px: s.pixelOf(s.cellOf(m))}))};"""


def log(msg):
    print(f"[dungeon_page] {msg}", flush=True)


def quick_table(work):
    """The example's table with a fight that lasts seconds, each player in an instance of its own."""
    with open(os.path.join(cfg.source, "examples", "dungeon", "table.json")) as f:
        table = json.load(f)
    crypt = table["scenes"][1]
    crypt["instances"] = "party"
    crypt["module"].update(boss_health=600, attack_cooldown_ms=100, boss_step_ms=100, add_step_ms=100,
                           strike_ms=500)
    path = os.path.join(work, "quick.json")
    with open(path, "w") as f:
        json.dump(table, f)
    return path


def page(driver):
    return js(driver, ENTITIES)


def of_kind(p, kind):
    return next((e for e in p["entities"] if e["kind"] == kind), None)


def click_cell(driver, px):
    """A real mouse click on the map canvas at a cell's centre (CSS pixels from its top-left)."""
    canvas = driver.find_element(By.ID, "map")
    size = canvas.size
    ActionChains(driver).move_to_element_with_offset(canvas, px["x"] - size["width"] / 2,
                                                     px["y"] - size["height"] / 2).click().perform()


def fight(driver):
    """Clicks the boss until its chest stands: returns the clicks made and the healths seen."""
    clicks, healths, bar_seen = 0, [], False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        p = page(driver)
        if of_kind(p, CHEST):
            return clicks, healths, bar_seen, p
        boss = of_kind(p, BOSS)
        if boss is None:  # it walks to the player
            eventually(lambda: of_kind(page(driver), BOSS) or of_kind(page(driver), CHEST), 20, "the boss in view")
            continue
        if not healths or healths[-1] != boss["health"]:
            healths.append(boss["health"])
        if len(healths) > 1 and not bar_seen:  # hurt: its bar is drawn (green above a third)
            bar_seen = bool(js(driver, CANVAS_COLOURS, "map", BAR_RGB)["match"])
        click_cell(driver, boss["px"])
        clicks += 1
        # Each click changes something: a hit (health), a refusal (cooldown, reach), a step closer.
        eventually(lambda: (lambda q: q["sent"] != p["sent"] or q["refusals"] != p["refusals"]
                            or q["me"] != p["me"] or of_kind(q, BOSS) != boss)(page(driver)),
                   5, "the click on the boss to send an attack or walk closer")
    fail(f"the boss is not dead after 60 s of clicks ({clicks} clicks, healths {healths})")


class DungeonPage(harness.Case):
    def test_dungeon_page(self):
        library = os.environ.get("SCENERT_DUNGEON_LIBRARY")
        check(library and os.path.exists(library), f"SCENERT_DUNGEON_LIBRARY names no file: {library!r}")
        server = self.scenert("server", "run", quick_table(self.work), "--module", library, "--web", "127.0.0.1:0",
                              "--store", f"{self.work}/crypt.sqlite")
        web = int(server.wait_for_line(r"web pages on http://127\.0\.0\.1:(\d+)", START_TIMEOUT_S).group(1))
        driver = start_browser()
        self.addCleanup(driver.quit)
        console = Console(driver)
        try:
            self.play(driver, f"http://127.0.0.1:{web}")
        except BaseException:
            driver.save_screenshot(os.path.join(self.work, "failure.png"))
            raise
        console.check("play page on the dungeon")

    def play(self, driver, base):
        driver.get(f"{base}/play.html?{NAMES}")
        driver.find_element(By.ID, "name").send_keys("hero")
        driver.find_element(By.ID, "login").click()
        eventually(lambda: js(driver, "return window.scenert.scene && window.scenert.myCell"), WAIT_S, "the login")
        eventually(lambda: js(driver, "return window.scenert.inventory !== null"), WAIT_S, "the account's inventory (1014)")
        eventually(lambda: driver.find_elements(By.CSS_SELECTOR, "#dungeon-scene option[value='2']"), WAIT_S,
                   "the crypt among the dungeons")
        Select(driver.find_element(By.ID, "dungeon-scene")).select_by_value("2")
        driver.find_element(By.ID, "req-dungeon").click()
        eventually(lambda: js(driver, "return window.scenert.scene === 2"), WAIT_S, "the page in the crypt")
        eventually(lambda: js(driver, "return window.scenert.clickActions") == CRYPT_CLICKS, WAIT_S,
                   "the crypt's click actions (1015)", seen=lambda: js(driver, "return window.scenert.clickActions"))
        clicks, healths, bar_seen, p = fight(driver)
        check(len(healths) > 2 and healths[0] == 600, f"the boss's health as the page saw it: {healths}")
        check(bar_seen, "no health bar drawn over the hurt boss")
        check(p["sent"] > 0, "no attack sent by a click")
        chest = of_kind(p, CHEST)
        log(f"boss killed in {clicks} clicks ({p['sent']} attacks sent, {p['refusals']} refused), healths {healths}")
        driver.save_screenshot(os.path.join(self.work, "chest.png"))
        click_cell(driver, chest["px"])
        loot = eventually(lambda: page(driver)["loot"], WAIT_S, "the loot (1013) after clicking the chest")
        eventually(lambda: (lambda c: c and c["state"] == 1)(of_kind(page(driver), CHEST)), WAIT_S,
                   "the chest drawn open (state 1)")
        loot = eventually(lambda: (lambda q: q if len(q) >= 2 else None)(page(driver)["loot"]), WAIT_S,
                          "both loot rolls (1013)", seen=lambda: page(driver)["loot"])
        shown = driver.find_element(By.ID, "loot").text
        check(all(f"item {g['item']}" in shown for g in loot), f"#loot shows {shown!r}, granted {loot}")
        want = {}
        for g in loot:
            want[g["item"]] = want.get(g["item"], 0) + g["count"]
        driver.save_screenshot(os.path.join(self.work, "loot.png"))
        driver.find_element(By.ID, "login").click()  # logs in again as hero: a new connection
        held = eventually(lambda: (lambda i: i if i else None)(js(driver, "return window.scenert.inventory")), WAIT_S,
                          "the inventory after logging in again")
        check({i["item"]: i["count"] for i in held} == want, f"hero holds {held} after logging in again, was granted {want}")
        check(all(f"item {i}" in driver.find_element(By.ID, "inventory").text for i in want),
              f"#inventory shows {driver.find_element(By.ID, 'inventory').text!r}")
        harness.report(f"dungeon page: boss killed by {clicks} clicks, chest opened by a click, loot {want} held again")


if __name__ == "__main__":
    harness.main()
