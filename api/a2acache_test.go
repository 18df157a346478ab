package api

import (
	"crypto/sha256"
	"fmt"
	"testing"
)

// TestAgentCardCacheEvictsOneAtATime: asking for more DIDs' cards than the cache holds costs
// each new DID one held entry, not every entry (the cache was cleared whole at the bound, so
// an attacker with 1,025 free cards made every card GET on the node sign again; review of
// 0d1b1c5), and what is held answers only for the content it was signed over.
func TestAgentCardCacheEvictsOneAtATime(t *testing.T) {
	var c agentCardCache
	content := func(i int) [sha256.Size]byte { return sha256.Sum256(fmt.Appendf(nil, "card %d", i)) }
	for i := range maxCachedAgentCards + 100 {
		c.store(fmt.Sprint("did:", i), content(i), []byte(fmt.Sprint("signed ", i)))
	}
	held := 0
	for i := range maxCachedAgentCards + 100 {
		if b, ok := c.lookup(fmt.Sprint("did:", i), content(i)); ok {
			held++
			if string(b) != fmt.Sprint("signed ", i) {
				t.Fatalf("DID %d answered %q", i, b)
			}
		}
	}
	if held != maxCachedAgentCards {
		t.Errorf("%d cards held after %d stores, want %d (one evicted per new DID)", held, maxCachedAgentCards+100, maxCachedAgentCards)
	}
	last := maxCachedAgentCards + 99
	if _, ok := c.lookup(fmt.Sprint("did:", last), content(last)); !ok {
		t.Error("the card stored last is not held")
	}
	if _, ok := c.lookup(fmt.Sprint("did:", last), content(last+1)); ok {
		t.Error("a held card answered for other content (a changed stake or score)")
	}
}
