package search

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// prunedVocab are the words of the random corpora: common and rare words, words with
// aliases (translation, review), words that stem alike, words sharing prefixes, and words
// every card says (agent), the shape of the stop-word-like terms a sentence brings.
var prunedVocab = []string{
	"agent", "agent", "agent", "services", "translation", "translator", "localization", "legal",
	"audit", "review", "code", "solidity", "contract", "contracts", "research", "medical",
	"image", "audio", "summarize", "summaries", "tax", "bookkeeping", "robot", "robots",
	"transcription", "transport", "translate", "papers", "market", "marketplaces", "zebra",
}

// randomDoc is a card of a few words from prunedVocab, drawn with a skew to the first ones.
func randomDoc(rng *rand.Rand, did string) Doc {
	words := func(n int) string {
		var b []string
		for range n {
			i := rng.IntN(len(prunedVocab))
			if rng.IntN(2) == 0 {
				i = rng.IntN(1 + i) // skew: lower indexes more often
			}
			b = append(b, prunedVocab[i])
		}
		return strings.Join(b, " ")
	}
	d := Doc{DID: did, Name: words(1 + rng.IntN(3)), Description: words(rng.IntN(12))}
	if rng.IntN(30) == 0 { // a long description: a low score for the words it holds
		d.Description = words(100 + rng.IntN(400))
	}
	if rng.IntN(20) != 0 { // nearly every card says it: a clause pruning leaves out
		d.Name += " agent"
	}
	for range rng.IntN(3) {
		c := prunedVocab[rng.IntN(len(prunedVocab))]
		if rng.IntN(2) == 0 {
			c += "/" + prunedVocab[rng.IntN(len(prunedVocab))]
		}
		d.Capabilities = append(d.Capabilities, c)
	}
	return d
}

// randomDID is a DID of random length: some share long prefixes, some are short, so the
// ties go through every path of the DID comparison.
func randomDID(rng *rand.Rand, i int) string {
	switch rng.IntN(4) {
	case 0:
		return fmt.Sprintf("did:%d", rng.IntN(50))
	case 1:
		return fmt.Sprintf("did:key:z6Mkaaaaaaaaaaaa%06d", rng.IntN(1000))
	case 2:
		return fmt.Sprintf("did:key:z6Mk%x", rng.Uint64())
	}
	return fmt.Sprintf("did:pkh:eip155:1:0x%040x%d", rng.IntN(3), i)
}

// randomQuery is query text of words, sometimes a prefix or a phrase.
func randomQuery(rng *rand.Rand) string {
	var parts []string
	for range 1 + rng.IntN(8) {
		w := prunedVocab[rng.IntN(len(prunedVocab))]
		switch rng.IntN(8) {
		case 0:
			parts = append(parts, w[:min(len(w), 2+rng.IntN(3))]+"*")
		case 1:
			parts = append(parts, `"`+w+" "+prunedVocab[rng.IntN(len(prunedVocab))]+`"`)
		default:
			parts = append(parts, w)
		}
	}
	return strings.Join(parts, " ")
}

