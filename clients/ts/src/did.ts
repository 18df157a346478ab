// did:key (Ed25519 0xed, secp256k1 0xe7; base58btc multibase) and did:pkh:eip155 DIDs, as
// Surety's identity package parses them (identity/did.go).

import { ed25519 } from "@noble/curves/ed25519";
import { secp256k1 } from "@noble/curves/secp256k1";
import { getAddress } from "viem";
import { base58Decode, base58Encode, concat, varintDecode, varintEncode } from "./encoding.js";

/** KeyType is an agent key's type. */
export type KeyType = "ed25519" | "secp256k1";

/** Multicodec codes of the public keys a did:key carries. */
export const CODEC_ED25519 = 0xed;
export const CODEC_SECP256K1 = 0xe7;

/** MAX_DID_LENGTH bounds a DID's text (identity/limits.go maxDIDLength). */
export const MAX_DID_LENGTH = 512;

/** Why a DID did not parse; kind matches the node's problem slug. */
export type DIDErrorKind = "invalid-did" | "unsupported-did-method" | "unsupported-key-type";

/** DIDError says which DID failed to parse and why. */
export class DIDError extends Error {
  constructor(
    readonly did: string,
    readonly kind: DIDErrorKind,
    readonly reason: string,
  ) {
    super(`${kind} ${JSON.stringify(did.slice(0, 120))}: ${reason}`);
    this.name = "DIDError";
  }
}

/** A parsed did:key. */
export interface KeyDID {
  method: "key";
  did: string;
  keyType: KeyType;
  /** The raw Ed25519 key (32 bytes) or the compressed secp256k1 key (33 bytes). */
  publicKey: Uint8Array;
}

/** A parsed did:pkh:eip155. */
export interface PkhDID {
  method: "pkh";
  did: string;
  chainId: bigint;
  /** The EIP-55 checksummed address. */
  address: `0x${string}`;
}

export type DID = KeyDID | PkhDID;

// The multicodec public key types besides Ed25519 and secp256k1: well formed, unsupported.
const OTHER_KEY_CODECS = new Set([0xe8, 0xeb, 0xec, 0x1200, 0x1201, 0x1202, 0x1203, 0x1204, 0x1205, 0x1206]);

