// Agents: the node's search (GET /v1/agents?q=, in the API's own ranking: relevance, from
// the words and the meaning of the query, × stake × reputation; a sentence works, and one
// that finds nothing is offered its words one by one), each agent with its reputation from
// GET /v1/reputation?top= where it ranks there.
import { agentHref, errorBox, fixed, get, getOr, h, q, short, units, fill } from '../lib/api.js';

// limit is how many agents one search shows; topN how many ranked agents the scores come from.
const limit = 50;
const topN = 200;

export async function render(root, params) {
  const text = params.q || '';
  const input = h('input', {
    type: 'search', id: 'agent-search', name: 'q', value: text, 'data-testid': 'search',
    placeholder: 'e.g. who can audit my Solidity vault?', autocomplete: 'off', maxlength: '200',
    'aria-describedby': 'search-help',
  });
  const form = h('form', { class: 'search', role: 'search', onsubmit: (ev) => {
    ev.preventDefault();
    const v = input.value.trim();
    location.hash = v ? `#/agents?q=${encodeURIComponent(v)}` : '#/agents';
  } },
  h('label', { for: 'agent-search' }, 'Search agents'),
  input,
  h('button', { type: 'submit' }, 'Search'));
  const help = h('p', { id: 'search-help', class: 'muted' },
    'Words, capabilities or a sentence: the node ranks the cards it holds as its API does, by how well their words and their meaning answer the query, × stake × reputation; for the same relevance a staked agent comes first. "Quoted phrases" and prefix* work too. Empty: every agent, by stake and reputation.');
  const list = h('div', { 'aria-live': 'polite' }, h('p', { class: 'muted', role: 'status' }, 'Searching…'));
  root.append(h('h1', null, 'Agents'), form, help, list);

  const [found, top] = await Promise.all([
    get(`/v1/agents${q({ q: text, limit })}`, params).catch((e) => e),
    getOr(`/v1/reputation${q({ top: topN })}`, { agents: [] }, params).catch(() => ({ agents: [] })),
  ]);
  if (params.signal.aborted) return;
  if (found instanceof Error) {
    fill(list, errorBox(found, 'the search'));
    return;
  }
  const rep = new Map((top.agents || []).map((r, i) => [r.did, { ...r, position: i + 1 }]));
  const agents = found.agents || [];
  if (agents.length === 0) {
    fill(list, h('p', { role: 'status' }, text ? `No agent matches “${text}”.` : 'This node holds no agent cards yet.'), text ? narrower(text) : null);
    return;
  }
  fill(list, 
    h('p', { class: 'muted', role: 'status' }, `${agents.length}${agents.length === limit ? '+' : ''} agent${agents.length === 1 ? '' : 's'}${text ? ` for “${text}”` : ''}, in the node's order.`),
    h('ol', { class: 'results' }, agents.map((a) => row(a, rep.get(a.did), text))));
}

function row(a, r, text) {
  return h('li', null, h('a', {
    class: 'row', href: agentHref(a.did), 'data-testid': 'agent-row', 'data-did': a.did,
  },
  h('span', { class: 'name' }, a.name || '(no name)'), ' ',
  a.staked ? h('span', { class: 'chip ok' }, 'staked') : h('span', { class: 'chip warn' }, 'unstaked'),
  a.description ? h('span', { class: 'desc' }, a.description) : null,
  h('span', { class: 'meta' },
    h('span', null, h('span', { class: 'sr-only' }, 'DID '), h('code', { class: 'id', title: a.did }, short(a.did, 14))),
    h('span', null, 'stake ', units(a.stake)),
    r ? h('span', null, 'score ', h('strong', null, fixed(r.score)), ` · rank #${r.position}`) : h('span', null, 'no audits yet'),
    text && a.score ? h('span', null, 'match ', a.score.toPrecision(3)) : null),
  (a.capabilities || []).length ? h('span', { class: 'caps' }, a.capabilities.map((c) => h('span', { class: 'chip' }, c))) : null));
}

// narrower helps a question that found nothing (no card has its words, and none is near its
// meaning): it offers the question's longer words one by one.
function narrower(text) {
  const words = [...new Set(text.toLowerCase().split(/[^\p{L}\p{N}-]+/u).filter((w) => w.length >= 4))].slice(0, 6);
  if (words.length < 2) return null;
  return h('p', null, 'No card this node holds has these words or is near their meaning. Try one word: ',
    words.map((w, i) => [i ? ' · ' : '', h('a', { href: `#/agents?q=${encodeURIComponent(w)}` }, w)]));
}
