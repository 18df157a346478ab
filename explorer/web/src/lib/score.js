// Scores recomputed in the browser: the formula of docs/REPUTATION.md as reputation/score.go's
// Compute runs it, step for step, so that from the inputs GET /v1/log/scores lists (every
// counted audit and every stake behind an anchored head) the page arrives at the node's very
// numbers, bit for bit, or shows where it does not.
//
// Bit for bit takes three things JavaScript does not give by itself:
//  - the audits' decay by the documented steps of reputation.halving (a series of single
//    roundings, no library exponential: Math.pow(2, x) and Go's math.Exp2 differ in the last
//    bit at some arguments), so the last bit agrees too;
//  - Go's fixed-point sums (int64 steps of 2^-32, math.Round half away from zero), kept here
//    as BigInt so no sum loses a bit past 2^53;
//  - the same order of every floating-point sum: agents in byte order of their DIDs, each
//    auditor's audits by subject, as Compute runs them.
// explorer/web/test/score.test.mjs holds this to vectors reputation's TestJSVectors writes
// from Compute.

/** The documented defaults (reputation.DefaultParams). */
export const DEFAULT_PARAMS = Object.freeze({
  alpha: 0.15,
  halfLife: 90 * 24 * 3600,
  unbacked: 0.1,
  priorA: 1,
  priorB: 1,
  tolerance: 1e-9,
  maxIter: 100,
  minStake: 0.1,
  fullBacking: 1,
  own: 0.5,
});

// maxWordPerStake and maxStanding of score.go.
const MAX_WORD_PER_STAKE = 3;
const MAX_STANDING = 10;
const FIXED_ONE = 4294967296; // 2^32

/** MAX_ITER_CAP bounds the iterations a page runs, whatever maxIter the node sends: a node
 * naming a huge maxIter does not get to freeze the browser (the default is 100). */
export const MAX_ITER_CAP = 1000;

/** params fills a params object (as GET /v1/log/scores sends it, camelCase or Go's field
 * names) with the defaults: a zero or missing field takes its default, as in Go; maxIter is
 * held to at most MAX_ITER_CAP. */
export function withDefaults(given = {}) {
  const out = { ...DEFAULT_PARAMS };
  for (const k of Object.keys(DEFAULT_PARAMS)) {
    const goName = k[0].toUpperCase() + k.slice(1);
    const v = given?.[k] ?? given?.[goName];
    if (typeof v === 'number' && v !== 0) out[k] = v;
  }
  out.maxIter = Math.min(out.maxIter, MAX_ITER_CAP);
  return out;
}

/** paramsDiffer lists the params a recompute runs with (withDefaults of what the node sent)
 * that are not the documented defaults, as [{name, used, documented}]: a node scoring with
 * its own params is not scoring by docs/REPUTATION.md, whatever the recompute says. A maxIter
 * above MAX_ITER_CAP is listed as the node sent it. */
export function paramsDiffer(given = {}) {
  const used = withDefaults(given);
  const out = [];
  for (const [k, d] of Object.entries(DEFAULT_PARAMS)) {
    const goName = k[0].toUpperCase() + k.slice(1);
    const sent = given?.[k] ?? given?.[goName];
    const v = k === 'maxIter' && typeof sent === 'number' && sent > MAX_ITER_CAP ? sent : used[k];
    if (!Object.is(v, d)) out.push({ name: k, used: v, documented: d });
  }
  return out;
}

/** atProblem checks the time the node says it scored at against the head, as the auditor's
 * epochEnd (auditor/check.go) does: at = (epoch + 1) × L for a whole epoch length L, no later
 * than the head closed, with the log's last audit (issued at lastIat) of that epoch under that
 * length. It returns why not, or '' when at is the end of the head's epoch. A node picking
 * its own at would age every audit as it liked. */
export function atProblem(at, head, lastIat) {
  const epoch = head?.epoch;
  if (!Number.isSafeInteger(at) || !Number.isSafeInteger(epoch) || epoch < 0 || at <= 0 || at % (epoch + 1) !== 0) {
    return `the scores are computed at ${at}, which is not the end of epoch ${epoch} (no whole epoch length gives it)`;
  }
  if (!Number.isSafeInteger(head.closed) || at > head.closed) return `the scores are computed at ${at}, after the head closed at ${head.closed}`;
  const length = at / (epoch + 1);
  if (!Number.isSafeInteger(lastIat) || lastIat < 0 || lastIat >= at || Math.floor(lastIat / length) !== epoch) {
    return `the scores are computed at ${at}, but the log's last audit, issued at ${lastIat}, is not of epoch ${epoch} under that epoch length (${length} s)`;
  }
  return '';
}

// ---- the decay: reputation.halving ----

// pow2 is 2^k exactly, for -1022 ≤ k ≤ 1023, built from its bits.
const bits = new DataView(new ArrayBuffer(8));
function pow2(k) {
  bits.setUint32(0, (k + 1023) << 20);
  bits.setUint32(4, 0);
  return bits.getFloat64(0);
}

