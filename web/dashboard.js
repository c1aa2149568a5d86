// The operator's dashboard: /scenes as bars, /history as charts, /lines/SCENE/LINE as a spectator.
// Read-only: it never opens the game's WebSocket.
import { Geometry, MapView } from './map_view.js';
import { $, el, fetchJson, say } from './page.js';

const SCENES_MS = 500;    // the issue asks for at least once a second; /scenes is cheap
const HISTORY_MS = 1000;  // the server samples once a second
const LINE_MS = 1000;

const spectator = new MapView($('spectator'));
spectator.follow = false;  // the whole line; the wheel zooms in
let watched = null;        // {scene, line}
let watchedGeometry = '';  // the geometry's JSON: rebuild the terrain only when it changes

// What the page shows, for tests and the console.
window.dashboard = { scenes: null, spectator: null, samples: 0 };

// ---- scenes -------------------------------------------------------------------------------------
function lineRow(scene, l) {
  const cap = scene.capacity || 1;
  const full = l.players >= cap;
  const watching = watched && watched.scene === scene.id && watched.line === l.line;
  const title = [`state ${l.state}`, `generation ${l.generation}`, l.party ? `party ${l.party}` : '',
    (l.running_phases || []).map((p) => `phase ${p.phase} of space ${p.space}: ${p.players}`).join(', ')]
    .filter(Boolean).join(' · ');
  return el('div', {
    className: `line${watching ? ' watched' : ''}${l.state === 'quarantined' ? ' quarantined' : ''}`, title,
    'data-scene': scene.id, 'data-line': l.line, 'data-players': l.players,
  },
  el('span', {}, `line ${l.line}${l.party ? ' (party)' : ''}`),
  el('div', { className: `bar${full ? ' full' : ''}` },
    el('div', { style: `width:${Math.min(100, (100 * l.players) / cap)}%` })),
  el('span', {}, `${l.players}/${cap} · ${l.connections ?? '–'} conn`));
}

function sceneBlock(s) {
  const facts = [`${s.kind}`, `${s.open_lines} open line${s.open_lines === 1 ? '' : 's'}`, `${s.players} players`,
    `line_full ${s.line_full}`, s.quarantined ? `quarantined ${s.quarantined}` : '',
    s.overrunning ? `overrunning ${s.overrunning.length}` : ''].filter(Boolean).join(' · ');
  return el('div', { className: `scene${s.quarantined ? ' quarantined' : ''}`, 'data-scene-id': s.id },
    el('h3', {}, `${s.name} `, el('small', {}, `${s.id} · ${facts}`)),
    ...s.lines.map((l) => lineRow(s, l)));
}

function showScenes(doc) {
  window.dashboard.scenes = doc;
  $('total-players').textContent = String(doc.players);
  let connections = 0, open = 0;
  for (const s of doc.scenes) {
    open += s.open_lines;
    for (const l of s.lines) connections += l.connections || 0;
  }
  $('total-connections').textContent = String(connections);
  $('total-lines').textContent = String(open);
  $('scenes-list').replaceChildren(...doc.scenes.map(sceneBlock));
  $('updated').textContent = `updated ${new Date().toLocaleTimeString()}`;
}

// ---- charts ---------------------------------------------------------------------------------------
// x: seconds before the newest sample, so the axis reads "the last minutes" without a date adapter.
function makeChart(id, label, series) {
  return new Chart($(id), {
    type: 'line',
    data: { datasets: series.map(([name, colour]) => ({ label: name, data: [], borderColor: colour, pointRadius: 0, borderWidth: 1.5 })) },
    options: {
      animation: false, responsive: true, maintainAspectRatio: false, parsing: false,
      plugins: { title: { display: true, text: label }, legend: { display: series.length > 1 } },
      scales: { x: { type: 'linear', title: { display: true, text: 's ago' } }, y: { beginAtZero: true } },
    },
  });
}

const charts = {
  players: makeChart('chart-players', 'players online', [['players', '#2a7ab8'], ['connections', '#8e44ad']]),
  requests: makeChart('chart-requests', 'requests / s', [['requests/s', '#27ae60']]),
  tick: makeChart('chart-tick', 'tick p99 (ms)', [['tick p99', '#d35400']]),
  lateness: makeChart('chart-lateness', 'lateness p99 (ms)', [['lateness p99', '#c0392b']]),
  headroom: makeChart('chart-headroom', 'front headroom', [['I/O busy %', '#16a085'], ['I/O lag ms', '#2c3e50'], ['write queue p90 KiB', '#7f8c8d']]),
  admission: makeChart('chart-admission', 'logins refused (server_busy) / s', [['refused/s', '#e67e22']]),
};

