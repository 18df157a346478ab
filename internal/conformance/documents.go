package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/lestrrat-go/jwx/v2/jwa"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/registry"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/reputation/merkle"
	"github.com/surety-ioa/surety/reputation/verify"
)

// The signed documents of registry and reputation, and the node's peer binding: cards,
// audits, log heads, peer bindings.
func init() {
	Register(Kind{Name: "card", Generate: genCards, Check: checkCard})
	Register(Kind{Name: "audit", Generate: genAudits, Check: checkAudit})
	Register(Kind{Name: "log-head", Generate: genHeads, Check: checkHead})
	Register(Kind{Name: "peer-binding", Generate: genPeerBindings, Check: checkPeerBinding})
}

// ---- card ----

func cardOf(k *identity.Key) registry.Card {
	return registry.Card{DID: k.DID.String(), Name: "Alice the translator", Description: "Translates and summarizes technical text.",
		Capabilities: []string{"translate", "summarize", "lang:de"}, Endpoints: []registry.Endpoint{{Kind: "a2a", URL: "https://alice.example/a2a"}, {Kind: "mcp", URL: "https://alice.example/mcp"}},
		Wallet: walletAddr(wallet), Seq: 3, Updated: Now - 60}
}

func signCard(c registry.Card, k *identity.Key) string {
	sc, err := registry.Sign(c, k)
	if err != nil {
		panic(err)
	}
	return sc.JWS
}

func genCards() ([]Named, error) {
	var out []Named
	add := func(name, desc, jws string, want Expect) {
		out = append(out, Named{name, Vector{Kind: "card", Description: desc, Input: jsonString(jws), Context: &Context{Now: Now}, Expect: want}})
	}
	facts := func(c registry.Card) Expect {
		return Valid(map[string]any{"did": c.DID, "name": c.Name, "seq": c.Seq, "wallet": c.Wallet.Hex(), "capabilities": c.Capabilities})
	}
	c := cardOf(alice)
	add("valid-ed25519", "an Agent Card signed by its own Ed25519 DID", signCard(c, alice), facts(c))
	cb := cardOf(bob)
	cb.Name = "Bob the builder"
	add("valid-es256k", "an Agent Card signed by its own secp256k1 DID (ES256K)", signCard(cb, bob), facts(cb))
	add("forged", "a card with one bit of its signature flipped", flipSignature(signCard(c, alice)), Refused("card-forged"))
	good := signCard(c, alice)
	t := c
	t.Seq = 4
	tp, _ := json.Marshal(t)
	add("tampered", "a card whose seq was raised after signing", replacePayload(good, tp), Refused("card-forged"))
	wrong := cardOf(alice)
	wrong.DID = bob.DID.String()
	wp, _ := json.Marshal(wrong)
	s, _ := alice.SignDocument(wp, registry.CardType)
	add("wrong-did", "a card describing bob, signed by alice", s, Refused("card-wrong-did"))
	var big map[string]any
	cp, _ := json.Marshal(c)
	_ = json.Unmarshal(cp, &big)
	big["padding"] = strings.Repeat("x", registry.MaxCardSize)
	bp, _ := json.Marshal(big)
	s, _ = alice.SignDocument(bp, registry.CardType)
	add("oversize", fmt.Sprintf("a signed card over %d bytes (an unknown field pads it)", registry.MaxCardSize), s, Refused("card-too-large"))
	s, _ = alice.SignDocument(cp, identity.EnvelopeType)
	add("wrong-typ", "a card payload signed with typ surety-envelope+jws", s, Refused("card-malformed"))
	future := cardOf(alice)
	future.Updated = Now + 3600
	add("updated-in-future", "a card whose updated time is an hour ahead (5 minutes of skew allowed)", signCard(future, alice), Refused("card-malformed"))
	bad := cardOf(alice)
	bad.Capabilities = []string{"Translate"}
	add("bad-capability", "a capability with a capital letter (a-z 0-9 . - : / only)", signCard(bad, alice), Refused("card-malformed"))
	zero := cardOf(alice)
	zero.Seq = 0
	add("seq-zero", "a card with seq 0 (seq starts at 1)", signCard(zero, alice), Refused("card-malformed"))
	return out, nil
}

