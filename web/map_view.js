// A line's map on a canvas, shared by the play page (camera on the player) and the dashboard's
// spectator (whole map). Cells are (x, y) with y along the world's Z axis, row-major like the
// server's grid; world units come from cell_size and origin (docs/protocol.md, "Move").

const COLOURS = {
  floor: [222, 228, 214], floorAlt: [208, 216, 200], blocked: [70, 74, 84],
  grid: 'rgba(0,0,0,0.08)', area: 'rgba(40,60,120,0.35)', view: '#2f6fdf', edge: '#222',
  me: '#f2b705', player: '#2a7ab8', monster: '#c0392b', label: '#111', flash: '#e0245e',
  // A game module's entities by kind (1, 2, 3, ...: kind 0 is a table's monster).
  tints: ['#c0392b', '#7d1f6b', '#d35400', '#b8860b', '#16a085', '#2c3e50'],
  barBack: '#333', bar: '#27ae60', barLow: '#e74c3c',
};

/** The geometry of one line's map: from a SceneInfo (1006) or from /lines' "geometry". */
export class Geometry {
  constructor(g) {
    this.width = g.width;
    this.height = g.height;
    this.cell_size = g.cell_size || 1;
    this.origin_x = g.origin_x || 0;
    this.origin_z = g.origin_z || 0;
    this.area_width = g.area_width || g.area_size || 16;
    this.area_height = g.area_height || g.area_size || 16;
    // SceneInfo says eyesight_x / eyesight_z, /lines eyesight_x / eyesight_y; else the 9-grid.
    this.eyesight_x = g.eyesight_x || 1;
    this.eyesight_y = g.eyesight_z || g.eyesight_y || 1;
    // A bit per cell: from a SceneInfo's row runs (GameSession decodes them, map_store.js), or
    // /lines' rectangles turned into the same bits.
    this.blocked = g.blocked && g.blocked.length ? g.blocked : g.blocks ? this.bitsOf(g.blocks) : null;
  }

  bitsOf(rects) {
    const bits = new Uint8Array(Math.ceil((this.width * this.height) / 8));
    for (const r of rects)
      for (let y = r.y; y < Math.min(this.height, r.y + r.h); ++y)
        for (let x = r.x; x < Math.min(this.width, r.x + r.w); ++x) {
          const bit = y * this.width + x;
          bits[bit >> 3] |= 1 << (bit & 7);
        }
    return bits;
  }

  contains(c) { return c.x >= 0 && c.y >= 0 && c.x < this.width && c.y < this.height; }

  isBlocked(c) {
    if (!this.blocked || !this.contains(c)) return false;
    const bit = c.y * this.width + c.x;
    return (this.blocked[bit >> 3] >> (bit & 7)) & 1;
  }

  /** The cell a world position falls in (as the server computes it: floor of the offset). */
  cellOf(p) {
    return { x: Math.floor((p.x - this.origin_x) / this.cell_size), y: Math.floor((p.z - this.origin_z) / this.cell_size) };
  }

  /** The world position of a cell's centre: what a client sends to stand on that cell. */
  centreOf(c) {
    return { x: this.origin_x + (c.x + 0.5) * this.cell_size, z: this.origin_z + (c.y + 0.5) * this.cell_size };
  }

  /** The cells seen from `c`: its area and `eyesight` areas each way, clipped to the map. */
  viewRect(c) {
    const ax = Math.floor(c.x / this.area_width), ay = Math.floor(c.y / this.area_height);
    const x0 = Math.max(0, (ax - this.eyesight_x) * this.area_width);
    const y0 = Math.max(0, (ay - this.eyesight_y) * this.area_height);
    const x1 = Math.min(this.width, (ax + this.eyesight_x + 1) * this.area_width);
    const y1 = Math.min(this.height, (ay + this.eyesight_y + 1) * this.area_height);
    return { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
  }
}

/** Draws a Geometry and entities; redraws on the next animation frame after a change. */
export class MapView {
  constructor(canvas) {
    this.canvas = canvas;
    this.ctx = canvas.getContext('2d');
    this.geometry = null;
    this.terrain = null;       // one pixel per cell, drawn scaled: a 1024² map stays cheap
    this.scale = 10;           // pixels per cell, when following
    this.follow = true;        // camera on `focus`; false: the whole map fits
    this.focus = { x: 0, y: 0 };
    // {x, y (cells), label, kind: 'me'|'player'|'monster', tint (a module's kind), bar (0..1 health)}
    this.entities = [];
    this.viewRect = null;
    this.flashes = [];         // {cell, until}: refused moves, drawn for a moment
    this.pending = false;
    canvas.addEventListener('wheel', (e) => this.onWheel(e), { passive: false });
  }

