// The maps a browser keeps between connections (docs/protocol.md, "Maps on the wire"): a 1006 carries
// a map's blocks as row runs the first time; the login (1000) names the digests kept here, and their
// 1006s leave the blocks out. Kept in localStorage, bounded; memory alone when storage is refused.

const STORAGE_KEY = 'scenert.maps.v1';
const MAX_MAPS = 16;               // the login may name up to 64; a browser needs few
const MAX_STORED_CHARS = 1 << 20;  // of JSON: a few Moving AI maps' runs fit, a page's quota is ~5 MB

/** A digest's 8 bytes as 16 hex digits (the key maps are kept under). */
export function digestHex(bytes) {
  return Array.from(bytes || [], (b) => b.toString(16).padStart(2, '0')).join('');
}

function hexBytes(hex) {
  const out = new Uint8Array(8);
  for (let i = 0; i < 8; ++i) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function toBase64(bytes) {
  let text = '';
  for (let at = 0; at < bytes.length; at += 8192) text += String.fromCharCode(...bytes.subarray(at, at + 8192));
  return btoa(text);
}

/**
 * A map's blocked cells, one bit per cell row-major lowest bit first, from its row runs: groups of
 * `repeat, n, run_1 .. run_n`, runs alternating free and blocked from x = 0. Throws on runs that do
 * not cover the map's rows within its width.
 */
export function rowsToBits(width, height, rows) {
  const bits = new Uint8Array(Math.ceil((width * height) / 8));
  let y = 0;
  for (let at = 0; at < rows.length;) {
    const repeat = rows[at], n = rows[at + 1];
    if (n === undefined || at + 2 + n > rows.length) throw new Error(`block rows: group at ${at} cut short`);
    if (repeat < 1 || y + repeat > height) throw new Error(`block rows: ${repeat} rows from row ${y} of ${height}`);
    for (let row = y; row < y + repeat; ++row) {
      let x = 0;
      for (let k = 0; k < n; ++k) {
        const run = rows[at + 2 + k];
        if (x + run > width) throw new Error(`block rows: row ${row} runs past the width ${width}`);
        if (k % 2 === 1)
          for (let i = row * width + x, end = i + run; i < end; ++i) bits[i >> 3] |= 1 << (i & 7);
        x += run;
      }
    }
    y += repeat;
    at += 2 + n;
  }
  if (y !== height) throw new Error(`block rows: cover ${y} rows of ${height}`);
  return bits;
}

/** The maps this browser holds, by digest: in memory, and in localStorage when it lets us. */
export class MapStore {
  constructor(storage = globalThis.localStorage) {
    this.storage = storage;
    this.memory = new Map();  // hex -> {width, height, rows, used}
    for (const [hex, m] of Object.entries(this.load())) this.memory.set(hex, m);
  }

  load() {
    try {
      const text = this.storage && this.storage.getItem(STORAGE_KEY);
      const maps = text ? JSON.parse(text) : {};
      return maps && typeof maps === 'object' ? maps : {};
    } catch {
      return {};  // unreadable or refused: start empty, the server sends what we lack
    }
  }

  save() {
    const kept = [...this.memory].sort((a, b) => b[1].used - a[1].used).slice(0, MAX_MAPS);
    this.memory = new Map(kept);
    try {
      let text = JSON.stringify(Object.fromEntries(kept));
      while (text.length > MAX_STORED_CHARS && kept.length) {
        kept.pop();
        text = JSON.stringify(Object.fromEntries(kept));
      }
      if (this.storage) this.storage.setItem(STORAGE_KEY, text);
    } catch {
      // Quota or privacy settings: the maps stay in memory for this page.
    }
  }

  /** The digests to name in a login, most recently used first. */
  held() {
    return [...this.memory].sort((a, b) => b[1].used - a[1].used).slice(0, MAX_MAPS).map(([hex]) => hexBytes(hex));
  }

  /**
   * The blocked bits a 1006 stands for: from its rows or bits (and kept), or the kept ones when it
   * leaves them out. Throws when they are left out of a map not held, or the frame's do not decode.
   */
  blocksOf(info) {
    const hex = digestHex(info.map_digest);
    if (info.blocks_omitted) {
      const kept = this.memory.get(hex);
      if (!kept || kept.width !== info.width || kept.height !== info.height)
        throw new Error(`1006 leaves out map ${hex}, which this page does not hold`);
      kept.used = Date.now();
      this.save();
      if (kept.bits) return Uint8Array.from(atob(kept.bits), (c) => c.charCodeAt(0));
      return rowsToBits(kept.width, kept.height, kept.rows);
    }
    // Row runs, or (when shorter: a map of noise) one bit per cell, kept as it came.
    const packed = info.blocked && info.blocked.length ? info.blocked : null;
    if (packed && packed.length !== Math.ceil((info.width * info.height) / 8))
      throw new Error(`1006 carries ${packed.length} bytes of blocked bits for a ${info.width} x ${info.height} map`);
    const rows = packed ? null : Array.from(info.block_rows || []);
    const bits = packed ? new Uint8Array(packed) : rowsToBits(info.width, info.height, rows);
    const kept = { width: info.width, height: info.height, used: Date.now() };
    if (packed) kept.bits = toBase64(packed);
    else kept.rows = rows;
    this.memory.set(hex, kept);
    this.save();
    return bits;
  }
}
