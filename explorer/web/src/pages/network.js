// The network as this node sees it: its identity (DID, libp2p peer, the binding between them
// its DID signed), the chain it follows (head, indexed block, confirmations, contracts), what
// it anchors (the audit log's latest head and its anchoring transaction), its peers with the
// gossip scores it gives them, and each gossip topic's mesh. It reads the node again a few
// seconds after each read ends while open (lib/poll.js), further apart while reads fail.
import { openHead, openPeerBinding } from '../lib/envelope.js';
import { agentHref, dl, errorBox, get, getOr, h, mono, section, short, table, time, units, fill } from '../lib/api.js';
import { poll } from '../lib/poll.js';

// every is how long the page waits after a read before the next, in milliseconds; maxWait the
// longest it waits while reads fail.
const every = 5000;
const maxWait = 60000;

export async function render(root, params) {
  const { signal } = params;
  const ident = h('div', null);
  const chain = h('div', null);
  const anchors = h('div', null);
  const peers = h('div', null);
  const stamp = h('p', { class: 'muted' }, 'Loading…');
  root.append(h('h1', null, 'Network'), stamp,
    h('div', { class: 'grid' }, section('This node', ident), section('Chain', chain)),
    section('What it anchors', anchors),
    section('Peers and gossip', peers));

  let nodeCard; // read once: it changes only when the node restarts
  const load = async () => {
    const [info, list, head, card] = await Promise.all([
      get('/v1/info', { signal }).catch((e) => e),
      getOr('/v1/peers', null, { signal }).catch((e) => e),
      getOr('/v1/log/head', null, { signal }).catch((e) => e),
      nodeCard ?? getOr('/.well-known/agent-card.json', null, { signal }).catch(() => null),
    ]);
    nodeCard = card;
    if (signal.aborted) return;
    asOf = time(Date.now() / 1000);
    stamp.textContent = `As of ${asOf}; read again every ${every / 1000} s.`;
    // A section is drawn again only when what it shows changed, so an open details element
    // or a scrolled table stays as the reader left it.
    if (info instanceof Error) {
      for (const box of [ident, chain, anchors]) fill(box, errorBox(info, 'the node\u2019s info'));
      drawn.clear();
    } else {
      redraw(ident, [info.nodeDid, info.version, info.peer, info.auditLog, card], () => renderIdentity(ident, info, card));
      redraw(chain, [info.chain, info.contracts], () => renderChain(chain, info));
      redraw(anchors, [info.contracts, head instanceof Error ? String(head) : head], () => renderAnchors(anchors, info, head));
    }
    redraw(peers, [list instanceof Error ? String(list) : list], () => renderPeers(peers, list));
    return ![info, list, head].some((x) => x instanceof Error);
  };
  let asOf = '';
  const drawn = new Map();
  const redraw = (box, shown, draw) => {
    const key = JSON.stringify(shown);
    if (drawn.get(box) === key) return;
    drawn.set(box, key);
    draw();
  };
  const ok = await load();
  poll(load, {
    every, max: maxWait, signal, skip: () => document.hidden,
    onWait: (ms, fine) => {
      if (!fine) stamp.textContent = `As of ${asOf || '—'}; the last read failed: read again in ${Math.round(ms / 1000)} s.`;
    },
  });
  if (!ok) stamp.textContent = `As of ${asOf || '—'}; the last read failed: read again in ${every / 1000} s.`;
}

function renderIdentity(box, info, card) {
  const p = info.peer;
  fill(box, dl([
    ['name', card?.name || '—'],
    ['node DID', h('a', { href: agentHref(info.nodeDid || ''), class: 'id', 'data-testid': 'node-did' }, info.nodeDid || '—')],
    ['version', info.version || '(development build)'],
    ['libp2p peer', p ? mono(p.id) : 'not on the network'],
    ['listens on', p ? h('ul', { class: 'plain' }, (p.addrs || []).map((a) => h('li', null, mono(a)))) : '—'],
    ['peer binding', p ? [checked(() => openPeerBinding(p.binding, nodeDid(info), p.id), 'peer-binding',
      `signed by the key this node names (${short(info.nodeDid, 14)}) over this peer id (checked in this browser)`),
    h('details', null, h('summary', null, 'the binding (a JWS over {did, peerId})'), h('pre', null, p.binding))] : '—'],
    ['audit log sync', info.auditLog ? syncState(info.auditLog) : '—'],
    ['A2A card', card ? h('details', null, h('summary', null, 'as the node serves it (GET /.well-known/agent-card.json), signed by its DID'), h('pre', null, JSON.stringify(card, null, 2))) : '—'],
  ]));
}

// nodeDid is the DID the node names for itself, or throws: with none named, a signature
// could be any did:key's, and nothing the page checks against it verifies.
function nodeDid(info) {
  if (typeof info.nodeDid !== 'string' || !info.nodeDid) throw new Error('the node names no DID of its own (GET /v1/info): nothing to check the signature against');
  return info.nodeDid;
}

// checked runs a check in the browser and shows its verdict: ✓ and what it means, or ✗ and
// why; data-state is verified or failed.
function checked(check, testid, meaning) {
  try {
    check();
    return h('span', { class: 'ok', 'data-testid': testid, 'data-state': 'verified' }, '\u2713 ', meaning);
  } catch (e) {
    return h('span', { class: 'bad', 'data-testid': testid, 'data-state': 'failed' }, `\u2717 ${e.message}`);
  }
}

