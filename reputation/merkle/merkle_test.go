package merkle

import (
	"encoding/hex"
	"errors"
	"testing"
)

// The Certificate Transparency reference vectors (RFC 6962 hashing): eight leaves and the
// root of each prefix of them.
var ctLeaves = []string{"", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f"}

var ctRoots = []string{
	"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
	"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
	"aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
	"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
	"4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
	"76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
	"ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
	"5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRootsMatchTheCTVectors(t *testing.T) {
	var tree Tree
	if r, _ := tree.Root(0); hex.EncodeToString(r[:]) != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Errorf("empty root = %x", r)
	}
	for i, leaf := range ctLeaves {
		tree.Append(LeafHash(mustHex(t, leaf)))
		for size := uint64(1); size <= tree.Size(); size++ {
			r, err := tree.Root(size)
			if err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(r[:]); got != ctRoots[size-1] {
				t.Errorf("after %d leaves, root of %d = %s, want %s", i+1, size, got, ctRoots[size-1])
			}
		}
	}
}

// TestProofsVerify checks every inclusion proof and every consistency proof in trees of up to
// 70 leaves, and that a changed leaf, root, position or proof hash fails.
func TestProofsVerify(t *testing.T) {
	var tree Tree
	const max = 70
	for i := range max {
		tree.Append(LeafHash([]byte{byte(i), byte(i >> 8)}))
	}
	for size := uint64(1); size <= max; size++ {
		root, _ := tree.Root(size)
		for i := range size {
			leaf, _ := tree.Leaf(i)
			proof, err := tree.InclusionProof(i, size)
			if err != nil {
				t.Fatal(err)
			}
			if err := VerifyInclusion(leaf, i, size, proof, root); err != nil {
				t.Fatalf("inclusion of %d in %d: %v", i, size, err)
			}
			other := LeafHash([]byte("tampered"))
			if err := VerifyInclusion(other, i, size, proof, root); !errors.Is(err, ErrProofInvalid) {
				t.Fatalf("tampered leaf %d in %d: %v", i, size, err)
			}
			if size > 1 {
				if err := VerifyInclusion(leaf, (i+1)%size, size, proof, root); err == nil {
					t.Fatalf("leaf %d verified at position %d of %d", i, (i+1)%size, size)
				}
				bad := append([]Hash(nil), proof...)
				bad[len(bad)-1][0] ^= 1
				if err := VerifyInclusion(leaf, i, size, bad, root); !errors.Is(err, ErrProofInvalid) {
					t.Fatalf("flipped proof hash, leaf %d of %d: %v", i, size, err)
				}
			}
		}
		for m := uint64(0); m <= size; m++ {
			rootM, _ := tree.Root(m)
			proof, err := tree.ConsistencyProof(m, size)
			if err != nil {
				t.Fatal(err)
			}
			if err := VerifyConsistency(m, size, rootM, root, proof); err != nil {
				t.Fatalf("consistency %d → %d: %v", m, size, err)
			}
			if m > 0 && m < size {
				wrong := rootM
				wrong[0] ^= 1
				if err := VerifyConsistency(m, size, wrong, root, proof); err == nil {
					t.Fatalf("consistency %d → %d verified with a wrong old root", m, size)
				}
				if err := VerifyConsistency(m, size, rootM, root, proof[:len(proof)-1]); err == nil {
					t.Fatalf("consistency %d → %d verified with a short proof", m, size)
				}
			}
		}
	}
}

func TestProofRequestsOutOfRange(t *testing.T) {
	var tree Tree
	tree.Append(LeafHash(nil))
	tests := []struct {
		name string
		err  error
	}{
		{"root beyond the log", func() error { _, err := tree.Root(2); return err }()},
		{"leaf beyond the tree", func() error { _, err := tree.InclusionProof(1, 1); return err }()},
		{"tree beyond the log", func() error { _, err := tree.InclusionProof(0, 2); return err }()},
		{"consistency backwards", func() error { _, err := tree.ConsistencyProof(1, 0); return err }()},
		{"inclusion at the size", VerifyInclusion(Hash{}, 3, 3, nil, Hash{})},
		{"consistency from larger", VerifyConsistency(3, 2, Hash{}, Hash{}, nil)},
		{"consistency without proof", VerifyConsistency(1, 2, Hash{}, Hash{}, nil)},
	}
	for _, tt := range tests {
		if tt.err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
}

// FuzzVerify feeds arbitrary proofs to both verifiers: they never panic, and never accept a
// proof for a root that no tree has.
func FuzzVerify(f *testing.F) {
	f.Add(uint64(0), uint64(1), []byte{})
	f.Add(uint64(3), uint64(7), make([]byte, 96))
	f.Add(uint64(4), uint64(8), make([]byte, 64))
	f.Fuzz(func(t *testing.T, a, b uint64, raw []byte) {
		var proof []Hash
		for len(raw) >= 32 && len(proof) < 70 {
			proof = append(proof, Hash(raw[:32]))
			raw = raw[32:]
		}
		impossible := Hash{0xde, 0xad}
		if err := VerifyInclusion(LeafHash(raw), a, b, proof, impossible); err == nil {
			t.Fatal("inclusion verified against an impossible root")
		}
		if a != b && a != 0 {
			if err := VerifyConsistency(a, b, impossible, impossible, proof); err == nil {
				t.Fatal("consistency verified between impossible roots")
			}
		}
	})
}

// TestTruncateUndoesAppends: a tree cut back to an earlier size and grown again equals a tree
// built from the final leaves.
func TestTruncateUndoesAppends(t *testing.T) {
	for _, cut := range []uint64{0, 1, 5, 8, 9} {
		var grown, fresh Tree
		for i := range 13 {
			grown.Append(LeafHash([]byte{byte(i)}))
		}
		grown.Truncate(cut)
		for i := range 13 {
			leaf := LeafHash([]byte{byte(i)})
			if uint64(i) >= cut {
				leaf = LeafHash([]byte{byte(i), 1})
				grown.Append(leaf)
			}
			fresh.Append(leaf)
		}
		a, _ := grown.Root(13)
		b, _ := fresh.Root(13)
		if a != b {
			t.Errorf("cut at %d: root %s, want %s", cut, a, b)
		}
	}
}
