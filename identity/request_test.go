package identity

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// TestSignRequest: a request signed for a node verifies, names the node as its audience and
// only recipient, its chain, and the bounty in the node's escrow; it acts at that node and
// chain only.
func TestSignRequest(t *testing.T) {
	k, node := testKey(t, Ed25519, 1), testKey(t, Ed25519, 2)
	aud := Audience{Node: node.DID.String(), ChainID: 31337, Escrow: "0x5FbDB2315678afecb367f032d93F642f64180aa3"}
	now := testNow
	jws, err := SignRequest(k, aud, 7, map[string]any{"wallet": "0x01"}, now, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	v, err := testVerifier(&now).Verify(context.Background(), []byte(jws))
	if err != nil {
		t.Fatal(err)
	}
	e := v.Envelope
	if e.Sender != k.DID.String() || e.Aud != aud.Node || len(e.To) != 1 || e.To[0] != aud.Node || e.ChainID != 31337 {
		t.Errorf("envelope %+v, want sender %s, aud and to %s, chain 31337", e, k.DID, aud.Node)
	}
	if e.Bounty == nil || *e.Bounty != (BountyRef{ChainID: 31337, Escrow: aud.Escrow, ID: 7}) {
		t.Errorf("bounty %+v, want 7 in %s on 31337", e.Bounty, aud.Escrow)
	}
	if e.Expires-e.IssuedAt != 60 || string(e.Body) != `{"wallet":"0x01"}` {
		t.Errorf("exp-iat %d, body %s", e.Expires-e.IssuedAt, e.Body)
	}
	if err := e.CheckAudience(aud.Node, 31337); err != nil {
		t.Errorf("at its node: %v", err)
	}
	if err := e.CheckAudience(k.DID.String(), 31337); !errors.Is(err, ErrWrongAudience) {
		t.Errorf("at another node: %v, want wrong audience", err)
	}
	if err := e.CheckAudience(aud.Node, 1); !errors.Is(err, ErrWrongChain) {
		t.Errorf("on another chain: %v, want wrong chain", err)
	}
	noBounty, _ := SignRequest(k, aud, 0, map[string]any{}, now, time.Minute)
	if v, err := testVerifier(&now).Verify(context.Background(), []byte(noBounty)); err != nil || v.Envelope.Bounty != nil {
		t.Errorf("a request naming no bounty: %v, bounty %+v", err, v.Envelope.Bounty)
	}
}

// TestSignGroupEnvelope: a group envelope keeps its fields, names its group, and leaves the
// caller's map as it was.
func TestSignGroupEnvelope(t *testing.T) {
	k := testKey(t, Ed25519, 1)
	now := testNow
	fields := map[string]any{"state": StateExecution, "body": map[string]any{"text": "on it"}}
	raw, err := SignGroupEnvelope(k, "room-1", fields, now, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := fields["group_id"]; ok {
		t.Error("SignGroupEnvelope wrote into the caller's fields")
	}
	v, err := testVerifier(&now).Verify(context.Background(), raw)
	if err != nil {
		t.Fatal(err)
	}
	var body struct{ Text string }
	json.Unmarshal(v.Envelope.Body, &body)
	if v.Envelope.GroupID != "room-1" || v.Envelope.State != StateExecution || body.Text != "on it" || v.Envelope.Aud != "" {
		t.Errorf("envelope %+v, want group room-1, state execution, the text, no aud", v.Envelope)
	}
}