func checkCard(v Vector) (Expect, error) {
	s, err := inputString(v)
	if err != nil {
		return Expect{}, err
	}
	c, err := registry.Parse([]byte(s), time.Unix(ctx(v).Now, 0))
	if err != nil {
		return refusal(err)
	}
	return Valid(map[string]any{"did": c.DID, "name": c.Name, "seq": c.Seq, "wallet": c.Wallet.Hex(), "capabilities": c.Capabilities}), nil
}

// ---- audit: an envelope whose body is an audit ----

func auditEnvelope(k *identity.Key, nonce string, body map[string]any, bounty *identity.BountyRef) string {
	b, err := json.Marshal(body)
	if err != nil {
		panic(err)
	}
	e := identity.Envelope{ID: nonce, Sender: k.DID.String(), State: identity.StateConclusion, Bounty: bounty, Body: b,
		IssuedAt: Now - 5, Expires: Now + 295, Nonce: nonce}
	return signEnvelope(k, e)
}

func auditBody(subject string) map[string]any {
	return map[string]any{"kind": reputation.AuditKind, "subject": subject, "envelope": "task-0001", "score": 0.8,
		"evidence": map[string]any{"hash": "0x" + strings.Repeat("ab", 32), "uri": "https://alice.example/evidence/task-0001"}}
}

func genAudits() ([]Named, error) {
	var out []Named
	add := func(name, desc, jws string, want Expect) {
		out = append(out, Named{name, Vector{Kind: "audit", Description: desc, Input: jsonString(jws), Context: &Context{Now: Now}, Expect: want}})
	}
	add("valid-envelope-target", "alice audits bob's work in envelope task-0001: score 0.8 with an evidence hash and URI",
		auditEnvelope(alice, "audit-valid-envelope", auditBody(bob.DID.String()), nil),
		Valid(map[string]any{"auditor": alice.DID.String(), "subject": bob.DID.String(), "score": 0.8, "target": "envelope:task-0001", "time": Now - 5}))
	ref := &identity.BountyRef{ChainID: ChainID, Escrow: "0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0", ID: 7}
	body := auditBody(alice.DID.String())
	delete(body, "envelope")
	body["score"] = 1
	escrow := common.HexToAddress(ref.Escrow).Hex()
	add("valid-bounty-target", "bob (ES256K) audits alice's work on bounty 7: the target is the envelope's bounty field",
		auditEnvelope(bob, "audit-valid-bounty", body, ref),
		Valid(map[string]any{"auditor": bob.DID.String(), "subject": alice.DID.String(), "score": 1, "target": fmt.Sprintf("bounty:%d:%s:7", ChainID, strings.ToLower(escrow)), "time": Now - 5}))
	add("self-audit", "an auditor auditing itself", auditEnvelope(alice, "audit-self", auditBody(alice.DID.String()), nil), Refused("audit-invalid"))
	b := auditBody(bob.DID.String())
	b["score"] = 1.5
	add("score-above-one", "a score of 1.5 (scores are in [0, 1])", auditEnvelope(alice, "audit-score", b, nil), Refused("audit-invalid"))
	b = auditBody(bob.DID.String())
	b["evidence"] = map[string]any{"hash": "0xabcd"}
	add("short-evidence-hash", "an evidence hash of 2 bytes (32 required)", auditEnvelope(alice, "audit-hash", b, nil), Refused("audit-invalid"))
	b = auditBody(bob.DID.String())
	add("two-targets", "an audit naming both an envelope and the envelope's bounty", auditEnvelope(alice, "audit-two", b, ref), Refused("audit-invalid"))
	b = auditBody(bob.DID.String())
	b["kind"] = "surety.audit/2"
	add("unknown-kind", "a body whose kind is not surety.audit/1", auditEnvelope(alice, "audit-kind", b, nil), Refused("audit-invalid"))
	b = auditBody(bob.DID.String())
	b["weight"] = 10
	add("unknown-body-field", "an audit body with a field the audit does not define (audit bodies are strict)", auditEnvelope(alice, "audit-field", b, nil), Refused("audit-invalid"))
	add("forged", "a valid audit with one bit of its signature flipped", flipSignature(auditEnvelope(alice, "audit-forged", auditBody(bob.DID.String()), nil)), Refused("envelope-bad-signature"))
	return out, nil
}

