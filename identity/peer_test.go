package identity

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

const (
	testPeer      = "12D3KooWQVqdXM5Kkh3ptKXCiyw3cCcxujWXGLyGkXYNTugtSern"
	testOtherPeer = "12D3KooWC5Zr461VBeCL8DtC2GPFac7RRwPKsSPYjjCfWpXMuWiR"
)

// TestVerifyPeerBinding: a node's binding of its DID to its peer id verifies for that node
// and peer, and every forgery or mismatch is refused with its reason.
func TestVerifyPeerBinding(t *testing.T) {
	node, other, es := testKey(t, Ed25519, 40), testKey(t, Ed25519, 41), testKey(t, Secp256k1, 42)
	good, err := SignPeerBinding(node, testPeer)
	if err != nil {
		t.Fatal(err)
	}
	goodES, err := SignPeerBinding(es, testPeer)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding
	parts := strings.Split(good, ".")
	sig, _ := enc.DecodeString(parts[2])
	sig[5] ^= 0x20
	flipped := parts[0] + "." + parts[1] + "." + enc.EncodeToString(sig)
	swapped := parts[0] + "." + enc.EncodeToString(PeerBindingPayload(node.DID.String(), testOtherPeer)) + "." + parts[2]
	byOther, _ := other.SignDocument(PeerBindingPayload(node.DID.String(), testPeer), PeerBindingType)
	asCard, _ := node.SignDocument(PeerBindingPayload(node.DID.String(), testPeer), "surety-card+jws")
	extra, _ := node.SignDocument([]byte(`{"did":"`+node.DID.String()+`","peerId":"`+testPeer+`","exp":1}`), PeerBindingType)
	noPeer, _ := node.SignDocument([]byte(`{"did":"`+node.DID.String()+`"}`), PeerBindingType)
	tests := []struct {
		name       string
		raw        string
		node, peer string
		want       error // nil: verifies
	}{
		{"valid", good, node.DID.String(), testPeer, nil},
		{"valid secp256k1 node", goodES, es.DID.String(), testPeer, nil},
		{"valid, node and peer taken from it", good, "", "", nil},
		{"another peer id", good, node.DID.String(), testOtherPeer, ErrPeerMismatch},
		{"another node", good, other.DID.String(), testPeer, ErrPeerMismatch},
		{"signature flipped", flipped, node.DID.String(), testPeer, ErrBadSignature},
		{"peer id swapped under the signature", swapped, node.DID.String(), testOtherPeer, ErrBadSignature},
		{"another node claims this node's peer", byOther, node.DID.String(), testPeer, ErrPeerMismatch},
		{"another node claims it, nobody named", byOther, "", "", ErrPeerMismatch},
		{"a card's typ", asCard, node.DID.String(), testPeer, ErrMalformed},
		{"unknown field", extra, node.DID.String(), testPeer, ErrMalformed},
		{"no peer id", noPeer, node.DID.String(), "", ErrMalformed},
		{"not a JWS", "a.b", node.DID.String(), testPeer, ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := VerifyPeerBinding([]byte(tt.raw), tt.node, tt.peer)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if b.PeerID != testPeer || (tt.node != "" && b.DID != tt.node) {
					t.Errorf("binding = %+v", b)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

// FuzzVerifyPeerBinding: whatever bytes a peer hands over, the verifier does not panic, and
// what it accepts is signed by the DID it names.
func FuzzVerifyPeerBinding(f *testing.F) {
	node := testKey(f, Ed25519, 40)
	good, err := SignPeerBinding(node, testPeer)
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(good))
	f.Add([]byte(good[:len(good)/2]))
	f.Add([]byte("e30.e30.AA"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, raw []byte) {
		b, err := VerifyPeerBinding(raw, "", "")
		if err != nil {
			return
		}
		_, signer, err := VerifyJWS(raw, PeerBindingType)
		if err != nil || signer != b.DID {
			t.Fatalf("accepted %+v, signed by %q (%v)", b, signer, err)
		}
	})
}
