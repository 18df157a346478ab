package search

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// corpus is a small marketplace: each card under id i+1, with DID did:i.
var corpus = []Doc{
	{Name: "Lingua", Description: "Translates legal contracts from French into English.", Capabilities: []string{"translation/fr-en", "legal"}},
	{Name: "Babel", Description: "Translator for websites: localization of apps and sites.", Capabilities: []string{"translation"}},
	{Name: "Locale Pro", Description: "Software localisation and l10n pipelines.", Capabilities: []string{"l10n"}},
	{Name: "Vault Guard", Description: "Solidity smart contract audits, reentrancy and access control review.", Capabilities: []string{"audit/solidity", "security"}, Staked: true, StakeWeight: 2},
	{Name: "Solid Dev", Description: "We develop Solidity contracts and dApps.", Capabilities: []string{"development/solidity"}},
	{Name: "Taxman", Description: "German VAT returns and bookkeeping for freelancers.", Capabilities: []string{"tax/de", "accounting"}},
	{Name: "Robot Nav", Description: "Localization and mapping for warehouse robots (SLAM).", Capabilities: []string{"robotics"}},
	{Name: "Summarizer", Description: "Summaries of research papers.", Capabilities: []string{"summarize"}},
	{Name: "Translations Inc", Description: "General translation services.", Capabilities: []string{"translations"}},
}

func did(i int) string { return fmt.Sprintf("did:%02d", i) }

func build(order []int) *Index {
	x := New()
	for _, i := range order {
		d := corpus[i]
		d.DID = did(i)
		x.Put(int64(i+1), d)
	}
	return x
}

func inOrder() []int {
	order := make([]int, len(corpus))
	for i := range order {
		order[i] = i
	}
	return order
}

func search(t *testing.T, x *Index, text, capability string) []Hit {
	t.Helper()
	q, err := ParseQuery(text)
	if err != nil {
		t.Fatal(err)
	}
	return x.Search(q, Options{Capability: capability, Limit: 50})
}

func dids(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.DID)
	}
	return out
}

