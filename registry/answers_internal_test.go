package registry

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/surety-ioa/surety/registry/search"
	"github.com/surety-ioa/surety/registry/semantic"
)

// TestOldSearchKeepsNewerAnswers (review 31, finding 6): a search that read the indexes
// before a write, and ends after it, keeps its answer only if the write cannot change it,
// and takes nothing kept away: the answers of searches that came after the write stay. An
// answer kept while a write is under way is checked when that write ends.
func TestOldSearchKeepsNewerAnswers(t *testing.T) {
	var c answerCache
	hits := []search.Hit{{ID: 1, DID: "did:key:a", Score: 1}}
	key := func(text string) answerKey { return answerKey{text: text, limit: 200} }
	everything := func(text string) *answer { return newAnswer(nil, key(text), search.Query{}, hits, nil, nil) }
	legal := newAnswer(nil, key("legal"), search.Query{Terms: []string{"legal"}}, hits, nil, nil)
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
	if c.put(key("legal2"), old, newAnswer(nil, key("legal2"), search.Query{Terms: []string{"legal"}}, hits, nil, nil)) != nil {
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
		a := c.put(k, epoch, newAnswer(nil, k, search.Query{}, hits, nil, nil))
		if a == nil {
			t.Fatalf("answer %d not kept", i)
		}
		c.attach(k, a, 20, make([]float64, len(hits)), body)
		if i == 0 {
			c.put(hot, epoch, newAnswer(nil, hot, search.Query{}, hits, nil, nil))
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
	a := c.put(k, epoch, newAnswer(nil, k, search.Query{}, hits, nil, nil))
	c.attach(k, a, 20, nil, make([]byte, maxAnswerBytes/16))
	if c.bodyOf(a, 20, nil) != nil {
		t.Error("a body over a sixteenth of the bound was kept")
	}
}

// naiveReads is what answer.reads said before review 41: every term of the card against
// every term and prefix of the query.
func naiveReads(a *answer, s *search.Summary) bool {
	if a.capability != "" && holdsCapability(s, a.capability) {
		return true
	}
	for _, t := range s.Terms {
		if a.terms[t] {
			return true
		}
		for _, p := range a.prefixes {
			if strings.HasPrefix(t, p) || strings.HasPrefix(p, t) {
				return true
			}
		}
	}
	return false
}

// TestReadsFindsTermsAndPrefixes (review 41, finding 1): reads, a binary search of the
// card's sorted terms for each of the query's terms and prefixes, answers as the loop over
// every pair did, for terms and prefixes that meet by either's bytes.
func TestReadsFindsTermsAndPrefixes(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 1))
	word := func() string {
		b := make([]byte, 1+r.IntN(5))
		for i := range b {
			b[i] = "abcde"[r.IntN(5)]
		}
		return string(b)
	}
	for round := range 2000 {
		seen := map[string]bool{}
		var terms []string
		for range r.IntN(12) {
			if w := word(); !seen[w] {
				seen[w] = true
				terms = append(terms, w)
			}
		}
		slices.Sort(terms)
		s := &search.Summary{ID: 1, Terms: terms}
		a := &answer{kind: byText, terms: map[string]bool{}}
		for range r.IntN(3) {
			a.terms[word()] = true
		}
		for range r.IntN(3) {
			a.prefixes = append(a.prefixes, word())
		}
		if got, want := a.reads(s), naiveReads(a, s); got != want {
			t.Fatalf("round %d: reads(%q) with terms %v and prefixes %q = %v, want %v", round, terms, a.terms, a.prefixes, got, want)
		}
	}
}

