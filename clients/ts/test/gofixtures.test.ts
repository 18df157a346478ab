// The client against Surety's Go code: keys, envelopes, cards, audits, bindings, signed tree
// heads and Merkle proofs that the Go code made (test/fixtures/go.json, written by
// testdata-gen/main.go) verify here, and the client signs the same bytes from the same keys
// and payloads (Ed25519 and RFC 6979 ES256K are deterministic).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { compactVerify, importJWK } from "jose";
import { privateKeyToAccount } from "viem/accounts";
import {
  CARD_TYPE,
  ENVELOPE_TYPE,
  Key,
  VerifyError,
  fillEnvelope,
  goJSON,
  leafHash,
  openHead,
  parseAuditBody,
  parseCard,
  signBinding,
  signCard,
  signCompact,
  statementJSON,
  typedData,
  unhex,
  verifyBinding,
  verifyEnvelope,
  verifyInclusion,
  type Binding,
  type Card,
} from "../src/index.js";
import { hashTypedData } from "viem";
import { pkgDir } from "./paths.js";

interface Signed {
  key: number;
  payload: string;
  jws: string;
}
const fx = JSON.parse(readFileSync(join(pkgDir, "test/fixtures/go.json"), "utf8")) as {
  now: number;
  keys: { type: "ed25519" | "secp256k1"; seed: string; keyFile: string; did: string; kid: string }[];
  envelopes: Signed[];
  cards: Signed[];
  audits: Signed[];
  heads: Signed[];
  bindings: { key: number; walletKey: string; binding: Binding; digest: string }[];
  merkle: { leaves: string[]; roots: string[]; proofs: Record<string, string[]>[] };
};
const keys = fx.keys.map((k) => Key.fromSeed(k.type, unhex(k.seed)));
const node = keys[2];

test("key files: the Go CLI's key file reads as the same key, and writes back byte for byte", () => {
  for (const [i, k] of fx.keys.entries()) {
    const fromFile = Key.fromKeyFile(k.keyFile);
    assert.equal(fromFile.did.did, k.did);
    assert.equal(fromFile.kid, k.kid);
    assert.equal(keys[i].keyFile(), k.keyFile, `key ${i}`);
  }
});

