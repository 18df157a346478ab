package search

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTextOfIsSearchText: TextOf gives each card the text score Search gives it, bit for bit,
// pruned or not, with filters or without (the registry's rank rule compares it with the hits').
func TestTextOfIsSearchText(t *testing.T) {
	defer func(n int, share float64) { pruneMinPostings, pruneShare = n, share }(pruneMinPostings, pruneShare)
	rng := rand.New(rand.NewPCG(43, 5))
	checked := 0
	for round := range 12 {
		pruneMinPostings = []int{0, 4096}[round%2]
		pruneShare = []float64{1, 32}[round%2]
		x := New()
		n := 200 + rng.IntN(2000)
		for i := range n {
			d := randomDoc(rng, randomDID(rng, i))
			d.Staked = rng.IntN(4) == 0
			d.StakeWeight = float64(1 + rng.IntN(3))
			x.Put(int64(i+1), d)
		}
		// Deletes and rewrites move postings (the staked first, the gaps filled): TextOf
		// must still find each card's own.
		for range n / 5 {
			id := int64(1 + rng.IntN(n))
			if rng.IntN(2) == 0 {
				x.Delete(id)
				continue
			}
			d := randomDoc(rng, randomDID(rng, int(id)-1))
			d.Staked = rng.IntN(4) == 0
			d.StakeWeight = float64(1 + rng.IntN(3))
			x.Put(id, d)
		}
		for range 10 {
			q, err := ParseQuery(randomQuery(rng))
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range x.Search(q, Options{Limit: 50}) {
				text, ok := x.TextOf(q, h.ID)
				if !ok || math.Float64bits(text) != math.Float64bits(h.Text) {
					t.Fatalf("round %d, %+v, card %d: TextOf %v (%v), Search's Text %v", round, q, h.ID, text, ok, h.Text)
				}
				checked++
			}
		}
	}
	if checked < 1000 {
		t.Errorf("%d hits checked", checked)
	}
}
