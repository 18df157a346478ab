package reputation_test

import (
	"context"
	"errors"
	"maps"
	"math/big"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/reputation/merkle"
)

type stakeMap map[string]float64

func (m stakeMap) StakedAgents(context.Context) (map[string]float64, error) { return m, nil }

// signedAudit signs an audit of subject's bounty id by k and verifies it as the API would.
func signedAudit(t *testing.T, v *identity.Verifier, k *identity.Key, subject string, id uint64, score string) (*identity.Verified, []byte) {
	t.Helper()
	return signedAuditAt(t, v, k, subject, id, score, time.Now())
}

// settledBounty is a chain where bounty 7 was finished: posted by poster's wallet, done by
// worker's.
func settledBounty() (poster, worker *identity.Key, f *fakeChain) {
	poster, _ = identity.GenerateKey(identity.Ed25519)
	worker, _ = identity.GenerateKey(identity.Ed25519)
	posterWallet, workerWallet := common.HexToAddress("0xa1"), common.HexToAddress("0xa3")
	f = &fakeChain{
		bounties: map[uint64]reputation.BountyFacts{7: {Finished: true, Poster: posterWallet, Worker: workerWallet, Amount: big.NewInt(1e18), Fee: new(big.Int)}},
		wallets:  map[string]common.Address{poster.DID.String(): posterWallet, worker.DID.String(): workerWallet},
		agents:   map[string]bool{poster.DID.String(): true, worker.DID.String(): true},
	}
	return poster, worker, f
}

// runningService runs a service on a fresh store over f's chain, recomputing every 10 ms,
// until the test ends.
func runningService(t *testing.T, f *fakeChain, stakes reputation.StakeSource) *reputation.Service {
	t.Helper()
	svc, _ := runningServiceCounted(t, f, stakes)
	return svc
}

// passes counts the passes of a service's Run loop (ServiceConfig.OnPass).
type passes struct {
	mu                sync.Mutex
	total, recomputed int
}

func (p *passes) count(recomputed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total++
	if recomputed {
		p.recomputed++
	}
}

func (p *passes) now() (total, recomputed int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.total, p.recomputed
}

// waitPasses waits until ok holds of the passes counted since now (at most 5 s).
func (p *passes) wait(t *testing.T, what string, ok func(total, recomputed int) bool) {
	t.Helper()
	total0, rec0 := p.now()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		total, rec := p.now()
		if ok(total-total0, rec-rec0) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5 s (%d passes, %d recomputations)", what, total-total0, rec-rec0)
		}
	}
}

// runningServiceCounted is runningService, with its loop's passes counted.
func runningServiceCounted(t *testing.T, f *fakeChain, stakes reputation.StakeSource) (*reputation.Service, *passes) {
	t.Helper()
	p := &passes{}
	svc := reputation.NewService(reputation.ServiceConfig{
		Store:  openStore(t),
		Rules:  &reputation.Rules{ChainID: 1337, Escrow: common.HexToAddress(escrow), Bounties: f, Wallets: f, Agents: f},
		Stakes: stakes,
		Every:  10 * time.Millisecond,
		OnPass: p.count,
	})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = svc.Run(ctx); close(done) }()
	t.Cleanup(func() { stop(); <-done }) // before the store closes
	return svc, p
}

