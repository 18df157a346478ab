package verify_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/mod/sumdb/note"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/reputation/verify"
)

const anchor = "0x5FbDB2315678afecb367f032d93F642f64180aa3"

func signCheckpoint(t testing.TB, k *identity.Key, c verify.Checkpoint) []byte {
	t.Helper()
	n, err := verify.SignCheckpoint(c, k.DID.String(), k.SignNote)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCheckpoint(t *testing.T) {
	tr, _ := testLog(42)
	root, _ := tr.Root(42)
	ed, k1, other := newKey(t, identity.Ed25519), newKey(t, identity.Secp256k1), newKey(t, identity.Ed25519)
	origin := verify.Origin(31337, anchor, ed.DID.String())
	cp := verify.Checkpoint{Origin: origin, Size: 42, Root: root}
	good := signCheckpoint(t, ed, cp)

	// A witness's cosignature, a key this verifier does not know: ignored.
	witness, _, err := note.GenerateKey(rand.Reader, "witness.example/w1")
	if err != nil {
		t.Fatal(err)
	}
	ws, err := note.NewSigner(witness)
	if err != nil {
		t.Fatal(err)
	}
	cosigned, err := note.Sign(&note.Note{Text: string(cp.Text())}, ws)
	if err != nil {
		t.Fatal(err)
	}
	cosigned = append(cosigned, good[len(cp.Text())+1:]...)

	// The same head under the origin of another deployment, chain or node: the key name is
	// the origin, so the signature is not the one the verifier looks for.
	otherDeployment := signCheckpoint(t, ed, verify.Checkpoint{Origin: verify.Origin(31337, "0x00000000000000000000000000000000000000aa", ed.DID.String()), Size: 42, Root: root})
	otherChain := signCheckpoint(t, ed, verify.Checkpoint{Origin: verify.Origin(1, anchor, ed.DID.String()), Size: 42, Root: root})
	// A node that signs another origin's text under this origin's key name.
	mislabelled := relabel(t, ed, verify.Checkpoint{Origin: origin + "x", Size: 42, Root: root}.Text(), origin)

	tamperedSize := bytes.Replace(good, []byte("\n42\n"), []byte("\n43\n"), 1)
	sigAt := bytes.LastIndex(good, []byte(" ")) + 1
	tamperedSig := bytes.Clone(good)
	tamperedSig[sigAt+10] = 'A' // another base64 letter: still a signature line, of other bytes
	if good[sigAt+10] == 'A' {
		tamperedSig[sigAt+10] = 'B'
	}
	tests := []struct {
		name   string
		note   []byte
		origin string
		node   string
		want   error
	}{
		{"Ed25519 checkpoint", good, origin, ed.DID.String(), nil},
		{"secp256k1 checkpoint", signCheckpoint(t, k1, verify.Checkpoint{Origin: verify.Origin(31337, anchor, k1.DID.String()), Size: 42, Root: root}), verify.Origin(31337, anchor, k1.DID.String()), k1.DID.String(), nil},
		{"origin made from a checksummed or lower-case anchor", good, verify.Origin(31337, strings.ToLower(anchor), ed.DID.String()), ed.DID.String(), nil},
		{"with a witness cosignature", cosigned, origin, ed.DID.String(), nil},
		{"tampered size", tamperedSize, origin, ed.DID.String(), verify.ErrBadSignature},
		{"tampered signature", tamperedSig, origin, ed.DID.String(), verify.ErrBadSignature},
		{"another node's key", good, verify.Origin(31337, anchor, other.DID.String()), other.DID.String(), verify.ErrNoSignature},
		{"another node's checkpoint", signCheckpoint(t, other, verify.Checkpoint{Origin: verify.Origin(31337, anchor, other.DID.String()), Size: 42, Root: root}), origin, ed.DID.String(), verify.ErrNoSignature},
		{"wrong origin: another deployment", otherDeployment, origin, ed.DID.String(), verify.ErrNoSignature},
		{"wrong origin: another chain", otherChain, origin, ed.DID.String(), verify.ErrNoSignature},
		{"wrong origin: signed under this origin's name", mislabelled, origin, ed.DID.String(), verify.ErrWrongOrigin},
		{"no signatures", cp.Text(), origin, ed.DID.String(), verify.ErrMalformed},
		{"control character", append([]byte("a\x00"), good...), origin, ed.DID.String(), verify.ErrMalformed},
		{"too large", bytes.Repeat([]byte("a"), verify.MaxCheckpointSize+1), origin, ed.DID.String(), verify.ErrMalformed},
		{"node not a did:key", good, origin, "did:pkh:eip155:1:0x00", verify.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := verify.OpenCheckpoint(tt.note, tt.origin, tt.node)
			if !errors.Is(err, tt.want) {
				t.Fatalf("OpenCheckpoint = %v, want %v", err, tt.want)
			}
			if tt.want == nil && (got.Size != 42 || got.Root != root || got.Origin != tt.origin) {
				t.Errorf("OpenCheckpoint = %+v", got)
			}
		})
	}
}

