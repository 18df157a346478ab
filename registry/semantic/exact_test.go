package semantic

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestExactIsSearchExact: while Exact says so, Search gives SearchExact's answer; past
// prefilterRows rows it says not.
func TestExactIsSearchExact(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 7))
	vec := func() Vector { return randomVector(rnd) }
	x := NewIndex()
	for i := range 3000 {
		x.PutKeyed(int64(i), "", vec())
	}
	if !x.Exact() {
		t.Fatal("3,000 rows: not exact")
	}
	for range 5 {
		q := vec()
		if diff := cmp.Diff(x.SearchExact(q, 200), x.Search(q, 200)); diff != "" {
			t.Fatalf("Exact, yet Search is not SearchExact (-exact +search):\n%s", diff)
		}
	}
	for i := 3000; i <= prefilterRows; i++ {
		x.PutKeyed(int64(i), "", vec())
	}
	if x.Exact() {
		t.Errorf("%d rows: exact", x.Len())
	}
}

// randomVector is a vector of Dim normal components from rnd.
func randomVector(rnd *rand.Rand) Vector {
	v := make(Vector, Dim)
	for j := range v {
		v[j] = float32(rnd.NormFloat64())
	}
	return v
}
