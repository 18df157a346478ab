// lib/inputs.js: the inputs of a score held to the log catch an audit the log lacks, one it
// holds saying something else, an audit whose signature is not its listed auditor's, and a
// counted audit a later one supersedes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ed25519 } from '@noble/curves/ed25519.js';
import { auditOf, checkInputs, targetOf } from '../src/lib/inputs.js';

const b64url = (s) => Buffer.from(s).toString('base64url');
const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
function base58(bytes) {
  let n = BigInt('0x' + Buffer.from(bytes).toString('hex'));
  let s = '';
  while (n > 0n) {
    s = B58[Number(n % 58n)] + s;
    n /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    s = '1' + s;
  }
  return s;
}
// Auditors with keys: did:key:zA and the like name real Ed25519 keys, from fixed seeds.
const keys = new Map();
function didOf(name) {
  if (!keys.has(name)) {
    const seed = new Uint8Array(32).fill(name.charCodeAt(name.length - 1));
    const did = `did:key:z${base58([0xed, 0x01, ...ed25519.getPublicKey(seed)])}`;
    keys.set(name, { seed, did });
  }
  return keys.get(name).did;
}
const A = didOf('A');
const C = didOf('C');
// envelope signs p with the key of signer (by default the key whose DID is p.sender).
function envelope(p, signer = [...keys.values()].find((k) => k.did === p.sender)) {
  const hdr = b64url(JSON.stringify({ alg: 'EdDSA', kid: `${signer.did}#${signer.did.slice(8)}`, typ: 'surety-envelope+jws' }));
  const pl = b64url(JSON.stringify(p));
  return `${hdr}.${pl}.${b64url(ed25519.sign(new TextEncoder().encode(`${hdr}.${pl}`), signer.seed))}`;
}
const escrow = '0xE7f1725E7734CE288F8367e1Bb143E90bb3F0512';
function logged(leaf, auditor, subject, score, iat, id) {
  return { leaf, text: envelope({ id: leaf, sender: auditor, iat, exp: iat + 300, nonce: leaf, bounty: { chain_id: 31337, escrow, id }, body: { kind: 'surety.audit/1', subject, score } }) };
}
const log = [logged('aa', A, 'did:key:zB', 0.8, 100, 7), logged('bb', A, 'did:key:zB', 0.2, 200, 7), logged('cc', C, 'did:key:zB', 1, 150, 9)];
const target7 = `bounty:31337:${escrow.toLowerCase()}:7`;
const honest = [
  { leaf: 'aa', auditor: A, subject: 'did:key:zB', target: target7, score: 0.8, time: 100, counts: false },
  { leaf: 'bb', auditor: A, subject: 'did:key:zB', target: target7, score: 0.2, time: 200, counts: true },
  { leaf: 'cc', auditor: C, subject: 'did:key:zB', target: `bounty:31337:${escrow.toLowerCase()}:9`, score: 1, time: 150, counts: true },
];

test('targets and audits read as the node reads them', () => {
  assert.equal(targetOf({ bounty: { chain_id: 31337, escrow, id: 7 } }), target7);
  assert.equal(targetOf({ body: { envelope: 'm1' } }), 'envelope:m1');
  assert.deepEqual(auditOf(log[0].text), { auditor: A, subject: 'did:key:zB', score: 0.8, time: 100, target: target7 });
  assert.equal(auditOf('not a jws'), null);
});

test('honest inputs check out', async () => {
  assert.deepEqual(await checkInputs(honest, log), { problems: [], checked: 3, unlisted: 0 });
  assert.equal((await checkInputs(honest.slice(1), log)).unlisted, 1);
});

test('lies are caught', async () => {
  const cases = {
    'an audit the log lacks': [...honest, { ...honest[2], leaf: 'dd' }],
    'a score the envelope does not say': honest.map((a) => (a.leaf === 'cc' ? { ...a, score: 0.9 } : a)),
    'a time the envelope does not say': honest.map((a) => (a.leaf === 'cc' ? { ...a, time: 151 } : a)),
    'another subject': honest.map((a) => (a.leaf === 'cc' ? { ...a, subject: 'did:key:zD' } : a)),
    'a superseded audit counted': honest.map((a) => ({ ...a, counts: a.leaf !== 'bb' })),
  };
  for (const [name, audits] of Object.entries(cases)) {
    assert.ok((await checkInputs(audits, log)).problems.length > 0, name);
  }
});

test('an audit is vouched for only with its listed auditor\'s signature', async () => {
  // A lying node lists a leaf claiming to be an audit by a real auditor, with a garbage
  // signature (the review of #28's forgery), or signed by another key.
  const p = { id: 'x', sender: A, iat: 300, exp: 600, nonce: 'n', body: { subject: 'did:key:zVictim', score: 0.01, envelope: 'e1' } };
  const listed = { leaf: 'ee', auditor: A, subject: 'did:key:zVictim', target: 'envelope:e1', score: 0.01, time: 300, counts: true };
  const good = envelope(p);
  const [hdr, pl] = good.split('.');
  const garbage = `${hdr}.${pl}.${b64url('not a signature, 64 bytes? no')}`;
  const zeroes = `${hdr}.${pl}.${b64url(new Uint8Array(64))}`;
  const byC = envelope(p, keys.get('C'));
  assert.deepEqual((await checkInputs([listed], [{ leaf: 'ee', text: good }])).problems, []);
  for (const [name, text] of Object.entries({ garbage, zeroes, 'signed by another key': byC })) {
    const r = await checkInputs([listed], [{ leaf: 'ee', text }]);
    assert.equal(r.problems.length, 1, name);
    assert.match(r.problems[0], /signature does not verify|not by the listed auditor/, name);
  }
  // Signed by C with C as sender, listed as A's: the listed auditor did not sign it.
  const asC = envelope({ ...p, sender: C });
  const r = await checkInputs([listed], [{ leaf: 'ee', text: asC }]);
  assert.match(r.problems[0], /not by the listed auditor/);
});

test('signatures are checked in chunks that yield', async () => {
  const many = [];
  const audits = [];
  for (let i = 0; i < 10; i++) {
    const leaf = i.toString(16).padStart(2, '0');
    many.push(logged(leaf, A, `did:key:zS${i}`, 0.5, 100 + i, i));
    audits.push({ leaf, auditor: A, subject: `did:key:zS${i}`, target: `bounty:31337:${escrow.toLowerCase()}:${i}`, score: 0.5, time: 100 + i, counts: true });
  }
  let pauses = 0;
  const r = await checkInputs(audits, many, { chunk: 3, pause: async () => { pauses++; } });
  assert.deepEqual(r.problems, []);
  assert.equal(pauses, 3);
});