// relabel signs text with k under the key name name, whatever origin the text names (a node
// that signs what it should not).
func relabel(t *testing.T, k *identity.Key, text []byte, name string) []byte {
	t.Helper()
	vkey, err := verify.NoteVerifierKey(name, k.DID.String())
	if err != nil {
		t.Fatal(err)
	}
	id, err := hex.DecodeString(strings.Split(vkey, "+")[1])
	if err != nil {
		t.Fatal(err)
	}
	sig, err := k.SignNote(text)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Appendf(bytes.Clone(text), "\n— %s %s\n", name, base64.StdEncoding.EncodeToString(append(id, sig...)))
}

func TestParseCheckpoint(t *testing.T) {
	root := verify.LeafHash([]byte("r"))
	b64 := base64.StdEncoding.EncodeToString(root[:])
	tests := []struct {
		name string
		text string
		want *verify.Checkpoint
	}{
		{"three lines", "o.example/log\n12\n" + b64 + "\n", &verify.Checkpoint{Origin: "o.example/log", Size: 12, Root: root}},
		{"empty tree", "o\n0\n" + b64 + "\n", &verify.Checkpoint{Origin: "o", Size: 0, Root: root}},
		{"extension lines", "o\n1\n" + b64 + "\next one\next two\n", &verify.Checkpoint{Origin: "o", Size: 1, Root: root, Extensions: []string{"ext one", "ext two"}}},
		{"no final newline", "o\n1\n" + b64, nil},
		{"two lines", "o\n1\n", nil},
		{"empty origin", "\n1\n" + b64 + "\n", nil},
		{"leading zero", "o\n01\n" + b64 + "\n", nil},
		{"signed size", "o\n+1\n" + b64 + "\n", nil},
		{"size overflows", "o\n18446744073709551616\n" + b64 + "\n", nil},
		{"short root", "o\n1\nAAAA\n", nil},
		{"root not base64", "o\n1\n" + strings.Replace(b64, "=", "!", 1) + "\n", nil},
		{"empty extension line", "o\n1\n" + b64 + "\n\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := verify.ParseCheckpoint([]byte(tt.text))
			if tt.want == nil {
				if !errors.Is(err, verify.ErrMalformed) {
					t.Fatalf("ParseCheckpoint = %+v, %v; want ErrMalformed", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(*tt.want, got); diff != "" {
				t.Errorf("ParseCheckpoint (-want +got):\n%s", diff)
			}
			if string(got.Text()) != tt.text {
				t.Errorf("Text = %q, want %q", got.Text(), tt.text)
			}
		})
	}
}

// TestCheckpointsAgreeWithSumdbNote holds the checkpoints to golang.org/x/mod/sumdb/note,
// Go's checksum database's signed notes (an implementation of c2sp.org/signed-note that is
// not this package's): what the node signs, it opens with the verifier key NoteVerifierKey
// gives; what it signs with the node's key, OpenCheckpoint opens.
func TestCheckpointsAgreeWithSumdbNote(t *testing.T) {
	tr, _ := testLog(42)
	k := newKey(t, identity.Ed25519)
	origin := verify.Origin(31337, anchor, k.DID.String())
	vkey, err := verify.NoteVerifierKey(origin, k.DID.String())
	if err != nil {
		t.Fatal(err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatalf("sumdb/note does not take the verifier key %q: %v", vkey, err)
	}
	for _, size := range []uint64{0, 1, 7, 42} {
		root, _ := tr.Root(size)
		cp := verify.Checkpoint{Origin: origin, Size: size, Root: root}

		// The node signs; sumdb/note opens.
		signed := signCheckpoint(t, k, cp)
		n, err := note.Open(signed, note.VerifierList(v))
		if err != nil {
			t.Fatalf("size %d: sumdb/note refuses the node's checkpoint: %v\n%s", size, err, signed)
		}
		if n.Text != string(cp.Text()) || len(n.Sigs) != 1 || n.Sigs[0].Name != origin {
			t.Errorf("size %d: sumdb/note opened %+v", size, n)
		}

		// sumdb/note signs with the node's key; the verifier opens, and the bytes are the same.
		skey := fmt.Sprintf("PRIVATE+KEY+%s+%08x+%s", origin, v.KeyHash(), base64.StdEncoding.EncodeToString(append([]byte{1}, k.Seed()...)))
		s, err := note.NewSigner(skey)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := note.Sign(&note.Note{Text: string(cp.Text())}, s)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(theirs, signed) {
			t.Errorf("size %d: sumdb/note signs\n%s\nthe node signs\n%s", size, theirs, signed)
		}
		got, err := verify.OpenCheckpoint(theirs, origin, k.DID.String())
		if err != nil || got.Size != size || got.Root != root {
			t.Errorf("size %d: OpenCheckpoint of sumdb/note's = %+v, %v", size, got, err)
		}
	}
}

// FuzzOpenCheckpoint: a checkpoint is bytes from a node the auditor does not trust.
func FuzzOpenCheckpoint(f *testing.F) {
	k, err := identity.KeyFromSeed(identity.Ed25519, bytes.Repeat([]byte{7}, 32))
	if err != nil {
		f.Fatal(err)
	}
	origin := verify.Origin(31337, anchor, k.DID.String())
	tr, _ := testLog(5)
	root, _ := tr.Root(5)
	good := signCheckpoint(f, k, verify.Checkpoint{Origin: origin, Size: 5, Root: root})
	f.Add(good)
	f.Add(append(bytes.Clone(good), "— witness.example/w AAAAAAAA\n"...))
	f.Add([]byte("o\n1\nAAAA\n\n— o AAAAAA==\n"))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, n []byte) {
		c, err := verify.OpenCheckpoint(n, origin, k.DID.String())
		if err != nil {
			if c.Origin != "" || c.Size != 0 {
				t.Fatalf("an error with a checkpoint: %+v, %v", c, err)
			}
			return
		}
		if c.Origin != origin {
			t.Fatalf("opened a checkpoint of origin %q", c.Origin)
		}
		again, err := verify.ParseCheckpoint(c.Text())
		if err != nil || !cmp.Equal(again, c) {
			t.Fatalf("the opened checkpoint does not round-trip: %+v, %v", again, err)
		}
	})
}

// FuzzParseCheckpoint: every text ParseCheckpoint takes writes back the same.
func FuzzParseCheckpoint(f *testing.F) {
	f.Add([]byte("o.example/log\n12\nqPqDH4ZNbDIe1E3I8/3tAMMkXK6E2L9f0rY+i3xNsRk=\n"))
	f.Add([]byte("o\n0\nqPqDH4ZNbDIe1E3I8/3tAMMkXK6E2L9f0rY+i3xNsRk=\next\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		c, err := verify.ParseCheckpoint(text)
		if err != nil {
			return
		}
		if !bytes.Equal(c.Text(), text) {
			t.Fatalf("ParseCheckpoint(%q).Text() = %q", text, c.Text())
		}
	})
}

// FuzzOpenHead: a head is a JWS from a node the auditor does not trust.
func FuzzOpenHead(f *testing.F) {
	k, err := identity.KeyFromSeed(identity.Ed25519, bytes.Repeat([]byte{7}, 32))
	if err != nil {
		f.Fatal(err)
	}
	tr, _ := testLog(5)
	f.Add(signHead(f, k, tr, 5))
	f.Add("eyJhbGciOiJFZERTQSJ9.e30.")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := verify.OpenHead(s, k.DID.String())
		if err == nil && h.Signer != k.DID.String() {
			t.Fatalf("opened a head signed by %s", h.Signer)
		}
	})
}
