// The audit log, checked in the browser: the latest head and the heads before it with the
// transactions that anchored them, each head's signature checked against the node's DID;
// the leaves (signed audits) with an inclusion proof per leaf checked with WebCrypto SHA-256
// and RFC 6962 hashing against the signed head's root; a consistency proof between two signed
// heads; and any DID's score recomputed from GET /v1/log/scores's inputs with lib/score.js and
// compared with the node's number, bit for bit. The node's word is never the verdict: a
// tampered proof, head or score shows as failed.
import { ApiError, bytesOf, errorBox, get, getOr, h, mono, q, section, short, table, time } from '../lib/api.js';
import { fromHex, hex, leafHash, rootOf, verifyConsistency, verifyInclusion } from '../lib/merkle.js';
import { checkInputs } from '../lib/inputs.js';
import { openHead, payloadOf, verifyEnvelope } from '../lib/envelope.js';
import { atProblem, paramsDiffer, recompute, withDefaults } from '../lib/score.js';
import './log.css';

const LEAVES_PAGE = 25;
const HEADS_PAGE = 20;
// The inputs of a recomputed score are held to at most this many pages of the log's leaves
// (256 each); a larger log is checked that far and says so.
const MAX_CHECK_PAGES = 40;

// verdict is a result region: data-state pending, then verified/failed (or match/mismatch).
// Its text says what was checked (no aria-label: a live region is announced by its text).
function verdict(testid) {
  return h('p', { class: 'verdict', 'data-testid': testid, role: 'status', 'aria-live': 'polite' });
}

function say(el, state, text, attrs = {}) {
  el.dataset.state = state;
  for (const [k, v] of Object.entries(attrs)) el.dataset[k] = v;
  const mark = { verified: '✓', match: '✓', failed: '✗', mismatch: '✗', 'rate-limited': '⚠' }[state] || '…';
  el.replaceChildren(`${mark} ${text}`);
}

// rateLimited says whether an error is the node's 429: the page could not check, which is
// neither a pass nor a failure.
const rateLimited = (e) => e instanceof ApiError && e.status === 429;
const retryAfter = (e) => (e.problem?.detail ? `: ${String(e.problem.detail).slice(0, 120)}` : '');

// anchorText says where a head's root stands on chain.
function anchorText(tx) {
  if (!tx) return h('span', { class: 'muted' }, 'not anchored yet');
  if (tx === 'superseded') return h('span', { class: 'muted' }, 'covered by a later anchor (the node\u2019s word)');
  return [mono(tx, { title: 'anchor transaction, as the node reports it (not checked here)' }), h('span', { class: 'muted' }, ' (the node\u2019s word)')];
}

// checked opens a head's signature against the DID the node names for itself (GET /v1/info)
// and says how it went. With no DID named there is nothing to hold the signature to: any
// did:key could have signed it, so it does not verify.
function checked(head, node) {
  if (!node) return { ok: false, why: 'the node names no DID of its own (GET /v1/info): nothing to check the signature against' };
  if (!head.signed) return { ok: false, why: 'unsigned' };
  try {
    const v = openHead(head.signed, node);
    if (v.size !== head.size || v.root !== head.root || v.epoch !== head.epoch || v.closed !== head.closed) {
      return { ok: false, why: 'what the node serves beside the signature is not what it signed' };
    }
    return { ok: true, head: v };
  } catch (e) {
    return { ok: false, why: e.message };
  }
}

