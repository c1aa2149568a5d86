// The play page: log in, pick a scene and line, walk, chat, ask the world; all over /ws.
import { loadWire, KIND } from './wire.js';
import { Geometry, MapView } from './map_view.js';
import { GameSession } from './session.js';
import { $, fetchJson, el, say } from './page.js';

const WALK_STEP_MS = 150;  // a click walks one cell per step: slow enough for any max_speed we ship
const KEY_REPEAT_MS = 70;  // a held key repeats ~30/s; the server takes 20 moves/s

const wsUrl = new URLSearchParams(location.search).get('ws') ||
  `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`;

const view = new MapView($('map'));
let session = null;
let geometry = null;
let walk = null;           // {target, timer} while a click walks
let lastTarget = null;     // the cell of the last move sent: where a refusal flashes
let lastKeyMove = 0;
let shownChat = 0;
let shownAnswers = 0;
let scenes = [];

// ---- what a click on a game module's entity sends: as the server says, or the page's query --------
// The server tells what its scene's module declares (1015, on entering a line of it). The query, when
// given, is used instead on every scene (a developer's override); nothing is hard-coded here.
// ?click=KIND:OPCODE[:RANGE],...  a click on an entity of that kind sends OPCODE with the entity's id
//                                 (8 bytes, little-endian) when the player is within RANGE cells of it
//                                 (Chebyshev; no RANGE: any distance); farther, the player walks closer.
// ?names=KIND:NAME,...            what the map calls each kind. docs/modules.md, "The play page".
function parseActions(params) {
  const click = new Map(), names = new Map();
  for (const item of (params.get('click') || '').split(',').filter(Boolean)) {
    const [kind, opcode, range] = item.split(':').map(Number);
    if (Number.isInteger(kind) && Number.isInteger(opcode) && opcode >= 2000)
      click.set(kind, { opcode, range: Number.isFinite(range) ? range : Infinity });
    else say(`?click: '${item}' is not KIND:OPCODE[:RANGE] with OPCODE from 2000 up`, 'bad');
  }
  for (const item of (params.get('names') || '').split(',').filter(Boolean)) {
    const [kind, name] = item.split(':');
    if (name) names.set(Number(kind), name);
  }
  return { click, names };
}
const actions = parseActions(new URLSearchParams(location.search));
const clickOverride = new URLSearchParams(location.search).has('click');
// The click actions in force: the query's, or those the server announced for the scene stood on.
function clickActionsNow() {
  if (clickOverride) return actions.click;
  return (session && session.state.clickActions.get(session.state.scene)) || new Map();
}
const maxHealth = new Map();  // entity id -> the most health seen: its bar's full length
let actionsSent = 0;

// ---- the state tests and curious developers read: window.scenert --------------------------------
function exposeState() {
  const s = () => session ? session.state : null;
  const get = (k, d) => () => (s() ? s()[k] : d);
  window.scenert = Object.freeze(Object.defineProperties({}, {
    pid: { get: get('pid', 0) }, name: { get: get('name', '') }, scene: { get: get('scene', 0) },
    line: { get: get('line', 0) }, phase: { get: get('phase', 0) },
    connected: { get: get('connected', false) }, status: { get: get('status', 'not connected') },
    view: { get: get('view', new Map()) }, monsters: { get: get('monsters', new Map()) }, me: { get: get('me', null) }, chat: { get: get('chat', []) },
    answers: { get: get('answers', []) }, errors: { get: get('errors', []) },
    rtt_ms: { get: get('rtt_ms', null) }, fps: { get: get('fps', 0) },
    map: { get: () => geometry && { width: geometry.width, height: geometry.height, cell_size: geometry.cell_size } },
    myCell: { get: () => (geometry && session ? geometry.cellOf(session.state.me) : null) },
    cellOf: { value: (p) => (geometry ? geometry.cellOf(p) : null) },
    refusals: { get: get('refusals', []) }, loot: { get: get('loot', []) },
    clickActions: { get: () => Object.fromEntries(clickActionsNow()) },
    inventory: { get: get('inventory', null) }, moduleFrames: { get: get('moduleFrames', 0) },
    actionsSent: { get: () => actionsSent },
    // Where a cell's centre is drawn, in CSS pixels from the canvas's top-left (a test clicks there).
    pixelOf: { value: (c) => view.pixelOf(c) },
    // What the 1006 geometry says of a cell: on the map and not blocked (a test picks moves by it).
    walkable: { value: (x, y) => !!geometry && geometry.contains({ x, y }) && !geometry.isBlocked({ x, y }) },
  }));
}

