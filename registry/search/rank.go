package search

import (
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// Options narrow and shape a search.
type Options struct {
	// Capability keeps the cards with that capability or one below it in the hierarchy
	// ("translation" keeps "translation/fr-en", not "translations").
	Capability string
	// Limit is how many hits to return at most (0 returns none).
	Limit int
	// Semantic, when set, holds the semantic score (cosine, clamped at 0 by the caller;
	// one above 1, as int8 rows may round, counts as 1) of the cards the semantic index
	// found for the query, by id. Relevance is then
	// TextShare·text/maxText + SemanticShare·semantic, and those cards are matches even
	// without a text match (a phrase still has to match). nil ranks by text alone:
	// relevance is text/maxText. It is ignored for a query without text.
	Semantic map[int64]float64
	// SemanticOf, when set beside Semantic, gives the semantic score of a text match that
	// Semantic lacks (a card not among the nearest), for the Limit best matches by the
	// scores of Semantic alone, so that every card handed back is scored the same way;
	// without it such a match's semantic score is 0.
	SemanticOf func(id int64) float64
	// SemanticLater, when set (Semantic nil), gives Semantic and SemanticOf one side at a
	// time: the staked cards' nearest (side Staked), then the unstaked cards' (Unstaked),
	// each a map of its side's cards and a function scoring any card. Search calls it on a
	// goroutine of its own while it scores text (which needs no semantic score unless it
	// prunes: pruning scores the cards with one in full), and waits for it before ranking,
	// or before pruning, and before it returns; the unstaked side only when the staked cards
	// alone cannot prove the answer (a score is at most 1, which bounds every unstaked
	// card's). among, when not nil, is the set of the cards that pass the query's filters
	// (its capability, every term of its phrases), a bitmap by card id (bit id%64 of word
	// id/64), the index's until the call returns: the semantic side is then the nearest
	// among those. It is not called when Limit is 0, the query has no text, or a phrase's
	// term or the capability no card holds. It must not wait for a write to the index.
	SemanticLater func(among []uint64, side Side) (map[int64]float64, func(id int64) float64)
}

// Side is the cards a semantic side covers (Options.SemanticLater).
type Side uint8

const (
	// Staked is the staked cards' side.
	Staked Side = iota
	// Unstaked is the unstaked cards' side.
	Unstaked
)

// Hit is a card found, best first.
type Hit struct {
	ID  int64
	DID string
	// Text is the card's BM25F score for the query (0 without text).
	Text float64
	// Relevance is text/maxText, mixed with the semantic score when there is one; 1 for a
	// query without text. maxText is the best staked text match's score when a staked card
	// matches, else the best match's: Relevance is in [0, 1] for staked cards, and an
	// unstaked card that out-scores every staked one goes above 1.
	Relevance float64
	// Score is Relevance × the stake factor (units.StakeWeight staked, UnstakedFactor not):
	// the order of the hits, ties broken by DID then ID. The registry multiplies in
	// reputation.
	Score float64
}

// getScratch takes a scratch from x's pool, its per-doc arrays zero and as long as x's docs;
// the caller puts it back.
func (x *Index) getScratch() *scratch {
	s, _ := x.scratch.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	if len(s.acc) < len(x.docs) {
		size := len(x.docs) + len(x.docs)/4
		s.acc, s.tf, s.mark = make([]float64, size), make([]float64, size), make([]uint32, size)
		s.sem, s.semIn = make([]float64, size), make([]bool, size)
	}
	if len(s.keep) < len(x.docs) {
		s.keep, s.keepGen = make([]uint32, len(s.acc)), 0
	}
	return s
}

type scratch struct {
	acc     []float64 // by doc number; 0 outside a search
	tf      []float64 // by doc number, one clause's; 0 outside a search
	mark    []uint32  // by doc number: gen marks the docs the filters keep
	gen     uint32    // the mark generation; each filter step starts one
	touched []int32
	cand    []int32
	sem     []float64 // by doc number: opt.Semantic's score; 0 outside a search
	semIn   []bool    // by doc number: opt.Semantic has the doc; false outside a search
	semDocs []int32   // the docs opt.Semantic has (to reset sem and semIn)
	among   amongScratch
	keep    []uint32 // by doc number: keepGen marks the docs a pruned search scores (accumulate)
	keepGen uint32
	top     []ranked
	norms   [numFields][]float64 // by field length: bm25's length normalization, this query's
	parts   []partScratch        // the lists of accumulate's parts past the first
}

// amongScratch is semanticAmong's: marks of its own (it runs beside rank, on the semantic
// side's goroutine) and the bitmap it makes.
type amongScratch struct {
	mark  []uint32 // by doc number: gen marks the docs the filters keep
	gen   uint32
	words []uint64 // the bitmap, by card id
}

// partScratch is what one part of accumulate's scoring lists.
type partScratch struct{ touched, cand []int32 }

// ranked is a match in the top-k heap.
type ranked struct {
	score float64
	rel   float64 // the relevance the score was computed from
	n     int32
}

// Search returns the best opt.Limit cards for q, best first. A query with no terms returns
// every card (with opt.Capability, every card with it) by stake factor, then DID.
func (x *Index) Search(q Query, opt Options) []Hit {
	if opt.Limit <= 0 {
		return nil
	}
	f := opt.SemanticLater
	opt.SemanticLater = nil
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
	// A hybrid query's semantic side, among the cards that pass its filters, runs on a
	// goroutine of its own while the text is scored, waited for on every return, before
	// the index is unlocked (it reads the index for those cards): the staked cards' nearest,
	// then, once a ranking needs them, the unstaked cards'.
	var later *semLater
	if f != nil && opt.Semantic == nil {
		later = &semLater{staked: make(chan struct{}), done: make(chan struct{}), want: make(chan bool, 1)}
		go later.run(f, func() []uint64 { return x.semanticAmong(&s.among, phrases, filter) })
		defer later.end() // owned: waited for on every return
	}
	// The staked cards alone first, then pruned; when a tier cannot prove its answer the
	// whole one's, the same ranking again with more scored, at last every clause in full.
	if x.unstaked > 0 && x.live-x.unstaked >= opt.Limit && x.stakedMayMatch(phrases, filter) {
		if hits, ok := x.rank(q, &opt, s, phrases, filter, tierStaked, later); ok {
			return hits
		}
	}
	later.wantUnstaked()
	if hits, ok := x.rank(q, &opt, s, phrases, filter, tierPruned, later); ok {
		return hits
	}
	hits, _ := x.rank(q, &opt, s, phrases, filter, tierAll, later)
	return hits
}

// semanticAmong is the set of the cards that pass the filters of a query with phrases and
// capability filter (Options.SemanticLater's among): those under the capability that hold
// every term of its phrases, as a bitmap by card id in s; nil without filters. Its marks
// are rank's way (a generation a filter), its own. The caller holds x.mu (read).
func (x *Index) semanticAmong(s *amongScratch, phrases [][]int32, filter []int32) []uint64 {
	if filter == nil && len(phrases) == 0 {
		return nil
	}
	if len(s.mark) < len(x.docs) {
		s.mark, s.gen = make([]uint32, len(x.docs)+len(x.docs)/4), 0
	}
	if s.gen > math.MaxUint32-2*MaxQueryTerms {
		clear(s.mark)
		s.gen = 0
	}
	next := func() uint32 {
		s.gen++
		return s.gen
	}
	terms := x.phraseTerms(phrases)
	// The docs passing are marked g: the capability's, then of those (or of all, without
	// one) the ones holding each term, rarest first.
	var g uint32
	if filter != nil {
		g = next()
		for _, n := range filter {
			s.mark[n] = g
		}
	}
	for i, term := range terms {
		prev := g
		g = next()
		first := i == 0 && filter == nil
		for _, p := range x.terms[term].postings {
			if first || s.mark[p.doc] == prev {
				s.mark[p.doc] = g
			}
		}
	}
	words := int(x.maxID/64) + 1
	if cap(s.words) < words {
		s.words = make([]uint64, words+words/4)
	}
	among := s.words[:words]
	clear(among)
	set := func(n int32) {
		if id := x.ids[n]; id >= 0 {
			among[id/64] |= 1 << (id % 64)
		}
	}
	// Read from the shortest list that holds them all (the capability's, the rarest term's),
	// or, when that is long, in doc order, as the arrays lie (random reads cost more).
	var list []int32
	if filter != nil && (len(terms) == 0 || len(filter) <= len(x.terms[terms[0]].postings)) {
		list = filter
	}
	switch {
	case len(list) > len(x.docs)/16 || list == nil && len(x.terms[terms[0]].postings) > len(x.docs)/16:
		for n, m := range s.mark[:len(x.docs)] {
			if m == g {
				set(int32(n))
			}
		}
	case list != nil:
		for _, n := range list {
			if s.mark[n] == g {
				set(n)
			}
		}
	default:
		for _, p := range x.terms[terms[0]].postings {
			if s.mark[p.doc] == g {
				set(p.doc)
			}
		}
	}
	return among
}

// phraseTerms is the distinct terms of phrases, rarest first (the order their postings
// are intersected in).
func (x *Index) phraseTerms(phrases [][]int32) []int32 {
	var terms []int32
	for _, p := range phrases {
		for _, t := range p {
			if !slices.Contains(terms, t) {
				terms = append(terms, t)
			}
		}
	}
	slices.SortFunc(terms, func(a, b int32) int { return len(x.terms[a].postings) - len(x.terms[b].postings) })
	return terms
}

// semLater is a hybrid search's semantic side on its way (Options.SemanticLater), run by one
// goroutine (run): staked closes when the staked side's scores are set (sem, of); the
// goroutine then waits to be told (want, once) whether the unstaked side is wanted, scores
// it (semU) if so, and closes done. Search's goroutine alone tells it (told).
type semLater struct {
	staked, done chan struct{}
	want         chan bool
	told, wanted bool
	sem, semU    map[int64]float64
	of           func(int64) float64
}

// run is the goroutine: the filters' set (among), the staked side, and the unstaked side
// when wanted.
func (l *semLater) run(f func([]uint64, Side) (map[int64]float64, func(int64) float64), among func() []uint64) {
	defer close(l.done)
	a := among()
	l.sem, l.of = f(a, Staked)
	close(l.staked)
	if <-l.want {
		var of func(int64) float64
		if l.semU, of = f(a, Unstaked); of != nil {
			l.of = of
		}
	}
}

// wantUnstaked tells the goroutine to score the unstaked side too (nothing when l is nil or
// it was told).
func (l *semLater) wantUnstaked() {
	if l == nil || l.told {
		return
	}
	l.told, l.wanted = true, true
	l.want <- true
}

// end tells the goroutine the unstaked side is not wanted, if it was not told, and waits for
// it to end.
func (l *semLater) end() {
	if !l.told {
		l.told = true
		l.want <- false
	}
	<-l.done
}

// wait waits for the semantic scores a ranking of tier t reads: it sets the staked side's in
// o (for the stake tier, all it reads) and, for the other tiers, gives the unstaked side's,
// which rank reads beside them (nil when l is nil, for the stake tier, or when the staked
// side has no map: o then holds the unstaked side's).
func (l *semLater) wait(o *Options, t tier) map[int64]float64 {
	if l == nil {
		return nil
	}
	if t == tierStaked {
		<-l.staked
		o.Semantic, o.SemanticOf = l.sem, l.of
		return nil
	}
	l.wantUnstaked()
	<-l.done
	o.Semantic, o.SemanticOf = l.sem, l.of
	if l.sem == nil {
		o.Semantic = l.semU
		return nil
	}
	return l.semU
}

// running says whether a semantic scan is under way (it takes the CPUs): the staked side's,
// or the unstaked side's once wanted.
func (l *semLater) running() bool {
	if l == nil {
		return false
	}
	select {
	case <-l.staked:
	default:
		return true
	}
	if !l.wanted {
		return false
	}
	select {
	case <-l.done:
		return false
	default:
		return true
	}
}

// stakedMayMatch says whether a staked card may pass the filters: none does when the
// capability's list (by stake) starts with an unstaked card or a phrase has a term no staked
// card holds, and the stake tier would then prove nothing.
func (x *Index) stakedMayMatch(phrases [][]int32, filter []int32) bool {
	if filter != nil && !x.staked[filter[0]] {
		return false
	}
	for _, p := range phrases {
		for _, t := range p {
			if x.terms[t].stakedDF == 0 {
				return false
			}
		}
	}
	return true
}

// tier is how much of the index a ranking scores.
type tier int

const (
	// tierStaked scores the staked cards alone: the answer is the whole one's when the
	// worst of the best staked cards out-scores what any unstaked card could (see rank).
	tierStaked tier = iota
	// tierPruned leaves out the clauses accumulate may leave out (see accumulate).
	tierPruned
	// tierAll scores every match in full.
	tierAll
)

// rank is Search past its checks, under x.mu (read), with a scratch whose per-doc arrays are
// zero, and leaves them so. It scores what t says, and says false (having ranked nothing)
// when it cannot prove its answer the whole one's (tierAll always can). later, when set, is
// opt's semantic scores on their way (Options.SemanticLater): rank waits for them and sets
// them in opt once the text is scored, or accumulate once it knows it prunes (pruning scores
// the docs with a semantic score in full); while the scan runs, the text is not scored in
// parts.
//
// The stake tier: an unstaked card's score is UnstakedFactor × its relevance, and its text
// is under the sum of the clauses' bounds (ub, accumulate), so its relevance is under
// ub/maxText (keyword) or TextShare·ub/maxText + SemanticShare·its semantic score (hybrid).
// maxText is the best staked match's text, known exactly once every staked match is scored;
// when the heap of the best staked matches is full and its worst out-scores that bound of
// every unstaked card, no unstaked card is among the best, and the staked heap is the
// answer. Staked postings come first in every term's (termEntry), and capability lists by
// stake, so this tier reads the staked cards' postings only, and leaves the unstaked
// cards' unread.
func (x *Index) rank(q Query, opt *Options, s *scratch, phrases [][]int32, filter []int32, t tier, later *semLater) ([]Hit, bool) {
	if tierStarts != nil {
		tierStarts(t)
	}
	// The filters, capability then phrases, leave the docs that may match marked s.gen. A
	// search takes at most 3 + MaxQueryTerms generations (pass's two): they never wrap
	// within one.
	if s.gen > math.MaxUint32-2*MaxQueryTerms {
		clear(s.mark)
		s.gen = 0
	}
	var mark []uint32
	if filter != nil {
		g := s.next()
		for _, n := range filter {
			if t == tierStaked && !x.staked[n] {
				break // the list is by stake: the staked cards first
			}
			s.mark[n] = g
		}
		mark = s.mark
	}
	var matchers []phraseMatcher
	if len(phrases) > 0 {
		matchers = make([]phraseMatcher, len(phrases))
		for i, p := range phrases {
			matchers[i].reset(p)
		}
		// The docs holding every phrase term (intersected through marks, rarest term
		// first); whether each phrase holds is checked later, only for the docs that could
		// be among the best (pass).
		terms := x.phraseTerms(phrases)
		for i, term := range terms {
			prev := s.gen // read apart: Go does not order a read against a call in one statement
			g := s.next()
			first := i == 0 && mark == nil
			for _, p := range x.postings(term, t) {
				if !first && s.mark[p.doc] != prev {
					continue
				}
				s.mark[p.doc] = g
			}
		}
		mark = s.mark
	}
	// opt.Semantic by doc number, read once per match below (a map lookup per match would
	// cost more than the rest of the scoring of a broad query), once: by accumulate when it
	// prunes (it scores these docs in full), else after it (while it scores, opt's semantic
	// scores may still be on their way: Options.SemanticLater).
	asked := false
	semantic := func() {
		if asked {
			return
		}
		asked = true
		unstaked := later.wait(opt, t)
		for _, m := range [...]map[int64]float64{opt.Semantic, unstaked} {
			for id, sem := range m {
				if n, ok := x.byID[id]; ok {
					s.sem[n], s.semIn[n] = min(sem, 1), true // a cosine, at most 1 (the stake tier's bound)
					s.semDocs = append(s.semDocs, n)
				}
			}
		}
	}
	pending := later.running // in every tier, until the scan ends
	pr := x.accumulate(q, s, mark, t, semantic, pending)
	// pass says whether doc n matches: the filters keep it (marked cand), and it holds every
	// phrase, checked once (it reads the doc's terms in order: a cache miss or more per doc)
	// and remembered in the marks. It is asked only for the docs that could change maxText
	// or enter the heap: of the tens of thousands of docs holding a phrase's terms, a few
	// hundred.
	cand := s.gen
	holds, lacks := s.next(), s.next()
	pass := func(n int32) bool {
		if mark == nil {
			return true
		}
		switch mark[n] {
		case cand:
			if len(matchers) > 0 && !x.docs[n].hasPhrases(matchers) {
				mark[n] = lacks
				return false
			}
			mark[n] = holds
			return true
		case holds:
			return true
		}
		return false
	}
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
		a := s.acc[n]
		if a > maxText && pass(n) {
			maxText = a
		}
		if x.staked[n] && a > maxStaked && pass(n) {
			maxStaked = a
		}
	}
	// The stake tier proves nothing without a staked text match (provenStaked): it gives up
	// here, before it waits for the semantic side, so the next tier's text is scored while
	// that side still runs rather than after it.
	if t == tierStaked && maxStaked == 0 {
		x.abandon(s)
		return nil, false
	}
	semantic()
	if maxStaked > 0 {
		maxText = maxStaked
	}
	var semOnly []int32
	// The stake tier's bound of an unstaked card's semantic score: the best of the unstaked
	// side's, or, when that side is not asked yet (later), 1, above every score.
	maxSemUnstaked := 0.0
	if later != nil && t == tierStaked {
		maxSemUnstaked = 1
	}
	for _, n := range s.semDocs {
		if t == tierStaked && !x.staked[n] {
			maxSemUnstaked = max(maxSemUnstaked, s.sem[n])
			continue
		}
		if s.acc[n] == 0 && s.sem[n] > 0 && pass(n) {
			semOnly = append(semOnly, n)
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
	// The heap's order of offers does not change what it keeps (compareRanked is a total
	// order), only how often it is reordered: offered in an order where scores rise (stake
	// growing with the doc numbers, say), every match replaces its root. The stake tier's
	// many matches are offered best stake first (x.all's staked cards, skipping those that do
	// not match): the root soon holds a high score, and most matches fail its first test.
	//
	// Offered by stake, the factors fall, and the offers can end early. The matches with a
	// semantic score (opt.Semantic's: a few hundred) are offered first; every other staked
	// match has text at most maxText (one above it fails pass) and no semantic score, so
	// its relevance is at most bestRel (rel's own arithmetic on the largest text, which
	// rounds no lower) and its score at most bestRel × its factor. Once that is under the
	// heap's worst for the factor of the card offered next, it is for every card after it,
	// none of which pushTop's first test would let in: the same heap, without reading the
	// scores of the rest.
	order, all := matches, false
	if staked := x.all[:x.live-x.unstaked]; t == tierStaked && len(matches) > len(staked)/8 {
		order, all = staked, true
	}
	top := s.top[:0]
	offer := func(n int32) {
		r := rel(n)
		m := ranked{r * x.factors[n], r, n}
		if len(top) == opt.Limit && (m.score < top[0].score || x.compareRanked(m, top[0]) >= 0) {
			return // not better than the worst kept (pushTop's test, before pass's)
		}
		if len(matchers) > 0 && !pass(n) {
			return
		}
		top = x.pushTop(top, m, opt.Limit)
	}
	bestRel := 1.0
	if all && opt.Semantic != nil {
		for _, n := range s.semDocs {
			if x.staked[n] && s.acc[n] != 0 {
				offer(n)
			}
		}
		bestRel = float64(TextShare * bestRel)
	}
	for _, n := range order {
		if !all {
			offer(n)
			continue
		}
		if len(top) == opt.Limit && bestRel*x.factors[n] < top[0].score {
			break // no card from here on can enter the heap
		}
		if s.acc[n] != 0 && !s.semIn[n] { // a match, not offered above
			offer(n)
		}
	}
	for _, n := range semOnly {
		r := rel(n)
		top = x.pushTop(top, ranked{r * x.factors[n], r, n}, opt.Limit)
	}
	if t == tierStaked && !provenStaked(pr, top, *opt, maxStaked, maxSemUnstaked) || pr.pruned && !x.proven(pr, top, opt.Limit, maxText, maxStaked) {
		s.top = top[:0]
		x.abandon(s)
		return nil, false
	}
	if opt.Semantic != nil && opt.SemanticOf != nil {
		for i := range top {
			top[i].rel = exact(top[i].n)
			top[i].score = top[i].rel * x.factors[top[i].n]
		}
	}
	slices.SortFunc(top, func(a, b ranked) int { return x.compareRanked(a, b) })
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
	return out, true
}

// tierStarts, set by tests only (before any search), is told each tier a ranking starts.
var tierStarts func(t tier)

// abandon leaves the scratch of a ranking that proved nothing as rank found it: no score,
// no semantic score, nothing listed.
func (x *Index) abandon(s *scratch) {
	x.reset(s)
	for _, n := range s.semDocs {
		s.sem[n], s.semIn[n] = 0, false
	}
	s.cand, s.semDocs = s.cand[:0], s.semDocs[:0]
}

// provenStaked says whether the stake tier's answer is the whole one's (see rank): a staked
// card matches (maxText is then the best staked text, the whole search's), the heap is full,
// and its worst out-scores the bound of every unstaked card's score, by a margin far above
// the rounding of the sums, so that no unstaked card can tie either.
func provenStaked(pr pruning, top []ranked, opt Options, maxStaked, maxSemUnstaked float64) bool {
	if maxStaked == 0 || len(top) < opt.Limit {
		return false
	}
	rel := pr.ub / maxStaked
	if opt.Semantic != nil {
		rel = float64(TextShare*rel) + float64(SemanticShare*maxSemUnstaked)
	}
	return top[0].score > UnstakedFactor*rel*(1+pruneMargin)
}

// postings are term's postings that tier t scores: the staked cards' alone for tierStaked.
func (x *Index) postings(term int32, t tier) []posting {
	te := &x.terms[term]
	if t == tierStaked {
		return te.postings[:te.stakedDF]
	}
	return te.postings
}

// next starts a new mark generation.
func (s *scratch) next() uint32 {
	s.gen++
	return s.gen
}

func (x *Index) reset(s *scratch) {
	if len(s.touched) > len(x.docs)/8 {
		clear(s.acc[:len(x.docs)])
	} else {
		for _, n := range s.touched {
			s.acc[n] = 0
		}
	}
	s.touched = s.touched[:0]
}

// member is a term of a query's clause, with its weight (1, or AliasWeight for an alias).
type member struct {
	term   int32
	weight float64
}

// clause is one of a query's clauses (a term with its aliases, or a prefix with the terms it
// expands to), keyed "t:" or "p:" and the query's word.
type clause struct {
	key     string
	members []member
}

// queryClauses gives q's clauses in scoring order, each clause's members in order, each
// clause's scale (idf × (K1 + 1), 0 for a clause no card holds) and ub, their sum: what
// accumulate and textOne score with. It sets norms (bm25's length normalization by field
// length, reusing their arrays) for the collection statistics.
func (x *Index) queryClauses(q Query, norms *[numFields][]float64) (clauses []clause, scales []float64, ub float64) {
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
		fn := norms[f][:0]
		for l := range int(x.maxLen[f]) + 1 {
			norm := 1 - B
			if avg > 0 {
				norm += float64(B*float64(l)) / avg
			}
			fn = append(fn, norm)
		}
		norms[f] = fn
	}
	scales = make([]float64, len(clauses))
	for i, c := range clauses {
		if len(c.members) == 0 {
			continue
		}
		slices.SortFunc(c.members, func(a, b member) int { return strings.Compare(x.terms[a.term].text, x.terms[b.term].text) })
		df := 0
		for _, m := range c.members {
			df = max(df, x.df(m.term))
		}
		idf := logPortable(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
		scales[i] = float64(idf * (K1 + 1))
		ub += scales[i]
	}
	return clauses, scales, ub
}

// accumulate adds each card's BM25F score for q into s.acc. A query's clauses are its terms
// and its prefixes; a term's clause also holds its aliases (those that are not terms of the
// query themselves), a prefix's the terms it expands to. A clause counts as one term whose
// frequency is the weighted sum of its members' (Lucene's SynonymQuery, in BM25F):
//
//	score(card)   = Σ over clauses c of idf(c) × tf~ × (K1 + 1) / (K1 + tf~)
//	tf~(c, card)  = Σ over members t of c, weight(t) × Σ over fields f of
//	                fieldWeight(f) × tf(t, f) / (1 − B + B × len(f) / avglen(f))
//	idf(c)        = ln(1 + (N − df + 0.5) / (df + 0.5)), df the largest of c's members
//
// weight(t) is 1 for the query's terms and for what a prefix expands to, AliasWeight for an
// alias: a card saying only the alias scores below one saying the term the same way. The
// float additions run in a fixed order (clauses, then members, by their bytes), so the
// scores are the same bits on every node. mark, when set, keeps the docs marked s.gen (the
// filters) and skips the others.
//
// Pruning (MaxScore, term at a time): a clause adds less than idf × (K1 + 1) to any card, so
// the clauses whose bounds sum to under 1/pruneShare of the largest clause's (words most
// cards hold: "agent", "services") cannot lift a card that holds none of the other clauses
// into the best; accumulate then scores only the cards of the other clauses, the docs of
// s.semDocs and the staked cards, in full, and leaves out the unstaked cards that hold only
// those clauses, saying how much text they could have. Every staked match is scored, so the
// best staked text is the whole search's; Search checks that no card left out could have
// been among the best (proven) and computes the whole answer when it cannot.
func (x *Index) accumulate(q Query, s *scratch, mark []uint32, t tier, semantic func(), pending func() bool) pruning {
	clauses, scales, ub := x.queryClauses(q, &s.norms)
	pr := pruning{ub: ub}
	// The clauses left out of pruning (bounds ascending while their sum stays under the
	// share), if they hold enough postings to be worth it.
	left := make([]bool, len(clauses))
	{
		order := make([]int, 0, len(clauses))
		top, postings := 0.0, 0
		for i, c := range clauses {
			if len(c.members) > 0 {
				order = append(order, i)
				top = max(top, scales[i])
			}
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmpFloat(scales[a], scales[b]) })
		sum := 0.0
		for _, i := range order[:max(0, len(order)-1)] {
			if sum+scales[i] > top/pruneShare {
				break
			}
			sum += scales[i]
			left[i] = true
			for _, m := range clauses[i].members {
				postings += len(x.terms[m.term].postings)
			}
		}
		if t == tierPruned && postings >= pruneMinPostings && postings > 0 {
			pr.pruned, pr.bound = true, sum*(1+pruneMargin)
			if s.keepGen == math.MaxUint32 {
				clear(s.keep)
				s.keepGen = 0
			}
			s.keepGen++
			for i, c := range clauses {
				if left[i] {
					continue
				}
				for _, m := range c.members {
					for _, p := range x.terms[m.term].postings {
						s.keep[p.doc] = s.keepGen
					}
				}
			}
			semantic() // s.semDocs
			for _, d := range s.semDocs {
				s.keep[d] = s.keepGen
			}
		} else {
			clear(left)
		}
	}
	// The scoring, clause by clause, in parts by doc number when the clauses hold
	// parallelPostings postings or more: each part reads every posting and scores the docs of
	// its range, adding each doc's clauses in the same order as one part would (the same
	// bits), on a goroutine of its own, waited for here. Not while the semantic scan runs
	// beside it (pending: it takes the CPUs already), where parts would only add work,
	// except in the stake tier, whose semantic side (the staked cards' alone) ends soon:
	// the sentence query at 1M cards reads 200k staked postings, p50 14.5 → 10.0 ms split.
	total := 0
	for _, c := range clauses {
		for _, m := range c.members {
			total += len(x.postings(m.term, t))
		}
	}
	parts := 1
	if total >= parallelPostings && (t == tierStaked || !pending()) {
		parts = max(1, min(runtime.GOMAXPROCS(0), maxTextParts))
	}
	scorePart := func(lo, hi int32, touched, cand []int32) ([]int32, []int32) {
		for ci, c := range clauses {
			if len(c.members) == 0 {
				continue
			}
			scale := scales[ci]
			// skip says whether a posting's doc is not scored: another part's, the filters
			// drop it, or this clause is left out of a pruned search and the doc is an
			// unstaked card the other clauses do not bring.
			skip := func(d int32) bool {
				return d < lo || d >= hi || mark != nil && mark[d] != s.gen || left[ci] && s.keep[d] != s.keepGen && !x.staked[d]
			}
			if len(c.members) == 1 { // no sum to stage: straight into acc (the same bits)
				m := c.members[0]
				for _, p := range x.postings(m.term, t) {
					if skip(p.doc) {
						continue
					}
					tf := float64(m.weight * x.fieldTF(p, &s.norms))
					if s.acc[p.doc] == 0 {
						touched = append(touched, p.doc)
					}
					s.acc[p.doc] += float64(scale*tf) / (K1 + tf)
				}
				continue
			}
			cand = cand[:0]
			for _, m := range c.members {
				for _, p := range x.postings(m.term, t) {
					if skip(p.doc) {
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
					touched = append(touched, d)
				}
				s.acc[d] += float64(scale*tf) / (K1 + tf)
			}
		}
		return touched, cand[:0]
	}
	if parts == 1 {
		s.touched, s.cand = scorePart(0, math.MaxInt32, s.touched, s.cand)
		return pr
	}
	for len(s.parts) < parts {
		s.parts = append(s.parts, partScratch{})
	}
	docs := int32(len(x.docs))
	var wg sync.WaitGroup
	for i := 1; i < parts; i++ {
		wg.Go(func() {
			ps := &s.parts[i]
			ps.touched, ps.cand = scorePart(docs*int32(i)/int32(parts), docs*int32(i+1)/int32(parts), ps.touched[:0], ps.cand)
		})
	}
	s.touched, s.cand = scorePart(0, docs/int32(parts), s.touched, s.cand)
	wg.Wait()
	for i := 1; i < parts; i++ {
		s.touched = append(s.touched, s.parts[i].touched...)
		s.parts[i].touched = s.parts[i].touched[:0]
	}
	return pr
}

// pruning is what a pruned accumulate left out: whether it pruned, and a bound of the text
// score of any (unstaked) card it left out; and ub, the sum of every clause's bound, above
// any card's text score.
type pruning struct {
	pruned bool
	bound  float64
	ub     float64
}

// proven says whether a pruned search's answer is the whole one's: maxText is the whole
// search's (the best staked text, every staked match being scored; else the best text,
// which must then be above any text left out), and the heap is full with its worst above
// any score a card left out could have (its text at most pr.bound, its semantic score 0:
// every doc with one was scored), so none of them is among the best. The bounds carry a
// margin far above the rounding of the sums, so a card left out cannot tie either.
func (x *Index) proven(pr pruning, top []ranked, limit int, maxText, maxStaked float64) bool {
	if maxStaked == 0 && !(maxText > pr.bound) {
		return false
	}
	if len(top) < limit || len(x.all) == 0 {
		return false
	}
	best := x.factors[x.all[0]] // the stake order's first: the largest factor
	return top[0].score > float64(pr.bound/maxText*best)*(1+pruneMargin)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// fieldTF is a posting's term frequency over the fields, each weighted and normalized by
// the field's length against its average (BM25F's tf~ for one term).
func (x *Index) fieldTF(p posting, norms *[numFields][]float64) float64 {
	lens := &x.lens[p.doc]
	tf := 0.0
	for f := range numFields {
		if p.tf[f] == 0 {
			continue
		}
		tf += float64(fieldWeights[f]*float64(p.tf[f])) / norms[f][lens[f]]
	}
	return tf
}

// phraseIDs gives q's phrases as term numbers; false when a phrase has a term no card has.
func (x *Index) phraseIDs(q Query) ([][]int32, bool) {
	var out [][]int32
	for _, p := range q.Phrases {
		if len(p) == 0 {
			continue // a phrase of no terms asks nothing (ParseQuery makes none)
		}
		ids := make([]int32, len(p))
		for i, t := range p {
			id, ok := x.dict[t]
			if !ok || len(x.terms[id].postings) == 0 {
				return nil, false
			}
			ids[i] = id
		}
		out = append(out, ids)
	}
	return out, true
}

// byStake answers a query without text from the stake orders, which are kept sorted.
func (x *Index) byStake(opt Options) []Hit {
	list := x.all
	if opt.Capability != "" {
		list = x.caps[opt.Capability]
	}
	list = list[:min(len(list), opt.Limit)]
	out := make([]Hit, len(list))
	for i, n := range list {
		e := &x.docs[n]
		out[i] = Hit{ID: e.id, DID: e.did, Relevance: 1, Score: e.factor}
	}
	return out
}

// compareRanked orders matches best first: score, then DID, then ID.
func (x *Index) compareRanked(a, b ranked) int {
	switch {
	case a.score > b.score:
		return -1
	case a.score < b.score:
		return 1
	case a.n == b.n:
		return 0
	}
	if ka, kb := &x.didKeys[a.n], &x.didKeys[b.n]; *ka != *kb {
		if ka[0] < kb[0] || ka[0] == kb[0] && ka[1] < kb[1] {
			return -1
		}
		return 1
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

// pushTop keeps the limit best matches in a heap whose root is the worst of them.
func (x *Index) pushTop(h []ranked, r ranked, limit int) []ranked {
	worse := func(i, j int) bool { return x.compareRanked(h[i], h[j]) > 0 } // i is worse than j
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
	if r.score < h[0].score || x.compareRanked(r, h[0]) >= 0 { // not better than the worst kept
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