  setGeometry(geometry) {
    this.geometry = geometry;
    this.terrain = renderTerrain(geometry);
    this.invalidate();
  }

  /** `entities` and the view rectangle to draw; `focus` the cell the camera follows. */
  setScene({ entities, viewRect = null, focus = null }) {
    this.entities = entities;
    this.viewRect = viewRect;
    if (focus) this.focus = focus;
    this.invalidate();
  }

  flash(cell, ms = 700) {
    this.flashes.push({ cell, until: performance.now() + ms });
    this.invalidate();
    setTimeout(() => this.invalidate(), ms + 20);
  }

  invalidate() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => { this.pending = false; this.draw(); });
  }

  /** The transform in use: pixels per cell and the canvas pixel of cell (0, 0)'s corner. */
  camera() {
    const { width: cw, height: ch } = this.canvas, g = this.geometry;
    if (!this.follow) {
      const s = Math.min(cw / g.width, ch / g.height);
      return { s, ox: (cw - g.width * s) / 2, oy: (ch - g.height * s) / 2 };
    }
    const s = this.scale;
    return { s, ox: cw / 2 - (this.focus.x + 0.5) * s, oy: ch / 2 - (this.focus.y + 0.5) * s };
  }

  /** Where a cell's centre is drawn, in CSS pixels from the canvas's top-left corner. */
  pixelOf(c) {
    if (!this.geometry) return null;
    const r = this.canvas.getBoundingClientRect(), { s, ox, oy } = this.camera();
    const k = r.width / this.canvas.width;
    return { x: (ox + (c.x + 0.5) * s) * k, y: (oy + (c.y + 0.5) * s) * k };
  }

  /** The cell under a mouse event, or null off the map. */
  cellAt(event) {
    if (!this.geometry) return null;
    const r = this.canvas.getBoundingClientRect();
    const px = (event.clientX - r.left) * (this.canvas.width / r.width);
    const py = (event.clientY - r.top) * (this.canvas.height / r.height);
    const { s, ox, oy } = this.camera();
    const c = { x: Math.floor((px - ox) / s), y: Math.floor((py - oy) / s) };
    return this.geometry.contains(c) ? c : null;
  }

  onWheel(e) {
    e.preventDefault();
    if (!this.geometry) return;
    if (!this.follow) {  // zooming into a whole-map view: close in on the cell under the mouse
      this.focus = this.cellAt(e) || { x: this.geometry.width >> 1, y: this.geometry.height >> 1 };
      this.scale = this.camera().s;
      this.follow = true;
    }
    this.scale = Math.min(40, Math.max(1, this.scale * (e.deltaY < 0 ? 1.25 : 0.8)));
    this.invalidate();
  }

  draw() {
    const ctx = this.ctx, { width: cw, height: ch } = this.canvas;
    ctx.fillStyle = COLOURS.edge;
    ctx.fillRect(0, 0, cw, ch);
    if (!this.geometry) return;
    const g = this.geometry, { s, ox, oy } = this.camera();
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(this.terrain, ox, oy, g.width * s, g.height * s);
    this.drawLines(g, s, ox, oy);
    if (this.viewRect) {
      const v = this.viewRect;
      ctx.setLineDash([6, 4]);
      ctx.strokeStyle = COLOURS.view;
      ctx.lineWidth = 2;
      ctx.strokeRect(ox + v.x * s, oy + v.y * s, v.w * s, v.h * s);
      ctx.setLineDash([]);
    }
    for (const e of this.entities) if (e.kind !== 'me') this.drawEntity(e, s, ox, oy);
    for (const e of this.entities) if (e.kind === 'me') this.drawEntity(e, s, ox, oy);
    this.drawFlashes(s, ox, oy);
  }

  // Cell lines when cells are big enough to tell apart; area borders whenever they are.
  drawLines(g, s, ox, oy) {
    const ctx = this.ctx, { width: cw, height: ch } = this.canvas;
    const x0 = Math.max(0, Math.floor(-ox / s)), x1 = Math.min(g.width, Math.ceil((cw - ox) / s));
    const y0 = Math.max(0, Math.floor(-oy / s)), y1 = Math.min(g.height, Math.ceil((ch - oy) / s));
    const stroke = (step, style, xs, ys) => {
      ctx.beginPath();
      for (let x = Math.ceil(xs / step) * step; x <= x1; x += step) {
        ctx.moveTo(ox + x * s, oy + y0 * s); ctx.lineTo(ox + x * s, oy + y1 * s);
      }
      for (let y = Math.ceil(ys / step) * step; y <= y1; y += step) {
        ctx.moveTo(ox + x0 * s, oy + y * s); ctx.lineTo(ox + x1 * s, oy + y * s);
      }
      ctx.strokeStyle = style;
      ctx.lineWidth = 1;
      ctx.stroke();
    };
    if (s >= 6) stroke(1, COLOURS.grid, x0, y0);
    if (g.area_width * s >= 8) {
      ctx.beginPath();
      for (let x = Math.ceil(x0 / g.area_width) * g.area_width; x <= x1; x += g.area_width) {
        ctx.moveTo(ox + x * s, oy + y0 * s); ctx.lineTo(ox + x * s, oy + y1 * s);
      }
      for (let y = Math.ceil(y0 / g.area_height) * g.area_height; y <= y1; y += g.area_height) {
        ctx.moveTo(ox + x0 * s, oy + y * s); ctx.lineTo(ox + x1 * s, oy + y * s);
      }
      ctx.strokeStyle = COLOURS.area;
      ctx.stroke();
    }
  }

  drawEntity(e, s, ox, oy) {
    const ctx = this.ctx;
    const cx = ox + (e.x + 0.5) * s, cy = oy + (e.y + 0.5) * s;
    const r = Math.max(e.kind === 'me' ? 4 : 2.5, s * (e.kind === 'me' ? 0.55 : 0.4));
    ctx.fillStyle = e.tint ? COLOURS.tints[e.tint % COLOURS.tints.length] : COLOURS[e.kind] || COLOURS.player;
    ctx.beginPath();
    if (e.kind === 'monster') ctx.rect(cx - r, cy - r, 2 * r, 2 * r);
    else ctx.arc(cx, cy, r, 0, 2 * Math.PI);
    ctx.fill();
    if (e.kind === 'me') { ctx.strokeStyle = '#000'; ctx.lineWidth = 2; ctx.stroke(); }
    if (e.bar != null) this.drawBar(e.bar, cx, cy - r - 4, Math.max(2 * r, 14));
    // Labels only where they do not bury the map: close up, or always for yourself.
    if (e.label && (s >= 5 || e.kind === 'me')) {
      ctx.font = `${e.kind === 'me' ? 'bold ' : ''}11px system-ui, sans-serif`;
      ctx.fillStyle = COLOURS.label;
      ctx.textAlign = 'center';
      // Yours above, others' below: two neighbours on adjacent cells stay readable.
      if (e.kind === 'me') ctx.fillText(e.label, cx, cy - r - 3);
      else ctx.fillText(e.label, cx, cy + r + 11);
    }
  }

  // A health bar centred above an entity: green, red below a third.
  drawBar(share, cx, top, width) {
    const ctx = this.ctx, h = 4, left = cx - width / 2, f = Math.max(0, Math.min(1, share));
    ctx.fillStyle = COLOURS.barBack;
    ctx.fillRect(left - 1, top - h - 1, width + 2, h + 2);
    ctx.fillStyle = f < 1 / 3 ? COLOURS.barLow : COLOURS.bar;
    ctx.fillRect(left, top - h, width * f, h);
  }

  drawFlashes(s, ox, oy) {
    const now = performance.now(), ctx = this.ctx;
    this.flashes = this.flashes.filter((f) => f.until > now);
    if (!this.flashes.length) return;
    ctx.strokeStyle = COLOURS.flash;
    ctx.lineWidth = 4;
    ctx.strokeRect(2, 2, this.canvas.width - 4, this.canvas.height - 4);
    for (const f of this.flashes) ctx.strokeRect(ox + f.cell.x * s, oy + f.cell.y * s, Math.max(s, 4), Math.max(s, 4));
  }
}

// The map at one pixel per cell: floor in a checker of areas (borders stay visible zoomed out),
// blocked cells dark.
function renderTerrain(g) {
  const canvas = document.createElement('canvas');
  canvas.width = g.width;
  canvas.height = g.height;
  const ctx = canvas.getContext('2d');
  const image = ctx.createImageData(g.width, g.height);
  const px = image.data;
  for (let y = 0; y < g.height; ++y) {
    for (let x = 0; x < g.width; ++x) {
      const alt = (Math.floor(x / g.area_width) + Math.floor(y / g.area_height)) & 1;
      const c = g.isBlocked({ x, y }) ? COLOURS.blocked : alt ? COLOURS.floorAlt : COLOURS.floor;
      const i = 4 * (y * g.width + x);
      px[i] = c[0]; px[i + 1] = c[1]; px[i + 2] = c[2]; px[i + 3] = 255;
    }
  }
  ctx.putImageData(image, 0, 0);
  return canvas;
}