// ---- drawing ------------------------------------------------------------------------------------
const BRAIN_STATES = ['idle', 'chase', 'attack', 'leash', 'dead'];
// A monster of the table (kind 0) names its brain's state; a module's entity shows its own numbers.
function monsterState(m) {
  return m.kind ? `k${m.kind} s${m.state}` : (BRAIN_STATES[m.state || 0] || `s${m.state}`);
}

// A module's entity is named by its kind (?names=); its health bar is its health against the most seen.
function entityOf(id, m, states) {
  if (m.health > (maxHealth.get(id) || 0)) maxHealth.set(id, m.health);
  const full = maxHealth.get(id) || 0;
  const name = actions.names.get(m.kind) || `m${id}`;
  return {
    ...geometry.cellOf(m), label: states ? `${name} ${monsterState(m)}` : name, kind: 'monster',
    tint: m.kind || 0, bar: full > 0 ? m.health / full : null,
  };
}

function redraw() {
  if (!session || !geometry) return;
  const st = session.state, me = geometry.cellOf(st.me);
  const states = $('monster-states').checked;  // a table monster's state: its brain's (1009 `state`)
  const entities = [...st.monsters].map(([id, m]) => entityOf(id, m, states));
  for (const [pid, p] of st.view) entities.push({ ...geometry.cellOf(p), label: p.name || `#${pid}`, kind: 'player' });
  entities.push({ ...me, label: `${st.name || 'you'} #${st.pid}`, kind: 'me' });
  view.setScene({ entities, viewRect: geometry.viewRect(me), focus: me });
}

function showStatus() {
  const st = session.state;
  const conn = $('conn');
  conn.textContent = st.status;
  conn.className = `conn ${st.connected ? 'on' : 'off'}`;
  $('my-id').textContent = st.pid ? String(st.pid) : '';
  $('where').textContent = st.scene
    ? `${st.sceneName} (${st.scene}) · line ${st.line} · phase ${st.phase}` : '—';
  $('rtt').textContent = st.rtt_ms == null ? '–' : `${st.rtt_ms.toFixed(1)} ms`;
  $('fps').textContent = String(st.fps);
}

function showChat() {
  const log = $('chat-log'), chat = session.state.chat;
  for (; shownChat < chat.length; ++shownChat) {
    const c = chat[shownChat];
    log.append(el('div', { className: c.pid === session.state.pid ? 'mine' : '' },
      el('b', {}, `${c.name || '#' + c.pid}: `), c.text));
  }
  while (log.childElementCount > 300) log.firstElementChild.remove();
  log.scrollTop = log.scrollHeight;
}

function showAnswers() {
  const list = $('answers'), answers = session.state.answers;
  for (; shownAnswers < answers.length; ++shownAnswers) {
    const a = answers[shownAnswers];
    const where = a.code === 'ok' ? ` → scene ${a.scene} line ${a.line}${a.phase ? ` phase ${a.phase}` : ''}` : '';
    list.prepend(el('li', { className: a.code === 'ok' ? 'ok' : 'bad', title: a.message },
      `#${a.request_id} ${a.asked}: `, el('b', { className: 'code' }, a.code), where,
      a.message ? ` (${a.message})` : ''));
  }
}

function showViewList() {
  const list = $('view-list'), st = session.state;
  list.replaceChildren(...[...st.view].map(([pid, p]) => {
    const c = geometry ? geometry.cellOf(p) : { x: '?', y: '?' };
    return el('li', {}, `${p.name || '#' + pid} #${pid} at (${c.x}, ${c.y})`);
  }));
  $('view-count').textContent = `(${st.view.size} players, ${st.monsters.size} monsters)`;
}

// ---- moving -------------------------------------------------------------------------------------
function moveToCell(cell) {
  if (!session || !geometry || !session.state.connected) return false;
  lastTarget = cell;
  if (!session.moveTo(geometry.centreOf(cell))) return false;
  session.state.me = geometry.centreOf(cell);  // shown at once; a refusal snaps it back
  redraw();
  return true;
}

function step(dx, dy) {
  const c = geometry.cellOf(session.state.me);
  return moveToCell({ x: c.x + dx, y: c.y + dy });
}

function stopWalking(why = '') {
  if (!walk) return;
  clearInterval(walk.timer);
  walk = null;
  if (why) say(why);
}

