package reputation

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestHalving2IsHalving: the decays computed side by side are halving's, bit for bit, over
// ages of every size, the edges of the series' range and the values halving treats apart.
func TestHalving2IsHalving(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	xs := []float64{0, -1, math.NaN(), math.Inf(1), 1e-300, 0.5, 1, 2, 999.999, 1000, 1e6}
	for range 100_000 {
		xs = append(xs, r.Float64()*r.Float64()*50, r.ExpFloat64())
	}
	for i := range xs {
		x0, x1 := xs[i], xs[(i*7+3)%len(xs)]
		g0, g1 := halving2(x0, x1)
		if w0, w1 := halving(x0), halving(x1); math.Float64bits(g0) != math.Float64bits(w0) || math.Float64bits(g1) != math.Float64bits(w1) {
			t.Fatalf("halving2(%v, %v) = %v, %v; halving gives %v, %v", x0, x1, g0, g1, w0, w1)
		}
	}
}
