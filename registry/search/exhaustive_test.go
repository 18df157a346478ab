package search

import (
	"math"
	"slices"
	"strings"
)

// The exhaustive search: every match of a query scored in full and pushed through the top-k
// heap, as Search did before it pruned (docs/SEARCH.md, Speed). Search must give exactly
// its answer, bit for bit (TestPrunedIsExhaustive): it is kept as the reference, the way
// semantic.SearchExact is for the prefilter, in a test file (review 41): Search's own
// fallback, when pruning cannot prove its answer, is its ranking with pruning off, so the
// node runs one copy of the ranking.

// searchExhaustive is Search without pruning: the reference its answers are checked against.
func (x *Index) searchExhaustive(q Query, opt Options) []Hit {
	if opt.Limit <= 0 {
		return nil
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if q.Empty() {
		return x.byStake(opt)
	}
	phrases, ok := x.phraseIDs(q)
	if !ok { // a phrase with a term no card has: nothing can match
		return nil
	}
	var filter []int32
	if opt.Capability != "" {
		if filter = x.caps[opt.Capability]; len(filter) == 0 {
			return nil
		}
	}
	s := x.getScratch()
	defer x.scratch.Put(s)
	return x.searchAll(q, opt, s, phrases, filter)
}

// searchAll is searchExhaustive past its checks, under x.mu (read), with a scratch whose
// per-doc arrays are zero.
func (x *Index) searchAll(q Query, opt Options, s *scratch, phrases [][]int32, filter []int32) []Hit {
	// The filters, capability then phrases, leave the docs that may match marked s.gen. A
	// search takes at most 1 + MaxQueryTerms generations: they never wrap within one.
	if s.gen > math.MaxUint32-2*MaxQueryTerms {
		clear(s.mark)
		s.gen = 0
	}
	var mark []uint32
	if filter != nil {
		g := s.next()
		for _, n := range filter {
			s.mark[n] = g
		}
		mark = s.mark
	}
	if len(phrases) > 0 {
		matchers := make([]phraseMatcher, len(phrases))
		for i, p := range phrases {
			matchers[i].reset(p)
		}
		// The docs holding every phrase term (intersected through marks, rarest term
		// first), then those where each phrase holds.
		terms := x.phraseTerms(phrases)
		for i, t := range terms {
			prev := s.gen // read apart: Go does not order a read against a call in one statement
			g := s.next()
			first := i == 0 && mark == nil
			for _, p := range x.terms[t].postings {
				if !first && s.mark[p.doc] != prev {
					continue
				}
				if i == len(terms)-1 && !x.docs[p.doc].hasPhrases(matchers) {
					continue
				}
				s.mark[p.doc] = g
			}
		}
		mark = s.mark
	}
	x.accumulateAll(q, s, mark)
	match := func(n int32) bool { return mark == nil || mark[n] == s.gen }
	// With many matches, reading the scores in doc order beats following touched (the
	// same matches, in another order: neither max nor the heap depends on it).
	matches := s.touched
	if len(matches) > len(x.docs)/8 {
		matches = s.cand[:0]
		for n, a := range s.acc[:len(x.docs)] {
			if a != 0 {
				matches = append(matches, int32(n))
			}
		}
		s.cand = matches
	}
	// Text scores are normalized by the best staked match's when there is one, for the
	// same reason as the statistics: an unstaked card cannot change the staked cards'
	// relevance. An unstaked card scoring above it has a relevance above 1: clamping it
	// would tie every such card at 1, and dividing all by one number keeps the order.
	maxText, maxStaked := 0.0, 0.0
	for _, n := range matches {
		maxText = max(maxText, s.acc[n])
		if x.docs[n].staked {
			maxStaked = max(maxStaked, s.acc[n])
		}
	}
	if maxStaked > 0 {
		maxText = maxStaked
	}
	// opt.Semantic by doc number, read once per match below (a map lookup per match would
	// cost more than the rest of the scoring of a broad query).
	var semOnly []int32
	if opt.Semantic != nil {
		for id, sem := range opt.Semantic {
			n, ok := x.byID[id]
			if !ok {
				continue
			}
			s.sem[n], s.semIn[n] = min(sem, 1), true // a cosine, at most 1 (Options.Semantic)
			s.semDocs = append(s.semDocs, n)
			if s.acc[n] == 0 && sem > 0 && match(n) {
				semOnly = append(semOnly, n)
			}
		}
	}
	// rel is the relevance with the semantic scores of opt.Semantic only; exact adds
	// SemanticOf's for a card the map lacks. Every match is ranked by rel, and the best
	// opt.Limit of them, the only ones handed back, get exact: scoring every text match
	// against the query's vector would cost a dot product per match (tens of thousands for a
	// broad query over 100k cards) for cards that are not among the best whatever their
	// meaning adds.
	rel := func(n int32) float64 {
		r := 0.0
		if maxText > 0 {
			r = s.acc[n] / maxText
		}
		if opt.Semantic != nil {
			r = float64(TextShare*r) + float64(SemanticShare*s.sem[n])
		}
		return r
	}
	exact := func(n int32) float64 {
		r := rel(n)
		if opt.Semantic != nil && opt.SemanticOf != nil && s.acc[n] > 0 && !s.semIn[n] {
			r += float64(SemanticShare * min(opt.SemanticOf(x.docs[n].id), 1))
		}
		return r
	}
	top := s.top[:0]
	for _, n := range matches {
		r := rel(n)
		top = x.pushTopAll(top, ranked{r * x.factors[n], r, n}, opt.Limit)
	}
	for _, n := range semOnly {
		r := rel(n)
		top = x.pushTopAll(top, ranked{r * x.factors[n], r, n}, opt.Limit)
	}
	if opt.Semantic != nil && opt.SemanticOf != nil {
		for i := range top {
			top[i].rel = exact(top[i].n)
			top[i].score = top[i].rel * x.factors[top[i].n]
		}
	}
	slices.SortFunc(top, func(a, b ranked) int { return x.compareRankedAll(a, b) })
	out := make([]Hit, len(top))
	for i, r := range top {
		e := &x.docs[r.n]
		out[i] = Hit{ID: e.id, DID: e.did, Text: s.acc[r.n], Relevance: r.rel, Score: r.score}
	}
	x.reset(s)
	for _, n := range s.semDocs {
		s.sem[n], s.semIn[n] = 0, false
	}
	s.top, s.cand, s.semDocs = top[:0], s.cand[:0], s.semDocs[:0]
	return out
}

// accumulateAll is accumulate for every posting of every clause (see accumulate).
func (x *Index) accumulateAll(q Query, s *scratch, mark []uint32) {
	type member struct {
		term   int32
		weight float64
	}
	type clause struct {
		key     string
		members []member
	}
	var clauses []clause
	expanded := 0
	add := func(c *clause, t int32, w float64) {
		if expanded >= maxExpanded || len(x.terms[t].postings) == 0 {
			return
		}
		for _, m := range c.members {
			if m.term == t {
				return
			}
		}
		expanded++
		c.members = append(c.members, member{t, w})
	}
	// The members each clause wants, in order; with staked statistics the terms staked
	// cards hold are taken first, so unstaked cards cannot spend the maxExpanded budget a
	// staked card's terms need.
	type want struct {
		clause int
		member
	}
	var wants []want
	for _, t := range q.Terms {
		clauses = append(clauses, clause{key: "t:" + t})
		if id, ok := x.dict[t]; ok {
			wants = append(wants, want{len(clauses) - 1, member{id, 1}})
		}
		for _, a := range Aliases(t) {
			if id, ok := x.dict[a]; ok && !slices.Contains(q.Terms, a) {
				wants = append(wants, want{len(clauses) - 1, member{id, AliasWeight}})
			}
		}
	}
	for _, p := range q.Prefixes {
		clauses = append(clauses, clause{key: "p:" + p})
		for _, id := range x.prefixTerms(p) {
			wants = append(wants, want{len(clauses) - 1, member{id, 1}})
		}
	}
	staked := x.stakedStats()
	for pass := range 2 {
		for _, w := range wants {
			if !staked && pass == 0 || staked && (x.terms[w.term].stakedDF > 0) == (pass == 0) {
				add(&clauses[w.clause], w.term, w.weight)
			}
		}
	}
	slices.SortFunc(clauses, func(a, b clause) int { return strings.Compare(a.key, b.key) })
	// The collection statistics are the staked cards' while there is one (stakedStats):
	// unstaked cards, free to make, cannot move idf or the average lengths, and nodes
	// holding the same staked cards score them the same whatever unstaked ones they hold.
	live, totalLen := x.live, x.totalLen
	if staked {
		live, totalLen = x.live-x.unstaked, x.stakedLen
	}
	n := float64(live)
	// norm(f, len) = 1 − B + B × len / avglen(f), for every length a field has had.
	for f := range numFields {
		avg := 0.0
		if live > 0 {
			avg = float64(totalLen[f]) / n
		}
		norms := s.norms[f][:0]
		for l := range int(x.maxLen[f]) + 1 {
			norm := 1 - B
			if avg > 0 {
				norm += float64(B*float64(l)) / avg
			}
			norms = append(norms, norm)
		}
		s.norms[f] = norms
	}
	for _, c := range clauses {
		if len(c.members) == 0 {
			continue
		}
		slices.SortFunc(c.members, func(a, b member) int { return strings.Compare(x.terms[a.term].text, x.terms[b.term].text) })
		df := 0
		for _, m := range c.members {
			df = max(df, x.df(m.term))
		}
		idf := logPortable(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
		scale := idf * (K1 + 1)
		if len(c.members) == 1 { // no sum to stage: straight into acc (the same bits)
			m := c.members[0]
			for _, p := range x.terms[m.term].postings {
				if mark != nil && mark[p.doc] != s.gen {
					continue
				}
				tf := float64(m.weight * x.fieldTF(p, &s.norms))
				if s.acc[p.doc] == 0 {
					s.touched = append(s.touched, p.doc)
				}
				s.acc[p.doc] += float64(scale*tf) / (K1 + tf)
			}
			continue
		}
		cand := s.cand[:0]
		for _, m := range c.members {
			for _, p := range x.terms[m.term].postings {
				if mark != nil && mark[p.doc] != s.gen {
					continue
				}
				if s.tf[p.doc] == 0 {
					cand = append(cand, p.doc)
				}
				s.tf[p.doc] += float64(m.weight * x.fieldTF(p, &s.norms))
			}
		}
		for _, d := range cand {
			tf := s.tf[d]
			s.tf[d] = 0
			if s.acc[d] == 0 {
				s.touched = append(s.touched, d)
			}
			s.acc[d] += float64(scale*tf) / (K1 + tf)
		}
		s.cand = cand[:0]
	}
}

// compareRankedAll is compareRanked by the DIDs themselves.
func (x *Index) compareRankedAll(a, b ranked) int {
	switch {
	case a.score > b.score:
		return -1
	case a.score < b.score:
		return 1
	case a.n == b.n:
		return 0
	}
	da, db := &x.docs[a.n], &x.docs[b.n]
	if c := strings.Compare(da.did, db.did); c != 0 {
		return c
	}
	if da.id < db.id {
		return -1
	}
	return 1
}

// pushTopAll is pushTop with compareRankedAll.
func (x *Index) pushTopAll(h []ranked, r ranked, limit int) []ranked {
	worse := func(i, j int) bool { return x.compareRankedAll(h[i], h[j]) > 0 } // i is worse than j
	if len(h) < limit {
		h = append(h, r)
		for i := len(h) - 1; i > 0; {
			parent := (i - 1) / 2
			if !worse(i, parent) {
				break
			}
			h[i], h[parent] = h[parent], h[i]
			i = parent
		}
		return h
	}
	if r.score < h[0].score || x.compareRankedAll(r, h[0]) >= 0 { // not better than the worst kept
		return h
	}
	h[0] = r
	for i := 0; ; {
		l, rt, w := 2*i+1, 2*i+2, i
		if l < len(h) && worse(l, w) {
			w = l
		}
		if rt < len(h) && worse(rt, w) {
			w = rt
		}
		if w == i {
			return h
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}
