package reputation_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/reputation/merkle"
)

// scoredHead is a scored head of size with n agents whose figures are distinct doubles (the
// least bits set), and one audit of input.
func scoredHead(size uint64, n int) *reputation.ScoredHead {
	sh := &reputation.ScoredHead{Size: size, Epoch: int64(size), Root: merkle.Hash{byte(size)}, At: int64(size+1) * 60, Block: size * 2, AnchorTx: fmt.Sprintf("0x%064x", size),
		Params: reputation.DefaultParams, Inputs: &reputation.ScoreInputs{Stake: map[string]float64{"did:key:zA": 1.5},
			Audits: []reputation.ScoredAudit{{Leaf: merkle.Hash{1}, Auditor: "did:key:zA", Subject: "did:key:zB", Target: "envelope:m", Score: 0.8, Time: 1, Backed: true, Settled: 1}}}}
	for i := range n {
		x := math.Nextafter(0.5, 1) + float64(size)*1e-9 + float64(i)*1e-12
		sh.Scores = append(sh.Scores, reputation.HeadScore{DID: fmt.Sprintf("did:key:z%03d", i), Score: x, Confidence: x / 3, Weight: x * 7, Standing: x / 11, Relative: x * 13})
	}
	return sh
}

// TestScoredHeadsKeepTheirBits: the scores of a scored head come back from the store as
// saved, bit for bit (REAL columns), paged in DID order and by DID; the store keeps the latest
// KeepScoredHeads heads and the inputs of the latest KeepScoreInputs; an agent's history has a
// point per kept head, oldest first; an unknown head is ErrNotScored.
func TestScoredHeadsKeepTheirBits(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	if _, err := s.ScoredHead(ctx, reputation.ScoresQuery{}); !errors.Is(err, reputation.ErrNotScored) {
		t.Fatalf("no head scored yet: %v", err)
	}
	const heads = reputation.KeepScoredHeads + 3
	for size := uint64(1); size <= heads; size++ {
		if err := s.SaveScoredHead(ctx, scoredHead(size, 5)); err != nil {
			t.Fatal(err)
		}
	}
	latest, err := s.ScoredHead(ctx, reputation.ScoresQuery{Inputs: true})
	if err != nil {
		t.Fatal(err)
	}
	want := scoredHead(heads, 5)
	if latest.Size != heads || latest.Root != want.Root || latest.At != want.At || latest.Block != want.Block || latest.Params != want.Params || latest.Inputs == nil || len(latest.Inputs.Audits) != 1 {
		t.Fatalf("the latest head: %+v", latest)
	}
	for i, r := range latest.Scores {
		if r != want.Scores[i] {
			t.Errorf("agent %d: %+v, saved %+v", i, r, want.Scores[i])
		}
	}
	// Paged: two pages of 3 and 2, the first naming the second.
	p1, err := s.ScoredHead(ctx, reputation.ScoresQuery{Size: heads, Limit: 3})
	if err != nil || len(p1.Scores) != 3 || p1.Next != want.Scores[2].DID || p1.Inputs != nil {
		t.Fatalf("page 1: %+v %v", p1, err)
	}
	p2, err := s.ScoredHead(ctx, reputation.ScoresQuery{Size: heads, After: p1.Next, Limit: 3, Inputs: true})
	if err != nil || len(p2.Scores) != 2 || p2.Next != "" || p2.Scores[0] != want.Scores[3] || p2.Inputs != nil {
		t.Fatalf("page 2: %+v %v", p2, err)
	}
	one, err := s.ScoredHead(ctx, reputation.ScoresQuery{Size: heads, DID: want.Scores[4].DID})
	if err != nil || len(one.Scores) != 1 || one.Scores[0] != want.Scores[4] {
		t.Fatalf("one agent: %+v %v", one, err)
	}
	// Pruned: the oldest heads are gone, with their scores; older inputs are dropped.
	for size, kept := range map[uint64]bool{1: false, 3: false, 4: true, heads: true} {
		_, err := s.ScoredHead(ctx, reputation.ScoresQuery{Size: size})
		if kept != (err == nil) || !kept && !errors.Is(err, reputation.ErrNotScored) {
			t.Errorf("head %d: %v, kept %v", size, err, kept)
		}
	}
	for size, inputs := range map[uint64]bool{heads - reputation.KeepScoreInputs: false, heads - reputation.KeepScoreInputs + 1: true} {
		sh, err := s.ScoredHead(ctx, reputation.ScoresQuery{Size: size, Inputs: true})
		if err != nil || (sh.Inputs != nil) != inputs {
			t.Errorf("head %d: inputs %v (%v), want kept %v", size, sh.Inputs, err, inputs)
		}
	}
	history, err := s.ScoreHistory(ctx, want.Scores[0].DID)
	if err != nil || len(history) != reputation.KeepScoredHeads || history[0].Size != 4 || history[len(history)-1].Size != heads ||
		history[len(history)-1].Score != want.Scores[0].Score || history[len(history)-1].At != want.At {
		t.Fatalf("history: %d points, first %+v, last %+v (%v)", len(history), history[0], history[len(history)-1], err)
	}
	if none, err := s.ScoreHistory(ctx, "did:key:zNobody"); err != nil || len(none) != 0 {
		t.Errorf("history of an unscored DID: %v %v", none, err)
	}
}
