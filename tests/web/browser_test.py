#!/usr/bin/python3
"""The web pages in a real headless Chromium against a real `scenert run --web` with bots.

Run through tests/harness: browser_test.py --scenert PATH --source DIR --work DIR --protos DIR [--case NAME].

Checks the play page (login, id, map drawn, keys move the player on the server, a neighbour and its
chat appear, a blocked move snaps back, a dungeon's map, a drop and resume) and the dashboard (numbers
equal /scenes, a clicked line shows its entities), with no SEVERE browser console entry. Screenshots
land in the case's work folder. Every wait is bounded; the server, the bots and the browser are
stopped whatever the outcome.
"""
import contextlib
import json
import os
import pathlib
import socket
import sys
import threading
import time
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "harness"))
import scenert_harness as harness  # noqa: E402
from scenert_harness import cfg, eventually, fail  # noqa: E402

START_TIMEOUT_S = 20
WAIT_S = 10


def log(msg):
    print(f"[browser_test] {msg}", flush=True)


# ---- the server's JSON ------------------------------------------------------------------------


class Admin:
    def __init__(self, port):
        self.base = f"http://127.0.0.1:{port}"

    def get(self, path):
        with urllib.request.urlopen(self.base + path, timeout=5) as r:
            return json.load(r)

    def cell_of(self, scene, line, pid):
        for p in self.get(f"/lines/{scene}/{line}")["players"]:
            if p["id"] == pid:
                return (p["x"], p["y"])
        return None


# ---- a neighbour: a raw TCP client speaking the protocol (docs/protocol.md) -------------------


class Neighbour:
    """Logs in by name, then moves and talks when told; a thread reads what the server sends."""

    def __init__(self, port, name):
        self.wire, self.seed = harness.proto("scenert"), harness.proto("seed002")
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.pid = None
        self.closed = False
        self.refusals = []  # the reasons of its moves the server refused (1008)
        self.sock.sendall(harness.frame(1000, self.wire.Login(name=name)))
        threading.Thread(target=self.read, daemon=True).start()
        eventually(lambda: self.pid, WAIT_S, "the neighbour's LoginOk (1001)")

    def read(self):
        buf = b""
        try:
            while chunk := self.sock.recv(65536):
                frames, buf = harness.split_frames(buf + chunk)
                for msg_id, payload in frames:
                    if msg_id == 1001:
                        self.pid = self.wire.LoginOk.FromString(payload).pid
                    elif msg_id == 1008:
                        self.refusals.append(self.wire.MoveRefused.FromString(payload).reason)
        except OSError:
            pass  # closed by close()

    def move_to_cell(self, x, y):  # Stormhold: cell_size 1, origin 0
        self.sock.sendall(harness.frame(3, self.seed.Position(X=x + 0.5, Z=y + 0.5)))

    def say(self, text):
        self.sock.sendall(harness.frame(2, self.seed.Talk(Content=text)))

    def close(self):
        if not self.closed:
            self.closed = True
            self.sock.close()


# ---- the browser ------------------------------------------------------------------------------


def start_browser():
    o = webdriver.ChromeOptions()
    o.binary_location = "/usr/bin/chromium"
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,900",
              "--disable-dev-shm-usage"]:
        o.add_argument(a)
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)
    driver.set_page_load_timeout(20)
    driver.set_script_timeout(10)
    return driver


class Console:
    """Collects the browser console (get_log drains it) and fails on any SEVERE entry."""

    def __init__(self, driver):
        self.driver = driver
        self.entries = []

    def check(self, where):
        self.entries += self.driver.get_log("browser")
        severe = [e for e in self.entries if e.get("level") == "SEVERE"]
        if severe:
            fail(f"browser console errors ({where}): " + "; ".join(e["message"] for e in severe))


def js(driver, script, *args):
    return driver.execute_script(script, *args)


# The canvas's pixels: how many distinct colours, and how many of a given one.
CANVAS_COLOURS = """
const c = document.getElementById(arguments[0]), want = arguments[1];
const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
const seen = new Set(); let match = 0;
for (let i = 0; i < d.length; i += 4) {
  seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
  if (want && Math.abs(d[i] - want[0]) + Math.abs(d[i + 1] - want[1]) + Math.abs(d[i + 2] - want[2]) < 6) ++match;
}
return {colours: seen.size, match};
"""
PLAYER_RGB = [42, 122, 184]   # map_view.js COLOURS.player
MONSTER_RGB = [192, 57, 43]   # map_view.js COLOURS.monster

