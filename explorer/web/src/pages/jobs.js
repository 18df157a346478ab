// ERC-8183 jobs as the node's index lists them (JobEscrow, with SuretyHook's extras): status,
// budget and token, client and provider, each a link to its page.
import { get, h, q, section, short, table } from '../lib/api.js';
import { amount } from '../lib/chain.js';
import './log.css';

const PAGE = 50;
const STATUSES = ['', 'open', 'funded', 'submitted', 'completed', 'rejected', 'expired'];

export async function render(root, params) {
  const { signal } = params;
  root.append(h('h1', null, 'Jobs'),
    h('p', { class: 'muted' }, 'Every ERC-8183 job the node has indexed from JobEscrow, oldest first. A Surety job (through SuretyHook) shows its plan, its competing workers, a dispute and how it settled; a milestone job its parts.'));
  const status = h('select', { id: 'j-status', name: 'status' }, STATUSES.map((s) => h('option', { value: s }, s || 'any status')));
  status.value = params.status || '';
  const who = h('input', { type: 'search', id: 'j-provider', name: 'provider', value: params.provider || '', placeholder: '0x… a provider or worker', autocomplete: 'off' });
  const box = h('div');
  root.append(h('form', { class: 'row-actions', role: 'search', onsubmit: (ev) => {
    ev.preventDefault();
    location.hash = `#/jobs${q({ status: status.value, provider: who.value.trim() })}`;
  } },
  h('label', { for: 'j-status' }, 'status', status),
  h('label', { for: 'j-provider' }, 'provider or worker', who),
  h('button', { type: 'submit' }, 'Filter')));
  root.append(section('Jobs', box));

  const rows = [];
  async function load(after) {
    const page = await get(`/v1/jobs${q({ status: params.status, provider: params.provider, limit: PAGE, after })}`, { signal });
    const list = page.jobs || [];
    for (const j of list) {
      rows.push(h('tr', { 'data-testid': 'job-row', 'data-id': String(j.id) },
        h('td', null, h('a', { href: `#/job/${j.id}` }, String(j.id))),
        h('td', null, h('span', { class: 'chip', 'data-status': j.status }, j.status), j.surety ? h('span', { class: 'muted' }, ` surety: ${j.surety.phase}`) : ''),
        h('td', { class: 'num' }, amount(j.budget, j.token)),
        h('td', null, h('code', { class: 'id', title: j.client }, short(j.client, 8))),
        h('td', null, h('code', { class: 'id', title: j.provider }, short(j.provider, 8))),
        h('td', null, j.description ? short(j.description, 30) : h('span', { class: 'muted' }, '—'))));
    }
    const more = list.length === PAGE
      ? h('button', { type: 'button', class: 'secondary', onclick: (ev) => { ev.target.disabled = true; load(list[list.length - 1].id); } }, 'More jobs')
      : null;
    box.replaceChildren(...[rows.length === 0 ? h('p', { class: 'muted' }, 'No jobs match.')
      : table('Jobs', ['id', 'status', 'budget', 'client', 'provider', 'description'], rows), more].filter(Boolean));
  }
  await load();
}
