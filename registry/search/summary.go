package search

// Summary is what the index holds of one card that a write of it can change in the answers
// to queries (the registry's kept answers, registry/answers.go): its key, how it ranks by
// stake, its terms and its capability keys.
type Summary struct {
	ID     int64
	DID    string
	Staked bool
	// Factor is the stake factor: Hit.Score for a query without text.
	Factor float64
	// Terms are the card's indexed terms, every field's, each once, in no order.
	Terms []string
	// Caps are the capability keys the card is found under (its tags and their ancestors).
	Caps []string
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
	s := Summary{ID: id, DID: e.did, Staked: e.staked, Factor: e.factor, Caps: e.caps, Terms: make([]string, len(e.terms))}
	for i, dt := range e.terms {
		s.Terms[i] = x.terms[dt.term].text
	}
	return s, true
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
