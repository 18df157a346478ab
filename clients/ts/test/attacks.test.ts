// Attacks on the envelope verifier beyond the conformance vectors: headers the verifier must
// not honour, another method's key, too many signers, sizes, and a second signature that
// does not verify beside one that does.

import assert from "node:assert/strict";
import { test } from "node:test";
import { ENVELOPE_TYPE, Key, MAX_ENVELOPE_SIZE, VerifyError, b64url, signEnvelope, verifyEnvelope } from "../src/index.js";

const now = Math.floor(Date.now() / 1000);
const alice = Key.generate("ed25519");
const bob = Key.generate("secp256k1");
const payload = () => JSON.stringify({ id: "i", sender: alice.did.did, iat: now, exp: now + 60, nonce: "n", body: { x: 1 } });

function signWithHeader(k: Key, header: Record<string, unknown>, p = payload()): string {
  const input = b64url(JSON.stringify(header)) + "." + b64url(p);
  return input + "." + b64url(k.sign(new TextEncoder().encode(input)));
}
function refused(raw: string, reason: string) {
  assert.throws(() => verifyEnvelope(raw, { now }), (e: unknown) => e instanceof VerifyError && e.reason === reason, `want ${reason}`);
}

test("attacks: crit, b64 false, alg none, a did:pkh or foreign fragment kid are refused", () => {
  const base = { alg: "EdDSA", kid: alice.kid, typ: ENVELOPE_TYPE };
  verifyEnvelope(signWithHeader(alice, base), { now });
  refused(signWithHeader(alice, { ...base, crit: ["exp"] }), "malformed");
  refused(signWithHeader(alice, { ...base, b64: false }), "malformed");
  refused(signWithHeader(alice, { ...base, alg: "none" }), "unsupported-alg");
  refused(signWithHeader(alice, { ...base, alg: "ES256K" }), "unsupported-alg");
  refused(signWithHeader(alice, { ...base, kid: "did:pkh:eip155:1:0x70997970C51812dc3A010C7d01b50e0d17dc79C8#blockchainAccountId" }), "malformed");
  refused(signWithHeader(alice, { ...base, kid: alice.did.did + "#other" }), "malformed");
  refused(signWithHeader(alice, { ...base, kid: alice.did.did }), "malformed"); // no fragment
  refused(signWithHeader(alice, { ...base, kid: 7 }), "malformed");
  // Unsigned segments: a payload with no signature, or an empty one.
  const [h, p] = signWithHeader(alice, base).split(".");
  refused(`${h}.${p}.`, "bad-signature");
  refused(`${h}.${p}`, "malformed");
});

test("attacks: a JSON serialization must verify every signature, carry the sender's, and stay under 16", () => {
  const a = signWithHeader(alice, { alg: "EdDSA", kid: alice.kid, typ: ENVELOPE_TYPE }).split(".");
  const b = signWithHeader(bob, { alg: "ES256K", kid: bob.kid, typ: ENVELOPE_TYPE }).split(".");
  const two = (sigB: string) => JSON.stringify({ payload: a[1], signatures: [{ protected: a[0], signature: a[2] }, { protected: b[0], signature: sigB }] });
  const ok = verifyEnvelope(two(b[2]), { now });
  assert.deepEqual(ok.signers, [alice.kid, bob.kid]);
  refused(two(a[2]), "bad-signature"); // bob's header, alice's signature
  const bobOnly = JSON.stringify({ payload: a[1], signatures: [{ protected: b[0], signature: b[2] }] });
  refused(bobOnly, "kid-not-sender");
  const many = JSON.stringify({ payload: a[1], signatures: Array.from({ length: 17 }, () => ({ protected: a[0], signature: a[2] })) });
  refused(many, "malformed");
  refused(JSON.stringify({ payload: a[1], signatures: [{ signature: a[2] }] }), "malformed");
});

test("attacks: an envelope over the size bound is refused before anything is parsed", () => {
  const big = signEnvelope(alice, { body: { pad: "x".repeat(MAX_ENVELOPE_SIZE) } });
  refused(big, "malformed");
});

test("attacks: padded or non-canonical base64url is refused", () => {
  const jws = signEnvelope(alice, { body: {} });
  const [h, p, s] = jws.split(".");
  refused(`${h}=.${p}.${s}`, "malformed");
  refused(`${h}.${p}.${s}==`, "malformed");
  // A last character whose unused bits are set decodes to the same bytes elsewhere: refused.
  const last = s[s.length - 1];
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const twin = alphabet[alphabet.indexOf(last) + 1] ?? "A";
  refused(`${h}.${p}.${s.slice(0, -1)}${twin}`, "malformed");
});
