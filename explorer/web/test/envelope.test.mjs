// lib/envelope.js against the protocol's conformance vectors (testdata/conformance/envelope):
// every vector a signature check decides verifies or fails as the node does, for the node's
// reason; the others (times, replay, audience, chain, revocation: what a node checks on
// receipt) carry good signatures, and the page says so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { verifyEnvelope, EnvelopeError, keyOf, openHead, openPeerBinding } from '../src/lib/envelope.js';

const dir = new URL('../../../testdata/conformance/envelope/', import.meta.url);
const vectors = readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => [f, JSON.parse(readFileSync(new URL(f, dir)))]);

// What the browser's check decides, by vector: the node's problem slug, or valid.
const decided = {
  'valid-ed25519.json': 'valid', 'valid-es256k.json': 'valid', 'valid-json-two-signers.json': 'valid', 'valid-unknown-field.json': 'valid',
  'bad-signature.json': 'bad-signature', 'bad-signature-es256k.json': 'bad-signature', 'tampered-payload.json': 'bad-signature',
  'kid-not-sender.json': 'kid-not-sender', 'kid-wrong-fragment.json': 'malformed', 'wrong-typ.json': 'malformed',
  'alg-does-not-fit-key.json': 'unsupported-alg', 'unsupported-alg.json': 'unsupported-alg',
};
// Refused by a node for what happens on receipt; their signatures are good.
const receipt = ['expired.json', 'expired-within-skew.json', 'not-yet-valid.json', 'lifetime-too-long.json', 'replayed.json', 'revoked-signer.json',
  'wrong-audience.json', 'no-audience.json', 'wrong-chain.json', 'missing-nonce.json', 'member-case.json', 'duplicate-member.json'];

const raw = (v) => (typeof v.input === 'string' ? v.input : JSON.stringify(v.input));

test('every envelope vector is accounted for', () => {
  for (const [f] of vectors) assert.ok(f in decided || receipt.includes(f), `${f}: neither decided by a signature check nor listed as a receipt check`);
});

test('signature verdicts agree with the node', () => {
  for (const [f, v] of vectors.filter(([f]) => f in decided)) {
    const want = decided[f];
    if (want === 'valid') {
      assert.equal(v.expect.valid, true, f);
      const got = verifyEnvelope(raw(v));
      assert.equal(got.sender, v.expect.sender, f);
      continue;
    }
    assert.equal(v.expect.problem, `https://surety.dev/problems/envelope-${want}`, `${f}: the vector's own verdict`);
    assert.throws(() => verifyEnvelope(raw(v)), (e) => e instanceof EnvelopeError && e.reason === want, f);
  }
});

test('envelopes refused on receipt carry good signatures', () => {
  for (const [f, v] of vectors.filter(([f]) => receipt.includes(f))) {
    assert.doesNotThrow(() => verifyEnvelope(raw(v)), f);
  }
});

test('a flipped bit in a valid envelope fails', () => {
  const v = vectors.find(([f]) => f === 'valid-es256k.json')[1];
  const [h, p, s] = v.input.split('.');
  const flip = s[5] === 'A' ? 'B' : 'A';
  assert.throws(() => verifyEnvelope(`${h}.${p}.${s.slice(0, 5)}${flip}${s.slice(6)}`), (e) => e.reason === 'bad-signature');
});

test('did:key reading', () => {
  for (const f of ['key-ed25519.json', 'key-secp256k1.json']) {
    const v = JSON.parse(readFileSync(new URL(`../did/${f}`, dir)));
    assert.ok(keyOf(v.input).pub.length >= 32, f);
  }
  for (const f of ['key-p256.json', 'key-secp256k1-uncompressed.json', 'key-not-base58btc.json', 'key-truncated.json']) {
    const v = JSON.parse(readFileSync(new URL(`../did/${f}`, dir)));
    assert.throws(() => keyOf(v.input), EnvelopeError, f);
  }
});

test('log heads: openHead agrees with testdata/conformance/log-head', () => {
  const hdir = new URL('../log-head/', dir);
  const files = readdirSync(hdir).filter((f) => f.endsWith('.json'));
  assert.ok(files.length >= 8);
  // The node's reason unsupported-key is this check's unsupported-alg (an alg that does not
  // fit the key).
  const reason = { 'unsupported-key': 'unsupported-alg' };
  for (const f of files) {
    const v = JSON.parse(readFileSync(new URL(f, hdir)));
    if (v.expect.valid) {
      const h = openHead(v.input, v.context.node);
      for (const k of ['size', 'root', 'epoch', 'closed', 'signer']) assert.equal(h[k], v.expect[k], `${f}: ${k}`);
    } else {
      const want = reason[v.expect.reason] ?? v.expect.reason;
      assert.throws(() => openHead(v.input, v.context.node), (e) => e instanceof EnvelopeError && e.reason === want, `${f}: want ${want}`);
    }
  }
});

test('peer bindings: openPeerBinding agrees with testdata/conformance/peer-binding', () => {
  const pdir = new URL('../peer-binding/', dir);
  const files = readdirSync(pdir).filter((f) => f.endsWith('.json'));
  assert.ok(files.length >= 6);
  for (const f of files) {
    const v = JSON.parse(readFileSync(new URL(f, pdir)));
    if (v.expect.valid) {
      assert.deepEqual(openPeerBinding(v.input, v.context.node, v.context.peer), { did: v.expect.did, peerId: v.expect.peerId }, f);
    } else {
      assert.throws(() => openPeerBinding(v.input, v.context.node, v.context.peer), (e) => e instanceof EnvelopeError && e.reason === v.expect.reason, `${f}: want ${v.expect.reason}`);
    }
  }
});
