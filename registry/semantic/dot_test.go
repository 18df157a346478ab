package semantic

import (
	"math/rand/v2"
	"testing"
)

// TestDotFast: dotFast is dot8, the same integer, on random rows and on the extremes.
func TestDotFast(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 10_000 {
		var q [Dim]int8
		row := make([]int8, Dim)
		for j := range Dim {
			switch i % 4 {
			case 0:
				q[j], row[j] = 127, 127
			case 1:
				q[j], row[j] = -127, 127
			default:
				q[j], row[j] = int8(rng.IntN(255)-127), int8(rng.IntN(255)-127)
			}
		}
		if got, want := dotFast(&q, row), dot8(&q, row); got != want {
			t.Fatalf("dotFast %d, dot8 %d", got, want)
		}
	}
}