// TestPrunedIsExhaustive checks Search against searchExhaustive, which scores every match
// in full, on random corpora (staked and unstaked cards, equal texts, equal stakes, cards
// deleted and put again, no staked card at all) and random queries (words, prefixes,
// phrases, capabilities, semantic scores with and without SemanticOf, given at once or
// through SemanticLater, scoring in one part or split over the CPUs, limits from 1 to
// past the matches): the same hits, in the same order, with the same bits.
func TestPrunedIsExhaustive(t *testing.T) {
	defer func(n int, share float64, par int) {
		pruneMinPostings, pruneShare, parallelPostings = n, share, par
	}(pruneMinPostings, pruneShare, parallelPostings)
	rng := rand.New(rand.NewPCG(41, 2))
	rounds := 40
	if testing.Short() {
		rounds = 10
	}
	for round := range rounds {
		pruneMinPostings = []int{0, 1, 100}[round%3]
		pruneShare = []float64{32, 32, 4, 1.5, 1}[round%5]
		parallelPostings = []int{1 << 17, 0, 50}[(round/3)%3] // split in parts: the same bits
		x := New()
		n := 50 + rng.IntN(3000)
		stakedShare := []int{0, 1, 10, 50, 100}[rng.IntN(5)]
		docs := make([]Doc, n)
		for i := range docs {
			docs[i] = randomDoc(rng, randomDID(rng, i))
			if rng.IntN(100) < stakedShare {
				docs[i].Staked = true
				if rng.IntN(2) == 0 {
					docs[i].StakeWeight = float64(1 + rng.IntN(3))
				} else {
					docs[i].StakeWeight = 1 + 4*rng.Float64()
				}
			}
			if i > 0 && rng.IntN(5) == 0 { // the same text as another card: ties
				j := rng.IntN(i)
				docs[i].Name, docs[i].Description, docs[i].Capabilities = docs[j].Name, docs[j].Description, docs[j].Capabilities
			}
			x.Put(int64(i+1), docs[i])
		}
		for range n / 10 {
			i := rng.IntN(n)
			x.Delete(int64(i + 1))
			if rng.IntN(2) == 0 {
				x.Put(int64(i+1), docs[i])
			}
		}
		if msg := x.postingsOrder(); msg != "" {
			t.Fatalf("round %d: %s", round, msg)
		}
		for qi := range 60 {
			text := randomQuery(rng)
			q, err := ParseQuery(text)
			if err != nil {
				t.Fatal(err)
			}
			opt := Options{Limit: []int{1, 5, 20, 200, 10_000, 1 + rng.IntN(n)}[rng.IntN(6)]}
			if rng.IntN(4) == 0 {
				opt.Capability = prunedVocab[rng.IntN(len(prunedVocab))]
			}
			if rng.IntN(2) == 0 {
				opt.Semantic = map[int64]float64{}
				for range rng.IntN(400) {
					opt.Semantic[int64(1+rng.IntN(n+5))] = []float64{0, 0.2, 0.5, rng.Float64()}[rng.IntN(4)]
				}
				if rng.IntN(2) == 0 {
					salt := rng.Uint64()
					opt.SemanticOf = func(id int64) float64 {
						return float64((uint64(id)*0x9e3779b97f4a7c15^salt)%1000) / 1000
					}
				}
			}
			want := x.searchExhaustive(q, opt)
			var among []int64 // the ids SemanticLater was given, when it was asked
			asked := false
			if opt.Semantic != nil && rng.IntN(2) == 0 { // the same scores, given while Search scores text
				sem, of := opt.Semantic, opt.SemanticOf
				opt.Semantic, opt.SemanticOf = nil, nil
				// Each side's scores (the staked cards', then the unstaked ones'), as the
				// registry gives them; an id no card has goes with the staked side.
				opt.SemanticLater = func(a []uint64, side Side) (map[int64]float64, func(int64) float64) {
					among, asked = []int64{}, true
					for w, word := range a {
						for b := range 64 {
							if word&(1<<b) != 0 {
								among = append(among, int64(64*w+b))
							}
						}
					}
					mine := map[int64]float64{}
					for id, v := range sem {
						if n, ok := x.byID[id]; ok && !x.docs[n].staked == (side == Unstaked) || !ok && side == Staked {
							mine[id] = v
						}
					}
					return mine, of
				}
			}
			got := x.Search(q, opt)
			if asked {
				if want := x.passingFilters(q, opt.Capability); !slices.Equal(among, want) {
					t.Fatalf("round %d query %d %q capability %q: SemanticLater was given %d ids, want the %d passing the filters", round, qi, text, opt.Capability, len(among), len(want))
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("round %d query %d %q %+v (-exhaustive +Search):\n%s", round, qi, text, opt, diff)
			}
		}
	}
}

// passingFilters is, in order, the ids of the cards under capability (any, when "") holding
// every term of q's phrases, read from each card's own terms (not the postings
// semanticAmong reads); nil for a query without either filter.
func (x *Index) passingFilters(q Query, capability string) []int64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if capability == "" && len(q.Phrases) == 0 {
		return nil
	}
	out := []int64{}
	for n, e := range x.docs {
		if e.did == "" || slices.Contains(x.free, int32(n)) {
			continue
		}
		if capability != "" && !slices.Contains(e.caps, capability) {
			continue
		}
		holds := true
		for _, p := range q.Phrases {
			for _, t := range p {
				id, ok := x.dict[t]
				if _, held := e.findTerm(id); !ok || !held {
					holds = false
				}
			}
		}
		if holds {
			out = append(out, e.id)
		}
	}
	slices.Sort(out)
	return out
}