func TestSearch(t *testing.T) {
	x := build(inOrder())
	tests := []struct {
		name, text, capability string
		// first are the DIDs expected first, in order; found must be found; absent must not.
		first, found, absent []string
	}{
		{name: "stemming: variants meet", text: "translating", first: []string{did(8)}, found: []string{did(0), did(1)}, absent: []string{did(3)}},
		{name: "OR: a partial match is found", text: "french wine", first: []string{did(0)}},
		{name: "OR: fuller matches rank higher", text: "solidity audit reentrancy", first: []string{did(3), did(4)}},
		{name: "natural sentence", text: "someone who can turn French contracts into English", first: []string{did(0)}},
		{name: "phrase must be consecutive", text: `"legal contracts"`, first: []string{did(0)}, absent: []string{did(4)}},
		{name: "phrase not in order", text: `"contracts legal"`, absent: []string{did(0), did(4)}},
		{name: "phrase and words", text: `"smart contract" audit`, first: []string{did(3)}, absent: []string{did(4), did(0)}},
		{name: "prefix", text: "summar*", first: []string{did(7)}},
		{name: "prefix past the stem", text: "translati*", found: []string{did(0), did(1), did(8)}},
		{name: "alias at half weight", text: "localisation", first: []string{did(2)}},
		{name: "alias finds the group", text: "vat", first: []string{did(5)}},
		{name: "hierarchy", capability: "translation", first: []string{did(0), did(1)}, absent: []string{did(8), did(2)}},
		{name: "hierarchy leaf", capability: "translation/fr-en", first: []string{did(0)}, absent: []string{did(1)}},
		{name: "text and capability", text: "contracts", capability: "audit", first: []string{did(3)}, absent: []string{did(0), did(4)}},
		{name: "capability tags are text", text: "fr", first: []string{did(0)}},
		{name: "everything by stake", first: []string{did(3), did(0), did(1)}},
		{name: "stop words only", text: "who can help", first: []string{did(3), did(0)}},
		{name: "unbalanced quote", text: `"solidity audit`, first: []string{did(3)}},
		{name: "nothing", text: "weather", absent: []string{did(0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := dids(search(t, x, tt.text, tt.capability))
			if len(got) < len(tt.first) || !slices.Equal(got[:len(tt.first)], tt.first) {
				t.Errorf("found %v, want first %v", got, tt.first)
			}
			for _, f := range tt.found {
				if !slices.Contains(got, f) {
					t.Errorf("found %v, want %s among them", got, f)
				}
			}
			for _, a := range tt.absent {
				if slices.Contains(got, a) {
					t.Errorf("found %v, want no %s", got, a)
				}
			}
		})
	}
}

// TestAliasHalfWeight: a term found through an alias counts as half an occurrence of the
// query's term: one "interpreter" scores as half a "translator" would.
func TestAliasHalfWeight(t *testing.T) {
	x := New()
	x.Put(1, Doc{DID: "did:a", Name: "x", Description: "translator"})
	x.Put(2, Doc{DID: "did:b", Name: "y", Description: "interpreter"})
	hits := search(t, x, "translator", "")
	if len(hits) != 2 || hits[0].DID != "did:a" {
		t.Fatalf("hits %+v", hits)
	}
	// Both descriptions are one word of average length: tf~ is 1 for the term, 0.5 for
	// the alias, and bm25 saturates each as tf~ (K1+1) / (K1+tf~).
	sat := func(tf float64) float64 { return tf * (K1 + 1) / (K1 + tf) }
	if r, want := hits[1].Text/hits[0].Text, sat(AliasWeight)/sat(1); math.Abs(r-want) > 1e-12 {
		t.Errorf("alias scores %v of the term, want %v", r, want)
	}
}

func TestStakeFactor(t *testing.T) {
	x := New()
	x.Put(1, Doc{DID: "did:unstaked", Name: "audit"})
	x.Put(2, Doc{DID: "did:staked", Name: "audit", Staked: true, StakeWeight: 1})
	hits := search(t, x, "audit", "")
	if got := dids(hits); !slices.Equal(got, []string{"did:staked", "did:unstaked"}) {
		t.Fatalf("found %v", got)
	}
	if hits[0].Score != 1 || hits[1].Score != UnstakedFactor {
		t.Errorf("scores %v %v, want 1 and %v", hits[0].Score, hits[1].Score, UnstakedFactor)
	}
}

// TestStakeFactorNotANumber (review 43, finding 7): a staked card whose weight is not a finite
// number ranks as weight 1, never above or beside the order (a NaN factor would break it).
func TestStakeFactorNotANumber(t *testing.T) {
	for _, w := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		x := New()
		x.Put(1, Doc{DID: "did:odd", Name: "audit", Staked: true, StakeWeight: w})
		x.Put(2, Doc{DID: "did:two", Name: "audit", Staked: true, StakeWeight: 2})
		x.Put(3, Doc{DID: "did:unstaked", Name: "audit"})
		hits := search(t, x, "audit", "")
		if got := dids(hits); !slices.Equal(got, []string{"did:two", "did:odd", "did:unstaked"}) {
			t.Errorf("weight %v: found %v, want did:two, did:odd, did:unstaked", w, got)
		}
		if len(hits) == 3 && hits[1].Score != 1 {
			t.Errorf("weight %v scores %v, want 1", w, hits[1].Score)
		}
	}
}

