// lib/score.js against reputation.Compute, bit for bit, through the vectors reputation's
// TestJSVectors writes (testdata/score.json): random worlds scored as the node scores them,
// and reputation.halving (the decay) at the arguments it takes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { halving, recompute, graphOf, compute, atProblem, paramsDiffer, withDefaults, DEFAULT_PARAMS, MAX_ITER_CAP } from '../src/lib/score.js';

const v = JSON.parse(readFileSync(new URL('./testdata/score.json', import.meta.url)));

// same is equality of two doubles, bit for bit (Object.is: -0 is not 0, NaN is NaN).
function same(a, b, what) {
  assert.ok(Object.is(a, b), `${what}: ${a} (JS) != ${b} (Go)`);
}

test('halving is reputation.halving in every bit', () => {
  assert.ok(v.halving.length >= 400);
  for (const [x, y] of v.halving) same(halving(x), y, `halving(${x})`);
});

test('every world scores as Compute scores it, bit for bit', () => {
  assert.ok(v.worlds.length >= 8);
  for (const w of v.worlds) {
    const { dids, graph } = graphOf({ stake: w.stake, audits: w.audits }, w.at);
    assert.deepEqual(dids, w.scores.map((s) => s.did), `${w.name}: agents and their order`);
    const sc = compute(graph, w.params || {});
    assert.equal(sc.iterations, w.iterations, `${w.name}: iterations`);
    same(sc.scale, w.scale, `${w.name}: scale`);
    assert.equal(sc.everyone, w.everyone, `${w.name}: everyone`);
    const got = recompute({ at: w.at, params: w.params, inputs: { stake: w.stake, audits: w.audits } });
    for (const s of w.scores) {
      const g = got.get(s.did);
      for (const k of ['score', 'confidence', 'weight', 'standing', 'relative']) same(g[k], s[k], `${w.name}: ${k} of ${s.did}`);
    }
  }
});

test('the worlds are not trivial: scores move off the prior, and one world has nobody staked', () => {
  const moved = v.worlds.flatMap((w) => w.scores).filter((s) => s.score !== 0.5 && s.weight > 0);
  assert.ok(moved.length > 50, `only ${moved.length} scores moved`);
  assert.ok(v.worlds.some((w) => w.everyone));
  assert.ok(v.worlds.some((w) => w.audits.some((a) => a.counts === false)));
});

test('a changed input changes the score: one audit left out, one stake moved', () => {
  const w = v.worlds.find((x) => x.name === 'small, some staked');
  const base = recompute({ at: w.at, inputs: { stake: w.stake, audits: w.audits } });
  const a = w.audits.find((x) => x.counts && x.score > 0.6);
  const without = recompute({ at: w.at, inputs: { stake: w.stake, audits: w.audits.filter((x) => x !== a) } });
  assert.notEqual(without.get(a.subject).score, base.get(a.subject).score);
  // Superseded audits (counts false) are left out: counting them changes scores.
  const all = recompute({ at: w.at, inputs: { stake: w.stake, audits: w.audits.map((x) => ({ ...x, counts: true, target: x.target + (x.counts ? '' : '#old') })) } });
  assert.ok([...all].some(([d, s]) => s.score !== base.get(d).score));
});

test('agents the node names take part: where nobody is staked, each takes a share of pre-trust', () => {
  const w = v.worlds.find((x) => x.everyone);
  const base = recompute({ at: w.at, inputs: { stake: w.stake, audits: w.audits } });
  const more = recompute({ at: w.at, inputs: { stake: w.stake, audits: w.audits, agents: ['did:key:z6MkNobodyAudited'] } });
  assert.ok(more.has('did:key:z6MkNobodyAudited'));
  assert.ok([...base].some(([d, s]) => s.standing !== more.get(d).standing));
  const same = recompute({ at: w.at, inputs: { stake: w.stake, audits: w.audits, agents: w.scores.map((s) => s.did) } });
  for (const s of w.scores) assert.ok(Object.is(same.get(s.did).score, s.score));
});

test('params that are not the documented defaults are named, and maxIter is capped', () => {
  assert.deepEqual(paramsDiffer({}), []);
  assert.deepEqual(paramsDiffer({ Alpha: 0.15, maxIter: 0 }), []);
  assert.deepEqual(paramsDiffer({ alpha: 0.5 }), [{ name: 'alpha', used: 0.5, documented: DEFAULT_PARAMS.alpha }]);
  assert.deepEqual(paramsDiffer({ HalfLife: 60 }).map((d) => d.name), ['halfLife']);
  assert.equal(withDefaults({ maxIter: 1e12 }).maxIter, MAX_ITER_CAP);
  assert.deepEqual(paramsDiffer({ maxIter: 1e12 }), [{ name: 'maxIter', used: 1e12, documented: 100 }]);
  // A huge maxIter does not run past the cap.
  const w = v.worlds.find((x) => x.audits.length > 0);
  const { graph } = graphOf({ stake: w.stake, audits: w.audits }, w.at);
  assert.equal(compute(graph, { ...(w.params || {}), maxIter: 1e12, tolerance: -1 }).iterations, MAX_ITER_CAP);
});

test('the time scored at must be the end of the head\'s epoch, as the auditor\'s epochEnd holds it', () => {
  const L = 3600;
  const head = { epoch: 480000, closed: 481001 * L + 5 };
  assert.equal(atProblem(480001 * L, head, 480000 * L + 10), '');
  assert.match(atProblem(480001 * L + 1, head, 480000 * L + 10), /no whole epoch length/);
  assert.match(atProblem(480001 * L, { ...head, closed: 480001 * L - 1 }, 480000 * L + 10), /after the head closed/);
  assert.match(atProblem(480001 * L, { epoch: 480000 }, 480000 * L + 10), /after the head closed/);
  assert.match(atProblem(480001 * L, head, 480001 * L), /last audit/); // the audit at or after at
  assert.match(atProblem(480001 * L, head, 479999 * L), /last audit/); // an earlier epoch's
  assert.match(atProblem(0, head, 1), /no whole epoch length/);
  assert.match(atProblem(1e300, head, 1), /no whole epoch length/);
  assert.match(atProblem(480001 * L, head, undefined), /last audit/);
});