/** parseDID parses a did:key (Ed25519 or secp256k1) or did:pkh:eip155 DID; it throws DIDError. */
export function parseDID(s: string): DID {
  const bad = (kind: DIDErrorKind, reason: string): never => {
    throw new DIDError(s, kind, reason);
  };
  if (s.length > MAX_DID_LENGTH) bad("invalid-did", `longer than ${MAX_DID_LENGTH} characters`);
  if (!s.startsWith("did:")) bad("invalid-did", 'must start with "did:"');
  const rest = s.slice(4);
  const colon = rest.indexOf(":");
  const method = colon < 0 ? rest : rest.slice(0, colon);
  const id = colon < 0 ? "" : rest.slice(colon + 1);
  if (colon < 0 || method === "" || id === "") bad("invalid-did", "must be did:<method>:<id>");
  if (!/^[a-z0-9]+$/.test(method)) bad("invalid-did", `method ${JSON.stringify(method)} must be lowercase letters and digits`);
  if (/[#?/]/.test(id)) bad("invalid-did", "a DID has no path, query or fragment (that is a DID URL)");
  if (method === "key") return parseKey(s, id);
  if (method === "pkh") return parsePkh(s, id);
  return bad("unsupported-did-method", `method ${JSON.stringify(method)} is not supported (use did:key or did:pkh)`);
}

function parseKey(s: string, id: string): KeyDID {
  const bad = (kind: DIDErrorKind, reason: string): never => {
    throw new DIDError(s, kind, reason);
  };
  if (id[0] !== "z") bad("invalid-did", "multibase must be base58btc ('z')");
  let raw: Uint8Array = new Uint8Array();
  try {
    raw = base58Decode(id.slice(1));
  } catch {
    bad("invalid-did", "not valid base58btc");
  }
  if (raw.length === 0) bad("invalid-did", "not valid base58btc");
  let codec = 0;
  let n = 0;
  try {
    [codec, n] = varintDecode(raw);
  } catch {
    bad("invalid-did", "no multicodec prefix");
  }
  const key = raw.slice(n);
  if (codec === CODEC_ED25519) {
    if (key.length !== 32) bad("invalid-did", `Ed25519 key is ${key.length} bytes, want 32`);
    try {
      ed25519.ExtendedPoint.fromHex(key);
    } catch {
      bad("invalid-did", "Ed25519 key is not a point on the curve");
    }
    return { method: "key", did: s, keyType: "ed25519", publicKey: key };
  }
  if (codec === CODEC_SECP256K1) {
    if (key.length !== 33) bad("invalid-did", `secp256k1 key is ${key.length} bytes, want 33 (compressed)`);
    try {
      secp256k1.ProjectivePoint.fromHex(key).assertValidity();
    } catch {
      bad("invalid-did", "secp256k1 key is not a point on the curve");
    }
    return { method: "key", did: s, keyType: "secp256k1", publicKey: key };
  }
  if (OTHER_KEY_CODECS.has(codec)) {
    bad("unsupported-key-type", `multicodec 0x${codec.toString(16)} is a key type Surety does not support: use Ed25519 (0xed) or secp256k1 (0xe7)`);
  }
  return bad("invalid-did", `multicodec 0x${codec.toString(16)} is not a public key type`);
}

function parsePkh(s: string, id: string): PkhDID {
  const bad = (kind: DIDErrorKind, reason: string): never => {
    throw new DIDError(s, kind, reason);
  };
  const parts = id.split(":");
  if (parts.length !== 3) bad("invalid-did", "must be did:pkh:eip155:<chainId>:<address>");
  if (parts[0] !== "eip155") bad("unsupported-did-method", `namespace ${JSON.stringify(parts[0])} is not supported (use eip155)`);
  if (!/^[1-9][0-9]{0,19}$/.test(parts[1]) || BigInt(parts[1]) >= 1n << 64n) {
    bad("invalid-did", `chain id ${JSON.stringify(parts[1])} must be a positive decimal number`);
  }
  if (!/^0x[0-9a-fA-F]{40}$/.test(parts[2])) bad("invalid-did", `address ${JSON.stringify(parts[2])} must be 0x and 40 hex digits`);
  const addr = getAddress(parts[2].toLowerCase());
  if (parts[2] !== parts[2].toLowerCase() && parts[2] !== addr) bad("invalid-did", `address ${JSON.stringify(parts[2])} has a wrong EIP-55 checksum`);
  return { method: "pkh", did: s, chainId: BigInt(parts[1]), address: addr };
}

/**
 * keyDID is the did:key of a public key: Ed25519 32 raw bytes, secp256k1 33 compressed or
 * 65 uncompressed bytes (compressed in the DID).
 */
export function keyDID(type: KeyType, pub: Uint8Array): KeyDID {
  let codec: number;
  if (type === "ed25519") {
    if (pub.length !== 32) throw new DIDError("", "unsupported-key-type", `Ed25519 public key is ${pub.length} bytes`);
    codec = CODEC_ED25519;
  } else {
    if (pub.length === 65) pub = secp256k1.ProjectivePoint.fromHex(pub).toRawBytes(true);
    if (pub.length !== 33) throw new DIDError("", "unsupported-key-type", `secp256k1 public key is ${pub.length} bytes`);
    codec = CODEC_SECP256K1;
  }
  const d = parseDID("did:key:z" + base58Encode(concat(varintEncode(codec), pub)));
  return d as KeyDID;
}

/** pkhDID is the did:pkh of an EVM account on a chain (EIP-55 address). */
export function pkhDID(chainId: bigint | number, address: string): PkhDID {
  return parseDID(`did:pkh:eip155:${BigInt(chainId)}:${getAddress(address)}`) as PkhDID;
}

/** fragment is the fragment of the DID's verification method. */
export function fragment(d: DID): string {
  return d.method === "key" ? d.did.slice("did:key:".length) : "blockchainAccountId";
}

/** keyId is the DID URL of a DID's verification method: the kid its JWSs carry. */
export function keyId(d: DID): string {
  return d.did + "#" + fragment(d);
}

/** parseKeyId splits a DID URL (a kid) into its DID and fragment; it throws DIDError. */
export function parseKeyId(kid: string): { did: DID; fragment: string } {
  const i = kid.indexOf("#");
  if (i < 0 || i === kid.length - 1) throw new DIDError(kid, "invalid-did", "a key id is a DID URL with a #fragment");
  return { did: parseDID(kid.slice(0, i)), fragment: kid.slice(i + 1) };
}