STATE = """const s = window.scenert; return {pid: s.pid, scene: s.scene, line: s.line, phase: s.phase,
  connected: s.connected, status: s.status, me: s.me, cell: s.myCell, map: s.map,
  view: [...s.view].map(([pid, p]) => ({pid, ...p})), chat: s.chat.length, errors: s.errors.map(e => e.text),
  answers: s.answers.map(a => ({request_id: a.request_id, code: a.code, scene: a.scene}))};"""

KEY_OF = {(1, 0): Keys.ARROW_RIGHT, (-1, 0): Keys.ARROW_LEFT, (0, 1): Keys.ARROW_DOWN, (0, -1): Keys.ARROW_UP}


def state(driver):
    return js(driver, STATE)


def state_when(driver, holds):
    """The page's state when holds(state), else None (for eventually)."""
    t = state(driver)
    return t if holds(t) else None


def canvas_when(driver, canvas, rgb, holds):
    """The canvas's colour counts when holds(counts), else None (for eventually)."""
    p = js(driver, CANVAS_COLOURS, canvas, rgb)
    return p if holds(p) else None


def press(driver, key):
    driver.find_element(By.ID, "map").send_keys(key)


def walkable(driver, x, y):
    return js(driver, "return window.scenert.walkable(arguments[0], arguments[1])", x, y)


# ---- the play page ----------------------------------------------------------------------------


def check_login(driver, admin):
    driver.find_element(By.ID, "name").send_keys("browser-test")
    driver.find_element(By.ID, "login").click()
    s = eventually(lambda: state_when(driver, lambda t: t["pid"] and t["scene"] and t["map"] and t["cell"]),
                   WAIT_S, "the play page to log in and get its line's geometry (1006)")
    # The geometry (the world's answer) and the player's 202 and own 200 Tp 2 (its line's events) come
    # by two ways, in either order: the page stands where the server put it once the latter arrived.
    s = eventually(lambda: state_when(driver, lambda t: admin.cell_of(t["scene"], t["line"], t["pid"])
                                      == (t["cell"]["x"], t["cell"]["y"])),
                   WAIT_S, "the page's own cell to be the server's")
    # Its 202 names the player itself (seed 002's login): the page draws it once, as itself, not as
    # one of the players it sees.
    if any(v["pid"] == s["pid"] for v in s["view"]):
        fail(f"the page holds itself (#{s['pid']}) among the players it sees: {s['view']}")
    shown = driver.find_element(By.ID, "my-id").text
    if shown != str(s["pid"]):
        fail(f"#my-id shows {shown!r}, window.scenert.pid is {s['pid']}")
    pixels = eventually(lambda: canvas_when(driver, "map", None, lambda p: p["colours"] >= 4),
                        WAIT_S, "the map canvas to be drawn")
    log(f"play: logged in as #{s['pid']} on scene {s['scene']} line {s['line']}, cell {s['cell']} "
        f"(the server's), map {s['map']['width']}x{s['map']['height']}, {pixels['colours']} colours drawn")
    return s


def check_blocked_move(driver, admin, s):
    """A key toward a blocked (or off-map) cell: refused by the server, snapped back, said so."""
    cx, cy = s["cell"]["x"], s["cell"]["y"]
    toward = next(((dx, dy) for dx, dy in KEY_OF if not walkable(driver, cx + dx, cy + dy)), None)
    if toward is None:
        fail(f"no blocked or off-map cell next to the landing cell ({cx}, {cy}) to test a refusal")
    errors_before = len(s["errors"])
    press(driver, KEY_OF[toward])
    refusal = eventually(lambda: [e for e in state(driver)["errors"][errors_before:] if "refused" in e],
                         WAIT_S, "a refusal of the blocked move in window.scenert.errors")
    eventually(lambda: state_when(driver, lambda t: (t["cell"]["x"], t["cell"]["y"]) == (cx, cy)),
               WAIT_S, "the player snapped back to its cell")
    message = driver.find_element(By.ID, "message").text
    if "refused" not in message:
        fail(f"#message does not show the refusal: {message!r}")
    server = admin.cell_of(s["scene"], s["line"], s["pid"])
    if server != (cx, cy):
        fail(f"after the refused move the server has the player at {server}, not ({cx}, {cy})")
    log(f"play: move toward {(cx + toward[0], cy + toward[1])} refused ({refusal[0]}), snapped back, "
        f"#message {message!r}")


