// The explorer's only way to the node: GETs on the node's own /v1 routes (same origin), their
// problem+json refusals as errors, and a few helpers the pages share to show what came back.
// The pages never hold state of their own beyond what one request returned.

// base is the API's root relative to the page (served under /explorer/): the page's origin
// ("" outside a browser, where the helpers below are tested).
export const base = typeof document === 'undefined' ? '' : new URL('../', document.baseURI).href.replace(/\/$/, '');

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

// enc is one path segment: a DID as it is written (its characters are all safe in a path),
// anything else escaped.
export const enc = (s) => (/^[A-Za-z0-9:._%-]+$/.test(String(s)) ? String(s) : encodeURIComponent(s));

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
  const msg = err instanceof ApiError
    ? `${err.status} ${err.message}${err.problem.detail ? ` (${err.problem.detail})` : ''}`
    : String(err?.message || err);
  return h('p', { class: 'error', role: 'alert' }, `Could not load ${what}: ${msg}`);
}

// short abbreviates a long identifier for display; the full value stays in title.
export function short(s, keep = 10) {
  s = String(s ?? '');
  return s.length <= keep * 2 + 1 ? s : `${s.slice(0, keep)}…${s.slice(-keep + 2)}`;
}

// mono shows an identifier in full on wide screens, wrapped where needed.
export const mono = (s, attrs = {}) => h('code', { class: 'id', ...attrs }, String(s ?? ''));

// time renders unix seconds (a number or a decimal string) as an ISO date-time in UTC; a
// time no Date holds (a uint64 deadline a poster chose, ±8.64e12 s and past) or one that is
// not a number shows as given, so that one odd field never throws out of a page.
export function time(unix) {
  if (unix === undefined || unix === null || unix === '' || unix === 0 || unix === '0') return '—';
  const n = typeof unix === 'number' ? unix : typeof unix === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(unix) ? Number(unix) : NaN;
  const d = new Date(n * 1000);
  if (!Number.isFinite(n) || Number.isNaN(d.getTime())) return String(unix).slice(0, 80);
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
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

// table renders rows under a header; each row is an array of cells or an element. A column
// name ending in '#' is numeric (right-aligned, as its cells are); the '#' is not shown.
export function table(caption, head, rows, attrs = {}) {
  return h('div', { class: 'scroll', role: 'region', 'aria-label': caption, tabindex: '0' },
    h('table', attrs,
      h('caption', { class: 'sr-only' }, caption),
      h('thead', null, h('tr', null, head.map((c) => (c.endsWith('#')
        ? h('th', { scope: 'col', class: 'num' }, c.slice(0, -1))
        : h('th', { scope: 'col' }, c))))),
      h('tbody', null, rows)));
}

// getAs fetches GET base+path with a given Accept and parses the body as JSON whatever its
// media type (the DID resolver answers application/did-resolution); a non-2xx answer still
// returns its body when keep includes its status (a deactivated DID's 410 carries metadata).
export async function getAs(path, accept, { signal, keep = [] } = {}) {
  const res = await fetch(base + path, { headers: { Accept: accept }, signal });
  const body = await res.json().catch(() => null);
  if (!res.ok && !keep.includes(res.status)) throw new ApiError(res.status, body);
  return { status: res.status, body };
}

const ZERO = '0x0000000000000000000000000000000000000000';

// units renders an amount in base units (a decimal string) as whole tokens with up to 6
// decimals, exactly (BigInt): ETH when token is the zero address, else the token's address
// (read as 18 decimals, as the node counts them).
export function units(base, token = ZERO) {
  if (base === undefined || base === null || base === '') return '—';
  let v;
  try { v = BigInt(base); } catch { return String(base); }
  const neg = v < 0n;
  if (neg) v = -v;
  const whole = v / 10n ** 18n;
  let frac = (v % 10n ** 18n).toString().padStart(18, '0').replace(/0+$/, '');
  if (frac.length > 6) frac = frac.slice(0, 6) + '…';
  const n = (neg ? '-' : '') + whole.toString() + (frac ? '.' + frac : '');
  return `${n} ${!token || token.toLowerCase() === ZERO ? 'ETH' : 'tokens of ' + short(token, 6)}`;
}

// agentHref is an agent page's address: #/agent/<did>, the DID as it is (a DID's characters
// are all safe in a fragment), escaped only if it holds anything else.
export const agentHref = (did) => `#/agent/${enc(did)}`;

// didLink links to an agent's page, showing the DID shortened (in full in its title).
export function didLink(did, label) {
  return h('a', { href: agentHref(did), title: did, class: 'id' }, label || short(did, 14));
}

// bountyLink links to a bounty's page.
export const bountyLink = (id) => h('a', { href: `#/bounty/${id}` }, `#${id}`);

// loading is a placeholder for a section whose request is under way.
export const loading = (what) => h('p', { class: 'muted', role: 'status' }, `Loading ${what}…`);

// fill replaces el's children with children (as h takes them: null and false skipped).
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// bytesOf reads the base64 (standard) of a []byte the node sends in JSON (a signed envelope).
export function bytesOf(b64) {
  const bin = atob(b64 || '');
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
