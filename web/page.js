// Small DOM and fetch helpers both pages share.

export const $ = (id) => document.getElementById(id);

/** An element with properties (className, value, disabled, dataset entries via data-*) and children. */
export function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k.startsWith('data-')) e.setAttribute(k, v);
    else e[k] = v;
  }
  e.append(...children.filter((c) => c !== null && c !== undefined && c !== false));
  return e;
}

/** GET a JSON document of the same origin; throws with the status on anything but 200. */
export async function fetchJson(path) {
  const response = await fetch(path, { cache: 'no-store' });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${(await response.text()).trim()}`);
  return response.json();
}

let messageTimer = 0;

/** A line in #message for a few seconds: refusals, answers that went wrong, reconnects. */
export function say(text, kind = 'info') {
  const m = $('message');
  if (!m) return;
  m.textContent = text;
  m.className = `message ${kind}`;
  clearTimeout(messageTimer);
  messageTimer = setTimeout(() => { m.textContent = ''; }, 4000);
}