def check_key_moves(driver, admin, s):
    """Two key presses toward free cells: the server's /lines sees the player on the new cell."""
    for _ in range(2):
        cx, cy = state(driver)["cell"]["x"], state(driver)["cell"]["y"]
        toward = next(((dx, dy) for dx, dy in KEY_OF if walkable(driver, cx + dx, cy + dy)), None)
        if toward is None:
            fail(f"no free cell next to ({cx}, {cy})")
        target = (cx + toward[0], cy + toward[1])
        press(driver, KEY_OF[toward])
        eventually(lambda: admin.cell_of(s["scene"], s["line"], s["pid"]) == target,
                   WAIT_S, f"the server to see the player on {target} after a key press (/lines)")
        log(f"play: key {toward} moved the player ({cx}, {cy}) -> {target} on the server")


def check_neighbour(driver, admin, s, n):
    """A TCP client lands beside the page's player: it appears in the view, on the canvas, and its chat in
    the panel; none of its moves was refused."""
    me = state(driver)["cell"]
    spot = next(((me["x"] + dx, me["y"] + dy) for dx in range(2, 6) for dy in (0, 1, -1, 2, -2)
                 if walkable(driver, me["x"] + dx, me["y"] + dy)), None)
    if spot is None:
        fail(f"no free cell near the player at {me} for the neighbour")
    # The neighbour lands where the page's player landed (the town's entry): a few steps from here.
    eventually(lambda: admin.cell_of(s["scene"], s["line"], n.pid), WAIT_S, "the neighbour on the page's line (/lines)")
    n.move_to_cell(*spot)
    eventually(lambda: admin.cell_of(s["scene"], s["line"], n.pid) == spot, WAIT_S, f"the neighbour on {spot} (/lines)")
    seen = eventually(lambda: [v for v in state(driver)["view"] if v["pid"] == n.pid],
                      WAIT_S, f"neighbour #{n.pid} in window.scenert.view")
    eventually(lambda: js(driver, CANVAS_COLOURS, "map", PLAYER_RGB)["match"] > 0,
               WAIT_S, "a player drawn on the canvas")
    text = f"hello from the neighbour {time.monotonic_ns()}"
    n.say(text)
    eventually(lambda: text in driver.find_element(By.ID, "chat-log").text, WAIT_S, "the neighbour's chat in #chat-log")
    if n.refusals:
        fail(f"the neighbour's moves to free cells were refused: {n.refusals}")
    log(f"play: neighbour #{n.pid} at {spot} in view at ({seen[0]['x']}, {seen[0]['z']}), drawn, "
        f"its chat in #chat-log")


def check_resume(driver, s):
    """The socket drops: the page comes back with its resume token, the same player, and says so."""
    before = state(driver)
    driver.find_element(By.ID, "drop").click()
    after = eventually(lambda: state_when(driver, lambda t: t["connected"] and t["status"] == "resumed"), WAIT_S,
                       "the page to reconnect and say 'resumed'")
    if (after["pid"], after["scene"], after["line"]) != (before["pid"], before["scene"], before["line"]):
        fail(f"resumed as a different player or place: {before} -> {after}")
    shown = driver.find_element(By.ID, "conn").text
    if "resumed" not in shown:
        fail(f"#conn does not say resumed: {shown!r}")
    # The page kept the maps it was sent (the town's, the dungeon's) and named them in its new login:
    # the resumed line's 1006 came without blocks, and the page drew it from what it kept.
    kept = js(driver, "return Object.keys(JSON.parse(localStorage.getItem('scenert.maps.v1') || '{}')).length")
    if kept < 2:
        fail(f"the page kept {kept} maps in localStorage, not the town's and the dungeon's")
    map_errors = [e for e in after["errors"] if "block rows" in e or "leaves out map" in e]
    if map_errors:
        fail(f"the page could not take its map: {map_errors}")
    eventually(lambda: js(driver, CANVAS_COLOURS, "map", None)["colours"] >= 4, WAIT_S, "the map drawn after the resume")
    log(f"play: dropped and resumed as #{after['pid']} on scene {after['scene']} line {after['line']}, "
        f"{kept} maps kept")


def check_dungeon(driver, admin, s):
    before = state(driver)["map"]
    Select(driver.find_element(By.ID, "dungeon-scene")).select_by_value("3001")
    party = driver.find_element(By.ID, "party-id")
    party.clear()
    party.send_keys("0")
    driver.find_element(By.ID, "req-dungeon").click()
    after = eventually(lambda: state_when(driver, lambda t: t["scene"] == 3001 and t["map"] and t["map"] != before),
                       WAIT_S, "the page on the dungeon 3001 with its map")
    answers = [a for a in after["answers"] if a["scene"] == 3001]
    if not answers or answers[-1]["code"] != "ok":
        fail(f"the dungeon's answer is not ok: {after['answers']}")
    shown = driver.find_element(By.ID, "answers").text
    if "ok" not in shown:
        fail(f"#answers does not show the answer's code: {shown!r}")
    eventually(lambda: js(driver, CANVAS_COLOURS, "map", None)["colours"] >= 4, WAIT_S, "the dungeon's map drawn")
    log(f"play: dungeon entered (answer {answers[-1]['code']}), map {before['width']}x{before['height']} -> "
        f"{after['map']['width']}x{after['map']['height']}, line {after['line']}")
    check_monsters(driver, admin, after)
    check_monster_states(driver, admin, after)


