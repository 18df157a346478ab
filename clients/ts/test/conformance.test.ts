// Every conformance vector of every kind this client knows (testdata/conformance/<kind>/*.json,
// made by the Go generators in internal/conformance): the client must reach the same verdict
// as the Go code, derive the same facts, and refuse for the same reason (the node's problem
// type, or the client-only reason slug). SURETY_CONFORMANCE_DIR points elsewhere.

import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { hashTypedData } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import {
  AuditError,
  BindingError,
  CardError,
  DIDError,
  Key,
  PROBLEM_BASE,
  PeerBindingError,
  ProofError,
  VerifyError,
  agentId,
  hex,
  keyId,
  openHead,
  parseAuditBody,
  parseCard,
  parseDID,
  typedData,
  unhex,
  verifyBinding,
  verifyEnvelope,
  verifyPeerBinding,
  WrongRegistryError,
  signCompact,
  ENVELOPE_TYPE,
  CARD_TYPE,
  BINDING_TYPE,
  openCheckpoint,
  verifyCredential,
  checkCredentialStatus,
  decodeStatusList,
  statusBit,
  CredentialError,
  parseA2ACard,
  decodeA2ACard,
  signAgentCard,
  verifyServedA2ACard,
  GroupLedger,
  GroupError,
  verifyConsistency,
  verifyInclusion,
  type Binding,
} from "../src/index.js";
import { getAddress } from "viem";
import { repoDir } from "./paths.js";

const dir = process.env.SURETY_CONFORMANCE_DIR ?? join(repoDir, "testdata/conformance");

interface Vector {
  kind: string;
  description: string;
  input: unknown;
  context?: { now?: number; aud?: string; chain_id?: number; registry?: string; revoked?: string[]; seen?: string[]; node?: string; peer?: string; origin?: string; bound?: string[]; accepted?: string[]; status_list?: string };
  expect: { valid: boolean; problem?: string; reason?: string; [fact: string]: unknown };
}

type Facts = Record<string, unknown>;

/** The verdict: facts when valid, else what the error maps to (a problem type or a reason). */
type Checker = (v: Vector) => Promise<Facts>;

