// Bounties as the node's escrow index lists them: status, amount and token, poster and
// worker, each a link to its page (timeline, task text, group thread, live stream).
import { get, h, q, section, short, table } from '../lib/api.js';
import { amount } from '../lib/chain.js';
import './log.css';

const PAGE = 50;
const STATUSES = ['', 'open', 'assigned', 'submitted', 'disputed', 'accepted', 'released', 'resolved', 'refunded', 'cancelled'];

export async function render(root, params) {
  const { signal } = params;
  root.append(h('h1', null, 'Bounties'),
    h('p', { class: 'muted' }, 'Every bounty the node has indexed from the escrow contract, oldest first. Open one for its lifecycle, its task text checked against the on-chain hash, and its group thread with each signature checked in this browser.'));
  const status = h('select', { id: 'b-status', name: 'status' }, STATUSES.map((s) => h('option', { value: s }, s || 'any status')));
  status.value = params.status || '';
  const text = h('input', { type: 'search', id: 'b-q', name: 'q', value: params.q || '', placeholder: 'words of the task', autocomplete: 'off' });
  const box = h('div');
  root.append(h('form', { class: 'row-actions', role: 'search', onsubmit: (ev) => {
    ev.preventDefault();
    location.hash = `#/bounties${q({ status: status.value, q: text.value.trim() })}`;
  } },
  h('label', { for: 'b-status' }, 'status', status),
  h('label', { for: 'b-q' }, 'task text contains', text),
  h('button', { type: 'submit' }, 'Filter')));
  root.append(section('Bounties', box));

  const rows = [];
  async function load(after) {
    const page = await get(`/v1/bounties${q({ status: params.status, q: params.q, limit: PAGE, after })}`, { signal });
    const list = page.bounties || [];
    for (const b of list) {
      rows.push(h('tr', { 'data-testid': 'bounty-row', 'data-id': String(b.id) },
        h('td', null, h('a', { href: `#/bounty/${b.id}` }, String(b.id))),
        h('td', null, h('span', { class: 'chip', 'data-status': b.status }, b.status)),
        h('td', { class: 'num' }, amount(b.amount, b.token)),
        h('td', null, h('code', { class: 'id', title: b.poster }, short(b.poster, 8))),
        h('td', null, b.worker ? h('code', { class: 'id', title: b.worker }, short(b.worker, 8)) : h('span', { class: 'muted' }, 'none yet')),
        h('td', null, b.spec ? short(b.spec, 30) : h('span', { class: 'muted' }, 'not held here'))));
    }
    const more = list.length === PAGE
      ? h('button', { type: 'button', class: 'secondary', onclick: (ev) => { ev.target.disabled = true; load(list[list.length - 1].id); } }, 'More bounties')
      : null;
    box.replaceChildren(...[rows.length === 0 ? h('p', { class: 'muted' }, 'No bounties match.')
      : table('Bounties', ['id', 'status', 'amount', 'poster', 'worker', 'task'], rows), more].filter(Boolean));
  }
  await load();
}