MONSTERS = """const s = window.scenert;
return [...s.monsters].map(([id, m]) => { const c = s.cellOf(m); return [id, c.x, c.y]; });"""


# The page's monsters carry their brain's state (1009 `state`): with the toggle on, the states the
# page holds are the server's (read from /lines), and the labels drawn name them.
MONSTER_STATES = """const s = window.scenert;
return [...s.monsters].map(([id, m]) => [id, ['idle', 'chase', 'attack', 'leash', 'dead'][m.state || 0]]);"""


def check_monster_states(driver, admin, s):
    driver.find_element(By.ID, "monster-states").click()
    agreed = {}  # monster -> a state the page and the server both gave it at one read (they chase: it changes)
    def agree():
        doc = admin.get(f"/lines/{s['scene']}/{s['line']}")
        server = {m["id"]: m.get("state") for m in doc["monsters"]}
        shown = js(driver, MONSTER_STATES)
        agreed.update({i: st for i, st in shown if server.get(i) == st})
        return agreed if shown and all(i in agreed for i, _ in shown) else None
    eventually(agree, WAIT_S, "each of the page's monster states to be the server's at one read")
    if not driver.find_element(By.ID, "monster-states").is_selected():
        fail("the monster states toggle did not turn on")
    log(f"play: {len(agreed)} monsters' states on the page as the server had them ({sorted(set(agreed.values()))})")


# The monsters the page holds (1009, 1010) are the server's monsters in the player's view, where the
# server has them; they chase the player, so the two reads are retried until they agree.
def check_monsters(driver, admin, s):
    def agree():
        doc = admin.get(f"/lines/{s['scene']}/{s['line']}")
        g = doc["geometry"]
        me = next((p for p in doc["players"] if p["id"] == s["pid"]), None)
        if me is None:
            return None
        area = lambda v, size: v // size
        want = sorted([m["id"], m["x"], m["y"]] for m in doc["monsters"]
                      if abs(area(m["x"], g["area_width"]) - area(me["x"], g["area_width"])) <= g["eyesight_x"]
                      and abs(area(m["y"], g["area_height"]) - area(me["y"], g["area_height"])) <= g["eyesight_y"])
        shown = sorted(js(driver, MONSTERS))
        return (want, shown) if want and shown == want else None
    want, _ = eventually(agree, WAIT_S, "the page's monsters to be the server's monsters in view")
    pixels = eventually(lambda: canvas_when(driver, "map", MONSTER_RGB, lambda p: p["match"] > 0),
                        WAIT_S, "monsters drawn on the map")
    log(f"play: {len(want)} monsters in view, as the server has them; {pixels['match']} monster pixels drawn")


# ---- the dashboard ----------------------------------------------------------------------------

DASH_NUMBERS = """return {total: document.getElementById('total-players')?.textContent ?? null,
  lines: [...document.querySelectorAll('[data-scene][data-line]')].map(e =>
    [Number(e.dataset.scene), Number(e.dataset.line), Number(e.dataset.players)])};"""


def scenes_numbers(doc):
    lines = sorted([sc["id"], l["line"], l["players"]] for sc in doc["scenes"] for l in sc["lines"])
    return doc["players"], lines


def check_dashboard_numbers(driver, admin):
    """The page's numbers equal a /scenes read taken just before or just after the page was read."""
    last = {}

    def equal():
        before = scenes_numbers(admin.get("/scenes"))
        page = js(driver, DASH_NUMBERS)
        after = scenes_numbers(admin.get("/scenes"))
        shown = (int(page["total"]) if page["total"] and page["total"].strip().isdigit() else page["total"],
                 sorted(page["lines"]))
        last.update(page=shown, before=before, after=after)
        return shown if shown in (before, after) and page["lines"] else None
    shown = eventually(equal, 20, "the dashboard's numbers to equal /scenes", lambda: last, period=0.3)
    log(f"dashboard: #total-players {shown[0]} and {len(shown[1])} lines equal /scenes")


