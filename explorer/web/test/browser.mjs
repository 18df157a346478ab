// The explorer in a real browser: Debian's chromium driven by playwright-core, run by the Go
// test testnet/e2e TestExplorerInBrowser against a node that has played the demo's day
// (`surety demo --keep`). The Go side holds the keys and reads the API; this script only
// drives the page, waits for what the page shows (never for a fixed time), and reports it.
//
// Environment:
//   EXPLORER_URL   the explorer, e.g. http://127.0.0.1:7746/explorer/
//   CHROMIUM       the browser executable (/usr/bin/chromium)
//   SEARCH         the words of the agents page's search (in its route)
//   SEARCH_TYPED   other words, typed into its search box
//   RECOMPUTE_DID  a DID whose score the log page recomputes
//   THREAD_BOUNTY  a bounty of the day with a group thread
//   LIVE_BOUNTY    a bounty the Go side has posted and settles once this script says
//                  {"watching": id} on stdout; it then files an audit and, once the log's
//                  head holds it, writes the line "log" on stdin
//   SHOTS          the directory the screenshots go to
//   STEP_TIMEOUT   how long one wait may take, in ms (default 30000)
//   FAILURE_SHOTS  where to put a screenshot of each step that fails (default: none)
//
// Output: one JSON object per line on stdout ({"step": …} as it goes, {"watching": id}, then
// {"ok": …, "failures": […], …} with what the pages showed). Each step that fails is named on
// stderr (with what the page showed) and the exit code is 1,
// but the walk goes on, so one run says which parts hold.
import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { keccak } from '../src/lib/chain.js';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};
const explorer = env('EXPLORER_URL');
const origin = new URL(explorer).origin;
const shots = env('SHOTS');
const stepTimeout = Number(process.env.STEP_TIMEOUT || 30000);
mkdirSync(shots, { recursive: true });

const stdinLines = createInterface({ input: process.stdin });
const stdin = stdinLines[Symbol.asyncIterator]();
const say = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');
const tid = (id) => `[data-testid=${id}]`;

// Failure is a check of the page that did not hold.
class Failure extends Error {}
function check(ok, message) {
  if (!ok) throw new Failure(message);
}

const browser = await chromium.launch({
  executablePath: env('CHROMIUM'),
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  timeout: stepTimeout,
});
const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, reducedMotion: 'reduce' });
context.setDefaultTimeout(stepTimeout);

// What the page did that it must not: requests off the node's origin, uncaught errors.
const offOrigin = [];
const pageErrors = [];
context.on('request', (req) => {
  const u = new URL(req.url());
  if ((u.protocol === 'http:' || u.protocol === 'https:') && u.origin !== origin) offOrigin.push(req.url());
});

// open goes to a route of the explorer. The first page a fresh browser loads also starts its
// renderer and compiles the explorer's script; on a loaded machine (CI runs Go packages beside
// this test) that once took over 20 s, so the first open may take three steps' time.
let opened = false;
async function open(page, hash) {
  await page.goto(new URL(hash, explorer).href, opened ? {} : { timeout: 3 * stepTimeout });
  opened = true;
}

// shot takes a screenshot of the page's top (a click may have scrolled it), without the focus
// ring a navigation leaves on the heading.
async function shot(page, name) {
  await page.evaluate(() => { document.activeElement?.blur(); window.scrollTo(0, 0); });
  await page.screenshot({ path: join(shots, name + '.png') });
}

const report = {};
const failures = [];
const page = await context.newPage();
page.on('pageerror', (err) => pageErrors.push(String(err)));

