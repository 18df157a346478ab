package reputation_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/reputation/merkle"
	"github.com/surety-ioa/surety/reputation/verify"
)

// keySigner signs heads with a DID key, as the node's identity service does.
type keySigner struct{ k *identity.Key }

func (s keySigner) SignAsNode(payload []byte, typ string) (string, error) {
	return s.k.SignDocument(payload, typ)
}

type logFixture struct {
	db    *sql.DB
	chain int64
	store *reputation.Store
	log   *reputation.Log
}

func newLogFixture(t *testing.T, signer keySigner) *logFixture {
	t.Helper()
	db, row, store := openChainStore(t)
	l, err := reputation.OpenLog(context.Background(), db, row, reputation.LogConfig{Epoch: time.Hour, Grace: 15 * time.Minute, Signer: signer})
	if err != nil {
		t.Fatal(err)
	}
	return &logFixture{db: db, chain: row, store: store, log: l}
}

// epochAudits are audits at hours 0..2 of a day (three epochs), four per epoch.
func epochAudits() []struct {
	a   *reputation.Audit
	raw []byte
} {
	var out []struct {
		a   *reputation.Audit
		raw []byte
	}
	day := int64(1_800_000_000 / 86400 * 86400)
	for i := range 12 {
		a, raw := auditAt(fmt.Sprintf("did:key:z6MkAuditor%02d", i), day+int64(i/4)*3600+int64(i%4)*60, 0.5)
		out = append(out, struct {
			a   *reputation.Audit
			raw []byte
		}{a, raw})
	}
	return out
}

func TestLogClosesEpochsAndProves(t *testing.T) {
	ctx := context.Background()
	node, _ := identity.GenerateKey(identity.Ed25519)
	f := newLogFixture(t, keySigner{node})
	audits := epochAudits()
	for _, x := range audits {
		if _, err := f.store.Add(ctx, x.a, x.raw, reputation.Verdict{}); err != nil {
			t.Fatal(err)
		}
	}
	day := time.Unix(audits[0].a.Time, 0)
	// 1:10: epoch 0 ended 10 minutes ago, within the grace: nothing closes.
	if heads, err := f.log.CloseEpochs(ctx, day.Add(70*time.Minute)); err != nil || len(heads) != 0 {
		t.Fatalf("inside the grace: %v, %v", heads, err)
	}
	// 2:20: epochs 0 and 1 close.
	heads, err := f.log.CloseEpochs(ctx, day.Add(140*time.Minute))
	if err != nil || len(heads) != 2 || heads[0].Size != 4 || heads[1].Size != 8 {
		t.Fatalf("closing two epochs: %+v, %v", heads, err)
	}
	if f.log.Accepts(audits[5].a.Time) || !f.log.Accepts(audits[9].a.Time) {
		t.Error("Accepts: a closed epoch must refuse, an open one accept")
	}
	// The head is signed by the node and says what it says.
	payload, signer, err := identity.VerifyJWS([]byte(heads[1].Signed), reputation.HeadType)
	if err != nil || signer != node.DID.String() {
		t.Fatalf("head signature: %v (signer %s)", err, signer)
	}
	var signed reputation.Head
	if err := json.Unmarshal(payload, &signed); err != nil || signed.Size != 8 || signed.Root != heads[1].Root {
		t.Errorf("signed head %+v, %v", signed, err)
	}
	// Every logged audit has an inclusion proof against the head; consistency links heads.
	for _, x := range audits[:8] {
		leaf := merkle.LeafHash(x.raw)
		idx, proof, err := f.log.InclusionProof(ctx, leaf, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := merkle.VerifyInclusion(leaf, idx, 8, proof, heads[1].Root); err != nil {
			t.Errorf("inclusion of %s: %v", leaf, err)
		}
	}
	proof, err := f.log.ConsistencyProof(4, 8)
	if err != nil || merkle.VerifyConsistency(4, 8, heads[0].Root, heads[1].Root, proof) != nil {
		t.Errorf("consistency 4 → 8: %v", err)
	}
	if _, _, err := f.log.InclusionProof(ctx, merkle.LeafHash(audits[10].raw), 0); !errors.Is(err, reputation.ErrNotLogged) {
		t.Errorf("an audit of an open epoch: %v", err)
	}
	// Reopened, the log is where it was.
	again, err := reputation.OpenLog(ctx, f.db, f.chain, reputation.LogConfig{Epoch: time.Hour, Grace: 15 * time.Minute, Signer: keySigner{node}})
	if err != nil || again.Head().Root != heads[1].Root || again.Head().Size != 8 {
		t.Fatalf("reopened: %+v, %v", again.Head(), err)
	}
}

// TestLogRootsIgnoreArrivalOrder: two nodes given the same audits in opposite orders close
// the same epochs with the same roots.
func TestLogRootsIgnoreArrivalOrder(t *testing.T) {
	ctx := context.Background()
	node, _ := identity.GenerateKey(identity.Ed25519)
	a, b := newLogFixture(t, keySigner{node}), newLogFixture(t, keySigner{node})
	audits := epochAudits()
	for i := range audits {
		if _, err := a.store.Add(ctx, audits[i].a, audits[i].raw, reputation.Verdict{}); err != nil {
			t.Fatal(err)
		}
		j := len(audits) - 1 - i
		if _, err := b.store.Add(ctx, audits[j].a, audits[j].raw, reputation.Verdict{}); err != nil {
			t.Fatal(err)
		}
	}
	end := time.Unix(audits[0].a.Time, 0).Add(4 * time.Hour)
	ha, errA := a.log.CloseEpochs(ctx, end)
	hb, errB := b.log.CloseEpochs(ctx, end)
	if errA != nil || errB != nil || len(ha) != 3 || len(hb) != 3 {
		t.Fatalf("closing: %v %v, %d and %d heads", errA, errB, len(ha), len(hb))
	}
	for i := range ha {
		if ha[i].Root != hb[i].Root || ha[i].Size != hb[i].Size {
			t.Errorf("epoch %d: roots %s and %s", ha[i].Epoch, ha[i].Root, hb[i].Root)
		}
	}
}

type fakeAnchorer struct {
	mu    sync.Mutex
	sizes []uint64
	roots []merkle.Hash
}

func (f *fakeAnchorer) Anchor(_ context.Context, size uint64, root merkle.Hash) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sizes, f.roots = append(f.sizes, size), append(f.roots, root)
	return fmt.Sprintf("0xtx%d", size), nil
}

