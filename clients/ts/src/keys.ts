// Agent keys: Ed25519 or secp256k1, the did:key each controls, and the key file the Go CLI
// reads and writes (`surety did new`): a private JWK whose kid is the key's DID URL
// (identity/keys.go).

import { createHash, randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { ed25519 } from "@noble/curves/ed25519";
import { secp256k1 } from "@noble/curves/secp256k1";
import { type KeyDID, type KeyType, keyDID, keyId } from "./did.js";
import { b64url, equalBytes, unb64url } from "./encoding.js";

/** The JWS algorithm of each key type. */
export type Alg = "EdDSA" | "ES256K";

/** KeyFileError reports a key file that cannot be read as a private key. */
export class KeyFileError extends Error {
  constructor(reason: string) {
    super(`bad key file: ${reason}`);
    this.name = "KeyFileError";
  }
}

/** The on-disk form of a key: a private JWK (RFC 7517; secp256k1 per RFC 8812). */
export interface KeyFile {
  kty: "OKP" | "EC";
  crv: "Ed25519" | "secp256k1";
  d: string;
  x: string;
  y?: string;
  kid: string;
}

/** Key is an agent's private key and the did:key it controls. */
export class Key {
  /** The did:key this key controls. */
  readonly did: KeyDID;

  private constructor(
    readonly type: KeyType,
    private readonly secret: Uint8Array,
  ) {
    const pub = type === "ed25519" ? ed25519.getPublicKey(secret) : secp256k1.getPublicKey(secret, true);
    this.did = keyDID(type, pub);
  }

  /** generate makes a new random key. */
  static generate(type: KeyType = "ed25519"): Key {
    for (;;) {
      const seed = new Uint8Array(randomBytes(32));
      if (type === "ed25519" || secp256k1.utils.isValidPrivateKey(seed)) return new Key(type, seed);
    }
  }

  /**
   * fromSeed derives a key from 32 bytes: the Ed25519 seed (RFC 8032) or the secp256k1
   * private scalar, as identity.KeyFromSeed does.
   */
  static fromSeed(type: KeyType, seed: Uint8Array): Key {
    if (seed.length !== 32) throw new KeyFileError(`seed is ${seed.length} bytes, want 32`);
    if (type === "secp256k1" && !secp256k1.utils.isValidPrivateKey(seed)) throw new KeyFileError("not a secp256k1 private key");
    if (type !== "ed25519" && type !== "secp256k1") throw new KeyFileError(`key type ${JSON.stringify(type)} (use ed25519 or secp256k1)`);
    return new Key(type, Uint8Array.from(seed));
  }

  /**
   * fromKeyFile reads a private JWK written by `surety did new` (or any Ed25519/secp256k1
   * private JWK). Public parts and kid, when present, must match the private key.
   */
  static fromKeyFile(text: string | Uint8Array): Key {
    let f: Partial<KeyFile>;
    try {
      f = JSON.parse(typeof text === "string" ? text : Buffer.from(text).toString("utf8"));
    } catch (e) {
      throw new KeyFileError(`not a JSON Web Key: ${(e as Error).message}`);
    }
    if (f === null || typeof f !== "object") throw new KeyFileError("not a JSON Web Key");
    let type: KeyType;
    if (f.kty === "OKP" && f.crv === "Ed25519") type = "ed25519";
    else if (f.kty === "EC" && f.crv === "secp256k1") type = "secp256k1";
    else throw new KeyFileError(`kty ${JSON.stringify(f.kty)} crv ${JSON.stringify(f.crv)} is not an Ed25519 or secp256k1 key`);
    let seed: Uint8Array;
    try {
      seed = unb64url(String(f.d ?? ""));
    } catch {
      throw new KeyFileError('"d" must be 32 bytes of base64url');
    }
    if (seed.length !== 32) throw new KeyFileError('"d" must be 32 bytes of base64url');
    const k = Key.fromSeed(type, seed);
    if (f.x) {
      const jwk = k.publicJwk();
      if (jwk.x !== f.x || (jwk.y ?? "") !== (f.y ?? "")) throw new KeyFileError("public key does not match the private key");
    }
    if (f.kid && f.kid !== k.kid && f.kid !== k.did.did) throw new KeyFileError(`kid ${JSON.stringify(f.kid)} is not this key's DID`);
    return k;
  }

  /** load reads a key file. */
  static async load(path: string): Promise<Key> {
    return Key.fromKeyFile(await readFile(path, "utf8"));
  }

  /** The DID URL of the key: the kid of its JWSs. */
  get kid(): string {
    return keyId(this.did);
  }

  /** The JWS algorithm the key signs with. */
  get alg(): Alg {
    return this.type === "ed25519" ? "EdDSA" : "ES256K";
  }

  /** seed returns the 32 bytes the key derives from (a secret). */
  seed(): Uint8Array {
    return Uint8Array.from(this.secret);
  }

  /** publicJwk is the key's public JWK, as identity.DID.JWK writes it. */
  publicJwk(): { kty: "OKP" | "EC"; crv: "Ed25519" | "secp256k1"; x: string; y?: string } {
    if (this.type === "ed25519") return { kty: "OKP", crv: "Ed25519", x: b64url(this.did.publicKey) };
    const raw = secp256k1.ProjectivePoint.fromHex(this.did.publicKey).toRawBytes(false);
    return { kty: "EC", crv: "secp256k1", x: b64url(raw.slice(1, 33)), y: b64url(raw.slice(33)) };
  }

  /** keyFile is the key as the Go CLI writes it: indented JSON, a newline at the end. */
  keyFile(): string {
    const jwk = this.publicJwk();
    const f: KeyFile = { kty: jwk.kty, crv: jwk.crv, d: b64url(this.secret), x: jwk.x, ...(jwk.y ? { y: jwk.y } : {}), kid: this.kid };
    return JSON.stringify(f, null, 2) + "\n";
  }

  /** save writes the key file with mode 0600; an existing file is never overwritten. */
  async save(path: string): Promise<void> {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, this.keyFile(), { mode: 0o600, flag: "wx" });
  }

  /**
   * sign signs a JWS signing input: Ed25519 (RFC 8032), or ES256K as RFC 8812 has it
   * (ECDSA over SHA-256 of the input, R || S, 64 bytes, low S, deterministic per RFC 6979).
   */
  sign(input: Uint8Array): Uint8Array {
    if (this.type === "ed25519") return ed25519.sign(input, this.secret);
    return secp256k1.sign(sha256(input), this.secret, { lowS: true }).toCompactRawBytes();
  }

  /** equals reports whether two keys are the same key. */
  equals(other: Key): boolean {
    return this.type === other.type && equalBytes(this.secret, other.secret);
  }
}

/** sha256 of bytes. */
export function sha256(data: Uint8Array): Uint8Array {
  return new Uint8Array(createHash("sha256").update(data).digest());
}

/**
 * verifySignature checks a JWS signature by a did:key over input. ES256K accepts a high-S
 * signature as the Go verifier does (by its low-S twin); Ed25519 is RFC 8032's strict check.
 */
export function verifySignature(did: KeyDID, input: Uint8Array, sig: Uint8Array): boolean {
  try {
    if (did.keyType === "ed25519") return sig.length === 64 && ed25519.verify(sig, input, did.publicKey, { zip215: false });
    if (sig.length !== 64) return false;
    return secp256k1.verify(sig, sha256(input), did.publicKey, { lowS: false });
  } catch {
    return false;
  }
}
