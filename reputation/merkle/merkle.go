// Package merkle is the audit log's Merkle tree with RFC 6962 hashing: the tree, its roots,
// inclusion and consistency proofs, and their verification. It imports nothing of Surety's
// and no network code, so a verifier (surety log verify, an auditor's own tool) links only
// this and the standard library.
package merkle

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"
)

// The audit log is a Merkle tree with RFC 6962 (Certificate Transparency) hashing:
//
//	leaf hash  = SHA-256(0x00 || leaf)
//	node hash  = SHA-256(0x01 || left || right)
//	MTH({})    = SHA-256("")
//	MTH(D[n])  = node(MTH(D[0:k]), MTH(D[k:n])), k the largest power of two below n
//
// Inclusion and consistency proofs are those of RFC 6962 §2.1.1 and §2.1.2, verified as in
// RFC 9162 §2.1.3.2 and §2.1.4.2, so any CT tooling can check them.

// Hash is a SHA-256 digest in the log.
type Hash [32]byte

// String is the hash in hex.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// MarshalText writes the hash in hex.
func (h Hash) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText reads 32 bytes of hex.
func (h *Hash) UnmarshalText(b []byte) error {
	raw, err := hex.DecodeString(string(b))
	if err != nil || len(raw) != 32 {
		return fmt.Errorf("merkle: %q is not 32 bytes of hex", b)
	}
	*h = Hash(raw)
	return nil
}

// Errors of proof verification.
var (
	// ErrProofInvalid: the proof does not lead to the root given.
	ErrProofInvalid = errors.New("merkle: the proof does not match the root")
	// ErrProofShape: the proof has the wrong length or names an impossible position.
	ErrProofShape = errors.New("merkle: malformed proof")
)

// EmptyRoot is the root of the empty tree.
var EmptyRoot = Hash(sha256.Sum256(nil))

// LeafHash is the hash of a leaf's bytes.
func LeafHash(leaf []byte) Hash {
	h := sha256.New()
	h.Write([]byte{0})
	h.Write(leaf)
	return Hash(h.Sum(nil))
}

// nodeHash is the hash of an interior node.
func nodeHash(left, right Hash) Hash {
	var buf [65]byte
	buf[0] = 1
	copy(buf[1:], left[:])
	copy(buf[33:], right[:])
	return Hash(sha256.Sum256(buf[:]))
}

// Tree is an append-only Merkle tree over leaf hashes. It keeps the hash of every complete
// subtree (levels[l][i] covers leaves i·2^l … (i+1)·2^l − 1), so appending is O(1) amortized
// and roots and proofs for any earlier size are O(log n) hashes.
type Tree struct {
	levels [][]Hash
}

// Size is the number of leaves.
func (t *Tree) Size() uint64 {
	if len(t.levels) == 0 {
		return 0
	}
	return uint64(len(t.levels[0]))
}

// Append adds a leaf hash.
func (t *Tree) Append(leaf Hash) {
	if len(t.levels) == 0 {
		t.levels = append(t.levels, nil)
	}
	t.levels[0] = append(t.levels[0], leaf)
	// Each completed pair completes a subtree one level up.
	for l := 0; len(t.levels[l])%2 == 0; l++ {
		n := len(t.levels[l])
		if l+1 == len(t.levels) {
			t.levels = append(t.levels, nil)
		}
		t.levels[l+1] = append(t.levels[l+1], nodeHash(t.levels[l][n-2], t.levels[l][n-1]))
	}
}

// truncate drops every leaf from size on (size ≤ Size), undoing appends.
func (t *Tree) Truncate(size uint64) {
	for l := range t.levels {
		t.levels[l] = t.levels[l][:size>>l]
	}
	for len(t.levels) > 0 && len(t.levels[len(t.levels)-1]) == 0 {
		t.levels = t.levels[:len(t.levels)-1]
	}
}

// Leaf is the hash of leaf i.
func (t *Tree) Leaf(i uint64) (Hash, error) {
	if i >= t.Size() {
		return Hash{}, fmt.Errorf("merkle: no leaf %d in a tree of %d", i, t.Size())
	}
	return t.levels[0][i], nil
}

// Root is the root of the tree of the first size leaves.
func (t *Tree) Root(size uint64) (Hash, error) {
	if size > t.Size() {
		return Hash{}, fmt.Errorf("merkle: no tree of size %d, the log has %d", size, t.Size())
	}
	if size == 0 {
		return EmptyRoot, nil
	}
	return t.subtree(0, size), nil
}

// subtree is MTH of the leaves [begin, end), end ≤ Size and end > begin.
func (t *Tree) subtree(begin, end uint64) Hash {
	n := end - begin
	// A complete, aligned subtree is stored.
	if n&(n-1) == 0 && begin%n == 0 {
		l := bits.TrailingZeros64(n)
		return t.levels[l][begin>>l]
	}
	k := largestPowerBelow(n)
	return nodeHash(t.subtree(begin, begin+k), t.subtree(begin+k, end))
}

// largestPowerBelow is the largest power of two strictly below n (n ≥ 2).
func largestPowerBelow(n uint64) uint64 {
	return 1 << (bits.Len64(n-1) - 1)
}

