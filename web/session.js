// One player's connection to the server's /ws: login, the frames that keep its view, heartbeats,
// and the resume after a drop. It knows the protocol, not the page: the page listens to 'change'.
import { ID, TP } from './wire.js';
import { MapStore } from './map_store.js';

const BACKOFF_MS = [500, 1000, 2000, 4000, 8000];
// Goodbyes after which coming back would only be refused again or fight another tab.
const FINAL_GOODBYES = ['replaced', 'bad_login', 'bad_frames', 'oversize'];

export class GameSession extends EventTarget {
  constructor(wire, url) {
    super();
    this.wire = wire;
    this.url = url;
    this.ws = null;
    this.state = {
      pid: 0, name: '', scene: 0, sceneName: '', kind: '', line: 0, phase: 0, geometry: null,
      connected: false, status: 'not connected', resumed: false,
      me: { x: 0, z: 0 }, view: new Map(), monsters: new Map(), chat: [], answers: [], errors: [],
      // Game modules: what they refused (1012), gave (1013), what the account holds (1014), what a
      // click on an entity sends, by scene (1015: scene -> Map kind -> {opcode, range}), and how many
      // of their own frames (2000 and up) came.
      refusals: [], loot: [], inventory: null, clickActions: new Map(), moduleFrames: 0,
      rtt_ms: null, fps: 0,
    };
    this.token = '';
    this.guest = false;
    this.wanted = false;      // the player wants to be online: reconnect after a drop
    this.attempt = 0;
    this.nextRequest = 1;
    this.requests = new Map(); // request_id -> what was asked, for the answer's line
    this.framesThisSecond = 0;
    this.timers = [];
    this.maps = new MapStore();  // the maps' blocks, kept across connections and page loads
  }

  /** Logs in by name ('' : the server names you player-N), or as a guest (no login frame). */
  start({ name = '', guest = false }) {
    this.name = name;
    this.guest = guest;
    this.token = '';
    this.wanted = true;
    this.attempt = 0;
    this.open();
    if (!this.timers.length)
      this.timers.push(setInterval(() => this.tick(), 1000));
  }

  open() {
    const s = this.state;
    s.status = this.token ? 'reconnecting…' : 'connecting…';
    this.emit('status');
    // A guest asks for no subprotocol: the server then waits 50 ms for a login, sees none, and
    // makes it guest-N (seed 002's way). With "scenert" it must log in.
    const ws = this.guest ? new WebSocket(this.url) : new WebSocket(this.url, 'scenert');
    ws.binaryType = 'arraybuffer';
    this.views = 0;  // 202s read on this connection: a walk names the view it was made on
    ws.onopen = () => {
      if (ws !== this.ws) return;
      s.connected = true;
      // The maps it holds: their 1006s come without the blocks.
      if (!this.guest)
        this.send(ID.LOGIN, { name: this.name, resume_token: this.token, known_maps: this.maps.held() });
      this.emit('status');
    };
    ws.onmessage = (e) => { if (ws === this.ws) this.receive(e.data); };
    ws.onclose = (e) => { if (ws === this.ws) this.closed(e); };
    this.ws = ws;
  }

  closed(e) {
    const s = this.state;
    s.connected = false;
    this.ws = null;
    const final = FINAL_GOODBYES.some((r) => (this.goodbye || '').startsWith(r));
    if (!this.wanted || final) {
      s.status = this.goodbye ? `disconnected: ${this.goodbye}` : 'disconnected';
      this.emit('status');
      return;
    }
    const wait = BACKOFF_MS[Math.min(this.attempt++, BACKOFF_MS.length - 1)];
    s.status = `reconnecting in ${(wait / 1000).toFixed(1)} s${this.goodbye ? ` (${this.goodbye})` : ` (code ${e.code})`}…`;
    this.goodbye = '';
    this.emit('status');
    setTimeout(() => { if (this.wanted && !this.ws) this.open(); }, wait);
  }

  /** Drops the connection as a network failure would (the page's "drop" button tests the resume). */
  drop() { if (this.ws) this.ws.close(); }

  stop() {
    this.wanted = false;
    if (this.ws) this.ws.close();
  }