// TestPhraseOfNoTerms: a Query built by hand with an empty phrase (ParseQuery makes none)
// finds what the query without it finds, keyword and hybrid, and gives the semantic side no
// set (it panicked in the phrase check).
func TestPhraseOfNoTerms(t *testing.T) {
	x := New()
	x.Put(1, Doc{DID: "did:a", Name: "audit", Staked: true, StakeWeight: 1})
	q, err := ParseQuery("audit")
	if err != nil {
		t.Fatal(err)
	}
	q.Phrases = [][]string{{}}
	if hits := x.Search(q, Options{Limit: 5}); len(hits) != 1 {
		t.Errorf("keyword: %d hits, want 1", len(hits))
	}
	var given []uint64
	hits := x.Search(q, Options{Limit: 5, SemanticLater: func(among []uint64, _ Side) (map[int64]float64, func(int64) float64) {
		given = among
		return map[int64]float64{}, nil
	}})
	if len(hits) != 1 || given != nil {
		t.Errorf("hybrid: %d hits, semantic side given %v; want 1 and nil", len(hits), given)
	}
}

func TestDelete(t *testing.T) {
	x := build(inOrder())
	x.Delete(1) // Lingua
	x.Delete(99)
	if got := dids(search(t, x, "french", "")); len(got) != 0 {
		t.Errorf("deleted card found: %v", got)
	}
	if got := dids(search(t, x, "", "translation/fr-en")); len(got) != 0 {
		t.Errorf("deleted card found by capability: %v", got)
	}
	// Replacing a card replaces its terms.
	x.Put(2, Doc{DID: did(1), Name: "Babel", Description: "Weather forecasts"})
	if got := dids(search(t, x, "translator", "")); slices.Contains(got, did(1)) {
		t.Errorf("replaced card found by its old words: %v", got)
	}
	if got := dids(search(t, x, "weather", "")); !slices.Equal(got, []string{did(1)}) {
		t.Errorf("replaced card not found by its new words: %v", got)
	}
	// Deleting everything and putting it back gives the first index's answers.
	for i := range corpus {
		x.Delete(int64(i + 1))
	}
	if x.Len() != 0 {
		t.Fatalf("Len %d after deleting all", x.Len())
	}
	for _, i := range inOrder() {
		d := corpus[i]
		d.DID = did(i)
		x.Put(int64(i+1), d)
	}
	fresh := build(inOrder())
	for _, q := range determinismQueries {
		if diff := cmp.Diff(search(t, fresh, q, ""), search(t, x, q, "")); diff != "" {
			t.Errorf("%q after delete and put (-fresh +reused):\n%s", q, diff)
		}
	}
}

var determinismQueries = []string{"translation", "solidity audit contracts", `"legal contracts"`, "transl*", "vat bookkeeping", "localization robots", ""}

// TestDeterministic: indexes fed the same cards in different orders, with deletions and
// re-puts on the way, give the same hits and scores bit for bit.
func TestDeterministic(t *testing.T) {
	want := build(inOrder())
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 20 {
		order := inOrder()
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		x := build(order)
		// Churn: delete and put back some cards; Build a copy in another order too.
		for _, i := range order[:3] {
			x.Delete(int64(i + 1))
		}
		for _, i := range order[:3] {
			d := corpus[i]
			d.DID = did(i)
			x.Put(int64(i+1), d)
		}
		y := New()
		var ids []int64
		var docs []Doc
		for k := len(order) - 1; k >= 0; k-- {
			d := corpus[order[k]]
			d.DID = did(order[k])
			ids, docs = append(ids, int64(order[k]+1)), append(docs, d)
		}
		y.Build(ids, docs)
		for _, q := range determinismQueries {
			w := search(t, want, q, "")
			if diff := cmp.Diff(w, search(t, x, q, "")); diff != "" {
				t.Errorf("round %d, %q (-in order +shuffled):\n%s", round, q, diff)
			}
			if diff := cmp.Diff(w, search(t, y, q, "")); diff != "" {
				t.Errorf("round %d, %q (-in order +built):\n%s", round, q, diff)
			}
		}
	}
}