// InclusionProof proves leaf index is in the tree of the first size leaves (RFC 6962 PATH).
func (t *Tree) InclusionProof(index, size uint64) ([]Hash, error) {
	if size > t.Size() || index >= size {
		return nil, fmt.Errorf("merkle: no leaf %d in a tree of size %d (the log has %d)", index, size, t.Size())
	}
	return t.path(index, 0, size), nil
}

// path is PATH(m, D[begin:end]) with m relative to begin.
func (t *Tree) path(m, begin, end uint64) []Hash {
	n := end - begin
	if n == 1 {
		return nil
	}
	k := largestPowerBelow(n)
	if m < k {
		return append(t.path(m, begin, begin+k), t.subtree(begin+k, end))
	}
	return append(t.path(m-k, begin+k, end), t.subtree(begin, begin+k))
}

// ConsistencyProof proves the tree of size m is a prefix of the tree of size n (RFC 6962
// PROOF).
func (t *Tree) ConsistencyProof(m, n uint64) ([]Hash, error) {
	if n > t.Size() || m > n {
		return nil, fmt.Errorf("merkle: no consistency proof from %d to %d (the log has %d)", m, n, t.Size())
	}
	if m == 0 || m == n {
		return nil, nil
	}
	return t.subproof(m, 0, n, true), nil
}

// subproof is SUBPROOF(m, D[begin:end], b).
func (t *Tree) subproof(m, begin, end uint64, complete bool) []Hash {
	n := end - begin
	if m == n {
		if complete {
			return nil
		}
		return []Hash{t.subtree(begin, end)}
	}
	k := largestPowerBelow(n)
	if m <= k {
		return append(t.subproof(m, begin, begin+k, complete), t.subtree(begin+k, end))
	}
	return append(t.subproof(m-k, begin+k, end, false), t.subtree(begin, begin+k))
}

// VerifyInclusion checks that leaf (a leaf hash) is leaf index of the tree of size whose root
// is root (RFC 9162 §2.1.3.2).
func VerifyInclusion(leaf Hash, index, size uint64, proof []Hash, root Hash) error {
	if index >= size {
		return fmt.Errorf("%w: leaf %d in a tree of size %d", ErrProofShape, index, size)
	}
	fn, sn := index, size-1
	r := leaf
	for _, p := range proof {
		if sn == 0 {
			return fmt.Errorf("%w: %d hashes, too many for leaf %d of %d", ErrProofShape, len(proof), index, size)
		}
		if fn&1 == 1 || fn == sn {
			r = nodeHash(p, r)
			for fn&1 == 0 && fn != 0 {
				fn >>= 1
				sn >>= 1
			}
		} else {
			r = nodeHash(r, p)
		}
		fn >>= 1
		sn >>= 1
	}
	if sn != 0 {
		return fmt.Errorf("%w: %d hashes, too few for leaf %d of %d", ErrProofShape, len(proof), index, size)
	}
	if r != root {
		return ErrProofInvalid
	}
	return nil
}

// VerifyConsistency checks that the tree of size m with root rootM is a prefix of the tree of
// size n with root rootN (RFC 9162 §2.1.4.2).
func VerifyConsistency(m, n uint64, rootM, rootN Hash, proof []Hash) error {
	switch {
	case m > n:
		return fmt.Errorf("%w: from size %d to the smaller %d", ErrProofShape, m, n)
	case m == n:
		if len(proof) != 0 {
			return fmt.Errorf("%w: equal sizes take an empty proof", ErrProofShape)
		}
		if rootM != rootN {
			return ErrProofInvalid
		}
		return nil
	case m == 0:
		if len(proof) != 0 {
			return fmt.Errorf("%w: from the empty tree takes an empty proof", ErrProofShape)
		}
		return nil
	}
	if len(proof) == 0 {
		return fmt.Errorf("%w: empty proof from %d to %d", ErrProofShape, m, n)
	}
	// When m is a power of two, the old root is the first hash the proof leaves out.
	if m&(m-1) == 0 {
		proof = append([]Hash{rootM}, proof...)
	}
	fn, sn := m-1, n-1
	for fn&1 == 1 {
		fn >>= 1
		sn >>= 1
	}
	fr, sr := proof[0], proof[0]
	for _, c := range proof[1:] {
		if sn == 0 {
			return fmt.Errorf("%w: %d hashes, too many from %d to %d", ErrProofShape, len(proof), m, n)
		}
		if fn&1 == 1 || fn == sn {
			fr = nodeHash(c, fr)
			sr = nodeHash(c, sr)
			for fn&1 == 0 && fn != 0 {
				fn >>= 1
				sn >>= 1
			}
		} else {
			sr = nodeHash(sr, c)
		}
		fn >>= 1
		sn >>= 1
	}
	if sn != 0 {
		return fmt.Errorf("%w: %d hashes, too few from %d to %d", ErrProofShape, len(proof), m, n)
	}
	if fr != rootM || sr != rootN {
		return ErrProofInvalid
	}
	return nil
}
