package verify_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/reputation/merkle"
	"github.com/surety-ioa/surety/reputation/verify"
)

// headPayload is what reputation.Log signs for a head (log.go, appendEpoch).
func headPayload(size uint64, root merkle.Hash, epoch, closed int64) []byte {
	b, _ := json.Marshal(struct {
		Size   uint64      `json:"size"`
		Root   merkle.Hash `json:"root"`
		Epoch  int64       `json:"epoch"`
		Closed int64       `json:"closed"`
	}{size, root, epoch, closed})
	return b
}

func newKey(t testing.TB, kt identity.KeyType) *identity.Key {
	t.Helper()
	k, err := identity.GenerateKey(kt)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// testLog is a log of n audit envelopes.
func testLog(n int) (*merkle.Tree, [][]byte) {
	var tr merkle.Tree
	var envs [][]byte
	for i := range n {
		env := fmt.Appendf(nil, "eyJhbGciOiJFZERTQSJ9.audit-%d.sig", i)
		envs = append(envs, env)
		tr.Append(verify.EnvelopeLeaf(env))
	}
	return &tr, envs
}

func signHead(t testing.TB, k *identity.Key, tr *merkle.Tree, size uint64) string {
	t.Helper()
	root, err := tr.Root(size)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := k.SignDocument(headPayload(size, root, 7, 1_800_000_000), verify.HeadType)
	if err != nil {
		t.Fatal(err)
	}
	return jws
}

// tamper flips a bit in the middle of segment i of a compact JWS.
func tamper(jws string, i int) string {
	parts := strings.Split(jws, ".")
	raw, _ := base64.RawURLEncoding.DecodeString(parts[i])
	raw[len(raw)/2] ^= 1
	parts[i] = base64.RawURLEncoding.EncodeToString(raw)
	return strings.Join(parts, ".")
}

func TestOpenHead(t *testing.T) {
	tr, _ := testLog(10)
	ed, k1, other := newKey(t, identity.Ed25519), newKey(t, identity.Secp256k1), newKey(t, identity.Ed25519)
	root10, _ := tr.Root(10)
	header := func(alg, kid, typ string) string {
		return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, `{"alg":%q,"kid":%q,"typ":%q}`, alg, kid, typ))
	}
	good := signHead(t, ed, tr, 10)
	parts := strings.Split(good, ".")
	card, _ := ed.SignDocument(headPayload(10, root10, 7, 1), "surety-card+jws")
	tests := []struct {
		name   string
		signed string
		node   string
		want   error
	}{
		{"Ed25519 head", good, ed.DID.String(), nil},
		{"secp256k1 head", signHead(t, k1, tr, 10), k1.DID.String(), nil},
		{"any signer when no node is named", good, "", nil},
		{"another node's head", signHead(t, other, tr, 10), ed.DID.String(), verify.ErrWrongSigner},
		{"tampered signature", tamper(good, 2), ed.DID.String(), verify.ErrBadSignature},
		{"tampered payload", tamper(good, 1), ed.DID.String(), verify.ErrBadSignature},
		{"kid swapped for another key's", header("EdDSA", other.DID.KeyID(), verify.HeadType) + "." + parts[1] + "." + parts[2], other.DID.String(), verify.ErrBadSignature},
		{"another type of document", card, ed.DID.String(), verify.ErrWrongType},
		{"alg that does not fit the key", header("ES256K", ed.DID.KeyID(), verify.HeadType) + "." + parts[1] + "." + parts[2], ed.DID.String(), verify.ErrUnsupportedKey},
		{"alg none", header("none", ed.DID.KeyID(), verify.HeadType) + "." + parts[1] + ".", ed.DID.String(), verify.ErrUnsupportedKey},
		{"kid without fragment", header("EdDSA", ed.DID.String(), verify.HeadType) + "." + parts[1] + "." + parts[2], ed.DID.String(), verify.ErrMalformed},
		{"two parts", parts[0] + "." + parts[1], ed.DID.String(), verify.ErrMalformed},
		{"not base64", "a.b.c!", ed.DID.String(), verify.ErrMalformed},
		{"too large", strings.Repeat("a", verify.MaxHeadSize+1), ed.DID.String(), verify.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := verify.OpenHead(tt.signed, tt.node)
			if !errors.Is(err, tt.want) {
				t.Fatalf("OpenHead = %v, want %v", err, tt.want)
			}
			if tt.want == nil && (h.Size != 10 || h.Root != root10 || h.Epoch != 7 || h.Closed != 1_800_000_000 || h.Signer == "") {
				t.Errorf("OpenHead = %+v, want size 10, root %s, epoch 7", h, root10)
			}
		})
	}
}

