// DIDs and keys: the did:key forms Surety accepts and refuses, key files, and signatures.

import assert from "node:assert/strict";
import { mkdtemp, readFile, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { DIDError, Key, base58Decode, base58Encode, keyDID, parseDID, parseKeyId, pkhDID, unb64url, verifySignature } from "../src/index.js";

test("did: a generated key's DID parses back to its key, for both key types", () => {
  for (const type of ["ed25519", "secp256k1"] as const) {
    const k = Key.generate(type);
    const d = parseDID(k.did.did);
    assert.equal(d.method, "key");
    assert.ok(d.method === "key" && d.keyType === type);
    assert.ok(k.did.did.startsWith(type === "ed25519" ? "did:key:z6Mk" : "did:key:zQ3s"));
    const { did, fragment } = parseKeyId(k.kid);
    assert.equal(did.did, k.did.did);
    assert.equal(fragment, k.did.did.slice(8));
  }
});

test("did: malformed and unsupported DIDs are refused with the node's kind", () => {
  const cases: [string, string][] = [
    ["did:key:z6Mk", "invalid-did"],
    ["did:key:Q6Mk", "invalid-did"], // not base58btc multibase
    ["did:key:z6Mk0OIl", "invalid-did"], // not in the base58 alphabet
    ["did:KEY:z6Mk", "invalid-did"],
    ["did:web:example.com", "unsupported-did-method"],
    ["did:pkh:solana:1:abc", "unsupported-did-method"],
    ["did:pkh:eip155:0:0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "invalid-did"],
    ["did:pkh:eip155:1:0x70997970C51812dc3A010C7d01b50e0d17dc79c8", "invalid-did"], // wrong checksum
    ["did:key:" + "z".repeat(600), "invalid-did"],
    ["not a did", "invalid-did"],
  ];
  for (const [s, kind] of cases) {
    assert.throws(() => parseDID(s), (e: unknown) => e instanceof DIDError && e.kind === kind, s);
  }
  // A P-256 did:key (multicodec 0x1200) is well formed, and unsupported.
  const p256 = "did:key:z" + base58Encode(new Uint8Array([0x80, 0x24, 2, ...new Uint8Array(32).fill(7)]));
  assert.throws(() => parseDID(p256), (e: unknown) => e instanceof DIDError && e.kind === "unsupported-key-type");
  // An Ed25519 key that is not a curve point.
  const off = "did:key:z" + base58Encode(new Uint8Array([0xed, 0x01, ...new Uint8Array(32).fill(0xff)]));
  assert.throws(() => parseDID(off), (e: unknown) => e instanceof DIDError && e.kind === "invalid-did");
});

test("did: did:pkh keeps the EIP-55 address; lowercase is accepted", () => {
  const d = pkhDID(31337, "0x70997970c51812dc3a010c7d01b50e0d17dc79c8");
  assert.equal(d.did, "did:pkh:eip155:31337:0x70997970C51812dc3A010C7d01b50e0d17dc79C8");
  const lower = parseDID("did:pkh:eip155:1:0x70997970c51812dc3a010c7d01b50e0d17dc79c8");
  assert.ok(lower.method === "pkh" && lower.address === "0x70997970C51812dc3A010C7d01b50e0d17dc79C8");
});

test("did: an uncompressed secp256k1 key makes the same did:key as its compressed form", () => {
  const k = Key.generate("secp256k1");
  const jwk = k.publicJwk();
  const raw = new Uint8Array([4, ...unb64url(jwk.x), ...unb64url(jwk.y!)]);
  assert.equal(keyDID("secp256k1", raw).did, k.did.did);
});

test("base58: round trips, leading zeros kept", () => {
  for (const b of [new Uint8Array([]), new Uint8Array([0, 0, 1]), new Uint8Array([255, 254, 0, 3]), new Uint8Array(40).fill(9)]) {
    assert.deepEqual(base58Decode(base58Encode(b)), b);
  }
});

test("keys: save writes a 0600 key file that loads as the same key, and never overwrites", async () => {
  const dir = await mkdtemp(join(tmpdir(), "surety-key-"));
  for (const type of ["ed25519", "secp256k1"] as const) {
    const k = Key.generate(type);
    const path = join(dir, `${type}.json`);
    await k.save(path);
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    assert.ok((await Key.load(path)).equals(k));
    assert.equal(await readFile(path, "utf8"), k.keyFile());
    await assert.rejects(Key.generate(type).save(path), /EEXIST/);
  }
});

test("keys: ES256K signatures are 64 bytes with low S, and verify; another key's do not", () => {
  const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
  const k = Key.generate("secp256k1");
  for (let i = 0; i < 20; i++) {
    const msg = new TextEncoder().encode(`message ${i}`);
    const sig = k.sign(msg);
    assert.equal(sig.length, 64);
    const s = BigInt("0x" + Buffer.from(sig.slice(32)).toString("hex"));
    assert.ok(s <= n / 2n, "low S");
    assert.ok(verifySignature(k.did, msg, sig));
    // The high-S twin verifies too, as the Go verifier takes it.
    const high = new Uint8Array(sig);
    high.set(Buffer.from((n - s).toString(16).padStart(64, "0"), "hex"), 32);
    assert.ok(verifySignature(k.did, msg, high));
    assert.ok(!verifySignature(Key.generate("secp256k1").did, msg, sig));
  }
});