def check_spectator(driver, admin, scene, line):
    # The list is redrawn every second: find and click the row in one step, so it cannot go stale between.
    eventually(lambda: js(driver, "const e = document.querySelector(arguments[0]); if (e) e.click(); return !!e;",
                          f'[data-scene="{scene}"][data-line="{line}"]'),
               WAIT_S, f"the dashboard's line {scene}/{line} clicked")

    def matches():
        shown = js(driver, "return window.dashboard && window.dashboard.spectator")
        if not shown or shown.get("scene") != scene or shown.get("line") != line:
            return None
        truth = admin.get(f"/lines/{scene}/{line}")
        want = (len(truth["players"]), len(truth["monsters"]))
        return shown if (shown["players"], shown["monsters"]) == want and sum(want) > 0 else None

    shown = eventually(matches, 15, f"#spectator to show the entities of /lines/{scene}/{line}", period=0.3)
    pixels = js(driver, CANVAS_COLOURS, "spectator", MONSTER_RGB if shown["monsters"] else PLAYER_RGB)
    if pixels["match"] == 0:
        fail(f"#spectator shows no entity's colour: {pixels}")
    log(f"dashboard: line {scene}/{line} watched: {shown['players']} players, {shown['monsters']} monsters drawn")


# ---- the cases -------------------------------------------------------------------------------


class Pages(harness.Case):
    """A `scenert run --web --tcp` with three bots, and a headless Chromium on its pages."""

    def setUp(self):
        super().setUp()
        server = self.scenert("server", "run", f"{cfg.source}/examples/mmo.json", "--web", "127.0.0.1:0",
                              "--tcp", "127.0.0.1:0")
        web = int(server.wait_for_line(r"web pages on http://127\.0\.0\.1:(\d+)", START_TIMEOUT_S).group(1))
        self.tcp = int(server.wait_for_line(r"clients on tcp://127\.0\.0\.1:(\d+)", START_TIMEOUT_S).group(1))
        log(f"server pid {server.pid}: web http://127.0.0.1:{web}/ tcp {self.tcp}")
        self.admin = Admin(web)
        bots = self.scenert("bots", "bots", f"127.0.0.1:{self.tcp}", "--clients", "3", "--seconds", "150",
                            "--chat-every", "1", "--act-every", "4", "--rate", "20", "--admin", f"127.0.0.1:{web}",
                            "--quiet")
        log(f"bots pid {bots.pid}")
        for script in ("/vendor/protobuf.min.js", "/vendor/chart.umd.js"):
            try:
                urllib.request.urlopen(self.admin.base + script, timeout=5).close()
            except OSError as e:
                fail(f"{script} is not served ({e}): run scripts/setup.sh (npm install in web/)")
        self.driver = start_browser()
        self.addCleanup(self.driver.quit)
        self.console = Console(self.driver)

    def shot(self, name):
        path = os.path.join(self.work, f"{name}.png")
        self.driver.save_screenshot(path)
        print(f"screenshot: {path}")
        return path

    @contextlib.contextmanager
    def screenshot_on_failure(self):
        try:
            yield
        except BaseException:
            try:
                self.shot("failure")
            except Exception as e:  # the browser may be what failed
                log(f"no failure screenshot: {e}")
            raise

    def test_play_page(self):
        driver, admin = self.driver, self.admin
        with self.screenshot_on_failure():
            driver.get(f"{admin.base}/")
            s = check_login(driver, admin)
            check_blocked_move(driver, admin, s)
            check_key_moves(driver, admin, s)
            neighbour = Neighbour(self.tcp, "neighbour")
            self.addCleanup(neighbour.close)
            check_neighbour(driver, admin, s, neighbour)
            self.shot("play")
            check_dungeon(driver, admin, s)
            self.shot("play-dungeon")
            check_resume(driver, s)
            self.console.check("play page")

    def test_dashboard(self):
        driver, admin = self.driver, self.admin
        with self.screenshot_on_failure():
            driver.set_window_size(1400, 1000)
            driver.get(f"{admin.base}/dashboard.html")
            eventually(lambda: driver.find_elements(By.CSS_SELECTOR, "[data-line]"), WAIT_S, "the dashboard's lines")
            check_dashboard_numbers(driver, admin)
            check_spectator(driver, admin, 2001, 1)  # a field: monsters, and bots walk there
            eventually(lambda: js(driver, "return window.dashboard.samples") > 1, 5, "the dashboard's charts drawn")
            eventually(lambda: js(driver, "return window.dashboard.admitting") is True, 5,
                       "the dashboard's admission badge (admitting)")
            self.shot("dashboard")
            self.console.check("dashboard")


if __name__ == "__main__":
    harness.main()