func (f *fakeAnchorer) calls() ([]uint64, []merkle.Hash) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.sizes), slices.Clone(f.roots)
}

// runAnchoring adds the epoch audits to f, runs the reputation service with anchor until the
// head carries an anchor (or five seconds pass), then lets it tick on a little longer so a
// second anchor attempt would be seen.
func runAnchoring(t *testing.T, f *logFixture, anchor reputation.Anchorer) {
	t.Helper()
	ctx := context.Background()
	audits := epochAudits()
	for _, x := range audits {
		if _, err := f.store.Add(ctx, x.a, x.raw, reputation.Verdict{}); err != nil {
			t.Fatal(err)
		}
	}
	later := time.Unix(audits[0].a.Time, 0).Add(5 * time.Hour)
	var passes atomic.Int64
	svc := reputation.NewService(reputation.ServiceConfig{Store: f.store, Log: f.log, Anchorer: anchor, Stakes: stakeMap{},
		Rules: &reputation.Rules{}, Every: 5 * time.Millisecond, Now: func() time.Time { return later },
		OnPass: func(bool) { passes.Add(1) }})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = svc.Run(runCtx) }()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && f.log.Head().AnchorTx == "" {
		time.Sleep(5 * time.Millisecond)
	}
	// More passes, each of which would anchor again if it were going to.
	for more := passes.Load() + 10; passes.Load() < more && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	stop()
	<-done
}

// TestServiceAnchorsTheLatestHeadOnce: when several epochs close together, only the latest
// head is anchored, once, and the anchor survives a reopen.
func TestServiceAnchorsTheLatestHeadOnce(t *testing.T) {
	ctx := context.Background()
	node, _ := identity.GenerateKey(identity.Ed25519)
	f := newLogFixture(t, keySigner{node})
	anchor := &fakeAnchorer{}
	runAnchoring(t, f, anchor)
	sizes, roots := anchor.calls()
	if len(sizes) != 1 || sizes[0] != 12 || roots[0] != f.log.Head().Root {
		t.Fatalf("anchored %v (roots %v), want once at size 12", sizes, roots)
	}
	again, err := reputation.OpenLog(ctx, f.db, f.chain, reputation.LogConfig{Epoch: time.Hour, Grace: 15 * time.Minute, Signer: keySigner{node}})
	if err != nil || again.Head().AnchorTx != "0xtx12" {
		t.Errorf("reopened head %+v, %v", again.Head(), err)
	}
}

// staleAnchorer refuses every head as covered by a larger anchor from the same wallet.
type staleAnchorer struct{ fakeAnchorer }

func (f *staleAnchorer) Anchor(ctx context.Context, size uint64, root merkle.Hash) (string, error) {
	_, _ = f.fakeAnchorer.Anchor(ctx, size, root) // only counting
	return "", fmt.Errorf("%w: StaleTreeSize(latest=20, given=%d)", reputation.ErrStaleAnchor, size)
}