test("key files: a public part or kid that is not the key's is refused", () => {
  const f = JSON.parse(fx.keys[0].keyFile);
  assert.throws(() => Key.fromKeyFile(JSON.stringify({ ...f, x: JSON.parse(fx.keys[2].keyFile).x })), /does not match/);
  assert.throws(() => Key.fromKeyFile(JSON.stringify({ ...f, kid: fx.keys[2].kid })), /is not this key's DID/);
  assert.throws(() => Key.fromKeyFile(JSON.stringify({ ...f, d: f.d.slice(1) })), /32 bytes/);
  assert.throws(() => Key.fromKeyFile(JSON.stringify({ ...f, crv: "P-256" })), /not an Ed25519 or secp256k1/);
});

test("envelopes: Go's verify here, and the client signs the same bytes", () => {
  for (const e of fx.envelopes) {
    const v = verifyEnvelope(e.jws, { now: fx.now, aud: undefined });
    assert.equal(v.envelope.sender, keys[e.key].did.did);
    assert.deepEqual(v.signers, [keys[e.key].kid]);
    assert.equal(Buffer.from(v.payload).toString(), e.payload);
    assert.equal(signCompact(keys[e.key], e.payload, ENVELOPE_TYPE), e.jws, "same key, same payload: same JWS");
    // Filling the parsed payload again writes Go's bytes (sorted keys, Go's escaping).
    assert.equal(goJSON(fillEnvelope(JSON.parse(e.payload), keys[e.key])), e.payload);
  }
});

test("envelopes: the verifier refuses what the node refuses", () => {
  const e = fx.envelopes[0]; // addressed to the node, chain 31337
  const ctx = { now: fx.now, aud: node.did.did, chainId: 31337 };
  verifyEnvelope(e.jws, ctx);
  const refuse = (raw: string, c: object, reason: string) => {
    assert.throws(() => verifyEnvelope(raw, { ...ctx, ...c }), (err: unknown) => err instanceof VerifyError && err.reason === reason, reason);
  };
  refuse(e.jws, { aud: keys[0].did.did }, "wrong-audience");
  refuse(e.jws, { chainId: 1 }, "wrong-chain");
  refuse(e.jws, { now: fx.now + 301 + 30 }, "expired");
  refuse(e.jws, { now: fx.now - 31 }, "not-yet-valid");
  refuse(e.jws, { seen: ["nonce-0-0"] }, "replayed");
  refuse(e.jws, { revoked: [keys[0].did.did] }, "revoked");
  const [h, p, s] = e.jws.split(".");
  const flipped = s.slice(0, 10) + (s[10] === "A" ? "B" : "A") + s.slice(11);
  refuse(`${h}.${p}.${flipped}`, {}, "bad-signature");
  const other = JSON.parse(e.payload);
  other.body.text = "hello, changed";
  refuse(`${h}.${Buffer.from(goJSON(other)).toString("base64url")}.${s}`, {}, "bad-signature");
  refuse(signCompact(keys[0], e.payload, CARD_TYPE), {}, "malformed"); // a card's typ is no envelope
  refuse(signCompact(keys[1], e.payload, ENVELOPE_TYPE), {}, "kid-not-sender"); // signed by another key
});

test("envelopes: jose, an independent JOSE library, verifies the client's EdDSA envelopes", async () => {
  const k = keys[0];
  const jws = signCompact(k, fx.envelopes[0].payload, ENVELOPE_TYPE);
  const { payload, protectedHeader } = await compactVerify(jws, await importJWK({ ...k.publicJwk(), alg: "EdDSA" }, "EdDSA"));
  assert.equal(Buffer.from(payload).toString(), fx.envelopes[0].payload);
  assert.deepEqual(protectedHeader, { alg: "EdDSA", kid: k.kid, typ: ENVELOPE_TYPE });
});

test("cards: Go's signed cards parse here, and the client signs the same card to the same JWS", () => {
  for (const c of fx.cards) {
    const { card } = parseCard(c.jws, fx.now);
    assert.equal(card.did, keys[c.key].did.did);
    assert.deepEqual(card.capabilities, ["solidity", "audit"]);
    assert.equal(signCard(JSON.parse(c.payload) as Card, keys[c.key]), c.jws);
  }
  const [h, p, s] = fx.cards[0].jws.split(".");
  const body = JSON.parse(Buffer.from(p, "base64url").toString());
  body.name = "someone else";
  assert.throws(() => parseCard(`${h}.${Buffer.from(JSON.stringify(body)).toString("base64url")}.${s}`, fx.now), /card-forged/);
  assert.throws(() => parseCard(fx.cards[0].jws, fx.now - 3600), /card-malformed/); // updated in the future
});

test("audits: Go's audit envelopes verify and read as audits here", () => {
  for (const a of fx.audits) {
    const v = verifyEnvelope(a.jws, { now: fx.now });
    const audit = parseAuditBody(v.envelope);
    assert.equal(audit.auditor, keys[a.key].did.did);
    assert.equal(audit.subject, keys[1 - a.key].did.did);
    assert.equal(audit.score, 0.75);
    assert.equal(audit.bounty?.id, 7);
    assert.equal(signCompact(keys[a.key], a.payload, ENVELOPE_TYPE), a.jws);
  }
});

test("bindings: Go's bindings verify here, and the client's are Go's byte for byte", async () => {
  for (const b of fx.bindings) {
    await verifyBinding(b.binding);
    assert.equal(hashTypedData(typedData(b.binding.statement)), b.digest);
    const account = privateKeyToAccount(`0x${b.walletKey}`);
    const mine = await signBinding(b.binding.statement, keys[b.key], account);
    assert.equal(statementJSON(b.binding.statement), Buffer.from(b.binding.agentJws.split(".")[1], "base64url").toString());
    assert.equal(mine.agentJws, b.binding.agentJws);
    assert.equal(mine.walletSignature, b.binding.walletSignature);
    await assert.rejects(verifyBinding({ ...b.binding, statement: { ...b.binding.statement, nonce: "other" } }), /does not sign this statement/);
    const other = fx.bindings[1 - fx.bindings.indexOf(b)];
    await assert.rejects(verifyBinding({ ...b.binding, walletSignature: other.binding.walletSignature }), /wallet signature is by/);
  }
});

test("log heads: Go's signed tree heads open here; another signer, typ or byte does not", () => {
  for (const h of fx.heads) {
    const head = openHead(h.jws, keys[h.key].did.did);
    const want = JSON.parse(h.payload);
    assert.equal(head.size, want.size);
    assert.equal(head.root, want.root);
    assert.equal(head.signer, keys[h.key].did.did);
    assert.throws(() => openHead(h.jws, keys[0].did.did), (e: Error & { reason?: string }) => e.reason === "wrong-signer");
  }
  const [h, p, s] = fx.heads[0].jws.split(".");
  const body = JSON.parse(Buffer.from(p, "base64url").toString());
  body.size += 1;
  assert.throws(() => openHead(`${h}.${Buffer.from(JSON.stringify(body)).toString("base64url")}.${s}`, ""), (e: Error & { reason?: string }) => e.reason === "bad-signature");
});

test("merkle: Go's inclusion proofs check against Go's roots, for every leaf of every size", () => {
  const { leaves, roots, proofs } = fx.merkle;
  let checked = 0;
  for (let size = 1; size <= leaves.length; size++) {
    for (const [index, path] of Object.entries(proofs[size - 1])) {
      const leaf = leafHash(leaves[Number(index)]);
      verifyInclusion(leaf, { leaf, index: Number(index), size, path }, size, roots[size - 1]);
      checked++;
      if (path.length > 0) {
        const bad = [...path];
        bad[0] = (bad[0][0] === "0" ? "1" : "0") + bad[0].slice(1);
        assert.throws(() => verifyInclusion(leaf, { leaf, index: Number(index), size, path: bad }, size, roots[size - 1]), /does not match the root/);
      }
      assert.throws(() => verifyInclusion(leaf, { leaf, index: Number(index), size, path: [...path, roots[0]] }, size, roots[size - 1]));
    }
  }
  assert.equal(checked, 45);
});
