package auditor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/reputation/merkle"
	"github.com/surety-ioa/surety/reputation/verify"
)

// signedAudit is an audit of subject by k, issued at at.
func signedAudit(t *testing.T, k *identity.Key, subject string, score float64, at time.Time) []byte {
	t.Helper()
	payload := fmt.Sprintf(`{"body":{"kind":"surety.audit/1","subject":%q,"envelope":"task-1","score":%v,"evidence":{"hash":"0x%064x"}}}`, subject, score, 1)
	filled, err := identity.FillEnvelope([]byte(payload), k, at, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := k.SignCompact(filled)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(jws)
}

func newKey(t *testing.T) *identity.Key {
	t.Helper()
	k, err := identity.GenerateKey(identity.Ed25519)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// fakeNode serves a log of two audits (one 200 days old, one of the head's epoch), its head
// signed by a node key and anchored on c by dev account 1, and the scores that publish gives.
type fakeNode struct {
	t       *testing.T
	c       *chain.Embedded
	dep     *contracts.Deployment
	node    *identity.Key
	subject string
	leaves  [][]byte
	head    reputation.Head
	closed  int64
	signed  string
	block   uint64
	names   contracts.Addresses // the contracts /v1/info names
}

const epochLength = 3600

func newFakeNode(t *testing.T) *fakeNode {
	t.Helper()
	c, dep := deployed(t)
	f := &fakeNode{t: t, c: c, dep: dep, node: newKey(t), subject: newKey(t).DID.String(), names: dep.Contracts}
	now := time.Now()
	f.leaves = [][]byte{signedAudit(t, newKey(t), f.subject, 1, now.Add(-200*24*time.Hour)), signedAudit(t, newKey(t), f.subject, 0, now.Add(-3*time.Hour))}
	var tree merkle.Tree
	for _, l := range f.leaves {
		tree.Append(verify.EnvelopeLeaf(l))
	}
	root, _ := tree.Root(2)
	f.head = reputation.Head{Size: 2, Root: root, Epoch: now.Add(-3*time.Hour).Unix() / epochLength}
	f.closed = now.Unix()
	payload, _ := json.Marshal(struct {
		Size   uint64      `json:"size"`
		Root   merkle.Hash `json:"root"`
		Epoch  int64       `json:"epoch"`
		Closed int64       `json:"closed"`
	}{2, root, f.head.Epoch, f.closed})
	var err error
	if f.signed, err = f.node.SignDocument(payload, reputation.HeadType); err != nil {
		t.Fatal(err)
	}
	f.block = anchor(t, c, dep, 1, 2, root)
	return f
}

// serve publishes the scores computed at at, and returns a client of the node.
func (f *fakeNode) serve(at int64) *client.Client {
	t := f.t
	sh, err := ScoreHead(context.Background(), f.c, f.dep, f.head, at, Anchor{Block: f.block}, t.TempDir(), func(context.Context) ([][]byte, error) { return f.leaves, nil })
	if err != nil {
		t.Fatal(err)
	}
	pub := wire.ScoredHead{Size: 2, Epoch: f.head.Epoch, Root: f.head.Root, At: at, Block: f.block, Params: wire.ScoreParams(sh.Params)}
	for _, h := range sh.Scores {
		pub.Scores = append(pub.Scores, wire.HeadScore(h))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		var body any
		switch {
		case r.URL.Path == "/v1/info":
			body = wire.Info{Chain: wire.InfoChain{ID: f.dep.ChainID}, NodeDID: f.node.DID.String(), Contracts: map[string]string{
				"StakeRegistry": f.names.StakeRegistry.Hex(), "BountyEscrow": f.names.BountyEscrow.Hex(), "RootAnchor": f.names.RootAnchor.Hex()}}
		case r.URL.Path == "/v1/log/scores":
			body = pub
		case r.URL.Path == "/v1/log/leaves":
			p := wire.LeafPage{Size: 2, Heads: []wire.Head{{Size: 2, Root: f.head.Root, Epoch: f.head.Epoch, Closed: f.closed, Signed: f.signed}}}
			for i, l := range f.leaves {
				p.Leaves = append(p.Leaves, wire.LoggedLeaf{Index: uint64(i), Leaf: verify.EnvelopeLeaf(l), Epoch: f.head.Epoch, Envelope: l})
			}
			body = p
		default:
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	nc, err := client.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return nc
}

// TestCheckPinsTheScoringTime: a node that publishes scores computed at another time than its
// head's epoch end (here (epoch + 1) × 1 s, January 1970, at which no audit has aged and the
// 200-day-old one weighs in full) is caught, though the scores follow from the log at that
// time: the head signs no epoch length, but the log's last audit pins it (the review of issue
// 28 found such scores verified). The honest time passes, naming what it took on trust.
func TestCheckPinsTheScoringTime(t *testing.T) {
	ctx := context.Background()
	f := newFakeNode(t)
	honest := (f.head.Epoch + 1) * epochLength
	rep, err := Check(ctx, CheckConfig{Node: f.serve(honest), Chain: f.c, DID: f.subject, Dir: t.TempDir()})
	if err != nil || len(rep.Mismatches) != 0 || rep.Subject == nil {
		t.Fatalf("the honest node: %+v %v", rep, err)
	}
	if !slices.Contains(rep.Trusted, "the contracts are the ones the node names") || !slices.Contains(rep.Trusted, "the anchoring wallet is not bound to the node's DID") {
		t.Errorf("trusted: %q: want the contracts from /v1/info and the unbound anchoring wallet named", rep.Trusted)
	}
	for _, at := range []int64{f.head.Epoch + 1, (f.head.Epoch + 1) * (epochLength - 1), honest + f.head.Epoch + 1, honest + 1} {
		if _, err := Check(ctx, CheckConfig{Node: f.serve(at), Chain: f.c, DID: f.subject, Dir: t.TempDir()}); !errors.Is(err, ErrLogMismatch) || !strings.Contains(err.Error(), "not the end of epoch") {
			t.Errorf("scores computed at %d (the epoch ends at %d): %v, want ErrLogMismatch", at, honest, err)
		}
	}
}

// TestCheckOfOtherContracts: pinned to the deployment, the auditor does not find the node's
// anchor in the contracts the node named instead (a deployment of its own, with stakes of its
// own), and an escrow whose stake registry is not the one named is refused.
func TestCheckOfOtherContracts(t *testing.T) {
	ctx := context.Background()
	f := newFakeNode(t)
	theirs, err := contracts.Deploy(ctx, f.c, chain.DevKey(2), contracts.DeployConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	honest := (f.head.Epoch + 1) * epochLength
	nc := f.serve(honest)
	// The node's contracts pinned: they are the ones it anchored in; another deployment pinned:
	// no anchor of the head there.
	if _, err := Check(ctx, CheckConfig{Node: nc, Chain: f.c, Deployment: f.dep, DID: f.subject, Dir: t.TempDir()}); err != nil {
		t.Fatalf("pinned to the node's deployment: %v", err)
	}
	if _, err := Check(ctx, CheckConfig{Node: nc, Chain: f.c, Deployment: theirs, DID: f.subject, Dir: t.TempDir()}); !errors.Is(err, ErrNotAnchored) {
		t.Errorf("pinned to another deployment: %v, want ErrNotAnchored", err)
	}
	f.names.StakeRegistry = theirs.Contracts.StakeRegistry
	if _, err := Check(ctx, CheckConfig{Node: nc, Chain: f.c, DID: f.subject, Dir: t.TempDir()}); !errors.Is(err, ErrLogMismatch) || !strings.Contains(err.Error(), "stakes in") {
		t.Errorf("an escrow named with another deployment's registry: %v, want ErrLogMismatch", err)
	}
}