// TestStaleAnchorsAreGivenUp: a head the chain refuses as stale (another node anchored a
// larger one from the same wallet) is marked superseded and not tried again; at 66f817e every
// devnet node retried it about twice a second, forever.
func TestStaleAnchorsAreGivenUp(t *testing.T) {
	node, _ := identity.GenerateKey(identity.Ed25519)
	f := newLogFixture(t, keySigner{node})
	anchor := &staleAnchorer{}
	runAnchoring(t, f, anchor)
	if sizes, _ := anchor.calls(); len(sizes) != 1 {
		t.Errorf("tried to anchor %d times (sizes %v), want once", len(sizes), sizes)
	}
	if got := f.log.Head().AnchorTx; got != reputation.AnchorSuperseded {
		t.Errorf("head's anchor = %q, want %q", got, reputation.AnchorSuperseded)
	}
}

// TestLateAuditsAreRefused: an audit whose epoch the log has closed is refused (it could never
// enter the log), one of an open epoch is taken.
func TestLateAuditsAreRefused(t *testing.T) {
	ctx := context.Background()
	node, _ := identity.GenerateKey(identity.Ed25519)
	f := newLogFixture(t, keySigner{node})
	first := epochAudits()[0]
	if _, err := f.store.Add(ctx, first.a, first.raw, reputation.Verdict{}); err != nil {
		t.Fatal(err)
	}
	start := time.Unix(first.a.Time, 0)
	if heads, err := f.log.CloseEpochs(ctx, start.Add(2*time.Hour)); err != nil || len(heads) != 1 {
		t.Fatalf("closing: %v, %v", heads, err)
	}
	chainFacts := &fakeChain{agents: map[string]bool{subject: true}}
	svc := reputation.NewService(reputation.ServiceConfig{Store: f.store, Log: f.log, Stakes: stakeMap{},
		Rules: &reputation.Rules{Bounties: chainFacts, Wallets: chainFacts, Agents: chainFacts}})
	body := `{"kind":"surety.audit/1","subject":"` + subject + `","envelope":"m","score":0.5,"evidence":{"hash":"` + hash32 + `"}}`
	tests := []struct {
		name string
		at   time.Time
		err  error
	}{
		{"in the closed epoch", start.Add(30 * time.Minute), reputation.ErrLate},
		{"in an open epoch", start.Add(3 * time.Hour), nil},
	}
	for _, tt := range tests {
		v := &identity.Verified{Envelope: identity.Envelope{ID: tt.name, Sender: auditor, Body: []byte(body), IssuedAt: tt.at.Unix()}}
		if _, err := svc.Submit(ctx, v, []byte(tt.name)); !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.err)
		}
	}
}

// TestLoggedLeafIgnoresSurroundingWhitespace: an audit posted with a trailing newline (curl
// --data-binary @file) is logged under the leaf an auditor computes from the envelope
// (verify.EnvelopeLeaf, which trims it), so its inclusion proof is found; at 51a41e0 the
// node hashed the bytes as posted, and the auditor's leaf was not in the log.
func TestLoggedLeafIgnoresSurroundingWhitespace(t *testing.T) {
	ctx := context.Background()
	node, _ := identity.GenerateKey(identity.Ed25519)
	f := newLogFixture(t, keySigner{node})
	start := time.Unix(epochAudits()[0].a.Time, 0)
	chainFacts := &fakeChain{agents: map[string]bool{subject: true}}
	svc := reputation.NewService(reputation.ServiceConfig{Store: f.store, Log: f.log, Stakes: stakeMap{},
		Rules: &reputation.Rules{Bounties: chainFacts, Wallets: chainFacts, Agents: chainFacts}})
	body := `{"kind":"surety.audit/1","subject":"` + subject + `","envelope":"m","score":0.5,"evidence":{"hash":"` + hash32 + `"}}`
	raw := []byte("  eyJhbGciOiJFZERTQSJ9.e30.c2ln\r\n")
	v := &identity.Verified{Envelope: identity.Envelope{ID: "padded", Sender: auditor, Body: []byte(body), IssuedAt: start.Add(10 * time.Minute).Unix()}}
	if _, err := svc.Submit(ctx, v, raw); err != nil {
		t.Fatal(err)
	}
	heads, err := f.log.CloseEpochs(ctx, start.Add(2*time.Hour))
	if err != nil || len(heads) != 1 || heads[0].Size != 1 {
		t.Fatalf("closing: %+v, %v", heads, err)
	}
	leaf := verify.EnvelopeLeaf(raw)
	idx, proof, err := f.log.InclusionProof(ctx, leaf, 0)
	if err != nil {
		t.Fatalf("the auditor's leaf %s: %v", leaf, err)
	}
	if err := merkle.VerifyInclusion(leaf, idx, 1, proof, heads[0].Root); err != nil {
		t.Error(err)
	}
}
