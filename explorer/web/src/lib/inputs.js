// The inputs of a recomputed score held to the log: what GET /v1/log/scores lists as the
// audits behind the scores must be audits the log holds, signed as listed, and each audit
// that counts must be the latest of its auditor, subject and target (docs/REPUTATION.md: the
// latest by time, ties to the larger leaf hash). What the browser cannot check here is what
// the chain says (stakes, bindings, settlements): those the page shows as the node's word.
// Each listed audit's logged envelope must carry its auditor's signature: a log holds what the
// node put in it, so a leaf is an audit only if the auditor it names signed it.
import { payloadOf, verifyEnvelope } from './envelope.js';

/** targetOf names what an audit payload judges, as reputation.Audit.Target does:
 * bounty:<chain>:<escrow, lower case>:<id>, or envelope:<id>. */
export function targetOf(p) {
  const b = p?.bounty;
  if (b && typeof b === 'object') return `bounty:${b.chain_id}:${String(b.escrow).toLowerCase()}:${b.id}`;
  return `envelope:${p?.body?.envelope ?? ''}`;
}

/** auditOf reads the audit a logged envelope carries (unchecked: verifyEnvelope checks the
 * signature), or null when it is not one. */
export function auditOf(text) {
  const p = payloadOf(text);
  if (!p || typeof p.sender !== 'string' || !p.body || typeof p.body !== 'object') return null;
  return { auditor: p.sender, subject: p.body.subject, score: p.body.score, time: p.iat, target: targetOf(p) };
}

const key = (a) => JSON.stringify([a.auditor, a.subject, a.target]);

// later says whether audit a supersedes b: later by time, ties to the larger leaf hash.
const later = (a, b) => a.time > b.time || (a.time === b.time && a.leaf > b.leaf);

// VERIFY_CHUNK is how many signatures checkInputs checks before it yields to the event loop,
// so that a long list of inputs does not freeze the page.
export const VERIFY_CHUNK = 64;
const pause = () => new Promise((r) => setTimeout(r, 0));

/** checkInputs holds the listed audits (each {leaf, auditor, subject, target, score, time,
 * counts}) to the logged ones ({leaf, text}: every leaf of the log up to the scores' size).
 * It resolves to {problems: [text], checked, unlisted}: problems name each listed audit the
 * log does not hold, holds without a valid signature of the listed auditor, or holds saying
 * something else, and each counted audit a later logged one supersedes; unlisted counts
 * logged audits the inputs leave out. Signatures are checked VERIFY_CHUNK at a time, yielding
 * between chunks (opts.chunk, opts.pause override both). */
export async function checkInputs(audits, logged, opts = {}) {
  const chunk = opts.chunk ?? VERIFY_CHUNK;
  const yieldNow = opts.pause ?? pause;
  const byLeaf = new Map();
  const latest = new Map();
  for (const x of logged) {
    const a = auditOf(x.text);
    if (!a) continue;
    a.leaf = x.leaf;
    a.text = x.text;
    byLeaf.set(x.leaf, a);
    const k = key(a);
    const cur = latest.get(k);
    if (!cur || later(a, cur)) latest.set(k, a);
  }
  const problems = [];
  const listed = new Set();
  let verified = 0;
  for (const a of audits) {
    listed.add(a.leaf);
    const l = byLeaf.get(a.leaf);
    if (!l) {
      problems.push(`audit ${a.leaf} is not in the log`);
      continue;
    }
    if (verified > 0 && verified % chunk === 0) await yieldNow();
    verified++;
    let sender;
    try {
      sender = verifyEnvelope(l.text).sender;
    } catch (e) {
      problems.push(`audit ${a.leaf}: its logged envelope's signature does not verify (${e.message})`);
      continue;
    }
    if (sender !== a.auditor) {
      problems.push(`audit ${a.leaf}: signed by ${sender}, not by the listed auditor ${a.auditor}`);
      continue;
    }
    for (const f of ['auditor', 'subject', 'target', 'score', 'time']) {
      if (!Object.is(l[f], a[f])) problems.push(`audit ${a.leaf}: the log's envelope says ${f} ${JSON.stringify(l[f])}, the inputs ${JSON.stringify(a[f])}`);
    }
    if (a.counts !== false) {
      const top = latest.get(key(l));
      if (top && top.leaf !== l.leaf) problems.push(`audit ${a.leaf} counts, but the log holds a later one of the same target: ${top.leaf}`);
    }
  }
  let unlisted = 0;
  for (const leaf of byLeaf.keys()) if (!listed.has(leaf)) unlisted++;
  return { problems, checked: audits.length, unlisted };
}
