package registry

import (
	"fmt"
	"strings"
	"testing"

	"github.com/surety-ioa/surety/registry/search"
)

// TestOldSearchKeepsNewerAnswers (review 31, finding 6): a search that read the indexes
// before a write, and ends after it, keeps its answer only if the write cannot change it,
// and takes nothing kept away: the answers of searches that came after the write stay. An
// answer kept while a write is under way is checked when that write ends.
func TestOldSearchKeepsNewerAnswers(t *testing.T) {
	var c answerCache
	hits := []search.Hit{{ID: 1, DID: "did:key:a", Score: 1}}
	key := func(text string) answerKey { return answerKey{text: text, limit: 200} }
	everything := func(text string) *answer { return newAnswer(key(text), search.Query{}, hits, nil) }
	legal := newAnswer(key("legal"), search.Query{Terms: []string{"legal"}}, hits, nil)
	slow := c.start() // slow searches read the indexes
	c.beginWrite()
	during := c.start()
	// An unstaked card, new, saying "audio", while staked cards set the statistics: it
	// changes the answers without text (it enters the list, which has room), not "legal".
	c.endWrite(&indexWrite{id: 9, now: &search.Summary{ID: 9, DID: "did:key:z", Factor: 0.5, Terms: []string{"audio"}}, stakedStats: true})
	fast := c.start() // a fast search after the write
	newer := everything("b")
	if c.put(key("b"), fast, newer) == nil {
		t.Fatal("an answer computed after the write is not kept")
	}
	if c.put(key("a"), slow, everything("a")) != nil {
		t.Error("an answer computed before a write that changes it is kept")
	}
	if c.put(key("c"), during, everything("c")) != nil {
		t.Error("an answer computed during a write that changes it is kept")
	}
	if c.put(key("legal"), slow, legal) == nil {
		t.Error("an answer computed before a write that cannot change it is not kept")
	}
	if c.get(key("b")) != newer {
		t.Error("the older search's put took the newer answer away")
	}
	// Kept while a write is under way: that write's end judges it.
	c.beginWrite()
	d := c.start()
	c.put(key("d"), d, everything("d"))
	c.endWrite(&indexWrite{id: 10, now: &search.Summary{ID: 10, DID: "did:key:y", Factor: 0.5}, stakedStats: true})
	if c.get(key("d")) != nil {
		t.Error("an answer kept during a write that changes it outlived the write")
	}
	// More writes than remembered since the search began: not kept.
	old := c.start()
	for i := range maxLoggedWrites + 1 {
		c.beginWrite()
		c.endWrite(&indexWrite{id: int64(100 + i)})
	}
	if c.put(key("legal2"), old, newAnswer(key("legal2"), search.Query{Terms: []string{"legal"}}, hits, nil)) != nil {
		t.Error("an answer older than the writes remembered is kept")
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
		epoch := c.start()
		a := c.put(k, epoch, newAnswer(k, search.Query{}, hits, nil))
		if a == nil {
			t.Fatalf("answer %d not kept", i)
		}
		c.attach(k, a, 20, make([]float64, len(hits)), body)
		if i == 0 {
			c.put(hot, epoch, newAnswer(hot, search.Query{}, hits, nil))
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
	epoch := c.start()
	a := c.put(k, epoch, newAnswer(k, search.Query{}, hits, nil))
	c.attach(k, a, 20, nil, make([]byte, maxAnswerBytes/16))
	if c.bodyOf(a, 20, nil) != nil {
		t.Error("a body over a sixteenth of the bound was kept")
	}
}
