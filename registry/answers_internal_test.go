package registry

import (
	"fmt"
	"strings"
	"testing"

	"github.com/surety-ioa/surety/registry/search"
)

// TestOldSearchKeepsNewerAnswers (review 31, finding 6): a search that read the indexes
// before a write, and ends after it, keeps nothing, and takes nothing kept away: the answers
// of searches that came after the write stay. Nothing computed while a write is under way is
// kept either.
func TestOldSearchKeepsNewerAnswers(t *testing.T) {
	var c answerCache
	hits := []search.Hit{{ID: 1, DID: "did:key:a", Score: 1}}
	slow, ok := c.start() // a slow search reads the indexes
	if !ok {
		t.Fatal("no write under way, yet start says one is")
	}
	c.beginWrite()
	during, ok := c.start()
	if ok {
		t.Fatal("a write is under way, yet start lets its answer be kept")
	}
	c.endWrite(&indexWrite{id: 9, now: &search.Summary{ID: 9, DID: "did:key:z", Factor: 0.5}})
	fast, _ := c.start() // a fast search after the write
	newer := newAnswer(answerKey{text: "b", limit: 200}, search.Query{}, hits)
	if c.put(answerKey{text: "b", limit: 200}, fast, newer) == nil {
		t.Fatal("an answer computed after the write is not kept")
	}
	if c.put(answerKey{text: "a", limit: 200}, slow, newAnswer(answerKey{text: "a", limit: 200}, search.Query{}, hits)) != nil {
		t.Error("an answer computed before the write is kept")
	}
	if c.put(answerKey{text: "c", limit: 200}, during, newAnswer(answerKey{text: "c", limit: 200}, search.Query{}, hits)) != nil {
		t.Error("an answer computed during the write is kept")
	}
	if c.get(answerKey{text: "b", limit: 200}) != newer {
		t.Error("the older search's put took the newer answer away")
	}
}

// TestKeptAnswersAreBounded: the kept answers, with their bodies, never weigh more than
// maxAnswerBytes nor number more than maxAnswers, however large the bodies anyone's cards
// make; past the bounds the least recently used answer goes, one at a time, and one in use
// stays; an answer or body over a sixteenth of the bound is not kept.
func TestKeptAnswersAreBounded(t *testing.T) {
	var c answerCache
	hits := make([]search.Hit, maxCandidates)
	for i := range hits {
		hits[i] = search.Hit{ID: int64(i), DID: "did:key:z6Mk" + strings.Repeat("x", 44), Score: 1}
	}
	body := make([]byte, maxAnswerBytes/32) // 100 cards of 5 KiB
	hot := answerKey{text: "hot", limit: maxCandidates}
	for i := range 4 * maxAnswers {
		k := answerKey{text: fmt.Sprint(i), limit: maxCandidates}
		epoch, _ := c.start()
		a := c.put(k, epoch, newAnswer(k, search.Query{}, hits))
		if a == nil {
			t.Fatalf("answer %d not kept", i)
		}
		c.attach(k, a, 20, make([]float64, len(hits)), body)
		if i == 0 {
			c.put(hot, epoch, newAnswer(hot, search.Query{}, hits))
		}
		c.get(hot) // used all along
		total := 0
		for _, a := range c.answers {
			total += a.size
		}
		if total != c.bytes || c.bytes > maxAnswerBytes || len(c.answers) > maxAnswers {
			t.Fatalf("after %d answers: %d kept, counted %d bytes, weighing %d (bounds %d, %d bytes)", i+1, len(c.answers), c.bytes, total, maxAnswers, maxAnswerBytes)
		}
	}
	if c.get(hot) == nil {
		t.Error("the answer used all along was evicted")
	}
	if len(c.answers) < 2 {
		t.Errorf("%d answers kept: eviction emptied the cache", len(c.answers))
	}
	k := answerKey{text: "big", limit: maxCandidates}
	epoch, _ := c.start()
	a := c.put(k, epoch, newAnswer(k, search.Query{}, hits))
	c.attach(k, a, 20, nil, make([]byte, maxAnswerBytes/16))
	if c.bodyOf(a, 20, nil) != nil {
		t.Error("a body over a sixteenth of the bound was kept")
	}
}