  send(id, fields) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(this.wire.encode(id, fields));
    return true;
  }

  /** A step, made on the newest view read (the server drops it if that view is gone by then). */
  moveTo(p) { return this.send(ID.WALK, { x: p.x, y: 0, z: p.z, v: 0, view: this.views }); }

  say(text) { return this.send(ID.TALK, { Content: text }); }

  /** A message to the game module of the player's line: an opcode from 2000 up, the game's bytes. */
  sendModule(opcode, bytes) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(this.wire.encodeRaw(opcode, bytes));
    return true;
  }

  moduleFrame(opcode, bytes) {
    this.state.moduleFrames++;
    this.emit('module', { opcode, bytes });
  }

  /** Sends a Request; the answer lands in state.answers under the same request id. */
  request(kind, fields = {}, label = '') {
    const request_id = this.nextRequest++;
    if (!this.send(ID.REQUEST, { request_id, kind, ...fields })) return 0;
    this.requests.set(request_id, label);
    return request_id;
  }

  // Once a second: a heartbeat (its echo is the round trip) and the frames/s of the second past.
  tick() {
    const s = this.state;
    s.fps = this.framesThisSecond;
    this.framesThisSecond = 0;
    if (s.connected) this.heartbeat();
    this.emit('stats');
  }

  heartbeat() { return this.send(ID.HEARTBEAT, { client_ns: Math.round(performance.now() * 1e6) }); }

  receive(data) {
    let frames;
    try {
      frames = this.wire.decode(data);
    } catch (err) {
      this.error(`undecodable frame: ${err.message}`);
      return;
    }
    this.framesThisSecond += frames.length;
    for (const { id, msg, bytes } of frames) {
      if (msg) this.handle(id, msg);
      else if (bytes) this.moduleFrame(id, bytes);
    }
  }

  handle(id, m) {
    const s = this.state;
    switch (id) {
      case ID.LOGIN_OK:
        s.pid = m.pid; s.name = m.name; this.token = m.resume_token; s.resumed = m.resumed;
        this.attempt = 0;
        s.status = m.resumed ? 'resumed' : 'connected';
        return this.emit('status');
      case ID.SYNC_PID:
        s.pid = m.Pid; s.name = m.Username;
        if (this.guest) {
          this.attempt = 0;
          s.status = 'connected (guest)';
          // Any scenert frame makes the server speak scenert's ids to us: the geometry comes next.
          this.heartbeat();
        }
        return this.emit('status');
      case ID.BROADCAST: return this.broadcast(m);
      case ID.LEFT_VIEW:
        s.view.delete(m.Pid);
        return this.emit('view');
      case ID.SYNC_PLAYERS:
        this.views++;
        s.view.clear();
        // The 202 names the player itself too (seed 002's login): that entry is where it stands, drawn
        // once as itself; the view holds the others.
        for (const p of m.ps) {
          if (p.Pid === s.pid) this.place(p.P);
          else s.view.set(p.Pid, { x: p.P ? p.P.X : 0, z: p.P ? p.P.Z : 0, name: p.Username });
        }
        return this.emit('view');
      case ID.SCENE_INFO:
        s.scene = m.scene; s.sceneName = m.name; s.kind = m.kind; s.line = m.line; s.phase = m.phase;
        s.geometry = { ...m, blocked: this.blocksOf(m) };
        return this.emit('scene');
      case ID.MONSTERS_SEEN:
        if (m.all) s.monsters.clear();
        for (const x of m.monsters) s.monsters.set(x.id, { x: x.x, z: x.z, kind: x.kind, state: x.state, health: x.health });
        return this.emit('view');
      case ID.MONSTERS_GONE:
        for (const id of m.ids) s.monsters.delete(id);
        return this.emit('view');
      case ID.ANSWER: return this.answered(m);
      case ID.HEARTBEAT_ECHO:
        s.rtt_ms = performance.now() - m.client_ns / 1e6;
        return this.emit('stats');
      case ID.MOVE_REFUSED:
        this.refused = m.reason;
        this.error(`move refused: ${m.reason}`);
        return this.emit('refused', { reason: m.reason });
      case ID.MODULE_ERROR:
        s.refusals.push({ opcode: m.opcode, code: m.code, reason: m.reason, at: Date.now() });
        if (s.refusals.length > 100) s.refusals.shift();
        return this.emit('refusal', m);
      case ID.GRANTED:
        s.loot.push({ id: m.id, item: m.item, count: m.count });
        return this.emit('loot', m);
      case ID.INVENTORY:
        s.inventory = m.items.map((i) => ({ item: i.item, count: i.count }));
        return this.emit('inventory');
      case ID.CLICK_ACTIONS:
        s.clickActions.set(m.scene, new Map(m.actions.map((a) => [a.kind,
          { opcode: a.opcode, range: a.range > 0 ? a.range : Infinity }])));
        return this.emit('clickActions', m);
      case ID.GOODBYE:
        this.goodbye = m.reason;
        this.error(`goodbye: ${m.reason}`);
        return;
    }
  }

  // The map's blocked bits, from the frame or from the maps kept; none (floor only) on a fault.
  blocksOf(m) {
    try {
      return this.maps.blocksOf(m);
    } catch (err) {
      this.error(err.message);
      return null;
    }
  }

  broadcast(m) {
    const s = this.state;
    if (m.Tp === TP.CHAT) {
      s.chat.push({ pid: m.Pid, name: m.Username, text: m.Content, at: Date.now() });
      if (s.chat.length > 500) s.chat.splice(0, s.chat.length - 500);
      return this.emit('chat');
    }
    if ((m.Tp !== TP.APPEARED && m.Tp !== TP.MOVED) || !m.P) return;
    if (m.Pid === s.pid) {
      this.place(m.P);
      return this.emit('me');
    }
    const known = s.view.get(m.Pid);
    s.view.set(m.Pid, { x: m.P.X, z: m.P.Z, name: m.Username || (known && known.name) || '' });
    this.emit('view');
  }

  place(p) {
    if (!p) return;
    this.state.me = { x: p.X, z: p.Z };
  }

  answered(m) {
    const s = this.state;
    const asked = this.requests.get(m.request_id) || '';
    this.requests.delete(m.request_id);
    s.answers.push({ ...m, asked });
    if (m.code === 'ok') s.phase = m.phase;
    this.emit('answer', m);
  }

  error(text) {
    this.state.errors.push({ text, at: Date.now() });
    if (this.state.errors.length > 200) this.state.errors.shift();
    this.emit('error', { text });
  }

  emit(type, detail = null) {
    this.dispatchEvent(new CustomEvent(type, { detail }));
    this.dispatchEvent(new CustomEvent('change', { detail: { type } }));
  }
}
