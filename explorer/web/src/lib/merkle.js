// The audit log's Merkle tree as the browser checks it: RFC 6962 hashing (leaf =
// SHA-256(0x00 ‖ bytes), node = SHA-256(0x01 ‖ left ‖ right)) with WebCrypto's SHA-256, and
// the inclusion and consistency proof checks of RFC 9162 §2.1.3.2 and §2.1.4.2, the ones
// reputation/merkle's VerifyInclusion and VerifyConsistency run. Nothing here trusts the
// node: a proof either leads to the root given or it does not.
//
// Hashes are 32-byte Uint8Arrays; hex() and fromHex() convert the node's hex form. Sizes and
// indices are taken as numbers, bigints or decimal strings and handled as BigInt, so a log
// past 2^53 leaves checks the same.

const subtle = globalThis.crypto && globalThis.crypto.subtle;

/** ProofError says why a proof does not check: kind "shape" (wrong length, impossible
 * position) or "invalid" (it leads to another root). */
export class ProofError extends Error {
  constructor(kind, message) {
    super(message);
    this.name = 'ProofError';
    this.kind = kind;
  }
}

/** hex writes bytes as lower-case hex. */
export function hex(bytes) {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

/** fromHex reads a 32-byte hash from hex (an optional 0x prefix allowed). */
export function fromHex(s) {
  if (typeof s !== 'string') throw new ProofError('shape', 'a hash must be a hex string');
  const h = s.startsWith('0x') ? s.slice(2) : s;
  if (h.length !== 64 || !/^[0-9a-fA-F]*$/.test(h)) {
    throw new ProofError('shape', `not a 32-byte hex hash: ${s.slice(0, 80)}`);
  }
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = parseInt(h.slice(2 * i, 2 * i + 2), 16);
  return out;
}

async function sha256(...parts) {
  if (!subtle) throw new Error('WebCrypto (crypto.subtle) is not available: open the page over http://localhost or https');
  let n = 0;
  for (const p of parts) n += p.length;
  const buf = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    buf.set(p, at);
    at += p.length;
  }
  return new Uint8Array(await subtle.digest('SHA-256', buf));
}

const LEAF = Uint8Array.of(0);
const NODE = Uint8Array.of(1);

/** leafHash is the RFC 6962 hash of a leaf's bytes: SHA-256(0x00 ‖ bytes). */
export function leafHash(bytes) {
  return sha256(LEAF, bytes);
}

/** nodeHash is the RFC 6962 hash of an interior node: SHA-256(0x01 ‖ left ‖ right). */
export function nodeHash(left, right) {
  return sha256(NODE, left, right);
}

/** emptyRoot is the root of the empty tree, SHA-256 of nothing. */
export function emptyRoot() {
  return sha256();
}

function big(x, name) {
  let v;
  try {
    v = BigInt(x);
  } catch {
    throw new ProofError('shape', `${name} is not a whole number: ${String(x).slice(0, 40)}`);
  }
  if (v < 0n) throw new ProofError('shape', `${name} is negative`);
  return v;
}

function equal(a, b) {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a[i] ^ b[i];
  return d === 0;
}

/** rootOf is the Merkle tree hash of a list of leaf hashes (MTH of RFC 6962 §2.1), so a page
 * can rebuild a log's root from the leaves it read. Iterative: each level pairs its hashes,
 * and an odd one out is carried up unchanged, which gives the same tree as splitting at the
 * largest power of two. */
export async function rootOf(leaves) {
  if (leaves.length === 0) return emptyRoot();
  let level = leaves.slice();
  while (level.length > 1) {
    const up = [];
    for (let i = 0; i + 1 < level.length; i += 2) up.push(await nodeHash(level[i], level[i + 1]));
    if (level.length % 2 === 1) up.push(level[level.length - 1]);
    level = up;
  }
  return level[0];
}

/** verifyInclusion checks that leaf (a leaf hash) is entry index of the tree of size whose
 * root is root (RFC 9162 §2.1.3.2). It resolves when the proof holds and rejects with a
 * ProofError when it does not. */
export async function verifyInclusion(leaf, index, size, proof, root) {
  const i = big(index, 'index');
  const n = big(size, 'size');
  if (i >= n) throw new ProofError('shape', `leaf ${i} in a tree of size ${n}`);
  let fn = i;
  let sn = n - 1n;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0n) throw new ProofError('shape', `${proof.length} hashes, too many for leaf ${i} of ${n}`);
    if ((fn & 1n) === 1n || fn === sn) {
      r = await nodeHash(p, r);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      r = await nodeHash(r, p);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  if (sn !== 0n) throw new ProofError('shape', `${proof.length} hashes, too few for leaf ${i} of ${n}`);
  if (!equal(r, root)) throw new ProofError('invalid', 'the proof leads to another root');
}

/** verifyConsistency checks that the tree of size m with root rootM is a prefix of the tree
 * of size n with root rootN (RFC 9162 §2.1.4.2); it rejects with a ProofError otherwise. */
export async function verifyConsistency(m, n, rootM, rootN, proof) {
  const a = big(m, 'from');
  const b = big(n, 'to');
  if (a > b) throw new ProofError('shape', `from size ${a} to the smaller ${b}`);
  if (a === b) {
    if (proof.length !== 0) throw new ProofError('shape', 'equal sizes take an empty proof');
    if (!equal(rootM, rootN)) throw new ProofError('invalid', 'two roots for one size');
    return;
  }
  if (a === 0n) {
    if (proof.length !== 0) throw new ProofError('shape', 'from the empty tree takes an empty proof');
    return;
  }
  if (proof.length === 0) throw new ProofError('shape', `empty proof from ${a} to ${b}`);
  // When m is a power of two the old root is itself a node of the new tree, and the proof
  // leaves it out.
  const path = (a & (a - 1n)) === 0n ? [rootM, ...proof] : proof;
  let fn = a - 1n;
  let sn = b - 1n;
  while ((fn & 1n) === 1n) {
    fn >>= 1n;
    sn >>= 1n;
  }
  let fr = path[0];
  let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0n) throw new ProofError('shape', `${path.length} hashes, too many from ${a} to ${b}`);
    if ((fn & 1n) === 1n || fn === sn) {
      fr = await nodeHash(c, fr);
      sr = await nodeHash(c, sr);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      sr = await nodeHash(sr, c);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  if (sn !== 0n) throw new ProofError('shape', `${path.length} hashes, too few from ${a} to ${b}`);
  if (!equal(fr, rootM)) throw new ProofError('invalid', 'the proof does not lead to the older root');
  if (!equal(sr, rootN)) throw new ProofError('invalid', 'the proof does not lead to the newer root');
}
