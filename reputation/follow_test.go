package reputation

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestFollowMatchesFrozenStandings: after a computation, audits applied one at a time (new
// ones, superseding ones, ones by and about agents the computation did not know) leave every
// subject exactly where summing all the audits would, with the computation's standings.
func TestFollowMatchesFrozenStandings(t *testing.T) {
	tests := []struct {
		name   string
		staked bool
	}{{"some agents staked", true}, {"no one staked", false}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			now := time.Now().Unix()
			did := func(i int) string { return fmt.Sprintf("did:key:z%04d", i) }
			audit := func(agents int) *Audit {
				a, s := r.IntN(agents), r.IntN(agents)
				if a == s {
					s = (s + 1) % agents
				}
				return &Audit{Auditor: did(a), Subject: did(s), Envelope: strconv.Itoa(r.IntN(3)), Score: r.Float64(), Time: now - r.Int64N(1e7)}
			}
			stakes := map[string]float64{}
			if tt.staked {
				for i := 0; i < 40; i += 5 {
					stakes[did(i)] = float64(i%3 + 1)
				}
			}
			g := liveGraph{ids: map[string]int32{}, loaded: true}
			for range 300 {
				g.put(audit(40), r.IntN(2) == 0, r.Float64()*2)
			}
			computed, dids := g.graph(now, stakes)
			snap := newSnapshot(time.Unix(now, 0), computed, dids, Params{})
			before := slices.Clone(snap.scores.Score)
			for range 300 { // agents 40–59 are new
				snap.follow(g.put(audit(60), r.IntN(2) == 0, r.Float64()*2))
			}
			if c := g.release(); len(c) != 300 {
				t.Fatalf("%d changes kept, want 300", len(c))
			}

			// Every current audit, indexed as the snapshot indexes, against its standings.
			want := &Scores{}
			stake := slices.Clone(snap.stake)
			var rel []float64 // relative standings, as the snapshot has them
			for i := range snap.dids {
				if i < snap.n {
					rel = append(rel, snap.scores.Relative[i])
				} else {
					rel = append(rel, snap.newcomer) // a subject the computation did not know
				}
			}
			index := func(d string) int32 {
				if i, ok := snap.find(d); ok {
					return int32(i)
				}
				rel = append(rel, snap.newcomer) // an auditor only
				stake = append(stake, 0)
				return int32(len(stake) - 1)
			}
			all := &Graph{}
			for i := range g.edges.len() {
				e := g.edges.edge(int32(i))
				all.Audits = append(all.Audits, Edge{Auditor: index(g.dids[e.auditor]), Subject: index(g.dids[e.subject]), Score: e.score, Age: float64(now - e.time), Backed: e.backed, Settled: e.settled})
			}
			all.Stake = stake
			n := len(stake)
			want.Score, want.Confidence, want.Weight = make([]float64, n), make([]float64, n), make([]float64, n)
			want.sum(all, snap.params, rel)
			counts := make([]int, n)
			for _, e := range all.Audits {
				counts[e.Subject]++
			}
			moved := 0
			for j, d := range snap.dids {
				sc := snap.scores
				if sc.Score[j] != want.Score[j] || sc.Confidence[j] != want.Confidence[j] || sc.Weight[j] != want.Weight[j] || snap.audits[j] != counts[j] {
					t.Errorf("%s: followed %v/%v/%v (%d audits), summed %v/%v/%v (%d)", d, sc.Score[j], sc.Confidence[j], sc.Weight[j], snap.audits[j],
						want.Score[j], want.Confidence[j], want.Weight[j], counts[j])
				}
				if j < snap.n && sc.Score[j] != before[j] {
					moved++
				}
			}
			if len(snap.dids) <= snap.n || moved == 0 {
				t.Errorf("the test should add agents and move scores: %d agents after %d, %d moved", len(snap.dids), snap.n, moved)
			}
		})
	}
}