// step runs one part of the walk; a part that fails is reported (with what the page showed,
// and a screenshot failure-<name>.png in FAILURE_SHOTS when set) and the walk goes on.
const began = Date.now();
async function step(name, fn) {
  say({ step: name, at: (Date.now() - began) / 1000 });
  try {
    await fn();
  } catch (err) {
    let text = '';
    try {
      text = (await page.locator('main').innerText({ timeout: 2000 })).slice(0, 1500);
      if (process.env.FAILURE_SHOTS) await page.screenshot({ path: join(process.env.FAILURE_SHOTS, `failure-${name}.png`) });
    } catch { /* the page is gone */ }
    failures.push({ step: name, error: String(err instanceof Failure ? err.message : err.message || err).split('\n')[0], url: page.url(), page: text });
  }
}

try {
  // 1. Agents: a search (its words in the route, as the search box puts them), the top result.
  await step('agents', async () => {
    const words = env('SEARCH');
    await open(page, `#/agents?q=${encodeURIComponent(words)}`);
    await page.waitForFunction(([sel, w]) => document.querySelector(sel)?.value === w, [tid('search'), words]);
    await page.locator(tid('agent-row')).first().waitFor();
    await page.waitForFunction(() => document.querySelector('main')?.getAttribute('aria-busy') !== 'true');
    report.rows = await page.locator(tid('agent-row')).evaluateAll((rows) => rows.map((r) => r.getAttribute('data-did')));
    report.topDid = report.rows[0];
    check(report.topDid, 'the top agent row has no data-did');
    await shot(page, 'agents');
    // Typed into the search box: another search, its words put in the route.
    const typed = env('SEARCH_TYPED');
    await page.locator(tid('search')).fill(typed);
    await page.locator(tid('search')).press('Enter');
    await page.waitForFunction((w) => new URLSearchParams(location.hash.split('?')[1] || '').get('q') === w, typed);
    await page.waitForFunction(() => document.querySelector('main')?.getAttribute('aria-busy') !== 'true');
    await page.locator(tid('agent-row')).first().waitFor();
    report.rowsTyped = await page.locator(tid('agent-row')).evaluateAll((rows) => rows.map((r) => r.getAttribute('data-did')));
    await page.goBack();
    await page.waitForFunction((did) => document.querySelector('[data-testid=agent-row]')?.dataset.did === did, report.topDid);
  });

  // 2. The top agent, opened from the keyboard: score, chart, audits.
  await step('agent', async () => {
    await page.locator(tid('agent-row')).first().focus();
    await page.keyboard.press('Enter');
    await page.waitForFunction((did) => decodeURIComponent(location.hash) === `#/agent/${did}`, report.topDid);
    await page.locator(tid('agent-card')).waitFor();
    const chart = page.locator(`${tid('score-chart')}[data-points]`);
    await chart.waitFor();
    report.points = JSON.parse(await chart.getAttribute('data-points'));
    report.score = (await page.locator(tid('agent-score')).innerText()).trim();
    report.keyStatus = await page.locator(tid('key-status')).getAttribute('data-state');
    report.cardSignature = await cardSignature();
    report.auditSignatures = await auditSignatures(); // and the rows drawn, before they are read
    report.auditLeaves = await page.locator(tid('audit-row')).evaluateAll((rows) => rows.map((r) => r.getAttribute('data-leaf')));
    report.auditWeights = await page.locator(tid('audit-row')).evaluateAll((rows) => rows.map((r) => Number(r.getAttribute('data-weight') || 'NaN')));
    await shot(page, 'agent');
  });

  // 2b. The agent page with the node lying: a description the agent did not sign, and
  // another agent's audit listed among this one's feeding audits.
  await step('agent-tampered', async () => {
    const did = report.topDid;
    check(did, 'no top agent (the agents step failed)');
    const api = (path) => new URL(`..${path}`, explorer).href;
    const is = (path) => (u) => decodeURIComponent(u.pathname).endsWith(path);
    let foreign;
    for (const d of report.rows) {
      if (d === did) continue;
      const r = await page.request.get(api(`/v1/reputation/${encodeURIComponent(d)}`));
      const j = r.ok() ? await r.json() : {};
      foreign = (j.feeding || []).find((a) => a.subject !== did);
      if (foreign) break;
    }
    report.foreignAudit = Boolean(foreign);
    await page.route(is(`/v1/agents/${did}`), async (route) => {
      const res = await route.fetch();
      const body = await res.json();
      body.description = `${body.description || ''} (and a line the agent never signed)`;
      await route.fulfill({ response: res, json: body });
    });
    await page.route(is(`/v1/reputation/${did}`), async (route) => {
      const res = await route.fetch();
      const body = await res.json();
      if (foreign) body.feeding = [...(body.feeding || []), foreign];
      await route.fulfill({ response: res, json: body });
    });
    await page.reload();
    await page.locator(tid('agent-card')).waitFor();
    report.cardSignatureTampered = await cardSignature();
    report.auditSignaturesTampered = await auditSignatures((report.auditSignatures?.length || 0) + (foreign ? 1 : 0));
    await page.unroute(is(`/v1/agents/${did}`));
    await page.unroute(is(`/v1/reputation/${did}`));
  });

  // 3. A group thread: every message's signature verified in the page; one envelope with a
  // byte of its signature changed on the way shows as not verified.
  await step('thread', async () => {
    const threadBounty = env('THREAD_BOUNTY');
    await open(page, `#/bounty/${threadBounty}`);
    await page.locator(tid('bounty-state')).waitFor();
    report.thread = await readThread(page);
    await page.route(`**/v1/groups/bounty-${threadBounty}/envelopes**`, async (route) => {
      const res = await route.fetch();
      const body = await res.json();
      if (body.envelopes?.length) body.envelopes[0].envelope = flipSignature(body.envelopes[0].envelope);
      await route.fulfill({ response: res, json: body });
    });
    await page.reload();
    await page.locator(tid('bounty-state')).waitFor();
    report.threadTampered = await readThread(page);
    await page.unroute(`**/v1/groups/bounty-${threadBounty}/envelopes**`);
    // The task text against the hash in the Posted event's receipt: a node serving another
    // text with that text's hash as the escrow's does not get a match.
    const taskCheck = async () => {
      const c = page.locator(`${tid('task-check')}[data-state]`).first();
      await c.waitFor();
      return [await c.getAttribute('data-state'), await c.getAttribute('data-source')];
    };
    [report.threadTask, report.threadTaskSource] = await taskCheck();
    await page.route(`**/v1/bounties/${threadBounty}`, async (route) => {
      const res = await route.fetch();
      const body = await res.json();
      body.spec = 'a task text the poster never posted';
      body.specHash = keccak(body.spec);
      await route.fulfill({ response: res, json: body });
    });
    await page.reload();
    [report.threadTaskForged] = await taskCheck();
    await page.unroute(`**/v1/bounties/${threadBounty}`);
  });

  // 3a. A bounty whose deadline no Date holds (a uint64 the poster chose): the page shows it
  // as given, and the rest of the page with it.
  await step('bounty-deadline', async () => {
    const threadBounty = env('THREAD_BOUNTY');
    const is = (u) => u.pathname.endsWith(`/v1/bounties/${threadBounty}`);
    await page.route(is, async (route) => {
      const res = await route.fetch();
      const text = (await res.text()).replace(/"deadline":\s*\d+/, '"deadline":18446744073709551615');
      await route.fulfill({ response: res, body: text });
    });
    await open(page, `#/bounty/${threadBounty}`);
    await page.reload();
    await page.locator(tid('bounty-state')).waitFor();
    report.hugeDeadline = (await page.locator(tid('bounty-deadline')).innerText()).trim();
    report.hugeDeadlineTask = await page.locator(`${tid('task-check')}[data-state]`).first().getAttribute('data-state');
    report.hugeDeadlineThread = (await readThread(page)).length;
    await page.unroute(is);
  });

  // 3b. Another bounty's page served this thread (the node lying): every message is signed for
  // group bounty-<thread>, not this bounty's, so none verifies; and a message the page cannot
  // read (no envelope, a time no Date holds) shows as such without hiding the others.
  await step('thread-foreign', async () => {
    const threadBounty = env('THREAD_BOUNTY');
    const api = (path) => new URL(`..${path}`, explorer).href;
    const list = await (await page.request.get(api('/v1/bounties?limit=20'))).json();
    const other = (list.bounties || []).map((b) => String(b.id)).find((id) => id !== threadBounty);
    check(other, 'no second bounty to serve the thread on');
    const group = await (await page.request.get(api(`/v1/groups/bounty-${threadBounty}`))).json();
    const envelopes = await (await page.request.get(api(`/v1/groups/bounty-${threadBounty}/envelopes?limit=500`))).json();
    const bad = { seq: 1e9, sender: 'did:key:zNobody', envelope: 12345, iat: 18446744073709551615 };
    const g = (u) => u.pathname.endsWith(`/v1/groups/bounty-${other}`);
    const e = (u) => u.pathname.endsWith(`/v1/groups/bounty-${other}/envelopes`);
    await page.route(g, (route) => route.fulfill({ json: group }));
    await page.route(e, (route) => {
      const after = Number(new URL(route.request().url()).searchParams.get('after') || 0);
      route.fulfill({ json: { envelopes: after === 0 ? [...envelopes.envelopes, bad] : [] } });
    });
    await open(page, `#/bounty/${other}`);
    await page.locator(tid('bounty-state')).waitFor();
    report.threadForeign = await readThread(page);
    report.threadForeignWant = envelopes.envelopes.length + 1;
    await page.unroute(g);
    await page.unroute(e);
  });

  // 4. A bounty followed live: the page is open on it while the Go side claims, submits and
  // accepts it; the state must reach accepted without the page being loaded again.
  const live = env('LIVE_BOUNTY');
  let watching = false;
  await step('live', async () => {
    await open(page, `#/bounty/${live}`);
    const state = page.locator(tid('bounty-state'));
    await waitState(page, 'open', stepTimeout);
    await page.locator(`${tid('timeline-item')}[data-event]`).first().waitFor();
    report.liveBefore = await timeline(page);
    await page.evaluate(() => { window.__sameDocument = true; });
    say({ watching: live });
    watching = true;
    await waitState(page, 'accepted', 3 * stepTimeout);
    // The stream delivers the events one by one: wait for the last one to be shown too.
    await page.waitForFunction((sel) => [...document.querySelectorAll(sel)].some((e) => e.dataset.event === 'Accepted'),
      `${tid('timeline-item')}[data-event]`);
    report.liveState = (await state.innerText()).trim();
    report.liveAfter = await timeline(page);
    report.liveSameDocument = await page.evaluate(() => window.__sameDocument === true);
    const taskCheck = page.locator(`${tid('task-check')}[data-state]`).first();
    await taskCheck.waitFor();
    report.taskCheck = await taskCheck.getAttribute('data-state');
    await shot(page, 'bounty');
  });
  // The Go side settles the bounty once it is watched: tell it to go on anyway.
  if (!watching) say({ watching: live, failed: true });

  // The Go side files an audit of the live bounty's worker and says "log" once the log's
  // head holds it, anchored: the log page then has two heads to check one against the other.
  await step('wait-log', async () => {
    let timer;
    const late = new Promise((_, no) => { timer = setTimeout(() => no(new Failure('no go-ahead for the log page on stdin')), 3 * stepTimeout); });
    const line = await Promise.race([stdin.next(), late]).finally(() => clearTimeout(timer));
    check(line.value?.trim() === 'log', `stdin said ${JSON.stringify(line.value)}, want log`);
  });

  // 5. The log, loaded once for its three checks (its routes are budgeted per address, so the
  // walk does not reload it): a proof verified in the page; the same proof with one hash
  // changed on the way (page.route) fails.
  await step('log', async () => {
    await openLog();
    const row = page.locator(tid('leaf-row')).first();
    report.proofLeaf = await row.getAttribute('data-leaf');
    report.proofVerified = await verifyFirstLeaf(page);
    report.head = (await page.locator(tid('head')).first().innerText()).trim();
    report.headSignature = await page.locator(`${tid('head-signature')}[data-state]`).first().getAttribute('data-state');
    await shot(page, 'log');
    await page.route('**/v1/log/proof/inclusion**', async (route) => {
      const res = await route.fetch();
      const proof = await res.json();
      report.tamperedField = tamper(proof);
      await route.fulfill({ response: res, json: proof });
    });
    report.proofTampered = await verifyFirstLeaf(page);
    await page.unroute('**/v1/log/proof/inclusion**');
  });

  // 5b. A score recomputed in the page from the log's inputs matches the node's, the inputs
  // check out against the log; with the node's number for that DID changed on the way by the
  // last bit, it does not match.
  await step('recompute', async () => {
    const did = env('RECOMPUTE_DID');
    await openLog();
    await page.getByLabel('DID', { exact: true }).fill(did);
    const recompute = () => settle(tid('recompute'), tid('recompute-result'), ['match', 'mismatch', 'absent', 'failed', 'unavailable']);
    report.recompute = await recompute();
    // The inputs themselves, checked against the log's leaves and its signed head.
    const inputs = page.locator(`${tid('inputs-check')}:is([data-state=verified], [data-state=failed])`);
    await inputs.waitFor();
    report.inputsCheck = await inputs.getAttribute('data-state');
    await page.route('**/v1/log/scores**', async (route) => {
      const res = await route.fetch();
      const body = await res.json();
      const row = (body.scores || []).find((r) => r.did === did);
      if (row) row.score = nextUp(row.score);
      report.recomputeLied ||= Boolean(row);
      await route.fulfill({ response: res, json: body });
    });
    report.recomputeTampered = await recompute();
    await page.unroute('**/v1/log/scores**');
    report.recomputeParams = await page.locator(tid('recompute-params')).getAttribute('data-params');
    report.recomputeAt = await page.locator(tid('recompute-result')).getAttribute('data-at');
    // The node's time and params: a time one second off the end of the head's epoch is a
    // mismatch, whatever the numbers; a param not the documented one is flagged.
    await page.route('**/v1/log/scores**', async (route) => {
      const res = await route.fetch();
      const body = await res.json();
      if (body.inputs) {
        body.at += 1;
        body.params = { ...(body.params || {}), alpha: 0.5 };
      }
      await route.fulfill({ response: res, json: body });
    });
    report.recomputeAtOff = await recompute();
    report.recomputeParamsOwn = await page.locator(tid('recompute-params')).getAttribute('data-params');
    report.recomputeAtOffAt = await page.locator(tid('recompute-result')).getAttribute('data-at');
    await page.unroute('**/v1/log/scores**');
    // The node rate-limiting the pages of leaves the inputs check reads: the check says it
    // could not check, neither verified nor failed.
    const pages = (u) => u.pathname.endsWith('/v1/log/leaves') && u.searchParams.get('limit') === '256';
    await page.route(pages, (route) => route.fulfill({ status: 429, contentType: 'application/problem+json', headers: { 'Retry-After': '1' },
      json: { type: 'https://surety.dev/problems/rate-limited', title: 'Too Many Requests', status: 429, detail: 'retry in 1 s' } }));
    await recompute();
    const limited = page.locator(`${tid('inputs-check')}:is([data-state=verified], [data-state=failed], [data-state=rate-limited])`);
    await limited.waitFor();
    report.inputsCheckLimited = await limited.getAttribute('data-state');
    await page.unroute(pages);
  });

  // 5c. Two heads: the consistency proof between them verifies in the page; with a hash of
  // it changed on the way, it fails.
  await step('consistency', async () => {
    await openLog();
    const older = page.getByLabel('older head');
    await page.waitForFunction(() => document.querySelectorAll('#cons-to option').length >= 2);
    const sizes = await older.locator('option').evaluateAll((os) => os.map((o) => Number(o.value)));
    report.heads = sizes;
    await older.selectOption(String(Math.min(...sizes)));
    await page.getByLabel('newer head').selectOption(String(Math.max(...sizes)));
    const consistency = () => settle(tid('verify-consistency'), tid('consistency-result'), ['verified', 'failed']);
    report.consistency = await consistency();
    await page.route('**/v1/log/proof/consistency**', async (route) => {
      const res = await route.fetch();
      const proof = await res.json();
      report.consistencyTamperedField = tamper(proof);
      await route.fulfill({ response: res, json: proof });
    });
    report.consistencyTampered = await consistency();
    await page.unroute('**/v1/log/proof/consistency**');
  });

  // 5d. A node naming no DID of its own (GET /v1/info answers 404): the log's head signature
  // has nothing to be held to, and does not verify.
  await step('log-no-did', async () => {
    const noInfo = (u) => u.pathname.endsWith('/v1/info');
    await page.route(noInfo, (route) => route.fulfill({ status: 404, contentType: 'application/problem+json', json: { type: 'https://surety.dev/problems/not-found', title: 'not found', status: 404 } }));
    await open(page, '#/log');
    await page.reload();
    report.headSignatureNoDid = await page.locator(`${tid('head-signature')}[data-state]`).first().getAttribute('data-state');
    await page.unroute(noInfo);
  });

  // 6. Network, then the agent page at phone width.
  await step('network', async () => {
    await open(page, '#/network');
    await page.locator(tid('node-did')).waitFor();
    await page.locator(tid('chain-head')).waitFor();
    report.nodeDid = (await page.locator(tid('node-did')).innerText()).trim();
    report.chainBlock = Number(await page.locator(tid('chain-head')).getAttribute('data-block'));
    report.peers = await page.locator(tid('peer-row')).count();
    await shot(page, 'network');
  });

  await step('narrow', async () => {
    if (!report.topDid) throw new Failure('no top agent to show at 390 px (the agents step failed)');
    await page.setViewportSize({ width: 390, height: 844 });
    await open(page, `#/agent/${encodeURIComponent(report.topDid)}`);
    await page.locator(`${tid('score-chart')}[data-points]`).waitFor();
    report.narrowOverflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    await shot(page, 'agent-390');
  });
} finally {
  report.offOrigin = offOrigin;
  report.pageErrors = pageErrors;
  report.failures = failures;
  say({ ok: failures.length === 0 && offOrigin.length === 0 && pageErrors.length === 0, ...report });
  await browser.close();
  stdinLines.close();
  process.stdin.destroy();
}
for (const f of failures) process.stderr.write(`step ${f.step} failed: ${f.error}\n  at ${f.url}\n  the page showed: ${JSON.stringify(f.page)}\n`);
if (failures.length) process.exitCode = 1;

