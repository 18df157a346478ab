// The parsers of untrusted input (envelopes, cards, bindings, heads, DIDs, key files) under
// random mutation of valid inputs, from a fixed seed: each must refuse with its own typed
// error (never crash with another), and a mutation that still verifies must be one that does
// not change what was signed.

import assert from "node:assert/strict";
import { test } from "node:test";
import {
  AuditError,
  BindingError,
  CardError,
  DIDError,
  Key,
  KeyFileError,
  PeerBindingError,
  CredentialError,
  verifyCredential,
  parseA2ACard,
  signA2ACard,
  GroupError,
  GroupLedger,
  MEMBERS_KIND,
  ProofError,
  VerifyError,
  keyId,
  openHead,
  parseAuditBody,
  parseCard,
  parseDID,
  signAudit,
  signCard,
  signCompact,
  signEnvelope,
  verifyEnvelope,
  verifyPeerBinding,
} from "../src/index.js";

// A small deterministic generator (mulberry32): a failure replays.
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.{}\":,[] ";

function mutate(s: string, r: () => number): string {
  const i = Math.floor(r() * s.length);
  switch (Math.floor(r() * 4)) {
    case 0:
      return s.slice(0, i) + ALPHABET[Math.floor(r() * ALPHABET.length)] + s.slice(i + 1);
    case 1:
      return s.slice(0, i) + s.slice(i + 1);
    case 2:
      return s.slice(0, i) + ALPHABET[Math.floor(r() * ALPHABET.length)] + s.slice(i);
    default:
      return s.slice(0, i) + s.slice(i, i + Math.floor(r() * 8)).repeat(2) + s.slice(i);
  }
}

const typed = (e: unknown) =>
  e instanceof VerifyError || e instanceof CardError || e instanceof AuditError || e instanceof BindingError || e instanceof DIDError ||
  e instanceof ProofError || e instanceof PeerBindingError || e instanceof KeyFileError || e instanceof GroupError || e instanceof CredentialError;

function fuzz(name: string, seeds: string[], parse: (s: string) => unknown, rounds = 1500) {
  test(`fuzz: ${name}`, () => {
    const r = rng(name.length * 7919);
    for (let i = 0; i < rounds; i++) {
      let s = seeds[i % seeds.length];
      const n = 1 + Math.floor(r() * 3);
      for (let j = 0; j < n; j++) s = mutate(s, r);
      try {
        parse(s);
      } catch (e) {
        assert.ok(typed(e), `${name}: ${JSON.stringify(s.slice(0, 200))} threw an untyped ${String(e)}`);
      }
    }
  });
}

const now = Math.floor(Date.now() / 1000);
const ed = Key.generate("ed25519");
const k1 = Key.generate("secp256k1");
const envs = [ed, k1].map((k) => signEnvelope(k, { body: { text: "hi" }, aud: ed.did.did, chain_id: 31337, to: [ed.did.did] }));
const json = JSON.stringify({ payload: envs[0].split(".")[1], signatures: [{ protected: envs[0].split(".")[0], signature: envs[0].split(".")[2] }] });

fuzz("envelopes (compact and JSON)", [...envs, json], (s) => {
  const v = verifyEnvelope(s, { now });
  // What verifies must still be what a key signed: payload and sender as signed.
  assert.ok([ed.did.did, k1.did.did].includes(v.envelope.sender));
});
fuzz("audits", [signAudit(ed, { subject: k1.did.did, score: 0.5, evidence: { hash: "0x" + "ab".repeat(32), uri: "https://e.example/x" }, envelope: "id-1" })], (s) =>
  parseAuditBody(verifyEnvelope(s, { now }).envelope),
);
fuzz("cards", [ed, k1].map((k) => signCard({ did: k.did.did, name: "n", capabilities: ["a", "b:c"], endpoints: [{ kind: "mcp", url: "https://x.example/mcp" }], wallet: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", seq: 1, updated: now }, k)), (s) =>
  parseCard(s, now),
);
fuzz("log heads", [signCompact(ed, JSON.stringify({ size: 3, root: "cd".repeat(32), epoch: 1, closed: now }), "surety-sth+jws")], (s) => openHead(s, ed.did.did));
fuzz("peer bindings", [signCompact(ed, JSON.stringify({ did: ed.did.did, peerId: "12D3KooWabc" }), "surety-peer+jws")], (s) => verifyPeerBinding(s, ed.did.did, "12D3KooWabc"));
fuzz("DIDs and key ids", [ed.did.did, k1.did.did, keyId(k1.did), "did:pkh:eip155:31337:0x70997970C51812dc3A010C7d01b50e0d17dc79C8"], (s) => parseDID(s.split("#")[0]), 4000);
fuzz("key files", [ed.keyFile(), k1.keyFile()], (s) => Key.fromKeyFile(s));

const membership = signEnvelope(ed, { group_id: "team-1", body: { kind: MEMBERS_KIND, members: [k1.did.did] } });
const post = signEnvelope(k1, { group_id: "team-1", state: "discussion", body: { text: "hello" } });
fuzz("group envelopes", [membership, post], (s) => {
  const ledger = new GroupLedger(() => true);
  ledger.apply(membership, { now });
  ledger.apply(s, { now });
});

fuzz("A2A cards", [ed, k1].map((k) => signA2ACard({ did: k.did.did, name: "n", capabilities: ["a/b"], endpoints: [{ kind: "a2a", url: "https://x.example/a2a" }], wallet: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", seq: 1, updated: now }, k)), (s) =>
  parseA2ACard(s, now),
);

// A credential as the node issues one (EdDSA by an Ed25519 did:key, typ vc+jwt).
const vcPayload = { "@context": ["https://www.w3.org/ns/credentials/v2"], type: ["VerifiableCredential", "SuretyRegistrationCredential"], issuer: ed.did.did,
  validFrom: new Date((now - 10) * 1000).toISOString().replace(/\.\d+Z$/, "Z"), credentialSubject: { id: k1.did.did }, iss: ed.did.did, sub: k1.did.did };
const vcHeader = Buffer.from(JSON.stringify({ alg: "EdDSA", kid: keyId(ed.did), typ: "vc+jwt", cty: "vc" })).toString("base64url");
const vcInput = vcHeader + "." + Buffer.from(JSON.stringify(vcPayload)).toString("base64url");
const vc = vcInput + "." + Buffer.from(ed.sign(new TextEncoder().encode(vcInput))).toString("base64url");
fuzz("credentials", [vc], (s) => {
  verifyCredential(vc, { now, issuer: ed.did.did }); // the seed itself verifies
  verifyCredential(s, { now, issuer: ed.did.did });
});