// The front's admission at the newest sample: open, or closed with the measure over its line.
function showAdmission(last) {
  if (last.admitting === undefined) return;  // a server without a front
  const badge = $('admission');
  badge.textContent = last.admitting ? 'admitting' : `busy: ${last.over}`;
  badge.className = `conn ${last.admitting ? 'on' : 'off'}`;
}

function showHistory(h) {
  const samples = h.samples;
  window.dashboard.samples = samples.length;
  if (!samples.length) return;
  const end = samples[samples.length - 1].t_ms;
  const series = (key) => samples.map((s) => ({ x: (s.t_ms - end) / 1000, y: s[key] }));
  const set = (chart, ...keys) => {
    keys.forEach((k, i) => { chart.data.datasets[i].data = series(k); });
    chart.update('none');
  };
  set(charts.players, 'players', 'connections');
  set(charts.requests, 'requests_per_s');
  set(charts.tick, 'tick_p99_ms');
  set(charts.lateness, 'lateness_p99_ms');
  const busyPct = samples.map((s) => ({ x: (s.t_ms - end) / 1000, y: (s.io_busy || 0) * 100 }));
  charts.headroom.data.datasets[0].data = busyPct;
  charts.headroom.data.datasets[1].data = series('io_lag_ms');
  charts.headroom.data.datasets[2].data = series('write_queue_kib');
  charts.headroom.update('none');
  set(charts.admission, 'busy_refused_per_s');
  window.dashboard.admitting = samples[samples.length - 1].admitting;
  showAdmission(samples[samples.length - 1]);
}

// ---- the spectator --------------------------------------------------------------------------------
function showLine(doc) {
  const key = JSON.stringify(doc.geometry);
  if (key !== watchedGeometry) {
    watchedGeometry = key;
    spectator.setGeometry(new Geometry(doc.geometry));  // /lines carries no blocked bits: floor only
  }
  const brains = $('monster-brains').checked;  // each monster's state and where its path leads
  const entities = doc.monsters.map((m) => ({
    x: m.x, y: m.y, kind: 'monster',
    label: brains && m.state ? `${m.state}${m.goal ? ` → (${m.goal.x},${m.goal.y})` : ''}` : '' }));
  for (const p of doc.players) entities.push({ x: p.x, y: p.y, label: `#${p.id}`, kind: 'player' });
  let phased = 0;
  for (const ph of doc.phases || []) {
    for (const p of ph.players) entities.push({ x: p.x, y: p.y, label: `#${p.id} (phase ${ph.phase})`, kind: 'player' });
    phased += ph.players.length;
  }
  spectator.setScene({ entities });
  window.dashboard.spectator = { scene: doc.scene, line: doc.line, players: doc.players.length, monsters: doc.monsters.length, phased };
  $('spectator-title').textContent = `Spectator: ${doc.name} (${doc.scene}, ${doc.kind}) line ${doc.line} — ` +
    `${doc.players.length} players${phased ? ` + ${phased} in phases` : ''}, ${doc.monsters.length} monsters`;
}

function watch(scene, line) {
  watched = { scene, line };
  watchedGeometry = '';
  window.dashboard.spectator = null;
  for (const e of document.querySelectorAll('.line.watched')) e.classList.remove('watched');
  const row = document.querySelector(`.line[data-scene="${scene}"][data-line="${line}"]`);
  if (row) row.classList.add('watched');
  $('spectator-title').textContent = `Spectator: scene ${scene} line ${line}…`;
  pollLine();
}

async function pollLine() {
  if (!watched) return;
  const { scene, line } = watched;
  try {
    const doc = await fetchJson(`/lines/${scene}/${line}`);
    if (watched && watched.scene === scene && watched.line === line) showLine(doc);
  } catch (err) {
    say(err.message, 'bad');
  }
}

// ---- polling ------------------------------------------------------------------------------------
// Each poll waits for its answer before the next is due, so a slow server is never asked twice at once.
function every(ms, fn) {
  const run = async () => {
    await fn();
    setTimeout(run, ms);
  };
  run();
}

async function pollScenes() {
  try {
    showScenes(await fetchJson('/scenes'));
    $('health').textContent = 'live';
    $('health').className = 'conn on';
  } catch (err) {
    $('health').textContent = 'no answer';
    $('health').className = 'conn off';
    say(err.message, 'bad');
  }
}

async function pollHistory() {
  try {
    showHistory(await fetchJson('/history'));
  } catch (err) {
    say(err.message, 'bad');
  }
}

$('scenes-list').addEventListener('click', (e) => {
  const row = e.target.closest('.line');
  if (row) watch(Number(row.dataset.scene), Number(row.dataset.line));
});
every(SCENES_MS, pollScenes);
every(HISTORY_MS, pollHistory);
setInterval(pollLine, LINE_MS);
