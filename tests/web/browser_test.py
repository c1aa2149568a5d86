#!/usr/bin/python3
"""The web pages in a real headless Chromium against a real `scenert run --web` with bots.

Usage: browser_test.py --scenert PATH --table PATH --out DIR

Checks the play page (login, id, map drawn, keys move the player on the server, a neighbour and its
chat appear, a blocked move snaps back, a dungeon's map) and the dashboard (numbers equal /scenes,
a clicked line shows its entities), with no SEVERE browser console entry. Screenshots land in DIR.
Every wait is bounded; the server, the bots and the browser are stopped on every exit path.
"""
import argparse
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

START_TIMEOUT_S = 20
WAIT_S = 10


class Failure(Exception):
    pass


def log(msg):
    print(f"[browser_test] {msg}", flush=True)


def wait_for(what, fn, timeout=WAIT_S, interval=0.1):
    """fn() until truthy, else Failure naming `what` and the last value seen."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(interval)
    raise Failure(f"{what}: not within {timeout} s (last: {last!r})")


# ---- processes --------------------------------------------------------------------------------


class Processes:
    """Every child started here, stopped by its own pid: SIGTERM, then SIGKILL."""

    def __init__(self):
        self.children = []

    def start(self, args, log_path):
        out = open(log_path, "wb")
        p = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.children.append((p, out))
        return p

    def stop_all(self):
        for p, _ in reversed(self.children):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p, out in reversed(self.children):
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=5)
            out.close()


def start_server(procs, scenert, table, out):
    log_path = os.path.join(out, "server.log")
    server = procs.start([scenert, "run", table, "--web", "127.0.0.1:0", "--tcp", "127.0.0.1:0"], log_path)

    def ports():
        if server.poll() is not None:
            raise Failure(f"scenert run exited with {server.returncode}: see {log_path}")
        text = open(log_path, errors="replace").read()
        web = re.search(r"web pages on http://127\.0\.0\.1:(\d+)", text)
        tcp = re.search(r"clients on tcp://127\.0\.0\.1:(\d+)", text)
        return (int(web.group(1)), int(tcp.group(1))) if web and tcp else None

    web, tcp = wait_for("scenert run to log its web and tcp ports", ports, START_TIMEOUT_S)
    log(f"server pid {server.pid}: web http://127.0.0.1:{web}/ tcp {tcp} (log {log_path})")
    return web, tcp


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


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def pb_string(field, text):
    data = text.encode()
    return varint(field << 3 | 2) + varint(len(data)) + data


def pb_float(field, value):
    return varint(field << 3 | 5) + struct.pack("<f", value)


def frame(msg_id, payload):
    return struct.pack("<II", len(payload), msg_id) + payload


def pb_fields(payload):
    """{field: value} of varint and length-delimited fields (enough for LoginOk)."""
    fields, at = {}, 0
    while at < len(payload):
        key, at = read_varint(payload, at)
        kind = key & 7
        if kind == 0:
            fields[key >> 3], at = read_varint(payload, at)
        elif kind == 2:
            n, at = read_varint(payload, at)
            fields[key >> 3], at = payload[at:at + n], at + n
        elif kind == 5:
            fields[key >> 3], at = payload[at:at + 4], at + 4
        else:
            break
    return fields


def read_varint(data, at):
    n = shift = 0
    while True:
        b = data[at]
        at += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, at


class Neighbour:
    """Logs in by name, then moves and talks when told; a thread drains what the server sends."""

    def __init__(self, port, name):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.pid = None
        self.closed = False
        self.refusals = []
        self.sock.sendall(frame(1000, pb_string(1, name)))
        threading.Thread(target=self.read, daemon=True).start()
        wait_for("the neighbour's LoginOk (1001)", lambda: self.pid)

    def read(self):
        buf = b""
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return
                buf += chunk
                while len(buf) >= 8:
                    length, msg_id = struct.unpack_from("<II", buf)
                    if len(buf) < 8 + length:
                        break
                    payload, buf = buf[8:8 + length], buf[8 + length:]
                    if msg_id == 1001:
                        self.pid = pb_fields(payload).get(1)
                    elif msg_id == 1008:
                        self.refusals.append(pb_fields(payload).get(1))
        except OSError:
            pass

    def move_to_cell(self, x, y):  # Stormhold: cell_size 1, origin 0
        self.sock.sendall(frame(3, pb_float(1, x + 0.5) + pb_float(3, y + 0.5)))

    def say(self, text):
        self.sock.sendall(frame(2, pb_string(1, text)))

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
            raise Failure(f"browser console errors ({where}): " + "; ".join(e["message"] for e in severe))


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


def press(driver, key):
    driver.find_element(By.ID, "map").send_keys(key)


def walkable(driver, x, y):
    return js(driver, "return window.scenert.walkable(arguments[0], arguments[1])", x, y)


# ---- the play page ----------------------------------------------------------------------------


def check_login(driver, admin):
    driver.find_element(By.ID, "name").send_keys("browser-test")
    driver.find_element(By.ID, "login").click()
    s = wait_for("the play page to log in and get its line's geometry (1006)",
                 lambda: (lambda s: s if s["pid"] and s["scene"] and s["map"] and s["cell"] else None)(state(driver)))
    # The geometry (the world's answer) and the player's own 200 Tp 2 (its line's events) come by two
    # ways, in either order: the page stands where the server put it once the latter arrived.
    s = wait_for("the page's own cell to be the server's",
                 lambda: (lambda t: t if admin.cell_of(t["scene"], t["line"], t["pid"]) == (t["cell"]["x"], t["cell"]["y"])
                          else None)(state(driver)))
    shown = driver.find_element(By.ID, "my-id").text
    if shown != str(s["pid"]):
        raise Failure(f"#my-id shows {shown!r}, window.scenert.pid is {s['pid']}")
    pixels = wait_for("the map canvas to be drawn",
                      lambda: (lambda p: p if p["colours"] >= 4 else None)(js(driver, CANVAS_COLOURS, "map", None)))
    where = admin.cell_of(s["scene"], s["line"], s["pid"])
    log(f"play: logged in as #{s['pid']} on scene {s['scene']} line {s['line']}, cell {s['cell']} "
        f"(server: {where}), map {s['map']['width']}x{s['map']['height']}, {pixels['colours']} colours drawn")
    return s


def check_blocked_move(driver, admin, s):
    """A key toward a blocked (or off-map) cell: refused by the server, snapped back, said so."""
    cx, cy = s["cell"]["x"], s["cell"]["y"]
    toward = next(((dx, dy) for dx, dy in KEY_OF if not walkable(driver, cx + dx, cy + dy)), None)
    if toward is None:
        raise Failure(f"no blocked or off-map cell next to the landing cell ({cx}, {cy}) to test a refusal")
    errors_before = len(s["errors"])
    press(driver, KEY_OF[toward])
    refusal = wait_for("a refusal of the blocked move in window.scenert.errors",
                       lambda: [e for e in state(driver)["errors"][errors_before:] if "refused" in e])
    wait_for("the player snapped back to its cell",
             lambda: (lambda c: c["x"] == cx and c["y"] == cy)(state(driver)["cell"]))
    message = driver.find_element(By.ID, "message").text
    if "refused" not in message:
        raise Failure(f"#message does not show the refusal: {message!r}")
    server = admin.cell_of(s["scene"], s["line"], s["pid"])
    if server != (cx, cy):
        raise Failure(f"after the refused move the server has the player at {server}, not ({cx}, {cy})")
    log(f"play: move toward {(cx + toward[0], cy + toward[1])} refused ({refusal[0]}), snapped back, "
        f"#message {message!r}")


def check_key_moves(driver, admin, s):
    """Two key presses toward free cells: the server's /lines sees the player on the new cell."""
    for _ in range(2):
        cx, cy = state(driver)["cell"]["x"], state(driver)["cell"]["y"]
        toward = next(((dx, dy) for dx, dy in KEY_OF if walkable(driver, cx + dx, cy + dy)), None)
        if toward is None:
            raise Failure(f"no free cell next to ({cx}, {cy})")
        target = (cx + toward[0], cy + toward[1])
        press(driver, KEY_OF[toward])
        wait_for(f"the server to see the player on {target} after a key press (/lines)",
                 lambda: admin.cell_of(s["scene"], s["line"], s["pid"]) == target)
        log(f"play: key {toward} moved the player ({cx}, {cy}) -> {target} on the server")


