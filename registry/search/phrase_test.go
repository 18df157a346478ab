package search

import (
	"fmt"
	"strings"
	"testing"
)

// phraseAttack is the review's H1 query: one phrase of ~500 copies of one term.
var phraseAttack = `"` + strings.Repeat("⑴", 498) + `"`

// TestPhraseBounds: a phrase's positions count toward MaxQueryTerms, one phrase holds at
// most MaxPhraseTerms terms, a query at most MaxPhrases phrases.
func TestPhraseBounds(t *testing.T) {
	for _, text := range []string{
		phraseAttack,
		strings.Repeat(`"a1 a1 a1 a1 a1 a1 a1 a1 a1 a1" `, 20),
		strings.Repeat(`"ab cd" `, 40),
		`"` + strings.Repeat("ﷺ", 120) + `"`,
	} {
		q, err := ParseQuery(text)
		if err != nil {
			t.Fatal(err)
		}
		positions := 0
		for _, p := range q.Phrases {
			positions += len(p)
			if len(p) > MaxPhraseTerms {
				t.Errorf("%.20q: a phrase of %d terms", text, len(p))
			}
		}
		if positions > MaxQueryTerms || len(q.Phrases) > MaxPhrases {
			t.Errorf("%.20q: %d phrases, %d positions", text, len(q.Phrases), positions)
		}
	}
	// A long phrase is checked on its first MaxPhraseTerms terms.
	q, _ := ParseQuery(phraseAttack)
	if len(q.Phrases) != 1 || len(q.Phrases[0]) != MaxPhraseTerms {
		t.Errorf("attack parsed to %q", q.Phrases)
	}
}

// TestFieldTermsCapped: a field holds at most maxFieldTerms terms after Fold, however much
// NFKD expands it (ﷺ is four words).
func TestFieldTermsCapped(t *testing.T) {
	x := New()
	x.Put(1, Doc{DID: "did:x", Name: strings.Repeat("⑴", 100), Description: strings.Repeat("ﷺ", 2000), Capabilities: []string{"a"}})
	if l := x.fieldLens(1); l[fieldDescription] != maxFieldTerms {
		t.Errorf("description indexed as %d terms, want %d", l[fieldDescription], maxFieldTerms)
	}
}

// TestPhraseCheckLinear: the phrase check does work linear in the field's length, not
// field × phrase, on the review's attack cards (runs of one term broken by another).
func TestPhraseCheckLinear(t *testing.T) {
	desc := strings.Repeat(strings.Repeat("⑴", 497)+"z", 4)
	seq := make([]int32, 0, len(desc))
	for _, w := range Terms(desc) {
		seq = append(seq, map[bool]int32{true: 1, false: 2}[w == "1"])
	}
	seq = seq[:min(len(seq), maxFieldTerms)]
	phrase := make([]int32, MaxPhraseTerms)
	for i := range phrase {
		phrase[i] = 1
	}
	phrase[len(phrase)-1] = 3 // never found: the worst case, every position tried
	var m phraseMatcher
	m.reset(phrase)
	found, steps := m.find(seq)
	if found {
		t.Fatal("found a phrase the field does not hold")
	}
	if steps > 2*len(seq) {
		t.Errorf("%d steps over a field of %d terms, want at most %d", steps, len(seq), 2*len(seq))
	}
	// And the attack search still works: 100 cards, the attack phrase matches them all.
	x := New()
	for i := range 100 {
		x.Put(int64(i), Doc{DID: fmt.Sprintf("did:%03d", i), Description: desc})
	}
	x.Put(1000, Doc{DID: "did:other", Description: "translation"})
	q, _ := ParseQuery(phraseAttack)
	if got := len(x.Search(q, Options{Limit: 200})); got != 100 {
		t.Errorf("attack phrase found %d cards, want 100", got)
	}
}
