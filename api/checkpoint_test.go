package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"golang.org/x/mod/sumdb/note"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/reputation/merkle"
	"github.com/surety-ioa/surety/reputation/verify"
)

// treeLog is an audit log over a Merkle tree in memory whose head the node's identity signs as
// reputation.Log does (package reputation tests the log itself).
type treeLog struct {
	tree merkle.Tree
	head reputation.Head
}

func newTreeLog(t *testing.T, ids *identity.Service, envelopes [][]byte) *treeLog {
	t.Helper()
	l := &treeLog{}
	for _, e := range envelopes {
		l.tree.Append(verify.EnvelopeLeaf(e))
	}
	root, _ := l.tree.Root(l.tree.Size())
	payload, _ := json.Marshal(map[string]any{"size": l.tree.Size(), "root": root, "epoch": 3, "closed": 1_800_000_000})
	signed, err := ids.SignAsNode(payload, reputation.HeadType)
	if err != nil {
		t.Fatal(err)
	}
	l.head = reputation.Head{Size: l.tree.Size(), Root: root, Epoch: 3, Closed: 1_800_000_000, Signed: signed}
	return l
}

func (l *treeLog) Head() reputation.Head { return l.head }
func (l *treeLog) InclusionProof(_ context.Context, leaf merkle.Hash, size uint64) (uint64, []merkle.Hash, error) {
	for i := range l.tree.Size() {
		if h, _ := l.tree.Leaf(i); h == leaf {
			p, err := l.tree.InclusionProof(i, size)
			return i, p, err
		}
	}
	return 0, nil, reputation.ErrNotLogged
}
func (l *treeLog) ConsistencyProof(from, to uint64) ([]merkle.Hash, error) {
	return l.tree.ConsistencyProof(from, to)
}
func (l *treeLog) Leaves(context.Context, reputation.LeafQuery) (*reputation.LeafPage, error) {
	return nil, errors.New("a tree in memory keeps no envelopes")
}
func (l *treeLog) Heads(context.Context, int64, int) (*reputation.HeadPage, error) {
	return &reputation.HeadPage{Heads: []reputation.Head{l.head}}, nil
}

