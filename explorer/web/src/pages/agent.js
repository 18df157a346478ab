// An agent: its card (and A2A card), DID document and key status, wallet, stake and locks,
// score, confidence and rank with the score's history at each anchored head, the audits that
// feed the score, and its bounties as poster and worker. Every number is the node's answer
// to one of its routes, named beside it.
import {
  ApiError, bountyLink, bytesOf, didLink, dl, enc, errorBox, fixed, get, getAs, getOr, h, loading, mono, q, section, short, table, time, units, fill,
} from '../lib/api.js';
import { scoreChart } from '../lib/chart.js';
import { openCompact, verifyEnvelope } from '../lib/envelope.js';
import { hex, leafHash } from '../lib/merkle.js';

// topN is how many ranked agents the rank's position is looked up among; maxAuditors how
// many distinct auditors' standings the audits table asks for.
const topN = 200;
const maxAuditors = 16;
const bountyLimit = 50;

export async function render(root, params) {
  const did = params.did || '';
  const opts = { signal: params.signal };
  const path = enc(did);
  const title = h('h1', null, did ? 'Agent' : 'No agent named');
  const head = h('div', { class: 'agent-head' });
  root.append(title, head);
  if (!did.startsWith('did:')) {
    head.append(h('p', { class: 'error', role: 'alert' }, `“${did}” is not a DID (did:key:… or did:pkh:…).`), h('p', null, h('a', { href: '#/agents' }, 'Search the agents')));
    return;
  }

  const score = h('div', null, loading('the score'));
  const audits = h('div', null, loading('the audits'));
  const card = h('div', null, loading('the card'));
  const ident = h('div', null, loading('the DID document'));
  const money = h('div', null, loading('the stake'));
  const bounties = h('div', null, loading('the bounties'));
  root.append(
    section('Score', score),
    section('Audits feeding the score', audits),
    h('div', { class: 'grid' }, section('Card', card), section('Wallet, stake and locks', money)),
    section('Bounties', bounties),
    section('DID document and key status', ident));

  const soft = (p) => p.catch((e) => e);
  const [agent, rep, hist, res, top] = await Promise.all([
    soft(get(`/v1/agents/${path}`, opts)),
    soft(get(`/v1/reputation/${path}`, opts)),
    soft(history(path, opts)),
    soft(getAs(`/1.0/identifiers/${path}`, 'application/did-resolution', { ...opts, keep: [410] })),
    soft(getOr(`/v1/reputation${q({ top: topN })}`, { agents: [] }, opts)),
  ]);
  if (params.signal.aborted) return;
  const hasCard = !(agent instanceof Error);

  // Heading: the card's name, the DID, key status.
  title.textContent = hasCard && agent.name ? agent.name : 'Agent';
  document.title = `${title.textContent} · Surety explorer`;
  head.append(h('p', null, mono(did)), h('p', { class: 'chips' }, keyStatus(res), hasCard
    ? (agent.staked ? h('span', { class: 'chip ok' }, 'staked') : h('span', { class: 'chip warn' }, 'unstaked'))
    : h('span', { class: 'chip warn' }, 'no card on this node')));

  renderScore(score, rep, hist, top, did, params.signal);
  renderCard(card, agent, did, opts);
  renderIdentity(ident, res);
  const more = [renderAudits(audits, rep, did, opts)]; // the auditors' standings: more requests
  if (hasCard) {
    more.push(renderStake(money, agent, did, opts), renderBounties(bounties, agent.wallet, opts));
  } else {
    fill(money, h('p', { class: 'muted' }, 'The node holds no card for this DID, so it names no wallet to read the stake of.'));
    fill(bounties, h('p', { class: 'muted' }, 'Without a card the node names no wallet: bounties are posted and worked by wallets.'));
  }
  await Promise.all(more);
}

// history is the score at each anchored head the node scored; a node without the route, or
// one that scored no head yet, answers no points.
async function history(path, opts) {
  try {
    return await get(`/v1/reputation/${path}/history`, opts);
  } catch (e) {
    if (e instanceof ApiError && (e.status === 404 || e.status === 405) && e.slug !== 'not-scored') return { points: [], absent: true };
    if (e instanceof ApiError && e.slug === 'not-scored') return { points: [] };
    throw e;
  }
}