const checkers: Record<string, Checker> = {
  async key(v) {
    const { type, seed } = v.input as { type: "ed25519" | "secp256k1"; seed: string };
    const k = Key.fromSeed(type, unhex(seed));
    const f: Facts = { did: k.did.did, kid: k.kid, publicKeyMultibase: k.did.did.slice("did:key:".length), publicKey: hex(k.did.publicKey), jwk: k.publicJwk(), alg: k.alg };
    if (type === "secp256k1") f.address = privateKeyToAccount(`0x${seed}`).address;
    return f;
  },
  async did(v) {
    const d = parseDID(v.input as string);
    if (d.method === "key") return { method: "key", keyType: d.keyType, publicKey: hex(d.publicKey) };
    return { method: "pkh", chainId: Number(d.chainId), address: d.address };
  },
  async envelope(v) {
    const c = v.context ?? {};
    const raw = typeof v.input === "string" ? v.input : JSON.stringify(v.input);
    const ok = verifyEnvelope(raw, { now: c.now, aud: c.aud, chainId: c.chain_id, revoked: c.revoked, seen: c.seen });
    return { sender: ok.envelope.sender, id: ok.envelope.id, signers: ok.signers };
  },
  async audit(v) {
    const c = v.context ?? {};
    const ok = verifyEnvelope(v.input as string, { now: c.now, revoked: c.revoked, seen: c.seen });
    const a = parseAuditBody(ok.envelope);
    const target = a.bounty ? `bounty:${a.bounty.chain_id}:${a.bounty.escrow.toLowerCase()}:${a.bounty.id}` : `envelope:${a.envelope}`;
    return { auditor: a.auditor, subject: a.subject, score: a.score, target, time: a.time };
  },
  async binding(v) {
    const c = v.context ?? {};
    const b = v.input as Binding;
    await verifyBinding(b, { chainId: c.chain_id, registry: c.registry });
    const s = b.statement;
    if (c.revoked?.includes(s.did)) throw new Refused(PROBLEM_BASE + "envelope-revoked");
    return { did: s.did, wallet: getAddress(s.wallet), agentId: agentId(s.did), digest: hashTypedData(typedData(s)) };
  },
  async card(v) {
    const { card } = parseCard(v.input as string, v.context?.now);
    return { did: card.did, name: card.name, seq: card.seq, wallet: getAddress(card.wallet), capabilities: card.capabilities };
  },
  async "log-head"(v) {
    const h = openHead(v.input as string, v.context?.node ?? "");
    return { size: h.size, root: h.root, epoch: h.epoch, closed: h.closed, signer: h.signer };
  },
  async group(v) {
    const c = v.context ?? {};
    const ledger = new GroupLedger((did) => (c.bound ?? []).includes(did));
    for (const [i, raw] of (c.accepted ?? []).entries()) {
      try {
        ledger.apply(raw, { now: c.now });
      } catch (e) {
        throw new Error(`accepted envelope ${i}: ${(e as Error).message}`);
      }
    }
    const r = ledger.apply(v.input as string, { now: c.now });
    return "seq" in r ? { group: r.group, sender: r.sender, seq: r.seq } : { group: r.id, creator: r.creator, members: r.members };
  },
  async "a2a-card"(v) {
    const c = v.context ?? {};
    if (c.node) {
      const { did } = verifyServedA2ACard(v.input as string, c.node);
      return { signer: c.node, did };
    }
    const { card, signer } = parseA2ACard(v.input as string, c.now);
    return { did: card.did, name: card.name, seq: card.seq, wallet: getAddress(card.wallet), capabilities: card.capabilities, signer };
  },
  async credential(v) {
    const c = v.context ?? {};
    const cred = verifyCredential(v.input as string, { now: c.now, issuer: c.node });
    let status = "none";
    if (cred.credential.credentialStatus) {
      let list;
      try {
        list = verifyCredential(String(c.status_list ?? ""), { now: c.now, issuer: cred.credential.issuer });
      } catch (e) {
        throw new Refused(PROBLEM_BASE + "credential-status");
      }
      checkCredentialStatus(cred, list);
      status = "active";
    }
    const subj = cred.credential.credentialSubject;
    const type = cred.credential.type.filter((t) => t !== "VerifiableCredential").at(-1) ?? "";
    const f: Facts = { issuer: cred.credential.issuer, subject: subj.id ?? "", type, validFrom: cred.credential.validFrom, validUntil: cred.credential.validUntil ?? "", status };
    if (cred.credential.type.includes("SuretyStakeCredential")) Object.assign(f, { wallet: subj.wallet, amount: subj.amount, chainId: subj.chainId, block: subj.blockNumber });
    return f;
  },
  async "status-list"(v) {
    const c = v.context ?? {};
    const list = verifyCredential(v.input as string, { now: c.now, issuer: c.node });
    if (!list.credential.type.includes("BitstringStatusListCredential")) throw new Refused(PROBLEM_BASE + "credential-malformed");
    const subj = list.credential.credentialSubject as { statusPurpose?: string; encodedList?: string };
    const bits = decodeStatusList(String(subj.encodedList ?? ""));
    const set: number[] = [];
    for (let i = 0; i < bits.length * 8; i++) if (statusBit(bits, i)) set.push(i);
    return { id: list.credential.id, statusPurpose: subj.statusPurpose, bits: bits.length * 8, set };
  },
  async "log-proof"(v) {
    const p = v.input as { type: string; leaf: string; index?: number; size: number; path: string[]; root: string; from: number; to: number; fromRoot: string; toRoot: string };
    if (p.type === "inclusion") verifyInclusion(p.leaf, { index: p.index ?? 0, size: p.size, path: p.path ?? [] }, p.size, p.root);
    else if (p.type === "consistency") verifyConsistency(p.from ?? 0, p.to ?? 0, p.fromRoot, p.toRoot, p.path ?? []);
    else throw new Error(`log-proof type ${p.type}`);
    return {};
  },
  async checkpoint(v) {
    const c = openCheckpoint(v.input as string, v.context?.origin ?? "", v.context?.node ?? "");
    return { origin: c.origin, size: c.size, root: c.root };
  },
  async "peer-binding"(v) {
    const b = verifyPeerBinding(v.input as string, v.context?.node ?? "", v.context?.peer ?? "");
    return { did: b.did, peerId: b.peerId };
  },
};

class Refused extends Error {
  constructor(readonly verdict: string) {
    super(verdict);
  }
}

/** verdictOf maps a client error to the vector's problem type or reason slug. */
function verdictOf(e: unknown): string {
  if (e instanceof Refused) return e.verdict;
  if (e instanceof VerifyError || e instanceof CardError || e instanceof AuditError || e instanceof BindingError || e instanceof WrongRegistryError || e instanceof GroupError || e instanceof CredentialError) return e.problem;
  if (e instanceof DIDError) return PROBLEM_BASE + e.kind;
  if (e instanceof ProofError || e instanceof PeerBindingError) return e.reason;
  throw e; // anything else is a bug, not a verdict
}

