package semantic

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestKthLargest: the quickselect rerank cuts at gives the k-th largest of any slice, runs of
// equal values included.
func TestKthLargest(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for range 2000 {
		n := 1 + r.IntN(300)
		s := make([]float32, n)
		distinct := 1 + r.IntN(n)
		for i := range s {
			s[i] = float32(r.IntN(distinct)) / 7
		}
		k := 1 + r.IntN(n)
		want := slices.Clone(s)
		slices.Sort(want)
		slices.Reverse(want)
		if got := kthLargest(slices.Clone(s), k); got != want[k-1] {
			t.Fatalf("kthLargest(%v, %d) = %v, want %v", s, k, got, want[k-1])
		}
	}
}
