// The audit log's proofs, checked without trusting the node (reputation/merkle,
// reputation/verify): RFC 6962 leaf and node hashes, inclusion proofs, and the node's signed
// tree head (a compact JWS of typ surety-sth+jws by the node's did:key).

import { createHash } from "node:crypto";
import { hex, unhex, utf8 } from "./encoding.js";
import { VerifyError, checkSignature, parseCompact } from "./jws.js";

/** HEAD_TYPE is the typ of a signed tree head. */
export const HEAD_TYPE = "surety-sth+jws";
/** MAX_HEAD_SIZE bounds a signed head (reputation/verify/limits.go). */
export const MAX_HEAD_SIZE = 16 << 10;

/** ProofError: a proof or head that does not check out. */
export class ProofError extends Error {
  constructor(
    message: string,
    /**
     * For a head: wrong-type, wrong-signer, bad-signature, unsupported-key or malformed; for a
     * checkpoint also no-signature and wrong-origin; for a proof: proof-invalid (it does not
     * lead to the root), proof-shape (wrong length, impossible position) or proof-mismatch
     * (a proof of another leaf or tree).
     */
    readonly reason:
      | "wrong-type" | "wrong-signer" | "bad-signature" | "unsupported-key" | "malformed" | "no-signature" | "wrong-origin"
      | "proof-invalid" | "proof-shape" | "proof-mismatch" = "proof-invalid",
  ) {
    super(message);
    this.name = "ProofError";
  }
}

const sha = (...parts: Uint8Array[]) => {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
};

/** leafHash is SHA-256(0x00 || leaf), in hex as the node writes hashes. */
export function leafHash(leaf: Uint8Array | string): string {
  const b = typeof leaf === "string" ? utf8(leaf.trim()) : leaf;
  return hex(sha(new Uint8Array([0]), b));
}

function nodeHash(l: Uint8Array, r: Uint8Array): Uint8Array {
  return sha(new Uint8Array([1]), l, r);
}

function hash32(h: string, what: string): Uint8Array {
  let b: Uint8Array;
  try {
    b = unhex(String(h));
  } catch {
    throw new ProofError(`${what} is not 32 bytes of hex`, "malformed");
  }
  if (b.length !== 32) throw new ProofError(`${what} is not 32 bytes of hex`, "malformed");
  return b;
}

/** InclusionProof is the node's answer at GET /v1/log/proof/inclusion. */
export interface InclusionProof {
  leaf?: string;
  /** Absent means 0 (the node omits a zero index). */
  index?: number;
  size: number;
  path: string[];
}

/**
 * verifyInclusion checks that leaf (hex) is at proof.index in the tree of size whose root is
 * root (hex): RFC 9162 §2.1.3.2. It throws ProofError.
 */
