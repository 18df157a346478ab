// lib/inputs.js: the inputs of a score held to the log catch an audit the log lacks, one it
// holds saying something else, and a counted audit a later one supersedes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { auditOf, checkInputs, targetOf } from '../src/lib/inputs.js';

const b64url = (s) => Buffer.from(s).toString('base64url');
function envelope(p) {
  return `${b64url(JSON.stringify({ alg: 'EdDSA', kid: 'x', typ: 'surety-envelope+jws' }))}.${b64url(JSON.stringify(p))}.sig`;
}
const escrow = '0xE7f1725E7734CE288F8367e1Bb143E90bb3F0512';
function logged(leaf, auditor, subject, score, iat, id) {
  return { leaf, text: envelope({ id: leaf, sender: auditor, iat, exp: iat + 300, nonce: leaf, bounty: { chain_id: 31337, escrow, id }, body: { kind: 'surety.audit/1', subject, score } }) };
}
const log = [logged('aa', 'did:key:zA', 'did:key:zB', 0.8, 100, 7), logged('bb', 'did:key:zA', 'did:key:zB', 0.2, 200, 7), logged('cc', 'did:key:zC', 'did:key:zB', 1, 150, 9)];
const target7 = `bounty:31337:${escrow.toLowerCase()}:7`;
const honest = [
  { leaf: 'aa', auditor: 'did:key:zA', subject: 'did:key:zB', target: target7, score: 0.8, time: 100, counts: false },
  { leaf: 'bb', auditor: 'did:key:zA', subject: 'did:key:zB', target: target7, score: 0.2, time: 200, counts: true },
  { leaf: 'cc', auditor: 'did:key:zC', subject: 'did:key:zB', target: `bounty:31337:${escrow.toLowerCase()}:9`, score: 1, time: 150, counts: true },
];

test('targets and audits read as the node reads them', () => {
  assert.equal(targetOf({ bounty: { chain_id: 31337, escrow, id: 7 } }), target7);
  assert.equal(targetOf({ body: { envelope: 'm1' } }), 'envelope:m1');
  assert.deepEqual(auditOf(log[0].text), { auditor: 'did:key:zA', subject: 'did:key:zB', score: 0.8, time: 100, target: target7 });
  assert.equal(auditOf('not a jws'), null);
});

test('honest inputs check out', () => {
  assert.deepEqual(checkInputs(honest, log), { problems: [], checked: 3, unlisted: 0 });
  assert.equal(checkInputs(honest.slice(1), log).unlisted, 1);
});

test('lies are caught', () => {
  const cases = {
    'an audit the log lacks': [...honest, { ...honest[2], leaf: 'dd' }],
    'a score the envelope does not say': honest.map((a) => (a.leaf === 'cc' ? { ...a, score: 0.9 } : a)),
    'a time the envelope does not say': honest.map((a) => (a.leaf === 'cc' ? { ...a, time: 151 } : a)),
    'another subject': honest.map((a) => (a.leaf === 'cc' ? { ...a, subject: 'did:key:zD' } : a)),
    'a superseded audit counted': honest.map((a) => ({ ...a, counts: a.leaf !== 'bb' })),
  };
  for (const [name, audits] of Object.entries(cases)) {
    assert.ok(checkInputs(audits, log).problems.length > 0, name);
  }
});