// One cell per step along the longer way first; around a known blocked cell by the other axis.
function walkStep() {
  const c = geometry.cellOf(session.state.me), t = walk.target;
  const dx = Math.sign(t.x - c.x), dy = Math.sign(t.y - c.y);
  if (!dx && !dy) return stopWalking();
  const xFirst = Math.abs(t.x - c.x) >= Math.abs(t.y - c.y);
  const tries = (xFirst ? [[dx, 0], [0, dy]] : [[0, dy], [dx, 0]]).filter(([a, b]) => a || b);
  const free = tries.find(([a, b]) => !geometry.isBlocked({ x: c.x + a, y: c.y + b }));
  if (!free) return stopWalking('the way is blocked');
  step(free[0], free[1]);
}

function walkTo(target) {
  stopWalking();
  walk = { target, timer: setInterval(walkStep, WALK_STEP_MS) };
  walkStep();
}

const KEYS = {
  ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1],
  a: [-1, 0], d: [1, 0], w: [0, -1], s: [0, 1], A: [-1, 0], D: [1, 0], W: [0, -1], S: [0, 1],
};

function onKey(e) {
  const typing = ['INPUT', 'SELECT', 'TEXTAREA'].includes(document.activeElement?.tagName);
  const dir = KEYS[e.key];
  if (typing || !dir || !geometry) return;
  e.preventDefault();
  if (e.repeat && performance.now() - lastKeyMove < KEY_REPEAT_MS) return;
  lastKeyMove = performance.now();
  stopWalking();
  step(dir[0], dir[1]);
}

// ---- scenes from /scenes: the picker, the dungeons, the town's spaces ---------------------------
async function refreshScenes() {
  try {
    scenes = (await fetchJson('/scenes')).scenes;
  } catch (err) {
    say(`/scenes: ${err.message}`, 'bad');
    return;
  }
  fillScenePicker();
  fillSelect($('dungeon-scene'), scenes.filter((s) => s.kind === 'dungeon').map((s) => [s.id, `${s.name} (${s.id})`]));
  const spaces = scenes.filter((s) => s.kind === 'town')
    .flatMap((t) => (t.spaces || []).map((sp) => [sp.id, `${sp.name} (${sp.id}) in ${t.name}`]));
  fillSelect($('space-id'), spaces);
}

function fillSelect(select, items) {
  const keep = select.value;
  select.replaceChildren(...items.map(([value, text]) => el('option', { value }, text)));
  if (items.some(([v]) => String(v) === keep)) select.value = keep;
}

// Each scene a group: "any line" (the policy picks), then its shared lines with their players.
// A full line is marked and cannot be picked; private instances (a party's) are not listed.
function fillScenePicker() {
  const select = $('scenes'), keep = select.value, st = session ? session.state : {};
  const groups = scenes.filter((s) => s.kind !== 'space').map((s) => {
    const lines = s.lines.filter((l) => l.party === undefined && l.state === 'open').map((l) => {
      const full = l.players >= s.capacity;
      const here = st.scene === s.id && st.line === l.line ? ' ← you' : '';
      return el('option', { value: `${s.id}:${l.line}`, disabled: full, className: full ? 'full' : '' },
        `line ${l.line} — ${l.players}/${s.capacity}${full ? ' FULL' : ''}${here}`);
    });
    return el('optgroup', { label: `${s.name} · ${s.kind} · ${s.id} (${s.players} players)` },
      el('option', { value: `${s.id}:0` }, 'any line (the scene picks)'), ...lines);
  });
  select.replaceChildren(...groups);
  if (keep && select.querySelector(`option[value="${keep}"]:not([disabled])`)) select.value = keep;
}

function picked() {
  const v = $('scenes').value;
  if (!v) { say('pick a scene or a line first', 'bad'); return null; }
  const [scene, line] = v.split(':').map(Number);
  return { scene, line };
}

// ---- requests -----------------------------------------------------------------------------------
function ask(kind, fields, label) {
  if (!session || !session.request(kind, fields, label)) say('not connected', 'bad');
}

