package registry

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/surety-ioa/surety/registry/search"
)

// TestTopCandidatesIsTheSortedPage checks topCandidates against what it replaced: every hit
// made a candidate, all sorted (compareCandidates), the first limit kept.
func TestTopCandidatesIsTheSortedPage(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 500 {
		hits := make([]search.Hit, rng.IntN(300))
		weights := make([]float64, len(hits))
		for i := range hits {
			// Few distinct scores and weights: many ties, broken by the DID.
			hits[i] = search.Hit{ID: int64(i + 1), DID: randomTestDID(rng, i), Score: float64(rng.IntN(5)) / 4}
			weights[i] = float64(1 + rng.IntN(3))
		}
		limit := rng.IntN(120) // 0 too: no page
		want := make([]candidate, len(hits))
		for i, h := range hits {
			want[i] = candidate{serial: h.ID, did: h.DID, score: h.Score * weights[i]}
		}
		slices.SortFunc(want, compareCandidates)
		want = want[:min(len(want), limit)]
		if got := topCandidates(hits, weights, limit); !slices.Equal(got, want) {
			t.Fatalf("round %d (%d hits, limit %d): got %v, want %v", round, len(hits), limit, got, want)
		}
	}
}

// randomTestDID is a DID unique to i, its order among others random.
func randomTestDID(rng *rand.Rand, i int) string {
	return "did:key:z" + string(rune('a'+rng.IntN(26))) + string(rune('a'+rng.IntN(26))) + "-" + string(rune('0'+i%10)) + string(rune('A'+i/10%26)) + string(rune('A'+i/260%26))
}