// TestLogCheckpoint: GET /v1/log/checkpoint is the head of /v1/log/head as a signed note that
// the verifier and Go's sumdb/note both open under the node's key, with the origin that names
// this chain, RootAnchor and node; an inclusion proof the node serves verifies against it.
// Without a RootAnchor the node signs none (501 no-checkpoint).
func TestLogCheckpoint(t *testing.T) {
	anchor := common.HexToAddress("0x5FbDB2315678afecb367f032d93F642f64180aa3")
	var envelopes [][]byte
	for i := range 11 {
		envelopes = append(envelopes, fmt.Appendf(nil, "audit-envelope-%d", i))
	}
	newAPI := func(contracts []api.Contract) (*api.Server, string) {
		c, err := chain.NewEmbedded(chain.EmbeddedConfig{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		db := testutil.DB(t)
		ids := newIdentity(t, db)
		s, err := api.New(api.Config{Chain: api.ChainInfo{ID: chain.EmbeddedChainID, Kind: "embedded", Contracts: contracts},
			Blocks: c, DB: db, Identity: ids, AuditLog: newTreeLog(t, ids, envelopes)})
		if err != nil {
			t.Fatal(err)
		}
		return s, ids.NodeDID()
	}
	s, node := newAPI([]api.Contract{{Name: "RootAnchor", Address: anchor}})
	h := s.Handler()

	rec := get(t, h, http.MethodGet, "/v1/log/checkpoint")
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("checkpoint: %d %s %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	body := rec.Body.Bytes()
	origin := verify.Origin(chain.EmbeddedChainID, anchor.Hex(), node)
	if got, _ := s.CheckpointOrigin(); got != origin {
		t.Errorf("origin %q, want %q", got, origin)
	}
	cp, err := verify.OpenCheckpoint(body, origin, node)
	if err != nil {
		t.Fatalf("OpenCheckpoint: %v\n%s", err, body)
	}
	var served reputation.Head
	if err := json.Unmarshal(get(t, h, http.MethodGet, "/v1/log/head").Body.Bytes(), &served); err != nil {
		t.Fatal(err)
	}
	head, err := verify.OpenHead(served.Signed, node)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Size != 11 || cp.Size != head.Size || cp.Root != head.Root {
		t.Errorf("checkpoint %d %s, signed head %d %s", cp.Size, cp.Root, head.Size, head.Root)
	}
	if again := get(t, h, http.MethodGet, "/v1/log/checkpoint").Body.String(); again != string(body) {
		t.Errorf("the same head signed twice differs:\n%s\n%s", body, again)
	}

	// Go's checksum-database notes open it with the verifier key of the node's DID.
	vkey, err := verify.NoteVerifierKey(origin, node)
	if err != nil {
		t.Fatal(err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := note.Open(body, note.VerifierList(v)); err != nil || n.Text != string(cp.Text()) {
		t.Errorf("sumdb/note: %+v, %v", n, err)
	}

	// An audit's inclusion proof, as the node serves it, against the checkpoint's root.
	leaf := verify.EnvelopeLeaf(envelopes[4])
	var p verify.InclusionProof
	if err := json.Unmarshal(get(t, h, http.MethodGet, "/v1/log/proof/inclusion?leaf="+leaf.String()).Body.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	if err := verify.Inclusion(leaf, p, cp.Size, cp.Root); err != nil {
		t.Errorf("inclusion against the checkpoint: %v", err)
	}

	noAnchor, _ := newAPI(nil)
	rec = get(t, noAnchor.Handler(), http.MethodGet, "/v1/log/checkpoint")
	var prob struct{ Type string }
	if err := json.Unmarshal(rec.Body.Bytes(), &prob); err != nil || rec.Code != http.StatusNotImplemented || prob.Type != "https://surety.dev/problems/no-checkpoint" {
		t.Errorf("without a RootAnchor: %d %s", rec.Code, rec.Body)
	}
}

// countingSigner is the node's identity counting the notes it signs.
type countingSigner struct {
	*identity.Service
	notes atomic.Int32
}

func (c *countingSigner) SignNoteAsNode(text []byte) ([]byte, error) {
	c.notes.Add(1)
	return c.Service.SignNoteAsNode(text)
}

// TestCheckpointSignedOncePerHead: anyone may GET the checkpoint, so a request costs the node
// no signature: it signs a head's checkpoint once and serves those bytes until the head
// changes, then signs the new head.
func TestCheckpointSignedOncePerHead(t *testing.T) {
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	db := testutil.DB(t)
	ids := &countingSigner{Service: newIdentity(t, db)}
	log := newTreeLog(t, ids.Service, [][]byte{[]byte("audit-envelope-0")})
	anchor := common.HexToAddress("0x5FbDB2315678afecb367f032d93F642f64180aa3")
	s, err := api.New(api.Config{Chain: api.ChainInfo{ID: chain.EmbeddedChainID, Kind: "embedded", Contracts: []api.Contract{{Name: "RootAnchor", Address: anchor}}},
		Blocks: c, DB: db, Identity: ids, AuditLog: log})
	if err != nil {
		t.Fatal(err)
	}
	h, origin := s.Handler(), verify.Origin(chain.EmbeddedChainID, anchor.Hex(), ids.NodeDID())
	first := get(t, h, http.MethodGet, "/v1/log/checkpoint").Body.String()
	for range 20 {
		if again := get(t, h, http.MethodGet, "/v1/log/checkpoint").Body.String(); again != first {
			t.Fatalf("the same head served differently:\n%s\n%s", first, again)
		}
	}
	if n := ids.notes.Load(); n != 1 {
		t.Errorf("21 requests for one head signed %d notes, want 1", n)
	}
	// The head moves on: the next request signs the new head.
	*log = *newTreeLog(t, ids.Service, [][]byte{[]byte("audit-envelope-0"), []byte("audit-envelope-1")})
	next := get(t, h, http.MethodGet, "/v1/log/checkpoint").Body.Bytes()
	cp, err := verify.OpenCheckpoint(next, origin, ids.NodeDID())
	if err != nil || cp.Size != 2 || cp.Root != log.head.Root {
		t.Errorf("after the head moved: %+v %v, want size 2 root %s", cp, err, log.head.Root)
	}
	if n := ids.notes.Load(); n != 2 {
		t.Errorf("signed %d notes for two heads, want 2", n)
	}
}