// TestStuffedCardsDoNotBuryTheRelevantStakedCard: 50 unstaked cards stuffed with the query's
// words do not push a staked card that matches it out of the top 3.
func TestStuffedCardsDoNotBuryTheRelevantStakedCard(t *testing.T) {
	x := build(inOrder())
	for i := range 50 {
		x.Put(int64(100+i), Doc{
			DID:          fmt.Sprintf("did:spam:%02d", i),
			Name:         "solidity audit solidity audit reentrancy",
			Description:  "solidity audit reentrancy audit solidity audit security audit solidity reentrancy vault audit",
			Capabilities: []string{"audit", "solidity", "reentrancy", "security"},
		})
	}
	got := dids(search(t, x, "solidity vault audit for reentrancy", ""))
	if i := slices.Index(got, did(3)); i < 0 || i > 2 {
		t.Errorf("the staked auditor is at %d in %v", i, got[:min(len(got), 5)])
	}
}

func TestPrefixBound(t *testing.T) {
	x := New()
	for i := range 200 {
		x.Put(int64(i), Doc{DID: fmt.Sprintf("did:%03d", i), Name: fmt.Sprintf("ab%03dx", i)})
	}
	q, _ := ParseQuery("ab*")
	if got := len(x.Search(q, Options{Limit: 1000})); got != MaxPrefixExpansions {
		t.Errorf("ab* found %d cards, want %d (the expansion bound)", got, MaxPrefixExpansions)
	}
}

func TestSemanticHook(t *testing.T) {
	x := build(inOrder())
	q, _ := ParseQuery("translator")
	plain := x.Search(q, Options{Limit: 50})
	// A card with no text match comes in through the semantic scores.
	hits := x.Search(q, Options{Limit: 50, Semantic: map[int64]float64{8: 0.9}})
	if len(hits) != len(plain)+1 || !slices.Contains(dids(hits), did(7)) {
		t.Errorf("semantic candidate not added: %v", dids(hits))
	}
	for _, h := range hits {
		if h.Relevance < 0 || h.Relevance > 1 {
			t.Errorf("relevance %v out of [0, 1]", h.Relevance)
		}
	}
	// A text match the semantic map lacks is scored by SemanticOf, as the map's are.
	of := func(int64) float64 { return 0.5 }
	if hits := x.Search(q, Options{Limit: 50, Semantic: map[int64]float64{}, SemanticOf: of}); hits[0].Relevance != TextShare+SemanticShare*0.5 {
		t.Errorf("best text match with SemanticOf 0.5: relevance %v, want %v", hits[0].Relevance, TextShare+SemanticShare*0.5)
	}
	if hits := x.Search(q, Options{Limit: 50, Semantic: map[int64]float64{}}); hits[0].Relevance != TextShare {
		t.Errorf("best text match without SemanticOf: relevance %v, want %v", hits[0].Relevance, TextShare)
	}
}

func TestLogPortable(t *testing.T) {
	for _, v := range []float64{1e-300, 0.1, 0.5, 1, 1.5, 2, 10, 12345.678, 1e300} {
		if got, want := logPortable(v), math.Log(v); math.Abs(got-want) > 1e-15*math.Abs(want)+1e-300 {
			t.Errorf("logPortable(%v) = %v, want %v", v, got, want)
		}
	}
}

// TestConcurrent runs searches while cards are put and deleted (go test -race).
func TestConcurrent(t *testing.T) {
	x := build(inOrder())
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				if g == 0 {
					id := int64(1000 + i%20)
					x.Put(id, Doc{DID: fmt.Sprintf("did:c:%d", i%20), Name: "translator", Capabilities: []string{"translation/x"}})
					if i%3 == 0 {
						x.Delete(id)
					}
					continue
				}
				q, _ := ParseQuery([]string{"translator", `"legal contracts"`, "transl*", ""}[(i+g)%4])
				x.Search(q, Options{Limit: 10, Capability: []string{"", "translation"}[i%2]})
			}
		})
	}
	wg.Wait()
}