export function verifyInclusion(leaf: string, proof: InclusionProof, size: number, root: string): void {
  if (proof.leaf && proof.leaf.toLowerCase() !== leaf.toLowerCase()) throw new ProofError(`a proof of leaf ${proof.leaf}, not ${leaf}`, "proof-mismatch");
  if (proof.size !== size) throw new ProofError(`a proof in the tree of size ${proof.size}, not ${size}`, "proof-mismatch");
  const index = proof.index ?? 0;
  const path = proof.path ?? [];
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) throw new ProofError(`leaf ${index} in a tree of size ${size}`, "proof-shape");
  let fn = BigInt(index);
  let sn = BigInt(size - 1);
  let r = hash32(leaf, "leaf");
  for (const p of path) {
    const ph = hash32(p, "proof hash");
    if (sn === 0n) throw new ProofError(`${path.length} hashes, too many for leaf ${index} of ${size}`, "proof-shape");
    if ((fn & 1n) === 1n || fn === sn) {
      r = nodeHash(ph, r);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      r = nodeHash(r, ph);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  if (sn !== 0n) throw new ProofError(`${path.length} hashes, too few for leaf ${index} of ${size}`, "proof-shape");
  if (hex(r) !== hex(hash32(root, "root"))) throw new ProofError("the proof does not match the root", "proof-invalid");
}

/**
 * verifyConsistency checks that the tree of size m with root rootM is a prefix of the tree
 * of size n with root rootN (RFC 9162 §2.1.4.2; hashes in hex). It throws ProofError.
 */
export function verifyConsistency(m: number, n: number, rootM: string, rootN: string, path: string[]): void {
  const shape = (msg: string): never => {
    throw new ProofError(msg, "proof-shape");
  };
  const rm = hash32(rootM, "old root");
  const rn = hash32(rootN, "new root");
  if (!Number.isSafeInteger(m) || !Number.isSafeInteger(n) || m < 0) shape(`sizes ${m} and ${n}`);
  if (m > n) shape(`from size ${m} to the smaller ${n}`);
  if (m === n) {
    if (path.length !== 0) shape("equal sizes take an empty proof");
    if (hex(rm) !== hex(rn)) throw new ProofError("the proof does not match the roots", "proof-invalid");
    return;
  }
  if (m === 0) {
    if (path.length !== 0) shape("from the empty tree takes an empty proof");
    return;
  }
  if (path.length === 0) shape(`empty proof from ${m} to ${n}`);
  let proof = path.map((h) => hash32(h, "proof hash"));
  const bm = BigInt(m);
  // When m is a power of two, the old root is the first hash the proof leaves out.
  if ((bm & (bm - 1n)) === 0n) proof = [rm, ...proof];
  let fn = bm - 1n;
  let sn = BigInt(n) - 1n;
  while ((fn & 1n) === 1n) {
    fn >>= 1n;
    sn >>= 1n;
  }
  let fr = proof[0];
  let sr = proof[0];
  for (const c of proof.slice(1)) {
    if (sn === 0n) shape(`${proof.length} hashes, too many from ${m} to ${n}`);
    if ((fn & 1n) === 1n || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  if (sn !== 0n) shape(`${proof.length} hashes, too few from ${m} to ${n}`);
  if (hex(fr) !== hex(rm) || hex(sr) !== hex(rn)) throw new ProofError("the proof does not match the roots", "proof-invalid");
}

/** Head is a tree head whose signature verified. */
export interface Head {
  size: number;
  root: string;
  epoch: number;
  closed: number;
  /** The DID that signed it. */
  signer: string;
}

/**
 * openHead verifies signed (the "signed" field of GET /v1/log/head): a JWS of typ
 * surety-sth+jws by node's did:key (any did:key when node is ""), and returns the head it
 * signed. Use these fields, not the unsigned ones beside "signed".
 */
export function openHead(signed: string, node: string): Head {
  if (signed.length > MAX_HEAD_SIZE) throw new ProofError(`head larger than ${MAX_HEAD_SIZE} bytes`, "malformed");
  let sigs, payload;
  try {
    ({ sigs, payload } = parseCompact(signed));
  } catch (e) {
    throw new ProofError(`head: ${(e as Error).message}`, "malformed");
  }
  const h = sigs[0].header;
  if (h.typ !== HEAD_TYPE) throw new ProofError(`not a signed tree head: typ ${JSON.stringify(h.typ)}`, "wrong-type");
  const kid = String(h.kid ?? "");
  if (node && kid.split("#")[0] !== node) throw new ProofError(`the head is signed by ${kid.split("#")[0].slice(0, 80)}, not ${node}`, "wrong-signer");
  let did: string;
  try {
    did = checkSignature(sigs[0]).did;
  } catch (e) {
    const r = e instanceof VerifyError ? e.reason : "malformed";
    throw new ProofError(`head: ${(e as Error).message}`, r === "bad-signature" ? "bad-signature" : r === "unsupported-alg" ? "unsupported-key" : "malformed");
  }
  let body: { size?: unknown; root?: unknown; epoch?: unknown; closed?: unknown };
  try {
    body = JSON.parse(Buffer.from(payload).toString("utf8"));
  } catch {
    throw new ProofError("head payload is not JSON", "malformed");
  }
  if (typeof body?.size !== "number" || typeof body.root !== "string") throw new ProofError("head payload has no size or root", "malformed");
  try {
    hash32(body.root, "root");
  } catch (e) {
    throw new ProofError((e as Error).message, "malformed");
  }
  return { size: body.size, root: body.root.toLowerCase(), epoch: Number(body.epoch ?? 0), closed: Number(body.closed ?? 0), signer: did };
}