func TestServiceScoresSubmittedAudits(t *testing.T) {
	ctx := context.Background()
	poster, worker, f := settledBounty()
	svc := runningService(t, f, stakeMap{poster.DID.String(): 1})

	v := identity.NewVerifier(identity.VerifierConfig{Started: time.Now().Add(-time.Minute)})
	verified, raw := signedAudit(t, v, poster, worker.DID.String(), 7, "0.9")
	got, err := svc.Submit(ctx, verified, raw)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Current || !got.Audit.Backed {
		t.Fatalf("submitted %+v", got)
	}
	if _, err := svc.Submit(ctx, verified, raw); !errors.Is(err, reputation.ErrDuplicate) {
		t.Errorf("the same audit again: %v", err)
	}
	// Refused: an unknown bounty.
	bad, badRaw := signedAudit(t, v, poster, worker.DID.String(), 99, "0.9")
	if _, err := svc.Submit(ctx, bad, badRaw); !errors.Is(err, reputation.ErrUnknownBounty) {
		t.Errorf("audit of an unknown bounty: %v", err)
	}

	// Run picks the new audit up.
	deadline := time.Now().Add(5 * time.Second)
	var rep *reputation.Reputation
	for time.Now().Before(deadline) {
		if rep, err = svc.Reputation(ctx, worker.DID.String()); err == nil && rep.Audits == 1 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// One staked auditor's backed audit raises the score; by how much follows its stake (its
	// word weighs in ETH), no longer the number of agents (which made 0.6 the mark).
	if rep == nil || rep.Audits != 1 || rep.Score <= 0.52 || rep.Confidence <= 0 || len(rep.Feeding) != 1 || rep.Feeding[0].Leaf != merkle.LeafHash(raw) {
		t.Fatalf("reputation = %+v", rep)
	}
	// The one auditor's audit carries the whole weight of the score (its pair's, now).
	if w := rep.Feeding[0].Weight; w <= 0 || w != rep.Weight {
		t.Errorf("the feeding audit weighs %v, the score's weight is %v: one auditor, the same", w, rep.Weight)
	}
	top := svc.Top(ctx, 10)
	if len(top) != 1 || top[0].DID != worker.DID.String() {
		t.Errorf("top = %+v", top)
	}
	if w, _ := svc.Weight(ctx, worker.DID.String()); w != 2*rep.Score {
		t.Errorf("registry weight %v, want %v", w, 2*rep.Score)
	}
	if w, _ := svc.Weight(ctx, "did:key:zNobody"); w != 1 {
		t.Errorf("an unknown agent weighs %v, want 1", w)
	}
}

// TestLiveGraphMatchesTheStore: the scores the service computes from its in-memory graph
// (loaded once, then following each audit, superseding ones included) equal those computed
// from the store read afresh.
func TestLiveGraphMatchesTheStore(t *testing.T) {
	ctx := context.Background()
	keys := make([]*identity.Key, 4)
	f := &fakeChain{agents: map[string]bool{}}
	for i := range keys {
		keys[i], _ = identity.GenerateKey(identity.Ed25519)
		f.agents[keys[i].DID.String()] = true
	}
	now := time.Now()
	store := openStore(t)
	// Every auditor is staked: an unstaked one's unbacked audit is refused (ErrNoStanding).
	staked := stakeMap{keys[0].DID.String(): 2, keys[1].DID.String(): 0.5, keys[2].DID.String(): 0.3, keys[3].DID.String(): 1}
	svc := reputation.NewService(reputation.ServiceConfig{Store: store, Stakes: staked, Rules: &reputation.Rules{Bounties: f, Wallets: f, Agents: f},
		Now: func() time.Time { return now }})
	file := func(by, about int, at time.Time, score string) {
		t.Helper()
		body := `{"kind":"surety.audit/1","subject":"` + keys[about].DID.String() + `","envelope":"m","score":` + score + `,"evidence":{"hash":"` + hash32 + `"}}`
		v := &identity.Verified{Envelope: identity.Envelope{ID: score + at.String(), Sender: keys[by].DID.String(), Body: []byte(body), IssuedAt: at.Unix()}}
		if _, err := svc.Submit(ctx, v, []byte(v.Envelope.ID+keys[by].DID.String())); err != nil {
			t.Fatal(err)
		}
	}
	file(0, 1, now.Add(-time.Hour), "0.9")
	if err := svc.Refresh(ctx); err != nil { // loads the graph: the rest follows in memory
		t.Fatal(err)
	}
	file(0, 1, now.Add(-3*time.Hour), "0.1") // older than the current one: superseded at once
	file(0, 1, now.Add(-time.Minute), "0.6") // newer: replaces
	file(1, 2, now.Add(-2*time.Hour), "0.8")
	file(2, 3, now.Add(-time.Hour), "0.3")
	file(3, 1, now.Add(-time.Hour), "1")
	if err := svc.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	g, dids, err := store.Graph(ctx, now.Truncate(time.Minute).Unix(), staked) // the service's clock step (no log: a minute)
	if err != nil {
		t.Fatal(err)
	}
	want := reputation.Compute(g, reputation.Params{})
	for i, did := range dids {
		got, err := svc.Reputation(ctx, did)
		if err != nil {
			t.Fatal(err)
		}
		if got.Score != want.Score[i] || got.Confidence != want.Confidence[i] {
			t.Errorf("%s: live %v/%v, from the store %v/%v", did, got.Score, got.Confidence, want.Score[i], want.Confidence[i])
		}
	}
}

// TestRefreshKeepsAuditsFiledMeanwhile: audits filed while recomputations run (each over a
// graph taken before they arrived) are never missing from what readers see; the scores
// follow each audit at once, before any recomputation.
func TestRefreshKeepsAuditsFiledMeanwhile(t *testing.T) {
	ctx := context.Background()
	db, row, store := openChainStore(t)
	dids := make([]string, 2_000)
	f := &fakeChain{agents: map[string]bool{}}
	for i := range dids {
		k, err := identity.GenerateKey(identity.Ed25519)
		if err != nil {
			t.Fatal(err)
		}
		dids[i] = k.DID.String()
		f.agents[dids[i]] = true
	}
	fillAudits(t, db, row, 20_000, dids) // a recomputation takes a few ms
	did := func(i int) string { return dids[i] }
	stakes := stakeMap{did(0): 5} // agent 0 above all; the others' unbacked audits need a stake that counts
	for i := 1; i < 50; i++ {
		stakes[did(i)] = 0.2
	}
	svc := reputation.NewService(reputation.ServiceConfig{Store: store, Stakes: stakes, Rules: &reputation.Rules{Bounties: f, Wallets: f, Agents: f}})
	if err := svc.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	counted := func() (n int) {
		for i := range 50 {
			rep, err := svc.Reputation(ctx, did(i))
			if err != nil {
				t.Fatal(err)
			}
			n += rep.Audits
		}
		return n
	}
	before := counted()
	subject := did(1)
	was, _ := svc.Reputation(ctx, subject)

	done := make(chan struct{})
	refreshed := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-done:
				refreshed <- n
				return
			default:
			}
			if err := svc.Refresh(ctx); err != nil {
				t.Error(err)
			}
			n++
		}
	}()
	const filed = 200
	for i := range filed {
		by, about := did(i%50), did((i+1)%50)
		if i == 0 { // the first: staked agent 0, full marks for agent 1
			by, about = did(0), subject
		}
		score := "0.5"
		if i == 0 {
			score = "1"
		}
		body := `{"kind":"surety.audit/1","subject":"` + about + `","envelope":"meanwhile-` + strconv.Itoa(i) + `","score":` + score + `,"evidence":{"hash":"` + hash32 + `"}}`
		v := &identity.Verified{Envelope: identity.Envelope{ID: "m" + strconv.Itoa(i), Sender: by, Body: []byte(body), IssuedAt: time.Now().Unix()}}
		if _, err := svc.Submit(ctx, v, []byte(v.Envelope.ID)); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if now, _ := svc.Reputation(ctx, subject); now.Score <= was.Score || now.Audits != was.Audits+1 {
				t.Errorf("agent 1 right after a full-marks audit by the staked agent: %v (%d audits), was %v (%d)", now.Score, now.Audits, was.Score, was.Audits)
			}
		}
	}
	close(done)
	t.Logf("%d recomputations ran while %d audits were filed", <-refreshed, filed)
	if got := counted(); got != before+filed {
		t.Errorf("readers count %d audits of agents 0–49, want %d + %d", got, before, filed)
	}
}

