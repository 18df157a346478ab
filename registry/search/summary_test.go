package search

import (
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
		for range 10 {
			q, err := ParseQuery(randomQuery(rng))
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range x.Search(q, Options{Limit: 50}) {
				text, ok := x.TextOf(q, h.ID)
				if !ok || text != h.Text {
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