// keyStatus reads the DID resolution result: 200 is an active key; 410 says deactivated, a
// successor naming a rotation (else a revocation).
function keyStatus(res) {
  if (res instanceof Error) {
    return h('span', { class: 'chip warn', 'data-testid': 'key-status', 'data-state': 'unknown' }, `key status unknown (${res.message})`);
  }
  const meta = res.body?.didDocumentMetadata || {};
  if (res.status === 410 || meta.deactivated) {
    if (meta.successor) {
      return h('span', { class: 'chip bad', 'data-testid': 'key-status', 'data-state': 'rotated' }, 'key rotated → ', didLink(meta.successor));
    }
    return h('span', { class: 'chip bad', 'data-testid': 'key-status', 'data-state': 'revoked' }, 'key revoked on chain');
  }
  return h('span', { class: 'chip ok', 'data-testid': 'key-status', 'data-state': 'active' }, 'key active');
}

function renderScore(box, rep, hist, top, did, signal) {
  if (rep instanceof Error) {
    fill(box, errorBox(rep, 'the reputation'));
    return;
  }
  const pos = (top instanceof Error ? [] : top.agents || []).findIndex((r) => r.did === did);
  const stat = (label, value, attrs = {}) => h('div', null, h('span', null, label), h('strong', attrs, value));
  const points = hist instanceof Error ? null : hist.points || [];
  const chart = scoreChart(points || [], { signal });
  fill(box, 
    h('div', { class: 'stats' },
      h('div', null, h('span', null, 'score'), h('span', { class: 'score', 'data-testid': 'agent-score' }, fixed(rep.score))),
      stat('confidence', fixed(rep.confidence)),
      stat('rank (10% lower bound)', fixed(rep.rank)),
      stat('position', pos >= 0 ? `#${pos + 1}` : rep.audits ? `below the top ${topN}` : 'unranked (no audits)'),
      stat('audits counted', String(rep.audits ?? 0)),
      stat('Σ weight', fixed(rep.weight, 3)),
      stat('standing as auditor', `${fixed(rep.standing, 3)} ETH`)),
    h('p', { class: 'muted' }, `Computed ${rep.computed ? rep.computed.replace('T', ' ') : '—'} from the audits below (GET /v1/reputation/{did}). `,
      'With no audits an agent holds the prior, 0.5.'),
    h('h3', null, 'Score at each anchored head'),
    hist instanceof Error ? errorBox(hist, 'the history') : null,
    hist.absent ? h('p', { class: 'muted' }, 'This node serves no score history (GET /v1/reputation/{did}/history).') : null,
    chart.el, chart.table ?? '');
}

async function renderAudits(box, rep, did, opts) {
  if (rep instanceof Error) {
    fill(box, errorBox(rep, 'the audits'));
    return;
  }
  const feeding = rep.feeding || [];
  if (feeding.length === 0) {
    fill(box, h('p', { class: 'muted' }, 'No audit counts for this agent yet.'));
    return;
  }
  // The auditors' standing (what their word weighs, in ETH): one request per auditor, a few.
  const auditors = [...new Set(feeding.map((a) => a.auditor))].slice(0, maxAuditors);
  const standing = new Map(await Promise.all(auditors.map((d) => get(`/v1/reputation/${enc(d)}`, opts)
    .then((r) => [d, r.standing], () => [d, undefined]))));
  if (opts.signal.aborted) return;
  const withWeight = feeding.some((a) => typeof a.weight === 'number');
  const head = ['auditor', 'signed', 'score given#', withWeight ? 'weight#' : null, 'auditor standing#', 'backing', 'settled#', 'judged', 'filed', 'evidence', 'log leaf'].filter(Boolean);
  const rows = feeding.map((a) => {
    // What the auditor signed (checked here) stands in the row: the subject must be this
    // page's DID, and the target, evidence and time are the envelope's, not the node's word.
    const v = signedAudit(a, did);
    const s = v.audit;
    return h('tr', { 'data-testid': 'audit-row', 'data-leaf': a.leaf, 'data-weight': typeof a.weight === 'number' ? String(a.weight) : '' },
      h('td', { class: 'nowrap' }, didLink(a.auditor, short(a.auditor, 10))),
      signedCell(a, v),
      h('td', { class: 'num' }, fixed(s ? s.score : a.score, 2)),
      withWeight ? h('td', { class: 'num' }, fixed(a.weight, 4)) : null,
      h('td', { class: 'num' }, standing.get(a.auditor) === undefined ? '—' : `${fixed(standing.get(a.auditor), 3)} ETH`),
      h('td', null, a.backed ? h('span', { class: 'chip ok' }, `backed${a.side ? ` (${a.side})` : ''}`) : h('span', { class: 'chip' }, 'unbacked'),
        a.refused ? h('span', { class: 'chip bad', title: a.refused }, 'refused here') : null,
        a.supersededBy ? h('span', { class: 'chip warn' }, 'superseded') : null),
      h('td', { class: 'num' }, a.settled ? `${a.settled} ETH` : '—'),
      h('td', null, s ? (s.bounty ? ['bounty ', bountyLink(String(s.bounty.id))] : 'an envelope') : (a.bounty ? ['bounty ', bountyLink(a.bounty.id)] : 'an envelope')),
      h('td', null, time(s ? s.time : a.time)),
      h('td', null, evidence(s ? s.evidence : a.evidence)),
      h('td', null, h('a', { href: `#/log${q({ subject: did, leaf: a.leaf })}`, title: `${a.leaf}: its inclusion proof on the log page`, class: 'id' }, short(a.leaf, 6))));
  });
  fill(box, 
    h('p', { class: 'muted' }, 'The audits that count for this agent now, one per auditor and target (GET /v1/reputation/{did}, feeding). ',
      'Each weighs the auditor\u2019s standing (at most 10) × its age decay × its backing: settled money behind it lifts the backing from 0.1 to 1 (docs/REPUTATION.md). ',
      'Signed \u2713: your browser checked the auditor\u2019s signature, that the signed audit is of this DID, and the leaf hash; score, target, time and evidence are shown as signed. ',
      'On the log page your browser checks each one\u2019s inclusion in the anchored log, and recomputes the score from the log: ',
      h('a', { href: `#/log${q({ subject: rep.did, did: rep.did })}` }, 'check them there'), '.'),
    table('Audits feeding the score', head, rows));
}

