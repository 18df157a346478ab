// One bounty: its status, updated live from the node's event stream; its lifecycle as a
// timeline (post, claim and the stake it locks, submit, dispute, ruling, payouts with amounts
// and tokens); its task text checked in this browser against the hash the escrow contract
// holds (keccak-256); and its group thread, bounty-<id>, as a conversation whose every
// envelope's signature is checked here (lib/envelope.js), followed live too.
import { base, dl, errorBox, get, getOr, h, mono, q, section, short, time } from '../lib/api.js';
import { payloadOf, verifyEnvelope } from '../lib/envelope.js';
import { amount, keccak, postedSpecHashOf, stakeEventsOf } from '../lib/chain.js';
import './log.css';

// status each event leaves the bounty in (escrow's projection).
const statusAfter = {
  Posted: 'open', Claimed: 'assigned', Assigned: 'assigned', Unclaimed: 'open', Submitted: 'submitted', Accepted: 'accepted',
  Released: 'released', Disputed: 'disputed', Resolved: 'resolved', Refunded: 'refunded', Cancelled: 'cancelled',
};

// rpc calls the node's read-only JSON-RPC (POST /v1/rpc), the one an auditor's tools use.
async function rpc(method, params, signal) {
  const res = await fetch(`${base}/v1/rpc`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }), signal });
  const j = await res.json();
  if (j.error) throw new Error(j.error.message || 'JSON-RPC error');
  return j.result;
}

function addr(a) {
  return a ? h('code', { class: 'id', title: a }, short(a, 8)) : '—';
}

// describe says what an escrow event did, in words, with its amounts.
function describe(ev, b) {
  const d = ev.data || {};
  const token = b?.token;
  switch (ev.name) {
    case 'Posted':
      return ['Posted by ', addr(d.poster), ` for ${amount(d.amount, d.token)}, arbiter `, addr(d.arbiter),
        d.minStake && d.minStake !== '0' ? `; a worker locks ${amount(d.minStake)} of stake to claim it` : ''];
    case 'Claimed':
      return ['Claimed by ', addr(d.worker), d.agentId && !/^0x0*$/.test(d.agentId) ? [' for agent ', mono(short(d.agentId, 8), { title: d.agentId })] : '',
        b?.minStake && b.minStake !== '0' ? `; ${amount(b.minStake)} of its stake locked until the bounty ends` : ''];
    case 'Assigned':
      return ['Assigned to ', addr(d.worker), b?.minStake && b.minStake !== '0' ? `; ${amount(b.minStake)} of its stake locked` : ''];
    case 'Unclaimed':
      return ['The poster sent ', addr(d.worker), ' away; its stake unlocked'];
    case 'Submitted':
      return ['Result submitted by ', addr(d.worker), ': ', mono(short(d.resultHash, 10), { title: d.resultHash })];
    case 'Accepted':
      return ['Accepted: paid ', amount(d.payout, token), ' to ', addr(d.worker), `, fee ${amount(d.fee, token)}`];
    case 'Released':
      return ['Released after the review window: paid ', amount(d.payout, token), ' to ', addr(d.worker), `, fee ${amount(d.fee, token)}`];
    case 'Disputed':
      return ['Disputed by ', addr(d.by), ', reason ', mono(short(d.reasonHash, 10), { title: d.reasonHash })];
    case 'Resolved':
      return [`Ruled: the worker gets ${(Number(d.workerBps) / 100).toFixed(2)}% (${amount(d.workerPayout, token)}), the poster ${amount(d.posterRefund, token)} back, fee ${amount(d.fee, token)}`];
    case 'Refunded':
      return [`Refunded ${amount(d.refund, token)} to the poster after the deadline`];
    case 'Cancelled':
      return [`Cancelled; ${amount(d.refund, token)} back to the poster`];
    default:
      return [ev.name];
  }
}

// messageText is what a thread envelope says, for reading: its body's text, or its task
// description, or its body as JSON.
function messageText(p) {
  if (!p) return '';
  const body = p.body;
  if (body && typeof body === 'object' && typeof body.text === 'string') return body.text;
  if (typeof body === 'string') return body;
  if (p.task_desc) return p.task_desc;
  return body === undefined ? '' : JSON.stringify(body, null, 1);
}