/** For client-only kinds a VerifyError maps to its reason, not a problem type. */
function reasonOf(kind: string, e: unknown): string {
  if (kind === "peer-binding" && e instanceof VerifyError) return e.reason;
  return verdictOf(e);
}

const kinds = existsSync(dir) ? readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort() : [];

test("conformance: the vectors are there", { skip: kinds.length === 0 ? `no vectors at ${dir} yet` : false }, () => {
  const unknown = kinds.filter((k) => !(k in checkers));
  // Kinds other helpers add (a2a-card, credential, status-list) are named, not silently passed.
  if (unknown.length > 0) console.log(`# conformance: kinds this client does not check: ${unknown.join(", ")}`);
  for (const k of Object.keys(checkers)) assert.ok(kinds.includes(k), `no vectors of kind ${k}`);
});

for (const kind of kinds.filter((k) => k in checkers)) {
  const files = readdirSync(join(dir, kind)).filter((f) => f.endsWith(".json")).sort();
  test(`conformance: ${kind} (${files.length} vectors)`, async (t) => {
    assert.ok(files.length > 0);
    for (const f of files) {
      await t.test(f, async () => {
        const v = JSON.parse(readFileSync(join(dir, kind, f), "utf8")) as Vector;
        assert.equal(v.kind, kind);
        let facts: Facts | undefined;
        let refused: string | undefined;
        try {
          facts = await checkers[kind](v);
        } catch (e) {
          refused = reasonOf(kind, e);
          if (v.expect.valid) throw e;
        }
        if (v.expect.valid) {
          for (const [name, want] of Object.entries(v.expect)) {
            if (name === "valid") continue;
            assert.ok(facts && name in facts, `${v.description}: the client derives no ${name}`);
            assert.deepEqual(facts[name], want, `${v.description}: ${name}`);
          }
        } else {
          assert.ok(refused !== undefined, `${v.description}: accepted, want ${v.expect.problem ?? v.expect.reason}`);
          assert.equal(refused, v.expect.problem ?? v.expect.reason, v.description);
        }
      });
    }
  });
}

// The client signs as Go does: each valid envelope, card and binding whose signer is a
// fixture key (the key vectors publish their seeds) is re-signed here from its payload, and
// must come out as the same bytes (Ed25519, and ES256K with RFC 6979 nonces, are
// deterministic).
test("conformance: the client signs the valid vectors' payloads to the same bytes", { skip: kinds.length === 0 ? `no vectors at ${dir} yet` : false }, () => {
  const keys = new Map<string, Key>();
  for (const f of readdirSync(join(dir, "key"))) {
    const v = JSON.parse(readFileSync(join(dir, "key", f), "utf8")) as Vector;
    const { type, seed } = v.input as { type: "ed25519" | "secp256k1"; seed: string };
    const k = Key.fromSeed(type, unhex(seed));
    keys.set(k.kid, k);
  }
  let resigned = 0;
  const resign = (jws: string, typ: string) => {
    const [h, p] = jws.split(".");
    const kid = JSON.parse(Buffer.from(h, "base64url").toString()).kid as string;
    const k = keys.get(kid);
    if (!k) return;
    assert.equal(signCompact(k, Buffer.from(p, "base64url"), typ), jws, `re-signed by ${kid}`);
    resigned++;
  };
  for (const [kind, typ] of [["envelope", ENVELOPE_TYPE], ["card", CARD_TYPE], ["audit", ENVELOPE_TYPE], ["binding", BINDING_TYPE]] as const) {
    for (const f of readdirSync(join(dir, kind))) {
      const v = JSON.parse(readFileSync(join(dir, kind, f), "utf8")) as Vector;
      if (!v.expect.valid) continue;
      if (typeof v.input === "string") resign(v.input, typ);
      else if (kind === "binding") resign((v.input as Binding).agentJws, typ);
    }
  }
  // A2A cards: the valid registered ones, stripped of their signature and signed again.
  for (const f of readdirSync(join(dir, "a2a-card"))) {
    const v = JSON.parse(readFileSync(join(dir, "a2a-card", f), "utf8")) as Vector;
    if (!v.expect.valid || v.context?.node) continue;
    const { card } = decodeA2ACard(v.input as string);
    const sig = card.signatures![0];
    const k = keys.get(JSON.parse(Buffer.from(sig.protected, "base64url").toString()).kid);
    if (!k) continue;
    const again = signAgentCard({ ...card, signatures: [] }, k);
    assert.equal(decodeA2ACard(again).card.signatures![0].signature, sig.signature, `${f} re-signed`);
    resigned++;
  }
  assert.ok(resigned >= 8, `re-signed ${resigned} vectors`);
});