func checkAudit(v Vector) (Expect, error) {
	s, err := inputString(v)
	if err != nil {
		return Expect{}, err
	}
	got, err := verifyEnvelope([]byte(s), ctx(v))
	if err != nil {
		return refusal(err)
	}
	a, err := reputation.ParseAudit(&got.Envelope)
	if err != nil {
		return refusal(err)
	}
	return Valid(map[string]any{"auditor": a.Auditor, "subject": a.Subject, "score": a.Score, "target": a.Target(), "time": a.Time}), nil
}

// ---- log-head: a signed tree head ----

type headPayload struct {
	Size   uint64      `json:"size"`
	Root   merkle.Hash `json:"root"`
	Epoch  int64       `json:"epoch"`
	Closed int64       `json:"closed"`
}

// fixtureHead is a head over four leaves, "leaf-0" … "leaf-3" (RFC 6962 leaf hashes).
func fixtureHead() headPayload {
	var t merkle.Tree
	for i := range 4 {
		t.Append(merkle.LeafHash([]byte(fmt.Sprintf("leaf-%d", i))))
	}
	root, _ := t.Root(4)
	return headPayload{Size: 4, Root: root, Epoch: 29400000, Closed: Now - 30}
}

func genHeads() ([]Named, error) {
	var out []Named
	add := func(name, desc, jws, node string, want Expect) {
		out = append(out, Named{name, Vector{Kind: "log-head", Description: desc, Input: jsonString(jws), Context: &Context{Node: node}, Expect: want}})
	}
	h := fixtureHead()
	p, _ := json.Marshal(h)
	facts := func(signer string) Expect {
		return Valid(map[string]any{"size": h.Size, "root": h.Root.String(), "epoch": h.Epoch, "closed": h.Closed, "signer": signer})
	}
	s, _ := nodeKey.SignDocument(p, verify.HeadType)
	add("valid-ed25519", "a tree head signed by the node's Ed25519 DID (size 4; the root of leaves leaf-0..leaf-3)", s, nodeKey.DID.String(), facts(nodeKey.DID.String()))
	s2, _ := node256k1.SignDocument(p, verify.HeadType)
	add("valid-es256k", "a tree head signed by a node whose DID key is secp256k1", s2, node256k1.DID.String(), facts(node256k1.DID.String()))
	add("wrong-signer", "a valid head by the node, checked against another node's DID", s, otherNode.DID.String(), RefusedFor("wrong-signer"))
	add("bad-signature", "a head with one bit of its signature flipped", flipSignature(s), nodeKey.DID.String(), RefusedFor("bad-signature"))
	t := h
	t.Size = 5
	tp, _ := json.Marshal(t)
	add("tampered", "a head whose size was changed after signing", replacePayload(s, tp), nodeKey.DID.String(), RefusedFor("bad-signature"))
	e, _ := nodeKey.SignDocument(p, identity.EnvelopeType)
	add("wrong-typ", "a head payload signed with typ surety-envelope+jws", e, nodeKey.DID.String(), RefusedFor("wrong-type"))
	add("alg-does-not-fit-key", "alg ES256K on an Ed25519 node key", signRaw(nodeKey, jwa.EdDSA, header{"ES256K", nodeKey.DID.KeyID(), verify.HeadType}, p), nodeKey.DID.String(), RefusedFor("unsupported-key"))
	np, _ := json.Marshal(map[string]any{"epoch": h.Epoch, "closed": h.Closed})
	n, _ := nodeKey.SignDocument(np, verify.HeadType)
	add("no-size-or-root", "a signed head payload without size and root", n, nodeKey.DID.String(), RefusedFor("malformed"))
	return out, nil
}