/** signedAudit checks in the browser that a feeding audit is what its auditor signed about
 * this page's DID: the envelope's signature by the auditor's did:key, the signed subject the
 * page's DID (not the node's a.subject) and the score the node lists. It returns {audit:
 * {score, time, evidence, bounty} as signed} or {why}. */
export function signedAudit(a, did) {
  try {
    const { sender, envelope } = verifyEnvelope(new TextDecoder().decode(bytesOf(a.envelope)));
    if (sender !== a.auditor) throw new Error(`signed by ${sender}, not the auditor`);
    const body = envelope.body || {};
    if (body.subject !== did) throw new Error(`the signed audit is of ${short(String(body.subject), 14)}, not of this agent`);
    if (body.score !== a.score) throw new Error('the signed audit gives another score');
    let b = envelope.bounty && typeof envelope.bounty === 'object' ? { ...envelope.bounty } : null;
    // A bounty id past 2^53 does not survive JSON.parse: the node's id stands when it reads
    // as the same double (the signed digits are not at hand).
    if (b && !Number.isSafeInteger(b.id)) {
      if (a.bounty && Number(a.bounty.id) === b.id) b.id = String(a.bounty.id);
      else throw new Error('the signed audit names another bounty');
    }
    if (b && a.bounty && String(a.bounty.id) !== String(b.id)) throw new Error('the signed audit names another bounty');
    return { audit: { score: body.score, time: envelope.iat, evidence: body.evidence && typeof body.evidence === 'object' ? body.evidence : null, bounty: b } };
  } catch (e) {
    return { why: e.message };
  }
}

// signedCell shows signedAudit's verdict, and checks that the envelope hashes to the log leaf
// named (RFC 6962). data-state is verified or failed once the check ends.
function signedCell(a, v) {
  const cell = h('td', { 'data-testid': 'audit-signature', 'data-state': 'pending' }, '…');
  (async () => {
    if (!v.audit) throw new Error(v.why);
    if (hex(await leafHash(bytesOf(a.envelope))) !== a.leaf) throw new Error('the envelope does not hash to its leaf');
  })().then(() => {
    cell.dataset.state = 'verified';
    fill(cell, h('span', { class: 'ok', title: 'the auditor signed this audit of this agent, and it is the leaf named (checked in this browser)' }, '\u2713'));
  }, (e) => {
    cell.dataset.state = 'failed';
    fill(cell, h('span', { class: 'bad', title: e.message }, '\u2717 ', e.message));
  });
  return cell;
}

function evidence(ev) {
  if (!ev) return '—';
  const hash = h('code', { class: 'id', title: String(ev.hash ?? '') }, short(ev.hash, 6));
  if (typeof ev.uri === 'string' && /^https?:\/\//i.test(ev.uri)) {
    return [h('a', { href: ev.uri, rel: 'noopener noreferrer nofollow', target: '_blank' }, 'link'), ' ', hash];
  }
  return ev.uri ? [h('code', { class: 'id' }, String(ev.uri)), ' ', hash] : hash;
}

