package search

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestStakeTier checks the stake tier on a corpus shaped like the registry benchmark's (a
// tenth of the cards staked, stakes growing, two words of ten on each card, words every card
// says): it proves its answer for most queries, and every answer it proves is the exhaustive
// search's, hits, order and bits, with semantic scores too (unstaked cards near the query in
// meaning among them).
func TestStakeTier(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 31))
	words := []string{"translate", "summarize", "audit", "research", "legal", "medical", "code", "review", "image", "audio"}
	x := New()
	const n = 20000
	for i := range n {
		w1, w2 := words[rng.IntN(len(words))], words[(i/10)%len(words)]
		d := Doc{DID: randomDID(rng, i), Name: fmt.Sprintf("%s agent %d", w1, i), Description: fmt.Sprintf("%s and %s for marketplaces, papers and contracts", w1, w2), Capabilities: []string{w1, w2}}
		if i%10 == 0 {
			d.Staked, d.StakeWeight = true, float64(1+i%5)
		}
		if i%97 == 1 { // an unstaked card saying its word everywhere: it can out-score staked ones
			d.Name, d.Description, d.Capabilities = w1+" "+w1, w1, []string{w1}
		}
		x.Put(int64(i+1), d)
	}
	queries := []string{"translat*", "legal", "medical", "review", "image audio", "translate legal", "code review", "audit", "I need someone who can translate my legal documents and review the code of my agents", "summar*", `"translate and legal"`, "papers", "research medical image"}
	proved, tried := 0, 0
	for qi, text := range queries {
		for _, hybrid := range []bool{false, true} {
			q, _ := ParseQuery(text)
			opt := Options{Limit: 200}
			if hybrid {
				opt.Semantic = map[int64]float64{}
				for range 300 {
					opt.Semantic[int64(1+rng.IntN(n))] = rng.Float64()
				}
				for i := 1; i < n; i += 97 {
					opt.Semantic[int64(i+1)] = 1
				}
				opt.SemanticOf = func(id int64) float64 { return float64(uint64(id)*0x9e3779b97f4a7c15%1000) / 1000 }
			}
			want := x.searchExhaustive(q, opt)
			tried++
			got, ok := x.searchStaked(q, opt)
			if !ok {
				continue
			}
			proved++
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("query %d %q hybrid %v (-exhaustive +stake tier):\n%s", qi, text, hybrid, diff)
			}
		}
	}
	t.Logf("the stake tier proved %d of %d answers", proved, tried)
	if 3*proved < tried || proved == tried {
		t.Fatalf("the stake tier proved %d of %d answers", proved, tried)
	}
}

// TestProvenStaked: the stake tier's proof needs a staked match, a full heap, and a worst
// score above UnstakedFactor × the unstaked cards' relevance bound, whose semantic part is
// the best unstaked semantic score.
func TestProvenStaked(t *testing.T) {
	top := func(score float64) []ranked { return []ranked{{score: score}} }
	hybrid := Options{Limit: 1, Semantic: map[int64]float64{}}
	for _, tt := range []struct {
		name             string
		pr               pruning
		top              []ranked
		opt              Options
		maxStaked, semUn float64
		want             bool
	}{
		{"keyword above", pruning{ub: 2}, top(1.01), Options{Limit: 1}, 1, 0, true},
		{"keyword at the bound", pruning{ub: 2}, top(1), Options{Limit: 1}, 1, 0, false},
		{"no staked match", pruning{ub: 2}, top(5), Options{Limit: 1}, 0, 0, false},
		{"heap not full", pruning{ub: 2}, top(5), Options{Limit: 2}, 1, 0, false},
		{"hybrid above", pruning{ub: 2}, top(0.876), hybrid, 1, 1, true},          // 0.5 × (0.75×2 + 0.25)
		{"hybrid semantic counts", pruning{ub: 2}, top(0.8), hybrid, 1, 1, false}, // above 0.75 alone
		{"hybrid semantic 0", pruning{ub: 2}, top(0.8), hybrid, 1, 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := provenStaked(tt.pr, tt.top, tt.opt, tt.maxStaked, tt.semUn); got != tt.want {
				t.Fatalf("provenStaked = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestTextIsScoredWhileTheSemanticSideRuns: a hybrid query with a capability under which no
// staked card holds the query's words (the stake tier can prove nothing) scores its text in
// the next tier while the semantic side still runs: the semantic side here waits for the
// pruned tier to start before it answers. It waited for the semantic side first, then scored
// the text, the two costs added (BenchmarkHybridIndex's "research" under "medical").
func TestTextIsScoredWhileTheSemanticSideRuns(t *testing.T) {
	x := New()
	for i := range 400 {
		d := Doc{DID: fmt.Sprintf("did:example:%04d", i), Name: fmt.Sprintf("agent %d", i), Capabilities: []string{"medical"}}
		if i%10 == 0 {
			d.Description, d.Staked, d.StakeWeight = "translate medical records", true, float64(1+i%5)
		} else {
			d.Description = "medical research and papers"
		}
		x.Put(int64(i+1), d)
	}
	pruned := make(chan struct{})
	var once sync.Once
	tierStarts = func(tr tier) {
		if tr == tierPruned {
			once.Do(func() { close(pruned) })
		}
	}
	t.Cleanup(func() { tierStarts = nil })
	q, err := ParseQuery("research")
	if err != nil {
		t.Fatal(err)
	}
	sem := map[int64]float64{1: 0.9, 2: 0.4}
	overlapped := false
	hits := x.Search(q, Options{Limit: 20, Capability: "medical", SemanticLater: func([]uint64, Side) (map[int64]float64, func(int64) float64) {
		select {
		case <-pruned:
			overlapped = true
		case <-time.After(10 * time.Second):
		}
		return sem, nil
	}})
	if !overlapped {
		t.Fatal("the semantic side answered before the pruned tier started: the text waited for it")
	}
	want := x.Search(q, Options{Limit: 20, Capability: "medical", Semantic: sem})
	if diff := cmp.Diff(want, hits); diff != "" {
		t.Errorf("the answer differs from the one with the semantic scores given (-given +later):\n%s", diff)
	}
	if len(hits) != 20 {
		t.Errorf("%d hits, want 20", len(hits))
	}
}
