package reputation_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/surety-ioa/surety/reputation"
)

// blockedStakes is a StakeSource whose answer waits until open is closed: a recomputation
// that asks it cannot end before.
type blockedStakes struct {
	stakes stakeMap
	open   chan struct{}
}

func (b *blockedStakes) StakedAgents(ctx context.Context) (map[string]float64, error) {
	select {
	case <-b.open:
		return b.stakes, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestRestartAnswersTheLastScores (issue 31): a restarted service answers the scores its last
// run computed, at their computed time, bit for bit, before its first recomputation ends
// (before, every agent read the prior 0.5 until then); stored scores that do not check out
// are ignored.
func TestRestartAnswersTheLastScores(t *testing.T) {
	ctx := context.Background()
	db, row, store := openChainStore(t)
	dids := make([]string, 500)
	for i := range dids {
		dids[i] = benchDID(i)
	}
	fillAudits(t, db, row, 5_000, dids)
	stakes := stakeMap{}
	for i := 0; i < len(dids); i += 10 {
		stakes[dids[i]] = 1 + float64(i%7)
	}
	now := time.Date(2026, 11, 26, 12, 0, 30, 0, time.UTC)
	clock := func() time.Time { return now }
	run := func(svc *reputation.Service) (stop func()) {
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := svc.Run(rctx); err != nil {
				t.Error(err)
			}
		}()
		return func() { cancel(); <-done }
	}
	passed := make(chan bool, 100)
	first := reputation.NewService(reputation.ServiceConfig{Store: store, Stakes: stakes, Rules: &reputation.Rules{}, Now: clock,
		OnPass: func(r bool) { passed <- r }})
	stop := run(first)
	<-passed // the first recomputation, and its scores stored, came before the first pass
	want := map[string]*reputation.Reputation{}
	for _, d := range dids {
		r, err := first.Reputation(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		want[d] = r
	}
	top := first.Top(ctx, 20)
	stop()
	if want[dids[0]].Computed.IsZero() || want[dids[0]].Audits == 0 {
		t.Fatalf("the first run computed nothing: %+v", want[dids[0]])
	}

	now = now.Add(time.Hour) // the restart computes at a later time: other scores
	open := make(chan struct{})
	second := reputation.NewService(reputation.ServiceConfig{Store: store, Stakes: &blockedStakes{stakes, open}, Rules: &reputation.Rules{}, Now: clock})
	stop = run(second)
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := second.Reputation(ctx, dids[0])
		if err != nil {
			t.Fatal(err)
		}
		if r.Computed.Equal(want[dids[0]].Computed) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the restarted service answers %+v, not the stored scores", r)
		}
		time.Sleep(5 * time.Millisecond)
	}
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
	for _, d := range dids { // the recomputation is still waiting on the stakes
		r, err := second.Reputation(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		w := want[d]
		if !r.Computed.Equal(w.Computed) || !same(r.Score, w.Score) || !same(r.Confidence, w.Confidence) || !same(r.Weight, w.Weight) ||
			!same(r.Rank, w.Rank) || !same(r.Standing, w.Standing) || r.Audits != w.Audits {
			t.Fatalf("%s after the restart: %+v, the last run computed %+v", d, r, w)
		}
	}
	if got := second.Top(ctx, 20); len(got) != len(top) {
		t.Errorf("top 20 after the restart: %d agents, the last run had %d", len(got), len(top))
	}
	for i, r := range second.Top(ctx, len(top)) {
		if r.DID != top[i].DID || !same(r.Rank, top[i].Rank) {
			t.Errorf("top %d after the restart: %s at %v, the last run had %s at %v", i, r.DID, r.Rank, top[i].DID, top[i].Rank)
		}
	}
	close(open)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if r, _ := second.Reputation(ctx, dids[0]); r.Computed.Equal(now.Truncate(time.Minute)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the restarted service's first recomputation never replaced the stored scores")
		}
	}
	stop()

	// Stored scores whose bytes changed fail their checksum: the prior until a recomputation.
	if _, err := db.ExecContext(ctx, `UPDATE reputation_saved_scores SET data = CAST(zeroblob(1) || substr(data, 2) AS BLOB) WHERE part = 0`); err != nil {
		t.Fatal(err)
	}
	third := reputation.NewService(reputation.ServiceConfig{Store: store, Stakes: stakes, Rules: &reputation.Rules{}, Now: clock})
	if ok, err := reputation.RestoreScores(ctx, third); ok || err != nil {
		t.Errorf("damaged stored scores restored: %v, %v", ok, err)
	}
	if r, _ := third.Reputation(ctx, dids[0]); !r.Computed.IsZero() || r.Score != 0.5 {
		t.Errorf("damaged stored scores answered: %+v", r)
	}
}

// TestRestoredScoresDoNotDecideAdmission (review 31): scores restored at start are the last
// run's, whose word on who is staked may be old. Until the first recomputation here, whether an
// unstaked auditor's audit is stored is read from the chain's stakes, as on a node that never
// stopped: a node restored from a world where nobody was staked refuses a free identity's audit
// its peers refuse (the decision is for good: their logs would differ).
func TestRestoredScoresDoNotDecideAdmission(t *testing.T) {
	ctx := context.Background()
	_, _, store := openChainStore(t)
	first := reputation.NewService(reputation.ServiceConfig{Store: store, Stakes: stakeMap{}, Rules: &reputation.Rules{}})
	if err := first.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if err := reputation.SaveScores(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := reputation.MayStand(ctx, first, benchDID(1)); err != nil {
		t.Fatalf("nobody staked: %v, want every audit taken", err)
	}
	// Meanwhile agent 0 staked: a free identity's word now weighs nothing.
	second := reputation.NewService(reputation.ServiceConfig{Store: store, Stakes: stakeMap{benchDID(0): 5}, Rules: &reputation.Rules{}})
	if ok, err := reputation.RestoreScores(ctx, second); !ok || err != nil {
		t.Fatalf("restore: %v, %v", ok, err)
	}
	if err := reputation.MayStand(ctx, second, benchDID(1)); !errors.Is(err, reputation.ErrNoStanding) {
		t.Errorf("a free identity's audit on the restored scores: %v, want ErrNoStanding as its peers answer", err)
	}
	if err := reputation.MayStand(ctx, second, benchDID(0)); err != nil {
		t.Errorf("the staked agent's audit on the restored scores: %v", err)
	}
}