function wireButtons() {
  $('login').onclick = () => login({ name: $('name').value.trim() });
  $('guest').onclick = () => login({ guest: true });
  $('name').onkeydown = (e) => { if (e.key === 'Enter') $('login').click(); };
  $('enter').onclick = () => {
    const p = picked();
    if (p) ask(KIND.ENTER, p, `enter ${p.scene}${p.line ? ` line ${p.line}` : ''}`);
  };
  $('req-transfer').onclick = () => {
    const p = picked();
    if (p) ask(KIND.TRANSFER, p, `transfer ${p.scene}${p.line ? ` line ${p.line}` : ''}`);
  };
  $('req-dungeon').onclick = () => {
    const scene = Number($('dungeon-scene').value), party = Number($('party-id').value || 0);
    if (scene) ask(KIND.ENTER_INSTANCE, { scene, party }, `dungeon ${scene} party ${party}`);
  };
  $('req-join').onclick = () => {
    const mate = Number($('mate-id').value || 0);
    if (mate) ask(KIND.JOIN_TEAM, { mate }, `join #${mate}`);
    else say('team-mate id?', 'bad');
  };
  $('req-enter-phase').onclick = () => {
    const scene = Number($('space-id').value);
    if (scene) ask(KIND.ENTER_PHASE, { scene }, `enter phase ${scene}`);
  };
  $('req-leave-phase').onclick = () => ask(KIND.LEAVE_PHASE, {}, 'leave phase');
  $('chat-send').onclick = sendChat;
  $('chat-input').onkeydown = (e) => { if (e.key === 'Enter') sendChat(); };
  $('drop').onclick = () => session && session.drop();
  $('monster-states').onchange = () => redraw();
  $('zoom-fit').onclick = () => {
    view.follow = !view.follow;
    $('zoom-fit').textContent = view.follow ? 'whole map' : 'follow me';
    view.invalidate();
  };
  $('map').addEventListener('click', (e) => {
    const cell = view.cellAt(e);
    $('map').focus();
    if (cell && session && session.state.connected && !clickEntity(cell)) walkTo(cell);
  });
  document.addEventListener('keydown', onKey);
}

// A click on an entity whose kind has an action (the server's 1015, or ?click=): within reach its message goes to the
// module (the module checks it again and may refuse: 1012); out of reach the player walks closer.
function clickEntity(cell) {
  const st = session.state, click = clickActionsNow();
  for (const [id, m] of st.monsters) {
    const at = geometry.cellOf(m), act = click.get(m.kind);
    if (!act || at.x !== cell.x || at.y !== cell.y) continue;
    const me = geometry.cellOf(st.me);
    if (Math.max(Math.abs(at.x - me.x), Math.abs(at.y - me.y)) > act.range) {
      say(`${actions.names.get(m.kind) || `m${id}`} is out of reach (${act.range} cells): walking closer`);
      walkTo(cell);
      return true;
    }
    stopWalking();
    const bytes = new Uint8Array(8);
    new DataView(bytes.buffer).setBigUint64(0, BigInt(id), true);
    if (session.sendModule(act.opcode, bytes)) ++actionsSent;
    return true;
  }
  return false;
}

function showLoot() {
  const st = session.state;
  $('loot').replaceChildren(...st.loot.map((g) => el('li', { title: g.id }, `item ${g.item} × ${g.count}`)));
  $('inventory').textContent = st.inventory == null ? '—'
    : st.inventory.map((i) => `item ${i.item} × ${i.count}`).join(', ') || 'nothing';
}

function sendChat() {
  const text = $('chat-input').value.trim();
  if (!text) return;
  if (session && session.say(text)) $('chat-input').value = '';
  else say('not connected', 'bad');
}

// ---- the session ----------------------------------------------------------------------------------
let wire = null;

function login(how) {
  if (session) session.stop();
  session = new GameSession(wire, wsUrl);
  shownChat = shownAnswers = 0;
  maxHealth.clear();
  $('chat-log').replaceChildren();
  $('answers').replaceChildren();
  session.addEventListener('change', (e) => onChange(e.detail.type));
  session.addEventListener('refused', (e) => {
    stopWalking();
    if (lastTarget) view.flash(lastTarget);
    say(`move refused: ${e.detail.reason} — snapped back`, 'bad');
  });
  session.start(how);
  $('map').focus();
}

function onChange(type) {
  showStatus();
  if (type === 'scene') {
    const info = session.state.geometry;
    geometry = new Geometry(info);
    view.setGeometry(geometry);
    stopWalking();
    fillScenePicker();
    say(`on ${info.name} (${info.kind}), line ${info.line}`);
  }
  if (type === 'status' && session.state.status === 'resumed') say('resumed: the same player, the same place');
  if (type === 'chat') showChat();
  if (type === 'answer') showAnswers();
  if (type === 'loot' || type === 'inventory') showLoot();
  if (type === 'refusal') {
    const r = session.state.refusals[session.state.refusals.length - 1];
    say(`${r.opcode} refused (${r.code}): ${r.reason}`, 'bad');
  }
  if (type === 'view' || type === 'scene') showViewList();
  if (type === 'view' || type === 'me' || type === 'scene') redraw();
}

async function main() {
  exposeState();
  wireButtons();
  try {
    wire = await loadWire();
  } catch (err) {
    say(`cannot load the protocol: ${err.message}`, 'bad');
    return;
  }
  await refreshScenes();
  setInterval(refreshScenes, 2000);
  view.invalidate();
}

main();