def check_neighbour(driver, admin, s, tcp_port, holder):
    """A TCP client lands beside the page's player: it appears in the view, on the canvas, and its chat in the panel."""
    n = holder["neighbour"] = Neighbour(tcp_port, "neighbour")
    me = state(driver)["cell"]
    spot = next(((me["x"] + dx, me["y"] + dy) for dx in range(2, 6) for dy in (0, 1, -1, 2, -2)
                 if walkable(driver, me["x"] + dx, me["y"] + dy)), None)
    if spot is None:
        raise Failure(f"no free cell near the player at {me} for the neighbour")
    # The neighbour lands where the page's player landed (the town's entry): a few steps from here.
    wait_for("the neighbour on the page's line (/lines)", lambda: admin.cell_of(s["scene"], s["line"], n.pid))
    n.move_to_cell(*spot)
    wait_for(f"the neighbour on {spot} (/lines)", lambda: admin.cell_of(s["scene"], s["line"], n.pid) == spot)
    seen = wait_for(f"neighbour #{n.pid} in window.scenert.view",
                    lambda: [v for v in state(driver)["view"] if v["pid"] == n.pid])
    wait_for("a player drawn on the canvas",
             lambda: js(driver, CANVAS_COLOURS, "map", PLAYER_RGB)["match"] > 0)
    text = f"hello from the neighbour {time.monotonic_ns()}"
    n.say(text)
    wait_for("the neighbour's chat in #chat-log", lambda: text in driver.find_element(By.ID, "chat-log").text)
    log(f"play: neighbour #{n.pid} at {spot} in view at ({seen[0]['x']}, {seen[0]['z']}), drawn, "
        f"its chat in #chat-log")
    return n