// BenchmarkAnswerWrite times what a write of a card costs the kept answers under their lock
// (review 41, finding 1): 128 kept answers, each a query of 32 prefixes that match nothing,
// judged against an unstaked card of 1,100 terms (a 16 KiB card's most), as endWrite does.
func BenchmarkAnswerWrite(b *testing.B) {
	var c answerCache
	for i := range maxAnswers {
		var q search.Query
		for j := range search.MaxQueryTerms {
			q.Prefixes = append(q.Prefixes, fmt.Sprintf("qzx%03d%02d", i, j))
		}
		k := answerKey{text: fmt.Sprint(i), limit: 20}
		if c.put(k, c.start(), newAnswer(nil, k, q, nil, nil, nil)) == nil {
			b.Fatal("not kept")
		}
	}
	terms := make([]string, 1100)
	for i := range terms {
		terms[i] = fmt.Sprintf("word%04d", i)
	}
	slices.Sort(terms)
	w := &indexWrite{id: 1 << 40, now: &search.Summary{ID: 1 << 40, DID: "did:key:zAttacker", Factor: 0.1, Terms: terms}, stakedStats: true}
	b.ResetTimer()
	for range b.N {
		c.beginWrite()
		c.endWrite(w)
	}
	b.StopTimer()
	if n := len(c.answers); n != maxAnswers {
		b.Fatalf("%d answers kept after the writes, want all %d", n, maxAnswers)
	}
}

// TestJudgingIsBounded: a free identity's card write that reads many kept answers runs at
// most maxJudged of the rules that read the indexes (each a scoring of its card); past them
// the answers it reads are forgotten, never judged at more cost.
func TestJudgingIsBounded(t *testing.T) {
	x := search.New()
	words := make([]string, maxJudged+8)
	desc := ""
	for i := range words {
		words[i] = fmt.Sprintf("skill%c%c", 'a'+i/26, 'a'+i%26)
		desc += " " + words[i]
	}
	x.Put(1, search.Doc{DID: "did:key:zstaked", Name: "staked", Description: desc, Staked: true, StakeWeight: 2})
	x.Put(2, search.Doc{DID: "did:key:zfree", Name: "free", Description: desc}) // unstaked: free to make
	sum, ok := x.Summary(2)
	if !ok {
		t.Fatal("the free card is not in the index")
	}
	w := &indexWrite{id: 2, old: &sum, now: &sum}
	j := &judge{live: true, text: x, budget: maxJudged}
	kept := 0
	for _, word := range words {
		// An answer whose last hit out-scores anything the card could: the rule keeps it,
		// when it may judge it.
		a := &answer{kind: byText, pq: search.Query{Terms: []string{word}}, terms: map[string]bool{word: true}, floor: 1e9, textKey: word}
		if a.rankRule(w, j) {
			kept++
		}
	}
	if kept != maxJudged || j.budget != 0 || j.ranked != maxJudged {
		t.Fatalf("%d answers read by one write: %d judged and kept (budget left %d), want %d, the rest forgotten", len(words), kept, j.budget, maxJudged)
	}
}

// TestFreeCardsNeverReachThePrefilter: the unstaked cards (free DIDs) a node holds are at
// most MaxUnstakedCards, and an index of that many is compared row by row (semantic's
// Exact): free identities cannot make every node run the prefilter over their vectors,
// whose candidates grow with the rows tied at its thresholds (identical cards tie). Checked
// with the worst case, every card the same text, through the registry's own putVector.
func TestFreeCardsNeverReachThePrefilter(t *testing.T) {
	r := &Registry{vectors: semantic.NewIndex(), unstakedVectors: semantic.NewIndex()}
	doc := search.Doc{DID: "did:key:z", Name: "junk", Description: "translate legal audit for cheap", Capabilities: []string{"audit"}}
	vec := cardVector(doc)
	if vec == nil {
		t.Fatal("the junk card has no vector")
	}
	for i := range MaxUnstakedCards {
		doc.DID = fmt.Sprintf("did:key:z%d", i)
		r.putVector(int64(i+1), doc, vec)
	}
	if n := r.unstakedVectors.Len(); n != MaxUnstakedCards {
		t.Fatalf("%d unstaked vectors, want %d", n, MaxUnstakedCards)
	}
	if !r.unstakedVectors.Exact() {
		t.Fatalf("an index of the unstaked quota's %d cards goes through the prefilter", MaxUnstakedCards)
	}
	if hits := r.unstakedVectors.Search(queryVector("legal translation"), semanticCandidates); len(hits) != semanticCandidates {
		t.Fatalf("%d hits of %d identical cards, want %d", len(hits), MaxUnstakedCards, semanticCandidates)
	}
}