// liveStakes is a stake source that changes under a running service.
type liveStakes struct {
	mu sync.Mutex
	m  map[string]float64
}

func (l *liveStakes) StakedAgents(context.Context) (map[string]float64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.m), nil
}

// TestStakesChangedRecomputes: an audit by an unstaked auditor moves nothing; once the
// auditor stakes, being told so has the scores recomputed with its new standing. Told two
// ways: StakesChanged (the registry, for a DID whose card it holds), and a recheck of the DID
// (issue 25, Low: the node rechecks every DID whose records changed on chain, card or not; at
// 5ab6450 a card-less auditor's new stake weighed only at the next score step, an hour by
// default, since only the registry said the stakes changed).
func TestStakesChangedRecomputes(t *testing.T) {
	for _, tt := range []struct {
		name string
		tell func(ctx context.Context, svc *reputation.Service, did string) error
	}{
		{"StakesChanged", func(_ context.Context, svc *reputation.Service, _ string) error { svc.StakesChanged(); return nil }},
		{"a recheck of the DID", func(ctx context.Context, svc *reputation.Service, did string) error {
			return svc.Recheck(ctx, []string{did}, nil)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			poster, worker, f := settledBounty()
			stakes := &liveStakes{m: map[string]float64{"did:key:zSomeoneElse": 1}}
			svc, passes := runningServiceCounted(t, f, stakes)

			v := identity.NewVerifier(identity.VerifierConfig{Started: time.Now().Add(-time.Minute)})
			verified, raw := signedAudit(t, v, poster, worker.DID.String(), 7, "0.9")
			if _, err := svc.Submit(ctx, verified, raw); err != nil {
				t.Fatal(err)
			}
			score := func() float64 {
				rep, err := svc.Reputation(ctx, worker.DID.String())
				if err != nil {
					t.Fatal(err)
				}
				return rep.Score
			}
			// The recomputation the audit asked for, and more passes after it.
			passes.wait(t, "the audit's recomputation and 5 passes more", func(total, recomputed int) bool { return recomputed >= 1 && total >= 6 })
			if s := score(); s > 0.55 {
				t.Fatalf("an unstaked auditor moved the score to %v", s)
			}
			stakes.mu.Lock()
			stakes.m[poster.DID.String()] = 5
			stakes.mu.Unlock()
			passes.wait(t, "10 passes of the loop", func(total, _ int) bool { return total >= 10 })
			if s := score(); s > 0.55 {
				t.Fatalf("the score moved to %v before anyone said the stakes changed", s)
			}
			if err := tt.tell(ctx, svc, poster.DID.String()); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for score() <= 0.6 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if s := score(); s <= 0.6 {
				t.Fatalf("after being told (%s) the score is still %v", tt.name, s)
			}
		})
	}
}