export async function render(root, params) {
  const { signal } = params;
  const id = String(params.id || '');
  if (!/^[0-9]+$/.test(id)) {
    root.append(h('h1', null, 'Bounty'), h('p', { class: 'error', role: 'alert' }, `"${id.slice(0, 40)}" is not a bounty id.`));
    return;
  }
  root.append(h('h1', null, `Bounty ${id}`));
  let b = await get(`/v1/bounties/${id}`, { signal });

  // Status and terms.
  const state = h('span', { class: 'status-big', 'data-testid': 'bounty-state', 'aria-live': 'polite' }, b.status);
  const live = h('span', { class: 'live', role: 'status' }, 'connecting to the event stream…');
  const terms = h('div');
  function showTerms() {
    try {
      drawTerms();
    } catch (e) {
      terms.replaceChildren(errorBox(e, 'the terms'));
    }
  }
  function drawTerms() {
    terms.replaceChildren(dl([
      ['amount', amount(b.amount, b.token)],
      ['poster', mono(b.poster)],
      ['worker', b.worker ? mono(b.worker) : h('span', { class: 'muted' }, 'none yet')],
      ['arbiter', mono(b.arbiter)],
      ['worker stake locked', b.minStake && b.minStake !== '0' ? amount(b.minStake) : 'none asked'],
      ['deadline', h('span', { 'data-testid': 'bounty-deadline' }, time(b.deadline))],
      ['review window', `${b.reviewWindow} s`],
      ['fee', `${(Number(b.feeBps) / 100).toFixed(2)}%`],
      ['paid to the worker', b.payout && b.payout !== '0' ? amount(b.payout, b.token) : '—'],
      ['back to the poster', b.posterRefund && b.posterRefund !== '0' ? amount(b.posterRefund, b.token) : '—'],
      ['fee paid', b.fee && b.fee !== '0' ? amount(b.fee, b.token) : '—'],
      ['result hash', b.resultHash ? mono(b.resultHash) : '—'],
      ['posted in block', String(b.postedBlock)],
    ]));
  }
  showTerms();
  root.append(section('Status', h('p', null, state, ' ', live), terms));

  // The task text against the hash the Posted event carries: read from the receipt of the
  // Posted transaction (POST /v1/rpc, the JSON-RPC the node relays), or, without one, the
  // hash the node reports for the escrow, and said so.
  const spec = b.spec ?? '';
  const check = h('p', { class: 'verdict', 'data-testid': 'task-check' }, '… reading the hash the escrow was posted with');
  root.append(section('Task', b.spec ? h('pre', { class: 'text' }, spec) : null, check));
  // The timeline, from the bounty's history and then the stream.
  const timeline = h('ol', { class: 'timeline', 'aria-label': 'lifecycle' });
  const seen = new Set();
  const info = await getOr('/v1/info', {}, { signal });
  const registry = info.contracts?.StakeRegistry;
  checkTask();
  async function checkTask() {
    try {
      await readTask();
    } catch (e) {
      if (signal.aborted) return;
      check.dataset.state = 'failed';
      check.replaceChildren(`✗ could not check the task text: ${e.message}`);
    }
  }
  async function readTask() {
    const posted = (b.history || []).find((ev) => ev.name === 'Posted');
    const escrow = info.contracts?.BountyEscrow;
    let fromChain = null;
    let why = '';
    if (!posted) why = 'the node lists no Posted event';
    else if (!escrow) why = 'the node names no BountyEscrow';
    else {
      try {
        fromChain = postedSpecHashOf(await rpc('eth_getTransactionReceipt', [posted.txHash], signal), escrow, id);
        if (!fromChain) why = `the receipt of ${short(posted.txHash, 10)} holds no Posted event of bounty ${id} by the escrow ${short(escrow, 8)}`;
      } catch (e) {
        if (signal.aborted) return;
        why = `could not read the receipt of the Posted transaction: ${e.message}`;
      }
    }
    const reported = String(b.specHash ?? '').toLowerCase();
    const said = fromChain
      ? `the specHash of the Posted event in the receipt of ${short(posted.txHash, 10)} (as this node's JSON-RPC serves it)`
      : `the hash this node reports for the escrow (${why}: not read from the chain)`;
    const want = fromChain || reported;
    check.dataset.source = fromChain ? 'receipt' : 'node';
    if (fromChain && reported && fromChain !== reported) {
      check.dataset.state = 'mismatch';
      check.replaceChildren(`✗ the node reports the hash ${b.specHash}, but ${said} is ${fromChain}`);
      return;
    }
    if (!b.spec) {
      check.dataset.state = 'absent';
      check.replaceChildren(`This node does not hold the task text; the chain holds only its hash ${want} (${said}).`);
      return;
    }
    const got = keccak(spec);
    const ok = got.toLowerCase() === want;
    check.dataset.state = ok ? 'match' : 'mismatch';
    check.replaceChildren(ok ? `✓ keccak-256 of this text is ${short(got, 10)}, ${said}` : `✗ keccak-256 of this text is ${got}; ${said} is ${want}`);
  }
  const receipts = new Set();
  // stakeOf shows, under an event, the stake its transaction locked, unlocked or slashed.
  async function stakeOf(ev, box) {
    if (!registry || receipts.has(ev.txHash)) return;
    receipts.add(ev.txHash);
    try {
      const r = await rpc('eth_getTransactionReceipt', [ev.txHash], signal);
      for (const x of stakeEventsOf(r, registry, id)) {
        const what = {
          Locked: ['Stake locked: ', amount(x.amount), ' of the worker\'s agent under ', addr(x.controller)],
          Unlocked: ['Stake unlocked: ', amount(x.amount), ' back to ', addr(x.controller), '\'s agent'],
          Slashed: ['Stake slashed: ', amount(x.amount), ' of ', addr(x.controller), '\'s agent to ', addr(x.beneficiary)],
        }[x.name];
        box.append(h('div', { 'data-testid': 'stake-event', 'data-event': x.name, class: x.name === 'Slashed' ? 'bad' : '' }, what));
      }
    } catch { /* no JSON-RPC here: the terms still say what a claim locks */ }
  }
  // described is describe, or why an event could not be read: one odd event does not hide
  // the timeline.
  function described(ev) {
    try {
      return describe(ev, b);
    } catch (e) {
      return h('span', { class: 'bad' }, `could not read this event: ${e.message}`);
    }
  }
  function addEvent(ev) {
    const key = `${ev.txHash}/${ev.logIndex}`;
    if (seen.has(key)) return false;
    seen.add(key);
    const stakeBox = h('div');
    timeline.append(h('li', { 'data-testid': 'timeline-item', 'data-event': ev.name },
      h('div', { class: 'what' }, ev.name),
      h('div', null, described(ev)),
      stakeBox,
      h('div', { class: 'meta' }, `block ${ev.block} · tx `, mono(short(ev.txHash, 10), { title: ev.txHash }))));
    stakeOf(ev, stakeBox);
    return true;
  }
  for (const ev of b.history || []) addEvent(ev);
  root.append(section('Lifecycle', timeline));

  // refresh reads the bounty again. One read at a time; an event that arrives during one
  // has another follow it, since the read under way may have been answered before that
  // event was indexed, and its older status must not stand over the event's (a race the
  // browser test caught: the timeline said Accepted, the status still submitted).
  let refreshing = null;
  let again = false;
  let events = 0; // the events the stream brought, counted
  async function refresh() {
    if (refreshing) {
      again = true;
      return refreshing;
    }
    refreshing = (async () => {
      do {
        again = false;
        try {
          const from = events;
          const fresh = await get(`/v1/bounties/${id}`, { signal });
          // A read answered while an event came is older than that event: it does not
          // stand over the event's status (the next read, which follows, will).
          if (events === from) {
            b = fresh;
            state.textContent = b.status;
            // Events the stream did not bring (a node drops live events to a slow reader;
            // its history has them all).
            for (const ev of b.history || []) addEvent(ev);
            showTerms();
          }
        } catch { /* the stream's status stands */ }
      } while (again && !signal.aborted);
      refreshing = null;
    })();
    return refreshing;
  }
  // While the bounty can still change, read it again now and then, with the wait doubling up
  // to a minute: a status the stream missed shows all the same, and an idle page costs the
  // node little.
  const terminal = new Set(['accepted', 'released', 'resolved', 'refunded', 'cancelled']);
  let wait = 5000;
  const tick = () => {
    if (signal.aborted || terminal.has(String(b.status).toLowerCase())) return;
    const t = setTimeout(async () => {
      await refresh();
      wait = Math.min(2 * wait, 60000);
      tick();
    }, wait);
    signal.addEventListener('abort', () => clearTimeout(t), { once: true });
  };
  tick();
  if (typeof EventSource !== 'undefined') {
    const es = new EventSource(`${base}/v1/bounties/${id}/events`);
    signal.addEventListener('abort', () => es.close());
    es.onopen = () => { live.textContent = '● live'; };
    es.onerror = () => { live.textContent = es.readyState === EventSource.CLOSED ? 'stream closed' : 'reconnecting…'; };
    for (const name of Object.keys(statusAfter)) {
      es.addEventListener(name, (m) => {
        let ev;
        try { ev = JSON.parse(m.data); } catch { return; }
        if (addEvent(ev)) {
          events++;
          state.textContent = statusAfter[ev.name] || state.textContent;
          wait = 5000;
          refresh();
        }
      });
    }
  } else {
    live.textContent = 'this browser has no EventSource: reload for news';
  }

  // The group thread.
  const group = `bounty-${id}`;
  const thread = h('ol', { class: 'thread', 'aria-label': `group ${group}` });
  const threadBox = h('div', null, h('p', { class: 'muted' }, 'Loading…'));
  root.append(section('Group thread', h('p', { class: 'muted' }, 'The conversation of group ', mono(group), ', each envelope\'s signature checked in this browser against its sender\'s did:key.'), threadBox));
  let last = 0;
  // addMessage shows one message of the thread. What stands beside a ✓ is what the sender
  // signed: its state and time are the envelope's, and it must be signed for this group. A
  // message the page cannot read is shown as such, and the others still are.
  function addMessage(m) {
    if (!m || typeof m !== 'object' || !(m.seq > last)) return;
    last = m.seq;
    try {
      let verified = false;
      let why = '';
      let p = payloadOf(m.envelope);
      try {
        const v = verifyEnvelope(m.envelope);
        p = v.envelope;
        if (v.sender !== m.sender) why = `the node names ${m.sender}, the envelope ${v.sender}`;
        else if (p.group_id !== group) why = `signed for group ${JSON.stringify(String(p.group_id ?? '')).slice(0, 80)}, not ${group}`;
        else verified = true;
      } catch (e) {
        why = e.message;
      }
      const sender = verified ? m.sender : String(p?.sender || m.sender || '');
      const state = verified ? p.state : (m.state || p?.state);
      const iat = verified ? p.iat : m.iat;
      thread.append(h('li', { 'data-testid': 'thread-message', 'data-verified': String(verified), 'data-sender': sender, 'data-seq': String(m.seq) },
        h('div', { class: 'who' },
          h('a', { href: `#/agent/${encodeURIComponent(sender)}` }, short(sender, 12)),
          state ? h('span', { class: 'chip', title: verified ? 'the state the sender signed' : 'the node\u2019s word' }, String(state)) : null,
          h('span', { title: verified ? 'when the sender signed it (iat)' : 'the node\u2019s word' }, time(iat)),
          verified ? h('span', { class: 'ok' }, '✓ signature verified') : h('span', { class: 'bad', title: why }, `✗ not verified: ${why}`)),
        h('p', { class: 'text' }, messageText(p))));
    } catch (e) {
      thread.append(h('li', { 'data-testid': 'thread-message', 'data-verified': 'false', 'data-sender': String(m.sender ?? ''), 'data-seq': String(m.seq) },
        h('span', { class: 'bad' }, `✗ this message could not be shown: ${e.message}`)));
    }
  }
  const g = await getOr(`/v1/groups/${group}`, null, { signal }).catch((e) => { threadBox.replaceChildren(errorBox(e, 'the group')); return undefined; });
  if (g === null) {
    threadBox.replaceChildren(h('p', { class: 'muted', 'data-testid': 'thread-absent' }, `No group ${group} on this node.`));
  } else if (g) {
    try {
      for (;;) {
        const page = await get(`/v1/groups/${group}/envelopes${q({ after: last, limit: 500 })}`, { signal });
        for (const m of page.envelopes || []) addMessage(m);
        if ((page.envelopes || []).length < 500) break;
      }
      threadBox.replaceChildren(h('p', { class: 'muted' }, `${g.members.length} members`), thread);
      if (typeof EventSource !== 'undefined') {
        const es = new EventSource(`${base}/v1/groups/${group}/stream${q({ after: last })}`);
        signal.addEventListener('abort', () => es.close());
        es.addEventListener('envelope', (m) => {
          try { addMessage(JSON.parse(m.data)); } catch { /* not an envelope */ }
        });
      }
    } catch (e) {
      if (!signal.aborted) threadBox.replaceChildren(errorBox(e, 'the thread'));
    }
  }
}
