// The explorer's shell: a hash router over the page modules. Each page exports
// render(root, params): root is an emptied <main>, params holds the route's path part (did,
// id) and its query (#/agents?q=… gives q), and params.signal, an AbortSignal aborted when the
// page is left (pass it to fetch and close streams on it). render may return a Promise.
import 'uplot/dist/uPlot.min.css';
import './style.css';
import * as agents from './pages/agents.js';
import * as agent from './pages/agent.js';
import * as network from './pages/network.js';
import * as log from './pages/log.js';
import * as bounties from './pages/bounties.js';
import * as bounty from './pages/bounty.js';
import * as jobs from './pages/jobs.js';
import * as job from './pages/job.js';
import { errorBox } from './lib/api.js';
import { parseRoute } from './lib/route.js';

// routes: the first path segment → [page, section highlighted in the nav, name of the path
// parameter after it, title].
const routes = {
  agents: [agents, 'agents', null, 'Agents'],
  agent: [agent, 'agents', 'did', 'Agent'],
  log: [log, 'log', null, 'Audit log'],
  bounties: [bounties, 'bounties', null, 'Bounties'],
  bounty: [bounty, 'bounties', 'id', 'Bounty'],
  jobs: [jobs, 'jobs', null, 'Jobs'],
  job: [job, 'jobs', 'id', 'Job'],
  network: [network, 'network', null, 'Network'],
};
const parse = (hash) => parseRoute(hash, Object.fromEntries(Object.entries(routes).map(([k, r]) => [k, r[2]])));

let current = null;

async function show() {
  const main = document.getElementById('main');
  if (!routes[parse(location.hash).name]) history.replaceState(null, '', '#/agents');
  const { name, params } = parse(location.hash || '#/agents');
  const [page, nav, , title] = routes[name];
  current?.abort();
  current = new AbortController();
  const signal = current.signal;
  for (const a of document.querySelectorAll('#nav a')) {
    if (a.dataset.section === nav) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  document.title = `${title} · Surety explorer`;
  main.replaceChildren();
  main.setAttribute('aria-busy', 'true');
  try {
    await page.render(main, { ...params, signal });
  } catch (err) {
    if (!signal.aborted) main.append(errorBox(err, title.toLowerCase()));
  } finally {
    if (!signal.aborted) main.removeAttribute('aria-busy');
  }
}

// moveFocus puts keyboard focus on the new page after a navigation the user made, so a
// screen reader announces it and Tab starts from the content.
function moveFocus() {
  const main = document.getElementById('main');
  const h1 = main.querySelector('h1');
  (h1 || main).setAttribute('tabindex', '-1');
  (h1 || main).focus({ preventScroll: true });
}

// The skip link would change the hash (and the route): focus the content instead.
document.querySelector('.skip')?.addEventListener('click', (ev) => { ev.preventDefault(); moveFocus(); });

window.addEventListener('hashchange', () => { show().then(moveFocus); window.scrollTo(0, 0); });
show();

