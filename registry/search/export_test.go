package search

// Accessors for the tests: sizes of the index's inner tables.

import (
	"fmt"
	"unsafe"
)

// sizes are the lengths of the dictionary, the live term table (terms not on the free list)
// and the prefix table's lists summed.
func (x *Index) sizes() (dict, terms, prefixes int) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	for _, l := range x.prefixes {
		prefixes += len(l)
	}
	return len(x.dict), len(x.terms) - len(x.termFree), prefixes
}

// fieldLens are the indexed lengths of id's fields.
func (x *Index) fieldLens(id int64) [numFields]uint16 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.docs[x.byID[id]].len
}

// capKeys is the number of capability keys the index holds.
func (x *Index) capKeys() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.caps)
}

// postingsOrder says what is wrong with the postings' order, if anything: every term's
// staked postings first (stakedDF of them), and every doc's docTerm at its posting; and
// with the capability names: one for each capability key held (none left behind by a
// delete), the very string every doc's key is.
func (x *Index) postingsOrder() string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	for id, te := range x.terms {
		for i, p := range te.postings {
			if x.staked[p.doc] != (i < int(te.stakedDF)) {
				return fmt.Sprintf("term %q: posting %d of doc %d staked %v, stakedDF %d", te.text, i, p.doc, x.staked[p.doc], te.stakedDF)
			}
		}
		_ = id
	}
	for n, e := range x.docs {
		for i := range e.terms() {
			dt := e.term(i)
			if ps := x.terms[dt.term].postings; int(dt.pos) >= len(ps) || ps[dt.pos].doc != int32(n) {
				return fmt.Sprintf("doc %d: term %d's posting not at %d", n, dt.term, dt.pos)
			}
		}
		for _, c := range e.caps {
			if name, ok := x.capNames[c]; !ok || unsafe.StringData(name) != unsafe.StringData(c) {
				return fmt.Sprintf("doc %d: capability %q is not the index's name for it", n, c)
			}
		}
	}
	if len(x.capNames) != len(x.caps) {
		return fmt.Sprintf("%d capability names for %d capability keys", len(x.capNames), len(x.caps))
	}
	return ""
}

// searchStaked is Search's stake tier alone: its answer, and whether it proved it.
func (x *Index) searchStaked(q Query, opt Options) ([]Hit, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	phrases, ok := x.phraseIDs(q)
	if !ok {
		return nil, false
	}
	var filter []int32
	if opt.Capability != "" {
		if filter = x.caps[opt.Capability]; len(filter) == 0 {
			return nil, false
		}
	}
	s := &scratch{}
	size := len(x.docs)
	s.acc, s.tf, s.mark = make([]float64, size), make([]float64, size), make([]uint32, size)
	s.sem, s.semIn, s.keep = make([]float64, size), make([]bool, size), make([]uint32, size)
	return x.rank(q, &opt, s, phrases, filter, tierStaked, nil)
}
