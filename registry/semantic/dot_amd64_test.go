package semantic

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The AVX2 dot product reads exactly 128 components: a change of Dim fails to compile here.
var (
	_ [Dim - 128]struct{}
	_ [128 - Dim]struct{}
)

// TestSearchWithoutAVX2 (review 41, finding 4): on a machine with AVX2 the searches' other
// path (the query's table, what a CPU without AVX2 runs) is exercised too, and gives the same
// answers, scores and order, in the exact search and through the prefilter.
func TestSearchWithoutAVX2(t *testing.T) {
	rnd := rand.New(rand.NewPCG(41, 4))
	vec := func() Vector { return randomVector(rnd) }
	x := NewIndex()
	for i := range prefilterRows + 2000 {
		x.PutKeyed(int64(i), "", vec())
	}
	was := fastDot
	defer func() { fastDot = was }()
	for range 5 {
		q := vec()
		fastDot = was
		exact, pre := x.SearchExact(q, 200), x.Search(q, 200)
		fastDot = false
		if diff := cmp.Diff(exact, x.SearchExact(q, 200)); diff != "" {
			t.Fatalf("SearchExact without AVX2 differs (-with +without):\n%s", diff)
		}
		if diff := cmp.Diff(pre, x.Search(q, 200)); diff != "" {
			t.Fatalf("Search without AVX2 differs (-with +without):\n%s", diff)
		}
	}
}