def check_resume(driver, s):
    """The socket drops: the page comes back with its resume token, the same player, and says so."""
    before = state(driver)
    driver.find_element(By.ID, "drop").click()
    after = wait_for("the page to reconnect and say 'resumed'",
                     lambda: (lambda t: t if t["connected"] and t["status"] == "resumed" else None)(state(driver)))
    if (after["pid"], after["scene"], after["line"]) != (before["pid"], before["scene"], before["line"]):
        raise Failure(f"resumed as a different player or place: {before} -> {after}")
    shown = driver.find_element(By.ID, "conn").text
    if "resumed" not in shown:
        raise Failure(f"#conn does not say resumed: {shown!r}")
    log(f"play: dropped and resumed as #{after['pid']} on scene {after['scene']} line {after['line']}")


def check_dungeon(driver, admin, s, out):
    before = state(driver)["map"]
    Select(driver.find_element(By.ID, "dungeon-scene")).select_by_value("3001")
    party = driver.find_element(By.ID, "party-id")
    party.clear()
    party.send_keys("0")
    driver.find_element(By.ID, "req-dungeon").click()
    after = wait_for("the page on the dungeon 3001 with its map",
                     lambda: (lambda t: t if t["scene"] == 3001 and t["map"] and t["map"] != before else None)(
                         state(driver)))
    answers = [a for a in after["answers"] if a["scene"] == 3001]
    if not answers or answers[-1]["code"] != "ok":
        raise Failure(f"the dungeon's answer is not ok: {after['answers']}")
    shown = driver.find_element(By.ID, "answers").text
    if "ok" not in shown:
        raise Failure(f"#answers does not show the answer's code: {shown!r}")
    wait_for("the dungeon's map drawn", lambda: js(driver, CANVAS_COLOURS, "map", None)["colours"] >= 4)
    log(f"play: dungeon entered (answer {answers[-1]['code']}), map {before['width']}x{before['height']} -> "
        f"{after['map']['width']}x{after['map']['height']}, line {after['line']}")
    check_monsters(driver, admin, after)
    shot = os.path.join(out, "play-dungeon.png")
    driver.save_screenshot(shot)
    return shot


MONSTERS = """const s = window.scenert;
return [...s.monsters].map(([id, m]) => { const c = s.cellOf(m); return [id, c.x, c.y]; });"""


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
    want, _ = wait_for("the page's monsters to be the server's monsters in view", agree)
    pixels = wait_for("monsters drawn on the map",
                      lambda: (lambda p: p if p["match"] > 0 else None)(js(driver, CANVAS_COLOURS, "map", MONSTER_RGB)))
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
    last = None
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        before = scenes_numbers(admin.get("/scenes"))
        page = js(driver, DASH_NUMBERS)
        after = scenes_numbers(admin.get("/scenes"))
        shown = (int(page["total"]) if page["total"] and page["total"].strip().isdigit() else page["total"],
                 sorted(page["lines"]))
        if shown in (before, after) and page["lines"]:
            log(f"dashboard: #total-players {shown[0]} and {len(shown[1])} lines equal /scenes")
            return
        last = (shown, before, after)
        time.sleep(0.3)
    raise Failure(f"the dashboard's numbers never equalled /scenes within 20 s; last page {last[0]}, "
                  f"/scenes before {last[1]}, after {last[2]}")


