package search

import (
	"slices"
)

// Summary is what the index holds of one card that a write of it can change in the answers
// to queries (the registry's kept answers, registry/answers.go): its key, how it ranks by
// stake, its terms and its capability keys.
type Summary struct {
	ID     int64
	DID    string
	Staked bool
	// Factor is the stake factor: Hit.Score for a query without text.
	Factor float64
	// Terms are the card's indexed terms, every field's, each once, in byte order (so that a
	// term or a prefix is found by a binary search: a kept answer asks for a few of them).
	Terms []string
	// Caps are the capability keys the card is found under (its tags and their ancestors).
	Caps []string
	// fields are the terms of each field in order ("" between two capabilities).
	fields [numFields][]string
}

// Summary gives what the index holds of id's card, if it holds one.
func (x *Index) Summary(id int64) (Summary, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n, ok := x.byID[id]
	if !ok {
		return Summary{}, false
	}
	e := &x.docs[n]
	s := Summary{ID: id, DID: e.did, Staked: e.staked, Factor: e.factor, Caps: e.caps, Terms: make([]string, e.terms())}
	for i := range e.terms() {
		s.Terms[i] = x.terms[e.term(i).term].text
	}
	slices.Sort(s.Terms)
	for f := range numFields {
		s.fields[f] = make([]string, len(e.seq(f)))
		for i, t := range e.seq(f) {
			if t >= 0 {
				s.fields[f][i] = x.terms[t].text
			}
		}
	}
	return s, true
}

// Indexes says whether the index holds a card summarized as s as it holds one summarized
// as o: the same DID, stake factor and staked flag, and the same terms in each field in the
// same order, so the same postings, lengths, statistics and capability keys. Putting the one
// in place of the other changes no hit of any search (the order of postings and doc numbers
// never shows in them). It also says that every term of the cards' fields was indexed (no
// field cut at maxFieldTerms), so that anything made from the terms of the whole fields (the
// registry's vector of meaning) is the same for both.
func (s *Summary) Indexes(o *Summary) bool {
	if s.DID != o.DID || s.Staked != o.Staked || s.Factor != o.Factor || !slices.Equal(s.Caps, o.Caps) {
		return false
	}
	for f := range numFields {
		if len(s.fields[f]) >= maxFieldTerms-1 || !slices.Equal(s.fields[f], o.fields[f]) {
			return false
		}
	}
	return true
}

// StakedStats says whether the collection statistics of text scores (N, df, the average
// field lengths) are the staked cards' (the index holds a staked card) rather than every
// card's: while they are, a write of an unstaked card changes no other card's text score.
func (x *Index) StakedStats() bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.stakedStats()
}

// RanksBefore says whether a card ranked like s comes before hit h in a query without
// text (by stake factor, then DID, then id: the order of Search's answer then).
func (s *Summary) RanksBefore(h Hit) bool {
	if s.Factor != h.Score {
		return s.Factor > h.Score
	}
	if s.DID != h.DID {
		return s.DID < h.DID
	}
	return s.ID < h.ID
}

// Holders is how many cards hold term t (in any field): 0 for a term no card holds.
func (x *Index) Holders(t string) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if id, ok := x.dict[t]; ok {
		return len(x.terms[id].postings)
	}
	return 0
}

// Rank gives how id's card is ranked apart from the query: its stake factor and whether it
// is staked; false when the index does not hold it.
func (x *Index) Rank(id int64) (factor float64, staked, ok bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n, ok := x.byID[id]
	if !ok {
		return 0, false, false
	}
	return x.factors[n], x.staked[n], true
}

// TextOf is the text score (Hit.Text) Search would give id's card for q, the same bits,
// whether or not the card passes q's filters (phrases, a capability); false when the index
// does not hold it. It reads the card's own postings of q's clauses (a binary search of its
// terms each), not the clauses' postings: a cost that does not grow with the index.
func (x *Index) TextOf(q Query, id int64) (float64, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n, ok := x.byID[id]
	if !ok {
		return 0, false
	}
	if q.Empty() {
		return 0, true
	}
	return x.textOne(q, n), true
}

// textOne is doc n's text score for q with the bits accumulate gives it: each clause's
// members' weighted frequencies summed in order into tf~, then the clauses' parts added in
// order, with the same expressions.
func (x *Index) textOne(q Query, n int32) float64 {
	var norms [numFields][]float64 // by field length, up to the longest field: short
	clauses, scales, _ := x.queryClauses(q, &norms)
	e := &x.docs[n]
	acc := 0.0
	for ci, c := range clauses {
		tf, held := 0.0, false
		for _, m := range c.members {
			i, found := e.findTerm(m.term)
			if !found {
				continue
			}
			tf += float64(m.weight * x.fieldTF(x.terms[m.term].postings[e.term(i).pos], &norms))
			held = true
		}
		if held {
			acc += float64(scales[ci]*tf) / (K1 + tf)
		}
	}
	return acc
}

// PruneAlways makes every search of every index prune whatever its postings (as a corpus of
// millions of cards does), until the function it gives is called: for the tests of packages
// whose answers must not depend on pruning. Not for concurrent use with searches.
func PruneAlways() (restore func()) {
	n, share := pruneMinPostings, pruneShare
	pruneMinPostings, pruneShare = 0, 1
	return func() { pruneMinPostings, pruneShare = n, share }
}
