// One ERC-8183 job: its parties and budget, for a Surety job its plan, the workers' entries
// with their deliverables and awards, a dispute and the settlement, a milestone job's parts,
// and its events (JobEscrow's and SuretyHook's) in chain order, as the node indexed them.
import { dl, get, h, section, short, table } from '../lib/api.js';
import { amount } from '../lib/chain.js';
import './log.css';

function addr(a) {
  return a && !/^0x0{40}$/i.test(a) ? h('code', { class: 'id', title: a }, short(a, 8)) : h('span', { class: 'muted' }, 'none');
}

function hash(x) {
  return x ? h('code', { class: 'id', title: x }, short(x, 10)) : '—';
}

export async function render(root, params) {
  const { signal, id } = params;
  const j = await get(`/v1/jobs/${encodeURIComponent(id)}`, { signal });
  const s = j.surety;
  root.append(h('h1', null, `Job ${j.id} `, h('span', { class: 'chip', 'data-status': j.status, 'data-testid': 'job-status' }, j.status)),
    j.description ? h('p', null, j.description) : '');
  root.append(section('Parties and budget', dl([
    ['client', addr(j.client)],
    ['provider', [addr(j.provider), s ? ' (SuretyHook\'s pool: it pays the workers)' : '']],
    ['evaluator', [addr(j.evaluator), s ? ' (SuretyHook)' : '']],
    ['hook', addr(j.hook)],
    ['budget', j.token && !/^0x0{40}$/i.test(j.token) ? amount(j.budget, j.token) : 'not set yet'],
    ['expires', new Date(Number(j.expiredAt) * 1000).toISOString()],
    j.deliverable ? ['deliverable', hash(j.deliverable)] : null,
    j.payout !== '0' ? ['paid to the provider', amount(j.payout, j.token)] : null,
    j.refund !== '0' ? ['refunded to the client', amount(j.refund, j.token)] : null,
    j.platformFee !== '0' || j.evaluatorFee !== '0' ? ['fees', `${amount(j.platformFee, j.token)} platform, ${amount(j.evaluatorFee, j.token)} evaluator`] : null,
  ])));
  if (s) {
    const p = s.plan || {};
    root.append(section('Surety plan', dl([
      ['phase', h('span', { 'data-testid': 'job-phase' }, s.phase)],
      ['workers', `${p.maxEntries ?? '—'} may join, ${p.maxWinners ?? '—'} may be paid`],
      ['arbiter', addr(p.arbiter)],
      ['review window', `${p.reviewWindow ?? '—'} s, the arbiter ${p.arbiterTime ?? '—'} s`],
      ['stake a join locks', p.minStake && p.minStake !== '0' ? amount(p.minStake) : 'none'],
      p.worker && !/^0x0{40}$/i.test(p.worker) ? ['the only worker', addr(p.worker)] : null,
      s.parts ? ['milestone parts', s.parts.map((n, i) => [i ? ', ' : '', String(n) === String(j.id) ? h('strong', null, String(n)) : h('a', { href: `#/job/${n}` }, String(n))])] : null,
      s.dispute ? ['disputed', ['by ', addr(s.dispute.by), ', reason ', hash(s.dispute.reasonHash)]] : null,
      s.settlement ? ['settled', `${s.settlement.outcome}: ${amount(s.settlement.toWorkers, j.token)} to the workers, ${amount(s.settlement.toClient, j.token)} to the client, ${amount(s.settlement.slash)} of stake slashed`] : null,
    ])));
    if (s.entries?.length) {
      root.append(section('Entries', table('Entries', ['worker', 'deliverable', 'award'], s.entries.map((e) => h('tr', { 'data-testid': 'job-entry' },
        h('td', null, addr(e.worker)),
        h('td', null, e.deliverable ? hash(e.deliverable) : h('span', { class: 'muted' }, 'not submitted')),
        h('td', null, e.amount ? `${amount(e.amount, j.token)} (${(Number(e.bps) / 100).toFixed(2)}%)` : h('span', { class: 'muted' }, '—')))))));
    }
  }
  root.append(section('Events', table('Events', ['block', 'contract', 'event', 'transaction'], (j.history || []).map((e) => h('tr', null,
    h('td', { class: 'num' }, String(e.block)),
    h('td', null, e.contract),
    h('td', null, e.name),
    h('td', null, hash(e.txHash)))))));
}