// TestDIDKeyOrder: two DIDs whose didKeys differ compare as their keys do.
func TestDIDKeyOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	cmpKeys := func(a, b [2]uint64) int {
		switch {
		case a == b:
			return 0
		case a[0] < b[0] || a[0] == b[0] && a[1] < b[1]:
			return -1
		}
		return 1
	}
	for range 20_000 {
		a, b := randomDID(rng, rng.IntN(3)), randomDID(rng, rng.IntN(3))
		if rng.IntN(4) == 0 {
			b = a[:rng.IntN(len(a)+1)] + b[:rng.IntN(3)] // a prefix of a, and a little
		}
		if rng.IntN(8) == 0 {
			b = a + "\x00"
		}
		if k := cmpKeys(didKey(a), didKey(b)); k != 0 && k != strings.Compare(a, b) {
			t.Fatalf("%q vs %q: keys %d, strings %d", a, b, k, strings.Compare(a, b))
		}
	}
}

// TestStakeTierBoundsTheUnstakedSide: a hybrid search through SemanticLater proves the stake
// tier's answer before it asks for the unstaked cards' semantic scores, so it bounds each of
// them by 1, the most a score can be. On corpora where every unstaked card scores 1 in
// meaning and every staked one 0, with stake factors of 1 (the staked heap's worst as low as
// it goes), the answers are still the exhaustive ones, and the unstaked side is asked
// whenever an unstaked card is among them.
func TestStakeTierBoundsTheUnstakedSide(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 7))
	checked := 0
	for round := range 300 {
		x := New()
		n := 20 + rng.IntN(200)
		sem := map[int64]float64{}
		for i := range n {
			d := randomDoc(rng, randomDID(rng, i))
			if rng.IntN(2) == 0 {
				d.Staked, d.StakeWeight = true, 1
			} else {
				sem[int64(i+1)] = 1
			}
			x.Put(int64(i+1), d)
		}
		for qi := range 10 {
			text := randomQuery(rng)
			q, err := ParseQuery(text)
			if err != nil {
				t.Fatal(err)
			}
			opt := Options{Limit: 1 + rng.IntN(5), Semantic: sem}
			want := x.searchExhaustive(q, opt)
			opt.Semantic = nil
			unstakedAsked := false
			opt.SemanticLater = func(_ []uint64, side Side) (map[int64]float64, func(int64) float64) {
				if side == Staked {
					return map[int64]float64{}, nil
				}
				unstakedAsked = true
				return sem, nil
			}
			got := x.Search(q, opt)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("round %d query %d %q limit %d (-exhaustive +Search):\n%s", round, qi, text, opt.Limit, diff)
			}
			if slices.ContainsFunc(got, func(h Hit) bool { return sem[h.ID] == 1 }) {
				checked++
				if !unstakedAsked {
					t.Fatalf("round %d query %d %q: an unstaked card is among the hits, and the unstaked side was not asked", round, qi, text)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no answer held an unstaked card: the corpora test nothing")
	}
}