function renderCard(box, agent, did, opts) {
  if (agent instanceof Error) {
    const gone = agent instanceof ApiError && agent.status === 410;
    fill(box, agent instanceof ApiError && (agent.status === 404 || gone)
      ? h('p', { class: 'muted', 'data-testid': 'agent-card' }, gone
        ? 'The node dropped this DID\u2019s card: its key was revoked or rotated on chain, so the card speaks for nobody now.'
        : 'This node holds no card for this DID: it was never registered here.')
      : errorBox(agent, 'the card'));
    return;
  }
  const a2aForm = agent.jws && agent.jws.trimStart().startsWith('{');
  const a2a = h('div', null);
  // A Surety JWS card whose signature opens is shown as signed: every field under the ✓ is
  // the agent's, none the node's alone.
  const opened = a2aForm ? null : openCard(agent, did);
  const c = opened?.card ?? agent;
  const endpoints = Array.isArray(c.endpoints) ? c.endpoints : [];
  fill(box, h('div', { 'data-testid': 'agent-card' },
    dl([
      ['name', String(c.name ?? '')],
      ['description', c.description ? String(c.description) : '—'],
      ['capabilities', (Array.isArray(c.capabilities) ? c.capabilities : []).map((x) => h('span', { class: 'chip' }, String(x)))],
      ['endpoints', endpoints.length ? h('ul', { class: 'plain' }, endpoints.map((e) => h('li', null, h('span', { class: 'chip' }, String(e?.kind ?? '')), ' ',
        typeof e?.url === 'string' && /^https?:\/\//i.test(e.url) ? h('a', { href: e.url, rel: 'noopener noreferrer nofollow' }, e.url) : h('code', null, String(e?.url ?? ''))))) : '—'],
      ['wallet', mono(String(c.wallet ?? ''))],
      ['sequence', `${c.seq}, updated ${time(c.updated)}`],
      ['signed as', a2aForm ? 'an A2A card the agent signed (A2A §8.4; its signature is checked by the node, not here: the fields above are the node\u2019s word)' : ['a Surety JWS card the agent signed ', cardVerdict(opened)]],
    ]),
    h('details', null, h('summary', null, 'The card as the agent signed it'), h('pre', null, a2aForm ? pretty(agent.jws) : agent.jws)),
    a2a));
  // The A2A card the node serves for it: the agent's card with its stake and reputation, signed by the node.
  getOr(`/v1/agents/${enc(did)}/agent-card.json`, null, opts).then((c) => {
    if (c && !opts.signal.aborted) {
      a2a.append(h('details', null, h('summary', null, 'A2A card (as this node serves it, signed by the node)'), h('pre', null, JSON.stringify(c, null, 2))));
    }
  }, () => {});
}

// CARD_TYPE is the typ of a Surety card JWS (registry.CardType).
const CARD_TYPE = 'surety-card+jws';

// canonical is JSON with object keys sorted, to compare what the node serves with what the
// agent signed whatever order each writes its keys in.
function canonical(x) {
  if (Array.isArray(x)) return `[${x.map(canonical).join(',')}]`;
  if (x && typeof x === 'object') return `{${Object.keys(x).sort().map((k) => `${JSON.stringify(k)}:${canonical(x[k])}`).join(',')}}`;
  return JSON.stringify(x ?? null);
}

/** openCard checks in the browser that the agent's DID signed the card: the JWS's signature
 * by the DID's key, and that what it signed is the card the node serves, field by field (DID,
 * name, description, capabilities, endpoints, wallet, sequence, updated). It returns {card
 * (the signed payload, when the signature opens), why (empty when all holds)}. */
export function openCard(agent, did) {
  let c;
  try {
    c = openCompact(agent.jws, CARD_TYPE, did).payload;
  } catch (e) {
    return { card: null, why: e.message };
  }
  if (c.did !== did) return { card: null, why: `the signed card is of ${short(String(c.did), 14)}` };
  const fields = {
    did: [c.did, agent.did],
    name: [c.name, agent.name],
    description: [c.description || '', agent.description || ''],
    capabilities: [c.capabilities || [], agent.capabilities || []],
    endpoints: [c.endpoints || [], agent.endpoints || []],
    wallet: [String(c.wallet).toLowerCase(), String(agent.wallet).toLowerCase()],
    seq: [c.seq, agent.seq],
    updated: [c.updated, agent.updated],
  };
  const differ = Object.entries(fields).filter(([, [x, y]]) => canonical(x) !== canonical(y)).map(([k]) => k);
  return { card: c, why: differ.length ? `the node serves another ${differ.join(', ')} than the agent signed (shown here as signed)` : '' };
}

function cardVerdict(opened) {
  if (opened.card && !opened.why) return h('span', { class: 'ok', 'data-testid': 'card-signature', 'data-state': 'verified' }, '\u2713 its signature checked in this browser; every field above is as the agent signed it');
  return h('span', { class: 'bad', 'data-testid': 'card-signature', 'data-state': 'failed' }, `\u2717 ${opened.why}`);
}

function pretty(s) {
  try { return JSON.stringify(JSON.parse(s), null, 2); } catch { return s; }
}

function renderIdentity(box, res) {
  if (res instanceof Error) {
    fill(box, errorBox(res, 'the DID document'));
    return;
  }
  const meta = res.body?.didDocumentMetadata || {};
  const doc = res.body?.didDocument;
  const vms = doc?.verificationMethod || [];
  fill(box, 
    dl([
      ['key status', meta.deactivated ? (meta.successor ? ['rotated away on chain; successor ', didLink(meta.successor, meta.successor)] : 'revoked on chain') : 'active (no revocation or rotation on chain)'],
      ['registration here', meta.registration || '—'],
      ['created', meta.created ? meta.created.replace('T', ' ') : '—'],
      ['keys', vms.length ? h('ul', { class: 'plain' }, vms.map((m) => h('li', null, h('span', { class: 'chip' }, m.type), ' ', h('code', { class: 'id' }, m.id)))) : '—'],
    ]),
    h('p', { class: 'muted' }, 'From the node\u2019s DID resolver (GET /1.0/identifiers/{did}); the key status follows the chain\u2019s StakeRegistry.'),
    doc ? h('details', null, h('summary', null, 'DID document'), h('pre', null, JSON.stringify(doc, null, 2))) : null);
}

async function renderStake(box, agent, did, opts) {
  let s;
  try {
    s = await get(`/v1/stake/${enc(did)}${q({ wallet: agent.wallet })}`, opts);
  } catch (e) {
    if (!opts.signal.aborted) fill(box, dl([['wallet', mono(agent.wallet)]]), errorBox(e, 'the stake'));
    return;
  }
  if (opts.signal.aborted) return;
  fill(box, dl([
    ['wallet', mono(agent.wallet)],
    ['binding', h('span', { class: `chip ${s.status === 'bound' ? 'ok' : s.status === 'none' ? 'warn' : 'bad'}` }, s.status)],
    ['staked', units(s.staked, s.token)],
    ['locked', [units(s.locked, s.token), h('span', { class: 'muted' }, ' by claimed bounties, until they end')]],
    ['unbonding', s.unbonding && s.unbonding !== '0' ? `${units(s.unbonding, s.token)}, withdrawable from ${time(s.unlockAt)}` : 'nothing'],
    ['card counts', `${units(agent.stake)} (${agent.staked ? 'at or above' : 'below'} the minimum stake)`],
  ]), h('p', { class: 'muted' }, 'As the chain holds it now, under this wallet (GET /v1/stake/{did}?wallet=).'));
}

async function renderBounties(box, wallet, opts) {
  const [posted, worked] = await Promise.all([
    get(`/v1/bounties${q({ poster: wallet, limit: bountyLimit })}`, opts).catch((e) => e),
    get(`/v1/bounties${q({ worker: wallet, limit: bountyLimit })}`, opts).catch((e) => e),
  ]);
  if (opts.signal.aborted) return;
  const list = (res, role, other) => {
    if (res instanceof Error) return errorBox(res, `the bounties as ${role}`);
    const bs = res.bounties || [];
    if (bs.length === 0) return h('p', { class: 'muted' }, `None as ${role}.`);
    return table(`Bounties as ${role}`, ['bounty', 'status', 'amount#', other, 'paid out#', 'posted in block#'], bs.map((b) => h('tr', null,
      h('td', null, bountyLink(b.id)),
      h('td', null, h('span', { class: 'chip' }, b.status)),
      h('td', { class: 'num' }, units(b.amount, b.token)),
      h('td', null, other === 'worker' ? (b.worker ? mono(short(b.worker, 8), { title: b.worker }) : '—') : mono(short(b.poster, 8), { title: b.poster })),
      h('td', { class: 'num' }, b.payout && b.payout !== '0' ? units(b.payout, b.token) : '—'),
      h('td', { class: 'num' }, String(b.postedBlock)))));
  };
  fill(box, 
    h('p', { class: 'muted' }, 'Bounties are posted and worked by wallets: these are the card\u2019s wallet\u2019s (GET /v1/bounties?poster= and ?worker=).'),
    h('h3', null, 'As poster'), list(posted, 'poster', 'worker'),
    h('h3', null, 'As worker'), list(worked, 'worker', 'poster'));
}
