package identity

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// PeerBindingType is the typ of a node's peer binding: the node DID's JWS claiming a libp2p
// peer id (GET /v1/info, peer.binding). Being its own type, no envelope, card or binding
// passes for one.
const PeerBindingType = "surety-peer+jws"

// ErrPeerMismatch reports a peer binding that verifies but names another node DID or another
// libp2p peer than the one it is checked for.
var ErrPeerMismatch = errors.New("identity: peer binding names another node or peer")

// PeerBinding is what a node's DID signs to claim its libp2p peer id. It has no time: a peer
// id lasts as long as the node's p2p key, and the claim holds while the node's DID does.
type PeerBinding struct {
	DID    string `json:"did"`
	PeerID string `json:"peerId"`
}

// SignPeerBinding signs the binding of node's DID to peerID (a libp2p peer id in its text
// form) as a compact JWS of type PeerBindingType.
func SignPeerBinding(node *Key, peerID string) (string, error) {
	return node.SignDocument(PeerBindingPayload(node.DID.String(), peerID), PeerBindingType)
}

// PeerBindingPayload is the JSON a node's DID signs to claim peerID: {"did":…,"peerId":…}.
func PeerBindingPayload(did, peerID string) []byte {
	b, _ := json.Marshal(PeerBinding{DID: did, PeerID: peerID})
	return b
}

// VerifyPeerBinding checks that raw is a peer binding signed by nodeDID's key (typ
// PeerBindingType, kid nodeDID's DID URL) naming nodeDID and peerID. An empty nodeDID or
// peerID is not checked (the caller learns it from the binding). Errors are *VerifyError
// (malformed, unsupported alg, bad signature) or wrap ErrPeerMismatch.
func VerifyPeerBinding(raw []byte, nodeDID, peerID string) (*PeerBinding, error) {
	payload, signer, err := VerifyJWS(raw, PeerBindingType)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	var b PeerBinding
	if err := dec.Decode(&b); err != nil {
		return nil, refuse(ErrMalformed, "", "peer binding payload: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, refuse(ErrMalformed, "", "peer binding payload: data after the object")
	}
	if b.DID == "" || b.PeerID == "" {
		return nil, refuse(ErrMalformed, "", "peer binding payload needs did and peerId")
	}
	switch {
	case b.DID != signer:
		return nil, fmt.Errorf("%w: it names %s but is signed by %s", ErrPeerMismatch, truncate(b.DID, 120), signer)
	case nodeDID != "" && signer != nodeDID:
		return nil, fmt.Errorf("%w: signed by %s, not the node %s", ErrPeerMismatch, signer, truncate(nodeDID, 120))
	case peerID != "" && b.PeerID != peerID:
		return nil, fmt.Errorf("%w: it names peer %s, not %s", ErrPeerMismatch, truncate(b.PeerID, 80), truncate(peerID, 80))
	}
	return &b, nil
}
