// The explorer's only way to the node: GETs on the node's own /v1 routes (same origin), their
// problem+json refusals as errors, and a few helpers the pages share to show what came back.
// The pages never hold state of their own beyond what one request returned.

// base is the API's root relative to the page (served under /explorer/).
export const base = new URL('../', document.baseURI).href.replace(/\/$/, '');

// ApiError is a refusal from the node: status, the problem's slug (type) and title.
export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem || {};
    this.slug = (problem?.type || '').split('/').pop();
  }
}

// get fetches GET base+path and returns its JSON, or throws ApiError.
export async function get(path, { signal } = {}) {
  const res = await fetch(base + path, { headers: { Accept: 'application/json' }, signal });
  const type = res.headers.get('Content-Type') || '';
  const body = type.includes('json') ? await res.json().catch(() => null) : null;
  if (!res.ok) throw new ApiError(res.status, body);
  return body;
}

// getOr returns fallback when the route answers 404 (absent route or unknown item), so a page
// can show "none" instead of failing whole.
export async function getOr(path, fallback, opts) {
  try {
    return await get(path, opts);
  } catch (e) {
    if (e instanceof ApiError && (e.status === 404 || e.status === 405)) return fallback;
    throw e;
  }
}

// q builds a query string from the defined members of params.
export function q(params) {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') s.set(k, String(v));
  const t = s.toString();
  return t ? `?${t}` : '';
}

// enc escapes one path segment (DIDs hold colons; keep them readable but safe).
export const enc = (s) => encodeURIComponent(s);

// h builds an element: h('a', {href: '#', class: 'x', dataset: {did}}, child, ...). Children
// are nodes or text (never parsed as HTML), arrays are flattened, null/false skipped.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'class') el.className = v;
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

// errorBox shows a failed request in place of a section's content.
export function errorBox(err, what) {
  const msg = err instanceof ApiError ? `${err.status} ${err.message}` : String(err?.message || err);
  return h('p', { class: 'error', role: 'alert' }, `Could not load ${what}: ${msg}`);
}

// short abbreviates a long identifier for display; the full value stays in title.
export function short(s, keep = 10) {
  s = String(s ?? '');
  return s.length <= keep * 2 + 1 ? s : `${s.slice(0, keep)}…${s.slice(-keep + 2)}`;
}

// mono shows an identifier in full on wide screens, wrapped where needed.
export const mono = (s, attrs = {}) => h('code', { class: 'id', ...attrs }, String(s ?? ''));

// time renders unix seconds as an ISO date-time in UTC.
export function time(unix) {
  if (!unix) return '—';
  return new Date(unix * 1000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

// fixed prints a number with n decimals (scores use 4).
export const fixed = (x, n = 4) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(n) : '—');

// dl renders [term, value] pairs as a description list.
export function dl(rows, attrs = {}) {
  return h('dl', { class: 'kv', ...attrs }, rows.filter(Boolean).map(([k, v]) => [h('dt', null, k), h('dd', null, v ?? '—')]));
}

// section is a titled part of a page.
export function section(title, ...children) {
  const id = 's-' + title.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  return h('section', { class: 'card', 'aria-labelledby': id }, h('h2', { id }, title), ...children);
}

// table renders rows under a header; each row is an array of cells or an element.
export function table(caption, head, rows, attrs = {}) {
  return h('div', { class: 'scroll', role: 'region', 'aria-label': caption, tabindex: '0' },
    h('table', attrs,
      h('caption', { class: 'sr-only' }, caption),
      h('thead', null, h('tr', null, head.map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', null, rows)));
}