export async function render(root, params) {
  const { signal } = params;
  root.append(h('h1', null, 'Audit log'),
    h('p', { class: 'muted' }, 'Every accepted audit is a leaf of an append-only Merkle tree (RFC 6962). The node signs a head when an epoch closes and anchors roots on chain. Everything marked ✓ below was checked in this browser against the DID this node names for itself (GET /v1/info): a node can name any key, so compare that DID with the one you expect. Anchor transactions are the node\u2019s word, not checked here.'));
  const [info, head] = await Promise.all([getOr('/v1/info', {}, { signal }), get('/v1/log/head', { signal })]);
  const node = info.nodeDid || '';
  const latest = checked(head, node);
  const trusted = latest.ok ? latest.head : null;

  // The latest head.
  root.append(section('Latest head',
    head.size === 0
      ? h('p', { class: 'muted', 'data-testid': 'head', 'data-size': '0' }, 'No epoch has closed yet: the log is empty.')
      : h('div', { 'data-testid': 'head', 'data-size': String(head.size), 'data-root': head.root, 'data-epoch': String(head.epoch) },
        h('dl', { class: 'kv' },
          h('dt', null, 'size'), h('dd', null, `${head.size} leaves`),
          h('dt', null, 'root'), h('dd', null, mono(head.root)),
          h('dt', null, 'epoch'), h('dd', null, String(head.epoch)),
          h('dt', null, 'closed'), h('dd', null, time(head.closed)),
          h('dt', null, 'anchored'), h('dd', null, anchorText(head.anchorTx)),
          h('dt', null, 'signature'), h('dd', null, latest.ok
            ? h('span', { class: 'ok', 'data-testid': 'head-signature', 'data-state': 'verified', title: latest.head.signer }, `✓ signed by the key this node names (${short(latest.head.signer, 14)})`)
            : h('span', { class: 'bad', 'data-testid': 'head-signature', 'data-state': 'failed' }, `✗ ${latest.why}`))))));

  // Heads and anchors, with a consistency check between two of them.
  const headsBox = h('div');
  const fromSel = h('select', { id: 'cons-from' });
  const toSel = h('select', { id: 'cons-to' });
  const consResult = verdict('consistency-result');
  const known = new Map(); // size → {epoch, root} of a signed head this page checked
  const consButton = h('button', { type: 'button', 'data-testid': 'verify-consistency' }, 'Check consistency');
  root.append(section('Heads and anchors', headsBox,
    h('div', { class: 'row-actions' },
      h('label', { for: 'cons-from' }, 'older head', fromSel),
      h('label', { for: 'cons-to' }, 'newer head', toSel),
      consButton),
    consResult));

  let before = 0;
  const headRows = [];
  async function loadHeads() {
    const page = await get(`/v1/log/heads${q({ before: before || undefined, limit: HEADS_PAGE })}`, { signal });
    for (const hd of page.heads) {
      const c = checked(hd, node);
      if (c.ok) known.set(hd.size, c.head);
      headRows.push(h('tr', { 'data-epoch': String(hd.epoch) },
        h('td', { class: 'num' }, String(hd.epoch)), h('td', null, time(hd.closed)), h('td', { class: 'num' }, String(hd.size)),
        h('td', null, mono(short(hd.root, 12), { title: hd.root })),
        h('td', null, c.ok ? h('span', { class: 'ok' }, '✓') : h('span', { class: 'bad', title: c.why }, '✗ ' + c.why)),
        h('td', null, anchorText(hd.anchorTx))));
    }
    const more = page.next != null ? h('button', { type: 'button', class: 'secondary', onclick: async (ev) => { ev.target.disabled = true; before = page.next; await loadHeads(); } }, 'Older heads') : null;
    headsBox.replaceChildren(...[headRows.length === 0 ? h('p', { class: 'muted' }, 'No heads yet.')
      : table('Signed heads, newest first', ['epoch', 'closed', 'size', 'root', 'signed by the node\u2019s DID', 'anchor on chain (the node\u2019s word)'], headRows), more].filter(Boolean));
    const sizes = [...known.keys()].sort((a, b) => b - a);
    for (const [sel, pick] of [[fromSel, sizes[sizes.length - 1]], [toSel, sizes[0]]]) {
      const keep = sel.value;
      sel.replaceChildren(...sizes.map((s) => h('option', { value: String(s) }, `size ${s} (epoch ${known.get(s).epoch})`)));
      sel.value = keep && known.has(Number(keep)) ? keep : String(pick ?? '');
    }
    consButton.disabled = sizes.length === 0;
  }
  try {
    await loadHeads();
  } catch (e) {
    if (signal.aborted) return;
    headsBox.replaceChildren(errorBox(e, 'the heads'));
  }
  consButton.addEventListener('click', async () => {
    const m = Number(fromSel.value);
    const n = Number(toSel.value);
    const [a, b] = [known.get(m), known.get(n)];
    if (!a || !b) return say(consResult, 'failed', 'pick two signed heads');
    say(consResult, 'pending', `checking size ${m} → ${n}…`);
    try {
      const p = await get(`/v1/log/proof/consistency${q({ from: m, to: n })}`, { signal });
      await verifyConsistency(m, n, fromHex(a.root), fromHex(b.root), (p.path || []).map(fromHex));
      say(consResult, 'verified', `the log of size ${n} extends the log of size ${m}: the proof leads from one signed root to the other`, { from: m, to: n });
    } catch (e) {
      say(consResult, 'failed', `not consistent from size ${m} to ${n}: ${e.message}`, { from: m, to: n });
    }
  });

  // The leaves, each with its inclusion proof checked on demand.
  const leavesBox = h('div');
  const proofResult = verdict('proof-result');
  const subjectInput = h('input', { type: 'text', id: 'leaf-subject', placeholder: 'did:key:…', autocomplete: 'off', value: params.subject || '' });
  const leafInput = h('input', { type: 'text', id: 'leaf-hash', placeholder: '64 hex digits', autocomplete: 'off', spellcheck: 'false', value: params.leaf || '' });
  root.append(section('Leaves: the signed audits',
    h('form', { class: 'row-actions', onsubmit: (ev) => {
      ev.preventDefault();
      const leaf = leafInput.value.trim().toLowerCase().replace(/^0x/, '');
      if (leaf) {
        // A leaf to check: the page again from it (its row, its proof checked at once).
        location.hash = `#/log${q({ subject: subjectInput.value.trim(), leaf, did: params.did })}`;
        return;
      }
      leafFrom = null;
      loadLeaves();
    } },
    h('label', { for: 'leaf-subject' }, 'only the audits of (DID)', subjectInput),
    h('label', { for: 'leaf-hash' }, 'check one leaf (its hash)', leafInput),
    h('button', { type: 'submit' }, 'Show')),
    leavesBox, proofResult));

  let leafFrom = null;
  async function verifyLeaf(x) {
    if (!trusted) return say(proofResult, 'failed', `the latest head does not verify (${latest.why}): nothing to check a proof against`, { leaf: x.leaf });
    say(proofResult, 'pending', `checking leaf ${x.index}…`, { leaf: x.leaf });
    try {
      const computed = await leafHash(bytesOf(x.envelope));
      if (hex(computed) !== x.leaf) throw new Error('the envelope does not hash to the leaf');
      const p = await get(`/v1/log/proof/inclusion${q({ leaf: x.leaf, size: trusted.size })}`, { signal });
      if (p.index !== x.index) throw new Error(`the proof puts it at index ${p.index}, the log at ${x.index}`);
      await verifyInclusion(computed, x.index, trusted.size, (p.path || []).map(fromHex), fromHex(trusted.root));
      say(proofResult, 'verified', `leaf ${x.index} (${short(x.leaf, 8)}) is in the log of size ${trusted.size} whose root the node signed${head.anchorTx && head.anchorTx !== 'superseded' ? ' and anchored' : ''}`, { leaf: x.leaf });
    } catch (e) {
      say(proofResult, 'failed', `leaf ${x.index} is not proven in the log of size ${trusted.size}: ${e.message}`, { leaf: x.leaf });
    }
  }
  async function loadLeaves() {
    const size = trusted ? trusted.size : head.size;
    const subject = subjectInput.value.trim();
    if (leafFrom === null) leafFrom = subject ? 0 : Math.max(0, size - LEAVES_PAGE);
    leavesBox.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
    try {
      const page = await get(`/v1/log/leaves${q({ from: leafFrom, size: size || undefined, subject: subject || undefined, limit: LEAVES_PAGE })}`, { signal });
      const rows = page.leaves.map((x) => {
        const text = new TextDecoder().decode(bytesOf(x.envelope));
        const body = payloadOf(text) || {};
        let sig;
        try {
          verifyEnvelope(text);
          sig = h('span', { class: 'ok', title: 'the auditor signed it' }, '✓');
        } catch (e) {
          sig = h('span', { class: 'bad', title: e.message }, '✗');
        }
        const a = body.body || {};
        return h('tr', { 'data-testid': 'leaf-row', 'data-leaf': x.leaf, 'data-index': String(x.index) },
          h('td', { class: 'num' }, String(x.index)),
          h('td', null, mono(short(x.leaf, 8), { title: x.leaf })),
          h('td', null, body.sender ? h('a', { href: `#/agent/${encodeURIComponent(body.sender)}` }, short(body.sender, 10)) : '—'),
          h('td', null, a.subject ? h('a', { href: `#/agent/${encodeURIComponent(a.subject)}` }, short(a.subject, 10)) : '—'),
          h('td', { class: 'num' }, typeof a.score === 'number' ? a.score.toFixed(2) : '—'),
          h('td', null, sig),
          h('td', { class: 'num' }, String(x.epoch)),
          h('td', null, h('button', { type: 'button', class: 'small', 'data-testid': 'verify-proof', 'aria-label': `verify the inclusion proof of leaf ${x.index}`, onclick: () => verifyLeaf(x) }, 'Verify proof')));
      });
      const nav = h('div', { class: 'row-actions' },
        leafFrom > 0 && !subject ? h('button', { type: 'button', class: 'secondary', onclick: () => { leafFrom = Math.max(0, leafFrom - LEAVES_PAGE); loadLeaves(); } }, 'Earlier leaves') : null,
        page.next != null ? h('button', { type: 'button', class: 'secondary', onclick: () => { leafFrom = page.next; loadLeaves(); } }, 'Later leaves') : null);
      leavesBox.replaceChildren(rows.length === 0 ? h('p', { class: 'muted' }, 'No leaves here.')
        : table('Leaves of the log', ['index', 'leaf', 'auditor', 'subject', 'score', 'signed', 'epoch', 'proof'], rows), nav);
      return page.leaves;
    } catch (e) {
      if (!signal.aborted) leavesBox.replaceChildren(errorBox(e, 'the leaves'));
      return [];
    }
  }
  if (head.size === 0) {
    leavesBox.replaceChildren(h('p', { class: 'muted' }, 'No leaves yet.'));
  } else if (/^[0-9a-f]{64}$/.test(params.leaf || '') && trusted) {
    // A link to one audit (#/log?leaf=…, the agent page's): the page of leaves from it, its
    // row in view, and its proof checked at once.
    try {
      const p = await get(`/v1/log/proof/inclusion${q({ leaf: params.leaf, size: trusted.size })}`, { signal });
      leafFrom = Number(p.index);
    } catch (e) {
      if (signal.aborted) return;
      say(proofResult, 'failed', `leaf ${short(params.leaf, 8)} is not in the log of size ${trusted.size}: ${e.message}`, { leaf: params.leaf });
    }
    const x = (await loadLeaves()).find((l) => l.leaf === params.leaf);
    if (x) {
      const button = leavesBox.querySelector(`[data-testid=leaf-row][data-leaf="${x.leaf}"] [data-testid=verify-proof]`);
      button?.scrollIntoView({ block: 'center' });
      button?.focus({ preventScroll: true });
      await verifyLeaf(x);
    }
  } else {
    await loadLeaves();
  }

  // A score recomputed in the browser.
  const didInput = h('input', { type: 'text', id: 'recompute-did', placeholder: 'did:key:…', autocomplete: 'off', value: params.did || '' });
  const recResult = verdict('recompute-result');
  const insResult = verdict('inputs-check');
  const recTable = h('div');
  const recParams = h('div', { 'data-testid': 'recompute-params' });
  root.append(section('Recompute a score',
    h('p', { class: 'muted' }, 'Fetches every input of the scores at the latest head the node scored (GET /v1/log/scores: the audits that count and every stake, at the block of the head\'s anchor), runs the formula of docs/REPUTATION.md in this browser, and compares its five numbers with the node\'s, bit for bit.'),
    h('form', { class: 'row-actions', onsubmit: (ev) => { ev.preventDefault(); runRecompute(); } },
      h('label', { for: 'recompute-did' }, 'DID', didInput),
      h('button', { type: 'submit', 'data-testid': 'recompute' }, 'Recompute')),
    recResult, recParams, recTable, insResult));
  if (!didInput.value) {
    getOr('/v1/reputation?top=1', { agents: [] }, { signal }).then((t) => {
      if (!didInput.value && t.agents?.[0]) didInput.value = t.agents[0].did;
    }).catch(() => {});
  }
  async function runRecompute() {
    const did = didInput.value.trim();
    if (!did) return say(recResult, 'failed', 'name a DID');
    say(recResult, 'pending', 'fetching the inputs…', { did });
    insResult.replaceChildren();
    delete insResult.dataset.state;
    recTable.replaceChildren();
    recParams.replaceChildren();
    delete recParams.dataset.params;
    delete recResult.dataset.params;
    delete recResult.dataset.at;
    let body;
    let theirs;
    try {
      // The latest scored head with its inputs (on the first page), then this DID's row of
      // that very head (the scores are paged in DID order).
      body = await get(`/v1/log/scores${q({ inputs: 1 })}`, { signal });
      const row = await get(`/v1/log/scores${q({ size: body.size, did })}`, { signal });
      theirs = (row.scores || []).find((x) => x.did === did);
    } catch (e) {
      if (rateLimited(e)) return say(recResult, 'rate-limited', `could not check: rate limited (the node answered 429 Too Many Requests${retryAfter(e)}); try again later`, { did });
      if (e instanceof ApiError && e.slug === 'not-scored') return say(recResult, 'unavailable', 'the node has not scored an anchored head yet: scores follow from the log once a head is anchored', { did });
      if (e instanceof ApiError && (e.status === 404 || e.status === 405)) return say(recResult, 'unavailable', 'this node does not serve GET /v1/log/scores', { did });
      return say(recResult, 'failed', `could not read the inputs: ${e.message}`, { did });
    }
    if (!body.inputs) return say(recResult, 'unavailable', `the node no longer keeps the inputs of the head of size ${body.size}`, { did });
    // The params and the time the node scored with are the node's: show the params, flag any
    // that are not the documented ones, and hold the time to the head's epoch.
    const differ = paramsDiffer(body.params || {});
    const own = differ.length > 0 ? "node's own" : 'default';
    const used = withDefaults(body.params || {});
    recParams.dataset.params = own;
    recParams.replaceChildren(
      differ.length > 0
        ? h('p', { class: 'bad' }, `⚠ the node scored with params that are not the documented defaults (docs/REPUTATION.md): ${differ.map((d) => `${d.name} ${d.used} (documented ${d.documented})`).join(', ')}. The recompute below uses the node's params: a match says the node applied its own params faithfully, not that its scores are the network's.`)
        : h('p', { class: 'muted' }, 'The node scored with the documented defaults of docs/REPUTATION.md.'),
      h('details', null, h('summary', null, 'params used'),
        h('dl', { class: 'kv' }, ...Object.entries(used).flatMap(([k, v]) => [h('dt', null, k), h('dd', { 'data-param': k }, String(v))]))));
    let atWhy;
    try {
      atWhy = await atCheck(body);
    } catch (e) {
      if (signal.aborted) return;
      if (rateLimited(e)) return say(recResult, 'rate-limited', `could not check: rate limited (the node answered 429 Too Many Requests${retryAfter(e)}) while reading the log's last leaf; try again later`, { did, params: own });
      atWhy = `could not hold the time it scored at (${body.at}) to the head: ${e.message}`;
    }
    const mine = recompute(body).get(did);
    if (!theirs && !mine && !atWhy) return say(recResult, 'absent', `${short(did, 12)} has no score at the head of size ${body.size}`, { did, params: own, at: 'ok' });
    const fields = ['score', 'confidence', 'weight', 'standing', 'relative'];
    const rows = fields.map((k) => {
      const a = theirs?.[k];
      const b = mine?.[k];
      const same = Object.is(a, b);
      return h('tr', { 'data-field': k, 'data-same': String(same) },
        h('td', null, k), h('td', { class: 'num' }, a === undefined ? '—' : String(a)), h('td', { class: 'num' }, b === undefined ? '—' : String(b)),
        h('td', null, same ? h('span', { class: 'ok' }, '✓ same bits') : h('span', { class: 'bad' }, '✗ differs')));
    });
    recTable.replaceChildren(table(`The node's numbers and this browser's for ${did}`, ['', 'node', 'this browser', ''], rows));
    const all = rows.every((r) => r.dataset.same === 'true');
    const where = `at the head of size ${body.size} (epoch ${body.epoch}${body.anchorTx ? `, anchored in ${short(body.anchorTx, 8)}` : ''}), from ${(body.inputs?.audits || []).length} audits${differ.length ? ", with the node's own params" : ''}`;
    if (atWhy) {
      say(recResult, 'mismatch', `the node's numbers for ${short(did, 12)} are not scored at the end of the head's epoch: ${atWhy}`, { did, params: own, at: 'bad' });
    } else {
      say(recResult, all ? 'match' : 'mismatch', all
        ? `the node's score ${theirs.score.toFixed(4)} for ${short(did, 12)} is what the formula gives ${where}`
        : `the node's numbers for ${short(did, 12)} are not what the formula gives ${where}`, { did, params: own, at: 'ok' });
    }
    await checkAgainstLog(body);
  }
  if (params.did) runRecompute();

  // atCheck holds the time the node scored at to the signed head of the scores' size and the
  // log's last leaf (its audit's iat, the leaf proven in that head), as the auditor's epochEnd
  // does. It returns why not, or ''.
  async function atCheck(body) {
    const sh = await signedHead(body.size);
    if (!sh) return `no head of size ${body.size} signed by the node`;
    if (!(body.size > 0)) return 'the scored head is empty';
    const page = await get(`/v1/log/leaves${q({ from: body.size - 1, size: body.size, limit: 1 })}`, { signal });
    const x = (page.leaves || []).find((l) => l.index === body.size - 1);
    if (!x) return `the node does not serve the log's last leaf (index ${body.size - 1})`;
    const bytes = bytesOf(x.envelope);
    const lh = await leafHash(bytes);
    if (hex(lh) !== x.leaf) return "the log's last leaf's envelope does not hash to it";
    const p = await get(`/v1/log/proof/inclusion${q({ leaf: x.leaf, size: body.size })}`, { signal });
    try {
      await verifyInclusion(lh, x.index, body.size, (p.path || []).map(fromHex), fromHex(sh.root));
    } catch (e) {
      return `the log's last leaf is not proven in the signed head: ${e.message}`;
    }
    let iat;
    try {
      iat = verifyEnvelope(new TextDecoder().decode(bytes)).envelope.iat;
    } catch (e) {
      return `the log's last leaf does not verify: ${e.message}`;
    }
    return atProblem(body.at, sh, iat);
  }

  // signedHead finds the signed head of a size among the heads this page read, reading older
  // pages of heads when it is not there yet.
  async function signedHead(size) {
    let seek = before; // past the heads the table shows, without moving its own cursor
    for (let pages = 0; !known.has(size) && pages < 10; pages++) {
      const page = await get(`/v1/log/heads${q({ before: seek || undefined, limit: 256 })}`, { signal });
      for (const hd of page.heads) {
        const c = checked(hd, node);
        if (c.ok) known.set(hd.size, c.head);
      }
      if (page.next == null) break;
      seek = page.next;
    }
    return known.get(size);
  }

  // checkAgainstLog reads the log's leaves up to the scores' size, rebuilds its root and holds
  // it to the signed head, and holds the listed audits to the logged envelopes.
  async function checkAgainstLog(body) {
    const size = body.size;
    say(insResult, 'pending', `reading the log up to size ${size}…`);
    try {
      const sh = await signedHead(size);
      if (!sh) throw new Error(`no head of size ${size} signed by the node`);
      const logged = [];
      const hashes = [];
      let from = 0;
      for (let pages = 0; from < size && pages < MAX_CHECK_PAGES; pages++) {
        const page = await get(`/v1/log/leaves${q({ from, size, limit: 256 })}`, { signal });
        for (const x of page.leaves) {
          const bytes = bytesOf(x.envelope);
          const lh = await leafHash(bytes);
          if (hex(lh) !== x.leaf) throw new Error(`leaf ${x.index}'s envelope does not hash to it`);
          hashes.push(lh);
          logged.push({ leaf: x.leaf, text: new TextDecoder().decode(bytes) });
        }
        from = page.next ?? size;
      }
      const whole = from >= size;
      if (whole && hex(await rootOf(hashes)) !== sh.root) throw new Error(`the leaves do not build the signed root of size ${size}`);
      say(insResult, 'pending', `checking the signatures of ${(body.inputs?.audits || []).length} listed audits…`);
      const r = await checkInputs(body.inputs?.audits || [], logged);
      if (r.problems.length > 0) throw new Error(r.problems.slice(0, 3).join('; ') + (r.problems.length > 3 ? ` (and ${r.problems.length - 3} more)` : ''));
      const note = r.unlisted ? `; ${r.unlisted} logged audits are not among the inputs` : '';
      if (!whole) return say(insResult, 'partial', `the first ${hashes.length} of ${size} leaves checked: the inputs among them are logged as listed${note}`);
      say(insResult, 'verified', `all ${r.checked} listed audits carry their auditors' signatures, are in the log of size ${size}, whose ${size} leaves build the signed root, and say what the inputs say; each that counts is the latest of its target${note}. Stakes and settlements are the node's word (the chain has them).`);
    } catch (e) {
      if (signal.aborted) return;
      if (rateLimited(e)) return say(insResult, 'rate-limited', `could not check: rate limited (the node answered 429 Too Many Requests${retryAfter(e)} while the page read the log); the inputs are neither verified nor refuted, try again later`);
      say(insResult, 'failed', `the inputs do not hold to the log: ${e.message}`);
    }
  }
}