def check_spectator(driver, admin, scene, line):
    # The list is redrawn every second: find and click the row in one step, so it cannot go stale between.
    wait_for(f"the dashboard's line {scene}/{line} clicked",
             lambda: js(driver, "const e = document.querySelector(arguments[0]); if (e) e.click(); return !!e;",
                        f'[data-scene="{scene}"][data-line="{line}"]'))

    def matches():
        shown = js(driver, "return window.dashboard && window.dashboard.spectator")
        if not shown or shown.get("scene") != scene or shown.get("line") != line:
            return None
        truth = admin.get(f"/lines/{scene}/{line}")
        want = (len(truth["players"]), len(truth["monsters"]))
        return shown if (shown["players"], shown["monsters"]) == want and sum(want) > 0 else None

    shown = wait_for(f"#spectator to show the entities of /lines/{scene}/{line}", matches, timeout=15, interval=0.3)
    pixels = js(driver, CANVAS_COLOURS, "spectator", MONSTER_RGB if shown["monsters"] else PLAYER_RGB)
    if pixels["match"] == 0:
        raise Failure(f"#spectator shows no entity's colour: {pixels}")
    log(f"dashboard: line {scene}/{line} watched: {shown['players']} players, {shown['monsters']} monsters drawn")


# ---- main -------------------------------------------------------------------------------------


def run(args, procs, holder):
    os.makedirs(args.out, exist_ok=True)
    web, tcp = start_server(procs, args.scenert, args.table, args.out)
    admin = Admin(web)
    bots = procs.start([args.scenert, "bots", f"127.0.0.1:{tcp}", "--clients", "3", "--seconds", "150",
                        "--chat-every", "1", "--act-every", "4", "--rate", "20", "--admin", f"127.0.0.1:{web}", "--quiet"],
                       os.path.join(args.out, "bots.log"))
    log(f"bots pid {bots.pid}")
    driver = holder["driver"] = start_browser()
    console = Console(driver)
    shots = []

    for script in ("/vendor/protobuf.min.js", "/vendor/chart.umd.js"):
        try:
            urllib.request.urlopen(admin.base + script, timeout=5).close()
        except OSError as e:
            raise Failure(f"{script} is not served ({e}): run scripts/setup.sh (npm install in web/)")
    driver.get(f"{admin.base}/")
    s = check_login(driver, admin)
    check_blocked_move(driver, admin, s)
    check_key_moves(driver, admin, s)
    check_neighbour(driver, admin, s, tcp, holder)
    shots.append(os.path.join(args.out, "play.png"))
    driver.save_screenshot(shots[-1])
    shots.append(check_dungeon(driver, admin, s, args.out))
    check_resume(driver, s)
    console.check("play page")

    driver.switch_to.new_window("tab")
    driver.set_window_size(1400, 1000)
    driver.get(f"{admin.base}/dashboard.html")
    wait_for("the dashboard's #total-players", lambda: driver.find_elements(By.CSS_SELECTOR, "[data-line]"))
    check_dashboard_numbers(driver, admin)
    check_spectator(driver, admin, 2001, 1)  # a field: monsters, and bots walk there
    wait_for("the dashboard's charts drawn", lambda: js(driver, "return window.dashboard.samples") > 1, timeout=5)
    shots.append(os.path.join(args.out, "dashboard.png"))
    driver.save_screenshot(shots[-1])
    console.check("dashboard")
    for shot in shots:
        print(f"screenshot: {shot}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scenert", required=True)
    p.add_argument("--table", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    procs, holder = Processes(), {}
    status = 0
    try:
        run(args, procs, holder)
        log("PASS")
    except Failure as f:
        log(f"FAIL: {f}")
        status = 1
    except Exception as e:  # a driver or socket error is a failure too, with its cause
        log(f"FAIL: {type(e).__name__}: {e}")
        status = 1
    finally:
        driver = holder.get("driver")
        if driver is not None:
            if status:
                try:
                    shot = os.path.join(args.out, "failure.png")
                    driver.save_screenshot(shot)
                    print(f"screenshot: {shot}")
                except Exception:
                    pass
            driver.quit()
        if holder.get("neighbour"):
            holder["neighbour"].close()
        procs.stop_all()
    return status


if __name__ == "__main__":
    sys.exit(main())
