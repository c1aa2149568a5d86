// The wire protocol of docs/protocol.md: frames (8-byte header, uint32 LE length then uint32 LE id,
// then a proto3 payload) and the messages of the two .proto files the server serves under /proto/.
// protobufjs is the classic script /vendor/protobuf.min.js (global `protobuf`): no build step.

/** Frame ids (net/include/scenert/net/message_id.hpp). */
export const ID = Object.freeze({
  SYNC_PID: 1, TALK: 2, POSITION: 3,
  BROADCAST: 200, LEFT_VIEW: 201, SYNC_PLAYERS: 202,
  LOGIN: 1000, LOGIN_OK: 1001, REQUEST: 1002, ANSWER: 1003,
  HEARTBEAT: 1004, HEARTBEAT_ECHO: 1005, SCENE_INFO: 1006, GOODBYE: 1007, MOVE_REFUSED: 1008,
  MONSTERS_SEEN: 1009, MONSTERS_GONE: 1010, WALK: 1011,
  MODULE_ERROR: 1012, GRANTED: 1013, INVENTORY: 1014, CLICK_ACTIONS: 1015,
  /** Frames from here up are a game module's: bytes in the game's own format (docs/modules.md). */
  MODULE_FIRST: 2000,
});

/** BroadCast.Tp values. */
export const TP = Object.freeze({ CHAT: 1, APPEARED: 2, ACTION: 3, MOVED: 4 });

/** Request.Kind values (scenert.proto). */
export const KIND = Object.freeze({
  ENTER: 0, ENTER_INSTANCE: 1, JOIN_TEAM: 2, TRANSFER: 3,
  ENTER_PHASE: 4, LEAVE_PHASE: 5, LEAVE: 6, LEAVE_PARTY: 7,
});

const HEADER = 8;

// Which message type each frame id carries; 1005 is a Heartbeat echoed, 201 a SyncPid.
const TYPE_OF = {
  1: 'pb.SyncPid', 2: 'pb.Talk', 3: 'pb.Position', 200: 'pb.BroadCast', 201: 'pb.SyncPid',
  202: 'pb.SyncPlayers', 1000: 'scenert.wire.Login', 1001: 'scenert.wire.LoginOk',
  1002: 'scenert.wire.Request', 1003: 'scenert.wire.Answer', 1004: 'scenert.wire.Heartbeat',
  1005: 'scenert.wire.Heartbeat', 1006: 'scenert.wire.SceneInfo', 1007: 'scenert.wire.Goodbye',
  1008: 'scenert.wire.MoveRefused', 1009: 'scenert.wire.MonstersSeen', 1010: 'scenert.wire.MonstersGone',
  1011: 'scenert.wire.Walk', 1012: 'scenert.wire.ModuleError', 1013: 'scenert.wire.Granted',
  1014: 'scenert.wire.Inventory', 1015: 'scenert.wire.ClickActions',
};

// Plain objects out: 64-bit ints as numbers (nanosecond clocks and party ids stay below 2^53),
// bytes as Uint8Array, every field present (proto3 drops zeros and empty strings on the wire).
const TO_OBJECT = { longs: Number, enums: Number, bytes: Uint8Array, defaults: true };

/** Encodes and decodes frames; built by loadWire() from the server's .proto texts. */
export class Wire {
  constructor(root) {
    this.types = {};
    for (const [id, name] of Object.entries(TYPE_OF)) this.types[id] = root.lookupType(name);
  }

  /** One frame: header + payload of `fields` encoded as the message of `id`. */
  encode(id, fields) {
    const type = this.types[id];
    const payload = type.encode(type.fromObject(fields)).finish();
    const frame = new Uint8Array(HEADER + payload.length);
    const view = new DataView(frame.buffer);
    view.setUint32(0, payload.length, true);
    view.setUint32(4, id, true);
    frame.set(payload, HEADER);
    return frame;
  }

  /** A game module's frame (id from 2000 up): the game's own bytes, unread by scenert. */
  encodeRaw(id, bytes) {
    const frame = new Uint8Array(HEADER + bytes.length);
    const view = new DataView(frame.buffer);
    view.setUint32(0, bytes.length, true);
    view.setUint32(4, id, true);
    frame.set(bytes, HEADER);
    return frame;
  }

  /**
   * Every whole frame in `buffer` (a WebSocket message holds one, but reading a sequence costs
   * nothing and survives a server that gathers). Unknown ids come back with msg null; a game
   * module's frames (2000 and up) with msg null and their `bytes`.
   */
  decode(buffer) {
    const bytes = new Uint8Array(buffer);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const frames = [];
    for (let at = 0; at + HEADER <= bytes.length;) {
      const length = view.getUint32(at, true);
      const id = view.getUint32(at + 4, true);
      if (at + HEADER + length > bytes.length) throw new Error(`frame ${id}: ${length} bytes announced, fewer sent`);
      const type = this.types[id];
      const payload = bytes.subarray(at + HEADER, at + HEADER + length);
      if (id >= ID.MODULE_FIRST) frames.push({ id, msg: null, bytes: payload.slice() });
      else frames.push({ id, msg: type ? type.toObject(type.decode(payload), TO_OBJECT) : null });
      at += HEADER + length;
    }
    return frames;
  }
}

/** Fetches /proto/*.proto and parses them with field names exactly as written (Pid, request_id). */
export async function loadWire(base = '') {
  const protobuf = globalThis.protobuf;
  if (!protobuf) throw new Error('protobufjs missing: /vendor/protobuf.min.js did not load');
  const root = new protobuf.Root();
  for (const file of ['seed002.proto', 'scenert.proto']) {
    const response = await fetch(`${base}/proto/${file}`);
    if (!response.ok) throw new Error(`/proto/${file}: HTTP ${response.status}`);
    protobuf.parse(await response.text(), root, { keepCase: true });
  }
  return new Wire(root);
}