func TestInclusion(t *testing.T) {
	tr, envs := testLog(13)
	root, _ := tr.Root(13)
	proofOf := func(i uint64) verify.InclusionProof {
		path, err := tr.InclusionProof(i, 13)
		if err != nil {
			t.Fatal(err)
		}
		return verify.InclusionProof{Leaf: verify.EnvelopeLeaf(envs[i]), Index: i, Size: 13, Path: path}
	}
	p5 := proofOf(5)
	short := p5
	short.Path = p5.Path[:len(p5.Path)-1]
	unnamed := p5
	unnamed.Leaf = verify.Hash{}
	tests := []struct {
		name  string
		leaf  verify.Hash
		proof verify.InclusionProof
		size  uint64
		root  verify.Hash
		want  error
	}{
		{"good proof", verify.EnvelopeLeaf(envs[5]), p5, 13, root, nil},
		{"good proof, envelope with a trailing newline", verify.EnvelopeLeaf(append(envs[5], '\n')), p5, 13, root, nil},
		{"proof that names no leaf", verify.EnvelopeLeaf(envs[5]), unnamed, 13, root, nil},
		{"last leaf", verify.EnvelopeLeaf(envs[12]), proofOf(12), 13, root, nil},
		{"wrong leaf", verify.EnvelopeLeaf(envs[6]), unnamed, 13, root, verify.ErrProofInvalid},
		{"proof of another leaf", verify.EnvelopeLeaf(envs[6]), p5, 13, root, verify.ErrProofMismatch},
		{"wrong root", verify.EnvelopeLeaf(envs[5]), p5, 13, verify.LeafHash([]byte("x")), verify.ErrProofInvalid},
		{"proof in another tree size", verify.EnvelopeLeaf(envs[5]), p5, 12, root, verify.ErrProofMismatch},
		{"path cut short", verify.EnvelopeLeaf(envs[5]), short, 13, root, verify.ErrProofShape},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := verify.Inclusion(tt.leaf, tt.proof, tt.size, tt.root); !errors.Is(err, tt.want) {
				t.Errorf("Inclusion = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestConsistency(t *testing.T) {
	tr, _ := testLog(20)
	k := newKey(t, identity.Ed25519)
	open := func(size uint64) verify.Head {
		h, err := verify.OpenHead(signHead(t, k, tr, size), k.DID.String())
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	h7, h20 := open(7), open(20)
	path, _ := tr.ConsistencyProof(7, 20)
	good := verify.ConsistencyProof{From: 7, To: 20, Path: path}
	forked := h7
	forked.Root = verify.LeafHash([]byte("rewritten"))
	tests := []struct {
		name         string
		older, newer verify.Head
		proof        verify.ConsistencyProof
		want         error
	}{
		{"good proof", h7, h20, good, nil},
		{"the old head rewritten", forked, h20, good, verify.ErrProofInvalid},
		{"heads swapped", h20, h7, verify.ConsistencyProof{From: 20, To: 7, Path: path}, verify.ErrProofShape},
		{"proof between other sizes", h7, h20, verify.ConsistencyProof{From: 6, To: 20, Path: path}, verify.ErrProofMismatch},
		{"path cut short", h7, h20, verify.ConsistencyProof{From: 7, To: 20, Path: path[1:]}, verify.ErrProofShape},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := verify.Consistency(tt.older, tt.newer, tt.proof); !errors.Is(err, tt.want) {
				t.Errorf("Consistency = %v, want %v", err, tt.want)
			}
		})
	}
}