// waitState waits for the bounty page's status to read want (any case), and says what it read
// instead when it does not in time.
async function waitState(p, want, timeout) {
  try {
    await p.waitForFunction(([sel, w]) => document.querySelector(sel)?.textContent.trim().toLowerCase() === w, [tid('bounty-state'), want], { timeout });
  } catch (err) {
    const now = await p.locator(tid('bounty-state')).first().innerText({ timeout: 1000 }).catch(() => '(none)');
    const events = await timeline(p).catch(() => []);
    throw new Failure(`bounty-state reads ${JSON.stringify(now)}, not ${want}, after ${timeout / 1000} s (timeline: ${events.join(', ')})`);
  }
}

// openLog shows the log page, loading it only when another page is shown.
async function openLog() {
  if (new URL(page.url()).hash !== '#/log') await open(page, '#/log');
  await page.locator(tid('head')).waitFor();
  await page.locator(tid('leaf-row')).first().waitFor();
}

// settle clears the state of the result elements, presses button and returns the state the
// result settles in (one of states): a second press is not mistaken for the first's answer.
async function settle(button, result, states) {
  await page.locator(result).evaluateAll((els) => els.forEach((e) => e.removeAttribute('data-state')));
  await page.locator(button).first().click();
  const done = page.locator(`${result}:is(${states.map((s) => `[data-state=${s}]`).join(', ')})`).first();
  await done.waitFor();
  return done.getAttribute('data-state');
}

