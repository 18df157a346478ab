package registry

import (
	"strings"
	"testing"
)

// TestKeptCardsAreBoundedInBytes (review 31): the cards search answers keep weigh at most
// maxKeptCardBytes, however large the cards anyone registers; a forget gives its room back.
func TestKeptCardsAreBoundedInBytes(t *testing.T) {
	var c cardCache
	big := Agent{SignedCard: SignedCard{JWS: strings.Repeat("x", 28<<10)}} // about the largest card a node takes
	for id := range int64(5_000) {
		c.keep(c.generation(), id, big, 28<<10)
		if c.bytes > maxKeptCardBytes {
			t.Fatalf("after %d cards of 56 KiB the kept cards weigh %d bytes, over %d", id+1, c.bytes, maxKeptCardBytes)
		}
	}
	if len(c.cards) == 0 || len(c.cards) > maxKeptCardBytes/(56<<10) {
		t.Errorf("%d cards kept", len(c.cards))
	}
	total := 0
	for _, k := range c.cards {
		total += k.size
	}
	if total != c.bytes {
		t.Errorf("kept cards weigh %d bytes, counted %d", total, c.bytes)
	}
	for id := range c.cards {
		c.forget(id)
	}
	if c.bytes != 0 || len(c.cards) != 0 {
		t.Errorf("after every forget: %d cards, %d bytes", len(c.cards), c.bytes)
	}
	// A read a forget overtook is not kept.
	gen := c.generation()
	c.forget(7)
	c.keep(gen, 8, Agent{SignedCard: SignedCard{JWS: "x"}}, 1)
	if _, ok := c.get(8); ok {
		t.Error("a card read before a forget was kept")
	}
}