function syncState(s) {
  const state = s.state === 'in-step' ? h('span', { class: 'chip ok' }, 'in step with peers')
    : s.state === 'alone' ? h('span', { class: 'chip warn' }, 'keeps its own log') : h('span', { class: 'chip' }, 'no round yet');
  return [state, ` quorum ${s.quorum} staked node${s.quorum === 1 ? '' : 's'}`, s.detail ? h('div', { class: 'muted' }, s.detail) : null];
}

function renderChain(box, info) {
  const c = info.chain || {};
  const behind = c.indexedBlock !== undefined ? c.blockNumber - c.indexedBlock : null;
  fill(box, dl([
    ['chain', `${c.id} (${c.kind})`],
    ['head block', h('strong', { 'data-testid': 'chain-head', 'data-block': String(c.blockNumber) }, String(c.blockNumber))],
    ['indexed to', c.indexedBlock !== undefined ? `${c.indexedBlock}${behind > 0 ? ` (${behind} behind the head)` : ' (the head)'}` : 'no index'],
    ['confirmations', `${c.confirmations}: an event mined in block B is indexed once the head reaches B + ${c.confirmations}`],
    ['minimum stake', c.minStake ? units(c.minStake) : '—'],
    ['genesis', mono(short(c.genesis, 12), { title: c.genesis })],
    ['contracts', h('ul', { class: 'plain' }, Object.entries(info.contracts || {}).sort(([a], [b]) => a.localeCompare(b))
      .map(([name, addr]) => h('li', null, h('span', { class: 'chip' }, name), ' ', mono(addr))))],
  ]));
}

function renderAnchors(box, info, head) {
  if (head instanceof Error) {
    fill(box, errorBox(head, 'the log head'));
    return;
  }
  const anchor = (info.contracts || {}).RootAnchor;
  if (!head) {
    fill(box, h('p', { class: 'muted' }, 'This node keeps no audit log.'));
    return;
  }
  fill(box, 
    h('p', null, 'The node signs a head of its audit log each time an epoch closes, and anchors it on chain in ',
      anchor ? ['RootAnchor ', mono(anchor)] : 'no RootAnchor (this deployment has none)', '. The latest:'),
    dl([
      ['log size', `${head.size} audit${head.size === 1 ? '' : 's'}`],
      ['root', mono(head.root)],
      ['epoch', `${time(head.epoch)}, closed ${time(head.closed)}`],
      ['anchored in', head.anchorTx ? [mono(head.anchorTx), h('span', { class: 'muted' }, ' (the node\u2019s word, not checked here)')] : h('span', { class: 'warn' }, 'not anchored yet')],
      ['signature', checked(() => {
        const signed = openHead(head.signed, nodeDid(info));
        if (signed.size !== head.size || signed.root !== head.root) throw new Error(`it signs size ${signed.size} and root ${signed.root}, not what the node answered`);
      }, 'head-signature', `signed by the key this node names (${short(info.nodeDid, 14)}): this size and root (checked in this browser)`)],
    ]),
    h('p', null, h('a', { href: '#/log' }, 'Every head, its proofs and the scores it fixes: the audit log'), '.'));
}

function renderPeers(box, list) {
  if (list instanceof Error) {
    fill(box, errorBox(list, 'the peers'));
    return;
  }
  if (!list) {
    fill(box, h('p', { class: 'muted' }, 'This node takes no part in the network.'));
    return;
  }
  const peers = list.peers || [];
  const score = (p) => (typeof p.score === 'number' ? p.score : null);
  fill(box, 
    h('p', { class: 'muted' }, 'Gossip scores are this node\u2019s own view (gossipsub peer scoring): invalid cards or notices push a peer down, below -80 it is ignored. The penalty is what it holds against a peer outside gossip, included in the score.'),
    peers.length === 0 ? h('p', null, 'No peer connected.') : table('Connected peers', ['peer', 'gossip score#', 'penalty#', 'addresses'], peers.map((p) => h('tr', { 'data-testid': 'peer-row', 'data-peer': p.id },
      h('td', null, mono(short(p.id, 10), { title: p.id })),
      h('td', { class: 'num' }, score(p) === null ? 'not scored' : h('span', { class: score(p) < 0 ? 'bad' : '' }, score(p).toFixed(2))),
      h('td', { class: 'num' }, typeof p.penalty === 'number' ? p.penalty.toFixed(2) : '—'),
      h('td', null, h('ul', { class: 'plain' }, (p.addrs || []).map((a) => h('li', null, mono(a)))))))),
    h('h3', null, 'Gossip topics'),
    table('Gossip topics', ['topic', 'peers joined#', 'in this node\u2019s mesh#', 'reaches every node'], (list.topics || []).map((t) => h('tr', null,
      h('td', null, mono(t.topic)), h('td', { class: 'num' }, String(t.peers)), h('td', { class: 'num' }, String(t.inMesh)),
      h('td', null, t.formed ? h('span', { class: 'chip ok' }, 'yes') : h('span', { class: 'chip warn' }, 'not yet'))))),
    h('p', { class: 'muted' }, `${list.pendingPuts} DHT put${list.pendingPuts === 1 ? '' : 's'} of cards registered here under way.`));
}
