// lib/merkle.js against reputation/merkle, through the vectors reputation's TestJSVectors
// writes (testdata/merkle.json): every root, inclusion and consistency proof checks, and
// every tampered one fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fromHex, hex, leafHash, nodeHash, rootOf, verifyInclusion, verifyConsistency, emptyRoot, ProofError } from '../src/lib/merkle.js';

const v = JSON.parse(readFileSync(new URL('./testdata/merkle.json', import.meta.url)));
const enc = new TextEncoder();
const leaves = await Promise.all(v.leaves.map((s) => leafHash(enc.encode(s))));
const roots = v.roots.map(fromHex);

test('the empty root is SHA-256 of nothing, as in Go', async () => {
  assert.equal(hex(await emptyRoot()), v.empty);
  assert.equal(hex(await rootOf([])), v.empty);
});

test('RFC 6962 hashing: the hash of the empty leaf, and node order', async () => {
  // SHA-256(0x00), the leaf hash of the empty string in every CT implementation.
  const empty = await leafHash(new Uint8Array());
  assert.equal(hex(empty), '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d');
  // The root of two leaves is the node of their hashes, in that order.
  assert.equal(hex(await nodeHash(leaves[0], leaves[1])), v.roots[1]);
  assert.notEqual(hex(await nodeHash(leaves[1], leaves[0])), v.roots[1]);
});

test('roots of every size rebuilt from the leaves match Go', async () => {
  for (let size = 1; size <= leaves.length; size++) {
    assert.equal(hex(await rootOf(leaves.slice(0, size))), v.roots[size - 1], `size ${size}`);
  }
});

test('every inclusion proof checks', async () => {
  for (const p of v.inclusion) {
    await verifyInclusion(leaves[p.index], p.index, p.size, p.path.map(fromHex), roots[p.size - 1]);
  }
});

async function fails(promise, kind) {
  await assert.rejects(promise, (err) => err instanceof ProofError && (kind === undefined || err.kind === kind));
}

test('a tampered inclusion proof fails', async () => {
  let checked = 0;
  for (const p of v.inclusion) {
    const path = p.path.map(fromHex);
    const root = roots[p.size - 1];
    // Another leaf, another index, another root.
    await fails(verifyInclusion(leaves[(p.index + 1) % leaves.length], p.index, p.size, path, root));
    if (p.size > 1) await fails(verifyInclusion(leaves[p.index], (p.index + 1) % p.size, p.size, path, root));
    await fails(verifyInclusion(leaves[p.index], p.index, p.size, path, roots[p.size % roots.length]), 'invalid');
    // Each hash of the path with one bit flipped; one hash too many, one too few.
    for (let k = 0; k < path.length; k++) {
      const bad = path.map((h) => h.slice());
      bad[k][k % 32] ^= 1;
      await fails(verifyInclusion(leaves[p.index], p.index, p.size, bad, root), 'invalid');
      checked++;
    }
    await fails(verifyInclusion(leaves[p.index], p.index, p.size, [...path, root], root), 'shape');
    if (path.length > 0) await fails(verifyInclusion(leaves[p.index], p.index, p.size, path.slice(1), root), 'shape');
  }
  assert.ok(checked > 100, `only ${checked} flipped hashes`);
  await fails(verifyInclusion(leaves[0], 5, 5, [], roots[4]), 'shape');
  await fails(verifyInclusion(leaves[0], -1, 5, [], roots[4]), 'shape');
});

test('every consistency proof checks', async () => {
  for (const p of v.consistency) {
    await verifyConsistency(p.from, p.to, roots[p.from - 1], roots[p.to - 1], p.path.map(fromHex));
  }
  await verifyConsistency(0, 7, await emptyRoot(), roots[6], []);
});

test('a tampered consistency proof fails', async () => {
  for (const p of v.consistency) {
    const path = p.path.map(fromHex);
    const [a, b] = [roots[p.from - 1], roots[p.to - 1]];
    if (p.from < p.to) {
      // Another older root, another newer root, a flipped hash.
      await fails(verifyConsistency(p.from, p.to, roots[p.from % roots.length], b, path));
      await fails(verifyConsistency(p.from, p.to, a, roots[p.to % roots.length], path));
      for (let k = 0; k < path.length; k++) {
        const bad = path.map((h) => h.slice());
        bad[k][0] ^= 0x80;
        await fails(verifyConsistency(p.from, p.to, a, b, bad));
      }
      await fails(verifyConsistency(p.from, p.to, a, b, [...path, a]));
    } else {
      await fails(verifyConsistency(p.from, p.to, a, b, [a]), 'shape');
    }
  }
  await fails(verifyConsistency(5, 4, roots[4], roots[3], []), 'shape');
  await fails(verifyConsistency(3, 3, roots[2], roots[3], []), 'invalid');
  await fails(verifyConsistency(3, 9, roots[2], roots[8], []), 'shape');
});

test('hex reading refuses what is not a 32-byte hash', () => {
  assert.throws(() => fromHex('00'), ProofError);
  assert.throws(() => fromHex('zz'.repeat(32)), ProofError);
  assert.equal(hex(fromHex('0x' + 'ab'.repeat(32))), 'ab'.repeat(32));
});
