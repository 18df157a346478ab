package testnet

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/surety-ioa/surety/identity"
)

// TestCheckPeerRefusesForeignBindings: a Network bootstraps nodes from the peer id a node's
// /v1/info answers only if the node's DID signed that peer id; a binding of another peer, by
// another node, or forged is refused.
func TestCheckPeerRefusesForeignBindings(t *testing.T) {
	const peer, other = "12D3KooWQVqdXM5Kkh3ptKXCiyw3cCcxujWXGLyGkXYNTugtSern", "12D3KooWC5Zr461VBeCL8DtC2GPFac7RRwPKsSPYjjCfWpXMuWiR"
	node, err := identity.KeyFromSeed(identity.Ed25519, make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	intruder, err := identity.KeyFromSeed(identity.Ed25519, append(make([]byte, 31), 1))
	if err != nil {
		t.Fatal(err)
	}
	good, _ := identity.SignPeerBinding(node, peer)
	foreign, _ := identity.SignPeerBinding(intruder, peer)
	claimed, _ := intruder.SignDocument(identity.PeerBindingPayload(node.DID.String(), peer), identity.PeerBindingType)
	answer := func(did, id, binding string) *info {
		var in info
		b, _ := json.Marshal(map[string]any{"nodeDid": did, "peer": map[string]any{"id": id, "addrs": []string{"/ip4/127.0.0.1/tcp/1"}, "binding": binding}})
		if err := json.Unmarshal(b, &in); err != nil {
			t.Fatal(err)
		}
		return &in
	}
	if err := answer(node.DID.String(), peer, good).checkPeer(); err != nil {
		t.Fatalf("the node's own binding refused: %v", err)
	}
	tests := []struct {
		name string
		in   *info
		want error
	}{
		{"another peer id answered", answer(node.DID.String(), other, good), identity.ErrPeerMismatch},
		{"another node's binding", answer(node.DID.String(), peer, foreign), identity.ErrPeerMismatch},
		{"another node signs for this one", answer(node.DID.String(), peer, claimed), identity.ErrPeerMismatch},
		{"no binding", answer(node.DID.String(), peer, ""), identity.ErrMalformed},
		{"typ of a card", answer(node.DID.String(), peer, mustSign(t, node, peer, "surety-card+jws")), identity.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.in.checkPeer(); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	if err := (&info{NodeDID: node.DID.String()}).checkPeer(); err == nil {
		t.Error("an answer without a peer passed")
	}
}

func mustSign(t *testing.T, k *identity.Key, peer, typ string) string {
	t.Helper()
	s, err := k.SignDocument(identity.PeerBindingPayload(k.DID.String(), peer), typ)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
