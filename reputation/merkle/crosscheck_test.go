package merkle_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/merkle/testonly"

	"github.com/surety-ioa/surety/reputation/merkle"
)

// The transparency-log ecosystem's Merkle library (github.com/transparency-dev/merkle, used
// by trillian, trillian-tessera and the witnesses) is the reference this package is held to:
// the same roots, the same inclusion and consistency proofs, and each side's proofs verify
// with the other's code.

func hashes(hs []merkle.Hash) [][]byte {
	out := make([][]byte, len(hs))
	for i := range hs {
		out[i] = hs[i][:]
	}
	return out
}

func TestAgreesWithTransparencyDevMerkle(t *testing.T) {
	const n = 130 // past 2^7, so every shape of tree up to seven levels and a ragged eighth
	var ours merkle.Tree
	theirs := testonly.New(rfc6962.DefaultHasher)
	h := rfc6962.DefaultHasher
	for i := range n {
		leaf := fmt.Appendf(nil, "leaf %d", i)
		ours.Append(merkle.LeafHash(leaf))
		theirs.AppendData(leaf)
	}
	if got, want := merkle.EmptyRoot, h.EmptyRoot(); string(got[:]) != string(want) {
		t.Fatalf("empty root %x, theirs %x", got, want)
	}
	for size := uint64(1); size <= n; size++ {
		root, err := ours.Root(size)
		if err != nil {
			t.Fatal(err)
		}
		if want := theirs.HashAt(size); string(root[:]) != string(want) {
			t.Fatalf("size %d: root %x, theirs %x", size, root, want)
		}
		for index := range size {
			leaf, _ := ours.Leaf(index)
			path, err := ours.InclusionProof(index, size)
			if err != nil {
				t.Fatal(err)
			}
			want, err := theirs.InclusionProof(index, size)
			if err != nil {
				t.Fatal(err)
			}
			if got := hashes(path); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("inclusion of %d in %d: %x, theirs %x", index, size, got, want)
			}
			if err := proof.VerifyInclusion(h, index, size, leaf[:], hashes(path), root[:]); err != nil {
				t.Fatalf("inclusion of %d in %d: theirs refuses ours: %v", index, size, err)
			}
		}
		for from := range size + 1 {
			old, _ := ours.Root(from)
			path, err := ours.ConsistencyProof(from, size)
			if err != nil {
				t.Fatal(err)
			}
			want, err := theirs.ConsistencyProof(from, size)
			if err != nil {
				t.Fatal(err)
			}
			if got := hashes(path); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("consistency %d to %d: %x, theirs %x", from, size, got, want)
			}
			if from == 0 {
				continue // theirs takes no proof from the empty tree (nor needs one)
			}
			if err := proof.VerifyConsistency(h, from, size, hashes(path), old[:], root[:]); err != nil {
				t.Fatalf("consistency %d to %d: theirs refuses ours: %v", from, size, err)
			}
			if err := merkle.VerifyConsistency(from, size, old, root, path); err != nil {
				t.Fatalf("consistency %d to %d: ours refuses its own: %v", from, size, err)
			}
		}
	}
}

// TestRefusesWhatTransparencyDevMerkleRefuses: a proof bent in each of its hashes, or cut
// short, fails in both libraries.
func TestRefusesWhatTransparencyDevMerkleRefuses(t *testing.T) {
	var tr merkle.Tree
	for i := range 37 {
		tr.Append(merkle.LeafHash(fmt.Appendf(nil, "leaf %d", i)))
	}
	h := rfc6962.DefaultHasher
	for _, size := range []uint64{2, 5, 16, 37} {
		root, _ := tr.Root(size)
		for index := range size {
			leaf, _ := tr.Leaf(index)
			path, _ := tr.InclusionProof(index, size)
			for i := range path {
				bent := append([]merkle.Hash{}, path...)
				bent[i][0] ^= 1
				ours := merkle.VerifyInclusion(leaf, index, size, bent, root)
				theirs := proof.VerifyInclusion(h, index, size, leaf[:], hashes(bent), root[:])
				if !errors.Is(ours, merkle.ErrProofInvalid) || theirs == nil {
					t.Fatalf("inclusion of %d in %d, hash %d bent: ours %v, theirs %v", index, size, i, ours, theirs)
				}
			}
			if len(path) > 0 {
				ours := merkle.VerifyInclusion(leaf, index, size, path[1:], root)
				theirs := proof.VerifyInclusion(h, index, size, leaf[:], hashes(path[1:]), root[:])
				if ours == nil || theirs == nil {
					t.Fatalf("inclusion of %d in %d cut short: ours %v, theirs %v", index, size, ours, theirs)
				}
			}
		}
		for from := uint64(1); from < size; from++ {
			old, _ := tr.Root(from)
			path, _ := tr.ConsistencyProof(from, size)
			for i := range path {
				bent := append([]merkle.Hash{}, path...)
				bent[i][0] ^= 1
				ours := merkle.VerifyConsistency(from, size, old, root, bent)
				theirs := proof.VerifyConsistency(h, from, size, hashes(bent), old[:], root[:])
				if ours == nil || theirs == nil {
					t.Fatalf("consistency %d to %d, hash %d bent: ours %v, theirs %v", from, size, i, ours, theirs)
				}
			}
		}
	}
}