// headReasons are the reason slugs of the verifier's errors.
var headReasons = []struct {
	err    error
	reason string
}{
	{verify.ErrWrongType, "wrong-type"}, {verify.ErrWrongSigner, "wrong-signer"}, {verify.ErrBadSignature, "bad-signature"},
	{verify.ErrUnsupportedKey, "unsupported-key"}, {verify.ErrMalformed, "malformed"},
}

func checkHead(v Vector) (Expect, error) {
	s, err := inputString(v)
	if err != nil {
		return Expect{}, err
	}
	h, err := verify.OpenHead(s, ctx(v).Node)
	if err != nil {
		for _, r := range headReasons {
			if errors.Is(err, r.err) {
				return RefusedFor(r.reason), nil
			}
		}
		return Expect{}, fmt.Errorf("unmapped error: %w", err)
	}
	return Valid(map[string]any{"size": h.Size, "root": h.Root.String(), "epoch": h.Epoch, "closed": h.Closed, "signer": h.Signer}), nil
}

// ---- peer-binding: a node's DID claims its libp2p peer id ----

// The libp2p peer ids of two fixture nodes: their Ed25519 peer keys are made from the seeds
// Seed("peer") and Seed("other-peer") (libp2p's GenerateEd25519Key reading the 32 bytes).
// Verifiers compare peer ids as text; they do not parse them.
const (
	fixturePeer      = "12D3KooWQVqdXM5Kkh3ptKXCiyw3cCcxujWXGLyGkXYNTugtSern"
	fixtureOtherPeer = "12D3KooWC5Zr461VBeCL8DtC2GPFac7RRwPKsSPYjjCfWpXMuWiR"
)

func genPeerBindings() ([]Named, error) {
	var out []Named
	add := func(name, desc, jws, node, peer string, want Expect) {
		out = append(out, Named{name, Vector{Kind: "peer-binding", Description: desc, Input: jsonString(jws), Context: &Context{Node: node, Peer: peer}, Expect: want}})
	}
	s, err := identity.SignPeerBinding(nodeKey, fixturePeer)
	if err != nil {
		return nil, err
	}
	node := nodeKey.DID.String()
	add("valid", "the node's DID claims its libp2p peer id (GET /v1/info, peer.binding)", s, node, fixturePeer, Valid(map[string]any{"did": node, "peerId": fixturePeer}))
	add("wrong-peer", "a valid binding checked for another peer id than the one it names", s, node, fixtureOtherPeer, RefusedFor("peer-mismatch"))
	add("wrong-node", "a valid binding checked for another node's DID", s, otherNode.DID.String(), fixturePeer, RefusedFor("peer-mismatch"))
	add("forged", "a binding with one bit of its signature flipped", flipSignature(s), node, fixturePeer, RefusedFor("bad-signature"))
	claim, _ := otherNode.SignDocument(identity.PeerBindingPayload(node, fixturePeer), identity.PeerBindingType)
	add("names-another-did", "another node signs a binding that names the node's DID and peer", claim, node, fixturePeer, RefusedFor("peer-mismatch"))
	card, _ := nodeKey.SignDocument(identity.PeerBindingPayload(node, fixturePeer), registry.CardType)
	add("wrong-typ", "a peer binding payload signed with typ surety-card+jws", card, node, fixturePeer, RefusedFor("malformed"))
	return out, nil
}

// peerReasons are the reason slugs of VerifyPeerBinding's errors.
var peerReasons = []struct {
	err    error
	reason string
}{
	{identity.ErrPeerMismatch, "peer-mismatch"}, {identity.ErrBadSignature, "bad-signature"},
	{identity.ErrUnsupportedAlg, "unsupported-alg"}, {identity.ErrMalformed, "malformed"},
}

func checkPeerBinding(v Vector) (Expect, error) {
	s, err := inputString(v)
	if err != nil {
		return Expect{}, err
	}
	c := ctx(v)
	b, err := identity.VerifyPeerBinding([]byte(s), c.Node, c.Peer)
	if err != nil {
		for _, r := range peerReasons {
			if errors.Is(err, r.err) {
				return RefusedFor(r.reason), nil
			}
		}
		return Expect{}, fmt.Errorf("unmapped error: %w", err)
	}
	return Valid(map[string]any{"did": b.DID, "peerId": b.PeerID}), nil
}