/** halving is 2^(−x), by the steps docs/REPUTATION.md ("Determinism") gives and
 * reputation.halving takes, each operation one IEEE 754 double operation rounded on its own
 * (JavaScript fuses none): x = n + f, y = f · ln 2, e^(−y) by 24 terms of its series in
 * Horner's form, times 2^(−n) (exact below 1000 half-lives; 0 from there). */
export function halving(x) {
  if (!(x > 0)) return 1;
  const n = Math.floor(x);
  if (n >= 1000) return 0;
  const y = (x - n) * Math.LN2;
  let r = 1;
  for (let k = 24; k >= 1; k--) r = 1 - (y / k) * r;
  return r * pow2(-n);
}

// ---- fixed point, as score.go's fixed ----

// goRound is Go's math.Round: half away from zero.
function goRound(x) {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

function toFixed(x) {
  return BigInt(goRound(x * FIXED_ONE));
}

function fixedFloat(f) {
  return Number(f) / FIXED_ONE;
}

// ---- the formula ----

function minStake(p) {
  return Math.max(p.minStake, 0);
}

function counted(p, eth) {
  if (eth <= 0 || eth < minStake(p)) return 0;
  return eth;
}

function preTrust(p, eth) {
  return Math.max(counted(p, eth) - minStake(p), 0);
}

function backing(p, e) {
  if (!e.backed) return p.unbacked;
  if (p.fullBacking < 0) return 1;
  return p.unbacked + (1 - p.unbacked) * Math.min(1, Math.max(e.settled, 0) / p.fullBacking);
}

// evidence is what one audit adds to its pair's sums.
function evidence(p, e) {
  const decay = halving(Math.max(e.age, 0) / p.halfLife);
  const b = backing(p, e);
  return { floor: toFixed(decay * p.unbacked), value: toFixed(decay * (b - p.unbacked)), scored: toFixed(decay * b * e.score) };
}

// capped is a pair's evidence as it counts, and its mean score.
function capped(p, ps) {
  const floor = fixedFloat(ps.floor);
  const value = fixedFloat(ps.value);
  const total = floor + value;
  if (total <= 0) return [0, 0];
  return [Math.min(p.unbacked, floor) + Math.min(1 - p.unbacked, value), fixedFloat(ps.scored) / total];
}

function relative(p, t, pre, scale) {
  if (p.own < 0) return t * scale;
  return (Math.max(0, t - pre) + p.own * Math.min(t, pre)) * scale;
}

function valid(e, n) {
  return Number.isInteger(e.auditor) && Number.isInteger(e.subject) && e.auditor >= 0 && e.auditor < n && e.subject >= 0 && e.subject < n &&
    e.auditor !== e.subject && e.score >= 0 && e.score <= 1;
}

/** compute scores a graph as reputation.Compute does: graph.stake is every agent's stake in
 * ETH (agents in DID byte order), graph.audits the counted audits as {auditor, subject}
 * (agent indices), score, age (seconds), backed and settled (ETH). It returns per agent
 * standing, score, confidence, weight and relative (what its word weighs), and iterations,
 * scale and everyone. */
export function compute(graph, params = {}) {
  const p = withDefaults(params);
  const n = graph.stake.length;
  const out = {
    standing: new Array(n).fill(0), score: new Array(n).fill(0), confidence: new Array(n).fill(0), weight: new Array(n).fill(0),
    relative: new Array(n).fill(0), iterations: 0, scale: 0, everyone: false,
  };
  if (n === 0) {
    out.everyone = true;
    return out;
  }

  // Pairs (auditor, subject), by auditor then subject, each summing its audits' evidence.
  const byPair = new Map();
  for (const e of graph.audits) {
    if (!valid(e, n)) continue;
    const key = e.auditor * n + e.subject;
    let ps = byPair.get(key);
    if (!ps) byPair.set(key, (ps = { auditor: e.auditor, subject: e.subject, floor: 0n, value: 0n, scored: 0n }));
    const ev = evidence(p, e);
    ps.floor += ev.floor;
    ps.value += ev.value;
    ps.scored += ev.scored;
  }
  const pairs = [...byPair.values()].sort((a, b) => a.auditor - b.auditor || a.subject - b.subject);

  // Local trust rows: C_ij = s_ij / Σ_k s_ik over the pairs that trust at all.
  const rows = Array.from({ length: n }, () => []);
  for (const ps of pairs) {
    const [ev, mean] = capped(p, ps);
    const s = toFixed(ev * mean);
    if (s > 0n) rows[ps.auditor].push({ col: ps.subject, trust: s });
  }
  const weights = rows.map((row) => {
    let total = 0n;
    for (const c of row) total += c.trust;
    return row.map((c) => Number(c.trust) / Number(total));
  });

  // Pre-trust over stake above the minimum; evenly over everyone when nobody has any.
  const pre = graph.stake.map((s) => preTrust(p, s));
  let preTotal = 0;
  for (const x of pre) preTotal += x;
  if (preTotal === 0) {
    pre.fill(1);
    preTotal = n;
    out.everyone = true;
  }
  out.scale = preTotal;
  for (let i = 0; i < n; i++) pre[i] /= preTotal;
  const hold = out.everyone ? null : graph.stake.map((s) => (MAX_WORD_PER_STAKE * counted(p, s)) / out.scale);

  // Power iteration.
  let t = pre.slice();
  let next = new Array(n).fill(0);
  for (out.iterations = 1; out.iterations <= p.maxIter; out.iterations++) {
    next.fill(0);
    let dangling = 0;
    for (let i = 0; i < n; i++) {
      const row = rows[i];
      if (row.length === 0) {
        dangling += t[i];
        continue;
      }
      let ti = (1 - p.alpha) * t[i];
      if (hold !== null && t[i] > hold[i]) {
        dangling += t[i] - hold[i];
        ti = (1 - p.alpha) * hold[i];
      }
      const w = weights[i];
      for (let k = 0; k < row.length; k++) next[row[k].col] += ti * w[k];
    }
    const toPre = p.alpha + (1 - p.alpha) * dangling;
    let change = 0;
    for (let j = 0; j < n; j++) {
      next[j] += toPre * pre[j];
      change += Math.abs(next[j] - t[j]);
    }
    [t, next] = [next, t];
    if (change < p.tolerance) break;
  }
  out.iterations = Math.min(out.iterations, p.maxIter);
  out.standing = t.slice();

  for (let i = 0; i < n; i++) {
    out.relative[i] = relative(p, t[i], pre[i], out.scale);
    if (!out.everyone) out.relative[i] = Math.min(out.relative[i], MAX_WORD_PER_STAKE * counted(p, graph.stake[i]));
  }

  // Beta scores from the pairs' contributions, summed in fixed point.
  const all = new Array(n).fill(0n);
  const pos = new Array(n).fill(0n);
  for (const ps of pairs) {
    const [ev, mean] = capped(p, ps);
    const x = Math.min(out.relative[ps.auditor], MAX_STANDING) * ev;
    all[ps.subject] += toFixed(x);
    pos[ps.subject] += toFixed(x * mean);
  }
  for (let j = 0; j < n; j++) {
    const w = fixedFloat(all[j]);
    out.weight[j] = w;
    out.score[j] = (p.priorA + fixedFloat(pos[j])) / (p.priorA + p.priorB + w);
    out.confidence[j] = w / (w + p.priorA + p.priorB);
  }
  return out;
}

// byteOrder compares two strings by their UTF-8 bytes, Go's string order (code-unit order
// differs from it only past U+FFFF, which no DID holds, but the page takes no chances).
const utf8 = new TextEncoder();
function byteOrder(a, b) {
  if (a === b) return 0;
  const x = utf8.encode(a);
  const y = utf8.encode(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

/** graphOf builds Compute's input the way the node does (reputation's liveGraph): the
 * agents are every DID a counted audit names, every DID with stake above zero, and those
 * inputs.agents names, indexed in byte order; one audit per (auditor, subject, target) counts, the last listed; each audit's
 * age is at − time. inputs is {stake: {did: eth}, audits: [{auditor, subject, target, score,
 * time, backed, settled, counts}]}, as GET /v1/log/scores lists them; audits with counts
 * false are left out. */
export function graphOf(inputs, at) {
  const stake = inputs.stake || {};
  const audits = (inputs.audits || []).filter((a) => a.counts !== false);
  const dids = new Set();
  const current = new Map();
  for (const a of audits) {
    dids.add(a.auditor);
    dids.add(a.subject);
    current.set(JSON.stringify([a.auditor, a.subject, a.target ?? '']), a);
  }
  for (const [did, eth] of Object.entries(stake)) if (eth > 0) dids.add(did);
  // A node may name its agents outright (inputs.agents): the graph it scored can hold DIDs
  // no listed audit or stake names (where nobody is staked, each of them takes a share of
  // pre-trust). They are used as named, with every DID the audits and stakes name.
  for (const did of inputs.agents || []) dids.add(did);
  const order = [...dids].sort(byteOrder);
  const index = new Map(order.map((d, i) => [d, i]));
  return {
    dids: order,
    graph: {
      stake: order.map((d) => stake[d] ?? 0),
      audits: [...current.values()].map((a) => ({
        auditor: index.get(a.auditor), subject: index.get(a.subject), score: a.score, age: at - a.time, backed: !!a.backed, settled: a.settled ?? 0,
      })),
    },
  };
}

/** recompute scores the inputs of GET /v1/log/scores ({at, params, inputs}) and returns a
 * Map from DID to {score, confidence, weight, standing, relative}. */
export function recompute(body) {
  const { dids, graph } = graphOf(body.inputs || {}, body.at);
  const sc = compute(graph, body.params || {});
  const out = new Map();
  dids.forEach((d, i) => out.set(d, {
    score: sc.score[i], confidence: sc.confidence[i], weight: sc.weight[i], standing: sc.standing[i], relative: sc.relative[i],
  }));
  return out;
}