// verifyFirstLeaf presses the first leaf row's verify button (or the page's one) and returns
// the state the proof's result settles in (verified or failed).
async function verifyFirstLeaf(p) {
  const inRow = p.locator(tid('leaf-row')).first().locator(tid('verify-proof'));
  const button = (await inRow.count()) ? `${tid('leaf-row')} >> nth=0 >> ${tid('verify-proof')}` : tid('verify-proof');
  return settle(button, tid('proof-result'), ['verified', 'failed']);
}

// tamper changes one hash of a proof: the first on its path, or (an inclusion proof with an
// empty path) the leaf. It returns what it changed.
function tamper(proof) {
  const flip = (hex) => hex.slice(0, -1) + (hex.endsWith('0') ? '1' : '0');
  if (Array.isArray(proof.path) && proof.path.length) {
    proof.path[0] = flip(proof.path[0]);
    return 'path[0]';
  }
  proof.leaf = flip(proof.leaf);
  return 'leaf';
}

// nextUp is the next float64 above x: a score one bit off.
function nextUp(x) {
  const b = new DataView(new ArrayBuffer(8));
  b.setFloat64(0, x);
  b.setBigUint64(0, b.getBigUint64(0) + (x >= 0 ? 1n : -1n));
  return b.getFloat64(0);
}

// flipSignature changes one character of an envelope's signature, keeping it valid base64url:
// the last part of a compact JWS, or the signature member of the JSON serialization.
function flipSignature(envelope) {
  const flip = (sig) => sig.slice(0, 4) + (sig[4] === 'A' ? 'B' : 'A') + sig.slice(5);
  if (envelope.trimStart().startsWith('{')) {
    const o = JSON.parse(envelope);
    if (o.signatures) o.signatures[0].signature = flip(o.signatures[0].signature);
    else o.signature = flip(o.signature);
    return JSON.stringify(o);
  }
  const i = envelope.lastIndexOf('.') + 1;
  return envelope.slice(0, i) + flip(envelope.slice(i));
}

// readThread waits for the thread's messages to be checked (every one has data-verified) and
// returns them.
async function readThread(p) {
  const sel = tid('thread-message');
  await p.locator(sel).first().waitFor();
  await p.waitForFunction((s) => [...document.querySelectorAll(s)].every((m) => m.dataset.verified === 'true' || m.dataset.verified === 'false'), sel);
  return p.locator(sel).evaluateAll((ms) => ms.map((m) => ({ sender: m.dataset.sender, verified: m.dataset.verified })));
}

// cardSignature is the state of the card's signature check, once it ended (none: no check).
async function cardSignature() {
  const c = page.locator(`${tid('card-signature')}[data-state]`);
  return (await c.count()) ? c.first().getAttribute('data-state') : 'none';
}

// auditSignatures waits for at least want audit rows (the audits section draws after the
// auditors' standings are read) and for every row's signature check to end, and returns their
// states.
async function auditSignatures(want = 1) {
  await page.waitForFunction(([s, n]) => {
    const cs = [...document.querySelectorAll(s)];
    return cs.length >= n && cs.every((c) => c.dataset.state !== 'pending');
  }, [tid('audit-signature'), want]);
  return page.locator(tid('audit-signature')).evaluateAll((cs) => cs.map((c) => c.dataset.state));
}

async function timeline(p) {
  return p.locator(`${tid('timeline-item')}[data-event]`).evaluateAll((items) => items.map((i) => i.dataset.event));
}
