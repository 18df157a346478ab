package search

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"sync"
)

// Ranking constants (docs/SEARCH.md): they are part of the protocol of ranking, every node
// uses the same.
const (
	// K1 and B are bm25's term-frequency saturation and length normalization.
	K1 = 1.2
	B  = 0.75
	// UnstakedFactor is the stake factor of an unstaked card; a staked card's is its stake
	// weight (units.StakeWeight, at least 1).
	UnstakedFactor = 0.5
	// TextShare and SemanticShare split relevance between the text score and the semantic
	// score when a query has both (Options.Semantic).
	TextShare     = 0.75
	SemanticShare = 0.25
	// MaxQueryTerms bounds the terms and prefixes of a query (ParseQuery keeps the first).
	MaxQueryTerms = 32
	// MaxPhraseTerms bounds the terms of one phrase that are checked as consecutive;
	// MaxPhrases the phrases of a query (ParseQuery).
	MaxPhraseTerms = 8
	MaxPhrases     = 4
	// maxFieldTerms bounds the terms indexed per field, counted after Fold: NFKD can make one
	// rune several words (ﷺ is four), so a card's rune limits do not bound its terms.
	maxFieldTerms = 512
	// maxCapLevels bounds the ancestors one capability tag is indexed under, maxCardCaps
	// the capability keys of one card (its tags and their ancestors).
	maxCapLevels = 4
	maxCardCaps  = 64
	// MaxPrefixExpansions bounds the indexed terms one prefix matches: the most frequent,
	// then in byte order.
	MaxPrefixExpansions = 64
	// maxExpanded bounds the indexed terms one query reads, aliases and prefixes included.
	maxExpanded = 256
	// prefixKey is how many runes of a term key the prefix table.
	prefixKey = 3
	// pruneMargin is the relative margin of every bound a pruned search compares (far
	// above rounding).
	pruneMargin = 1e-9
	// maxTextParts bounds the parts a search's scoring is split in (parallelPostings).
	maxTextParts = 4
)

// A search leaves out the clauses whose bounds sum to under 1/pruneShare of the largest
// clause's (accumulate), when they hold pruneMinPostings postings or more. Variables for
// the tests, which prune small corpora and prune hard to reach every check of proven.
//
// A search's scoring is split over the CPUs when its clauses hold parallelPostings postings
// or more: below, a goroutine costs more than it saves. A variable for the tests, which
// split small corpora.
var (
	pruneShare       = 32.0
	pruneMinPostings = 4096
	parallelPostings = 1 << 17
)

// The fields of a card, and what a match in each weighs (BM25F).
const (
	fieldName = iota
	fieldDescription
	fieldCapabilities
	numFields
)

var fieldWeights = [numFields]float64{fieldName: 2, fieldDescription: 1, fieldCapabilities: 2}

// Doc is what the index keeps of a card.
type Doc struct {
	DID          string
	Name         string
	Description  string
	Capabilities []string
	// Staked says whether the card's stake counts; StakeWeight is then its ranking weight.
	Staked      bool
	StakeWeight float64
}

// factor is the card's stake factor: UnstakedFactor (below 1) unstaked, else its weight and
// at least 1. A weight that is not a finite number counts as 1: a NaN would break the ranking's
// total order, and the stake tier's offer of x.all's staked prefix relies on every staked
// factor being at least 1 (units.StakeWeight makes neither from a real stake).
func (d *Doc) factor() float64 {
	if !d.Staked {
		return UnstakedFactor
	}
	if math.IsNaN(d.StakeWeight) || math.IsInf(d.StakeWeight, 0) {
		return 1
	}
	return max(d.StakeWeight, 1)
}

// Index is an in-memory inverted index of cards, ranked by BM25F and stake. It is safe for
// concurrent use, and deterministic: the same cards give the same hits and scores, bit for
// bit, whatever the order they were put in.
type Index struct {
	mu       sync.RWMutex
	dict     map[string]int32    // term → term number
	terms    []termEntry         // by term number; a term whose df falls to 0 is dropped
	termFree []int32             // numbers of dropped terms, reused (numbers are not part of scoring)
	prefixes map[string][]int32  // prefixKeys → the terms with that key, unordered
	docs     []docEntry          // by doc number; numbers of deleted docs are reused
	lens     [][numFields]uint16 // by doc number: the field lengths, apart for the scoring loop's cache
	factors  []float64           // by doc number: the stake factor, apart for the same reason
	staked   []bool              // by doc number: whether the card is staked, apart for the same reason
	didKeys  [][2]uint64         // by doc number: didKey of the card's DID, for ties (compareRanked)
	ids      []int64             // by doc number: the card's id, apart for semanticAmong's scan
	maxID    int64               // the largest id ever put (semanticAmong's bitmap)
	free     []int32
	byID     map[int64]int32
	live     int
	unstaked int
	totalLen [numFields]int64
	// stakedLen is totalLen over staked cards: with stakedDF, the collection statistics
	// while the index holds a staked card (see stats).
	stakedLen [numFields]int64
	maxLen    [numFields]uint16  // the longest field ever indexed (bounds the norm tables)
	all       []int32            // live docs, best stake first (see rankLess)
	caps      map[string][]int32 // capability and each ancestor → its docs, best stake first
	capNames  map[string]string  // the keys of caps, each the string every doc's caps share
	scratch   sync.Pool
	gen       uint64 // counts the writes (Put, Build, Delete): see Gen
}

type termEntry struct {
	text string
	// postings are the staked cards' first (postings[:stakedDF], the stake tier of a search
	// reads them alone), otherwise unordered; len is the document frequency.
	postings []posting
	stakedDF int32 // the staked cards among the postings
}

type posting struct {
	doc int32
	tf  [numFields]uint16
}

type docEntry struct {
	id     int64
	did    string
	factor float64
	staked bool
	// words is the doc's terms in one allocation, where they were four (the collector marks
	// every object of the index at each cycle, and a search running beside it waits: issue
	// 31): each field's terms in order (seq), then where its posting of each term sits
	// (term), a docTerm as two int32, sorted by term.
	words []int32
	ends  [numFields]int32 // field f's terms end at words[ends[f]]
	len   [numFields]uint16
	caps  []string // capabilities and their ancestors, sorted; the strings are x.capNames'
}

// docTerm is where the doc's posting of term sits in the term's postings.
type docTerm struct{ term, pos int32 }

// seq is field f's terms in order; capabilities' tags apart by -1.
func (e *docEntry) seq(f int) []int32 {
	start := int32(0)
	if f > 0 {
		start = e.ends[f-1]
	}
	return e.words[start:e.ends[f]:e.ends[f]]
}

// terms is the number of the doc's terms (one posting each).
func (e *docEntry) terms() int { return (len(e.words) - int(e.ends[numFields-1])) / 2 }

// term is the doc's i-th term by term number, and where its posting sits.
func (e *docEntry) term(i int) docTerm {
	k := e.termAt(i)
	return docTerm{e.words[k], e.words[k+1]}
}

// termAt is where the doc's i-th docTerm starts in words: its term, then its pos.
func (e *docEntry) termAt(i int) int { return int(e.ends[numFields-1]) + 2*i }

// findTerm is the i of term among the doc's terms, and whether the doc holds it.
func (e *docEntry) findTerm(term int32) (int, bool) {
	lo, hi := 0, e.terms()
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if e.term(m).term < term {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < e.terms() && e.term(lo).term == term
}

// New returns an empty index.
func New() *Index {
	return &Index{dict: map[string]int32{}, prefixes: map[string][]int32{}, byID: map[int64]int32{}, caps: map[string][]int32{}, capNames: map[string]string{}}
}

// Len is the number of cards indexed.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.live
}

// Unstaked is the number of unstaked cards indexed.
func (x *Index) Unstaked() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.unstaked
}

// Gen is the index's generation: it grows with every write (Put, Build, Delete, whether or
// not it changed anything), so two reads of the same Gen saw the same cards: a search's
// answer read with Gen g is the answer for as long as Gen is g.
func (x *Index) Gen() uint64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.gen
}

// Put indexes d under id, replacing what id had.
func (x *Index) Put(id int64, d Doc) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.gen++
	x.delete(id)
	n := x.add(id, &d)
	x.all = insertRanked(x.all, n, x.rankLess)
	for _, c := range x.docs[n].caps {
		x.caps[c] = insertRanked(x.caps[c], n, x.rankLess)
	}
}

// Build indexes many cards at once, faster than one Put each (the stake orders are sorted
// once): for loading a registry. ids and docs are parallel.
func (x *Index) Build(ids []int64, docs []Doc) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.gen++
	touched := map[string]bool{}
	for i, id := range ids {
		if _, ok := x.byID[id]; ok {
			x.delete(id)
		}
		n := x.add(id, &docs[i])
		x.all = append(x.all, n)
		for _, c := range x.docs[n].caps {
			x.caps[c] = append(x.caps[c], n)
			touched[c] = true
		}
	}
	cmp := func(a, b int32) int {
		if x.rankLess(a, b) {
			return -1
		}
		if x.rankLess(b, a) {
			return 1
		}
		return 0
	}
	slices.SortFunc(x.all, cmp)
	for c := range touched {
		slices.SortFunc(x.caps[c], cmp)
	}
}

// Delete drops id's card, if indexed.
func (x *Index) Delete(id int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.gen++
	x.delete(id)
}

// rankLess orders docs for capability and everything queries: higher stake factor first,
// then by DID, then by id.
func (x *Index) rankLess(a, b int32) bool {
	da, db := &x.docs[a], &x.docs[b]
	if da.factor != db.factor {
		return da.factor > db.factor
	}
	if da.did != db.did {
		return da.did < db.did
	}
	return da.id < db.id
}

func insertRanked(list []int32, n int32, less func(a, b int32) bool) []int32 {
	i, _ := slices.BinarySearchFunc(list, n, func(e, t int32) int {
		if less(e, t) {
			return -1
		}
		if less(t, e) {
			return 1
		}
		return 0
	})
	return slices.Insert(list, i, n)
}

func removeRanked(list []int32, n int32, less func(a, b int32) bool) []int32 {
	i, found := slices.BinarySearchFunc(list, n, func(e, t int32) int {
		if less(e, t) {
			return -1
		}
		if less(t, e) {
			return 1
		}
		return 0
	})
	if found && list[i] == n {
		return slices.Delete(list, i, i+1)
	}
	if j := slices.Index(list, n); j >= 0 { // not reached while rankLess is a total order
		return slices.Delete(list, j, j+1)
	}
	return list
}

// add analyzes d and adds it to the postings, returning its doc number. The caller puts it
// in the stake orders.
func (x *Index) add(id int64, d *Doc) int32 {
	var n int32
	if k := len(x.free); k > 0 {
		n, x.free = x.free[k-1], x.free[:k-1]
	} else {
		n = int32(len(x.docs))
		x.docs = append(x.docs, docEntry{})
		x.lens = append(x.lens, [numFields]uint16{})
		x.factors = append(x.factors, 0)
		x.staked = append(x.staked, false)
		x.didKeys = append(x.didKeys, [2]uint64{})
		x.ids = append(x.ids, 0)
	}
	e := docEntry{id: id, did: d.DID, factor: d.factor(), staked: d.Staked}
	words := x.termIDs(Terms(d.Name), nil, maxFieldTerms)
	e.ends[fieldName] = int32(len(words))
	words = x.termIDs(Terms(d.Description), words, maxFieldTerms)
	e.ends[fieldDescription] = int32(len(words))
	capTerms := 0
	for i, c := range d.Capabilities {
		if i > 0 {
			words = append(words, -1)
		}
		ts := Terms(c)
		ts = ts[:min(len(ts), maxFieldTerms-capTerms)]
		capTerms += len(ts)
		words = x.termIDs(ts, words, len(ts))
	}
	e.ends[fieldCapabilities] = int32(len(words))
	e.words = words
	e.caps = x.capsOf(d.Capabilities)
	// Term frequencies per field, from the sequences sorted by term.
	type tf struct {
		term  int32
		field int
	}
	var all []tf
	for f := range numFields {
		for _, t := range e.seq(f) {
			if t >= 0 {
				all = append(all, tf{t, f})
				e.len[f] = min(e.len[f]+1, 1<<16-1)
			}
		}
		x.totalLen[f] += int64(e.len[f])
		if e.staked {
			x.stakedLen[f] += int64(e.len[f])
		}
		x.maxLen[f] = max(x.maxLen[f], e.len[f])
	}
	slices.SortFunc(all, func(a, b tf) int { return int(a.term) - int(b.term) })
	var terms []int32 // two a term: term, pos
	for i := 0; i < len(all); {
		p := posting{doc: n}
		j := i
		for ; j < len(all) && all[j].term == all[i].term; j++ {
			p.tf[all[j].field] = min(p.tf[all[j].field]+1, 1<<16-1)
		}
		te := &x.terms[all[i].term]
		pos := int32(len(te.postings))
		te.postings = append(te.postings, p)
		if e.staked {
			// Staked postings come first (termEntry): the first unstaked one, if any, moves
			// to the end.
			if first := te.stakedDF; first != pos {
				moved := te.postings[first]
				te.postings[first], te.postings[pos] = p, moved
				x.setPos(moved.doc, all[i].term, pos)
				pos = first
			}
			te.stakedDF++
		}
		terms = append(terms, all[i].term, pos)
		i = j
	}
	// One allocation of the right size: words grew by appends.
	e.words = append(make([]int32, 0, len(words)+len(terms)), words...)
	e.words = append(e.words, terms...)
	x.docs[n] = e
	x.lens[n] = e.len
	x.factors[n] = e.factor
	x.staked[n] = e.staked
	x.didKeys[n] = didKey(e.did)
	x.ids[n] = id
	x.maxID = max(x.maxID, id)
	x.byID[id] = n
	x.live++
	if !d.Staked {
		x.unstaked++
	}
	return n
}

// didKey is the first 16 bytes of a DID, big-endian, zeros past its end: two DIDs whose keys
// differ compare as their keys do (the first byte that differs is a byte of one of them, and
// a zero past the end of the other sorts it first, as a shorter prefix sorts), so ties are
// broken by two integer compares and read the DIDs only when their keys are equal.
func didKey(did string) [2]uint64 {
	var b [16]byte
	copy(b[:], did)
	return [2]uint64{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}
}

// capsOf is capKeys(tags), each key the index's one copy of it (capNames): a card's keys
// hold no string of their own, nor keep the card's alive.
func (x *Index) capsOf(tags []string) []string {
	keys := capKeys(tags)
	for i, k := range keys {
		name, ok := x.capNames[k]
		if !ok {
			name = strings.Clone(k)
			x.capNames[name] = name
		}
		keys[i] = name
	}
	return keys
}

// capKeys are the capability keys of a card: its tags, then their ancestors at the '/'
// that end a non-empty segment ("a//b/" has "a" and "a//b"), the first maxCapLevels of
// each, while the card has fewer than maxCardCaps keys; sorted, slices of the tags.
// The card's validation allows any '/' (protocol shared with other implementations); the
// bounds are the index's, so that one card cannot make thousands of keys.
func capKeys(tags []string) []string {
	seen := map[string]bool{}
	var keys []string
	add := func(k string) {
		if k != "" && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	for _, c := range tags {
		add(c)
	}
	for _, c := range tags {
		levels := 0
		for j := 1; j < len(c) && levels < maxCapLevels && len(keys) < maxCardCaps; j++ {
			if c[j] == '/' && c[j-1] != '/' {
				add(c[:j])
				levels++
			}
		}
	}
	slices.Sort(keys)
	return keys
}

// termIDs appends the term numbers of the first limit terms to out, entering new terms in
// the dictionary.
func (x *Index) termIDs(terms []string, out []int32, limit int) []int32 {
	for _, t := range terms[:min(len(terms), limit)] {
		id, ok := x.dict[t]
		if !ok {
			// t may be a slice of the whole folded field (a word Stem keeps as it is):
			// a copy keeps only the term alive.
			t = strings.Clone(t)
			if k := len(x.termFree); k > 0 {
				id, x.termFree = x.termFree[k-1], x.termFree[:k-1]
				x.terms[id] = termEntry{text: t}
			} else {
				id = int32(len(x.terms))
				x.terms = append(x.terms, termEntry{text: t})
			}
			x.dict[t] = id
			for _, k := range prefixKeys(t) {
				x.prefixes[k] = append(x.prefixes[k], id)
			}
		}
		out = append(out, id)
	}
	return out
}

// prefixKeys are the keys of t in the prefix table: its first 2 to prefixKey runes (a
// prefix query has at least MinPrefix = 2 runes, so a 1-rune key is never read).
func prefixKeys(t string) []string {
	var keys []string
	runes := 0
	for i := range t {
		if i > 0 {
			if runes++; runes >= MinPrefix {
				keys = append(keys, t[:i])
			}
			if runes == prefixKey {
				return keys
			}
		}
	}
	if runes+1 < MinPrefix {
		return keys
	}
	return append(keys, t)
}

// dropTerm forgets a term no card holds any more: its number goes to the free list.
func (x *Index) dropTerm(id int32) {
	text := x.terms[id].text
	delete(x.dict, text)
	for _, k := range prefixKeys(text) {
		list := x.prefixes[k]
		if i := slices.Index(list, id); i >= 0 {
			list[i] = list[len(list)-1]
			list = list[:len(list)-1]
		}
		if len(list) == 0 {
			delete(x.prefixes, k)
		} else {
			x.prefixes[k] = list
		}
	}
	x.terms[id] = termEntry{}
	x.termFree = append(x.termFree, id)
	if len(x.dict) == 0 {
		x.terms, x.termFree = nil, nil
	}
}

func (x *Index) delete(id int64) {
	n, ok := x.byID[id]
	if !ok {
		return
	}
	e := &x.docs[n]
	x.all = removeRanked(x.all, n, x.rankLess)
	for _, c := range e.caps {
		if list := removeRanked(x.caps[c], n, x.rankLess); len(list) > 0 {
			x.caps[c] = list
		} else {
			delete(x.caps, c)
			delete(x.capNames, c)
		}
	}
	for i := range e.terms() {
		dt := e.term(i)
		ps := x.terms[dt.term].postings
		last, hole := int32(len(ps)-1), dt.pos
		if e.staked {
			// The last staked posting fills the hole, so that the staked ones stay first,
			// and the last posting fills its place.
			x.terms[dt.term].stakedDF--
			if sd := x.terms[dt.term].stakedDF; hole != sd {
				ps[hole] = ps[sd]
				x.setPos(ps[hole].doc, dt.term, hole)
				hole = sd
			}
		}
		if hole != last {
			ps[hole] = ps[last]
			x.setPos(ps[hole].doc, dt.term, hole)
		}
		switch ps = ps[:last]; {
		case len(ps) == 0:
			x.terms[dt.term].postings = nil
			x.dropTerm(dt.term)
		case cap(ps) > 16 && len(ps) < cap(ps)/4:
			x.terms[dt.term].postings = slices.Clip(slices.Clone(ps)) // same order
		default:
			x.terms[dt.term].postings = ps
		}
	}
	for f := range numFields {
		x.totalLen[f] -= int64(e.len[f])
		if e.staked {
			x.stakedLen[f] -= int64(e.len[f])
		}
	}
	if !e.staked {
		x.unstaked--
	}
	x.docs[n] = docEntry{}
	x.lens[n] = [numFields]uint16{}
	x.factors[n] = 0
	x.staked[n] = false
	x.didKeys[n] = [2]uint64{}
	x.ids[n] = 0
	x.free = append(x.free, n)
	delete(x.byID, id)
	x.live--
}

// setPos records that doc's posting of term sits at pos in the term's postings.
func (x *Index) setPos(doc, term, pos int32) {
	e := &x.docs[doc]
	i, _ := e.findTerm(term)
	e.words[e.termAt(i)+1] = pos
}

// hasPhrases says whether the doc holds every phrase.
func (e *docEntry) hasPhrases(phrases []phraseMatcher) bool {
	for i := range phrases {
		if !e.hasPhrase(&phrases[i]) {
			return false
		}
	}
	return true
}

// hasPhrase says whether one field of the doc holds the phrase as consecutive terms.
func (e *docEntry) hasPhrase(m *phraseMatcher) bool {
	for f := range numFields {
		if found, _ := m.find(e.seq(f)); found {
			return true
		}
	}
	return false
}

// phraseMatcher finds a phrase (term numbers) in a field by Knuth-Morris-Pratt: at most
// 2 × the field's length steps, whatever the phrase repeats (a phrase of one term eight
// times against runs of that term would cost field × phrase comparisons tried naively).
type phraseMatcher struct {
	phrase []int32
	fail   []int // fail[i]: the longest proper border of phrase[:i+1]
}

func (m *phraseMatcher) reset(phrase []int32) {
	m.phrase = phrase
	m.fail = make([]int, len(phrase))
	for i, k := 1, 0; i < len(phrase); i++ {
		for k > 0 && phrase[i] != phrase[k] {
			k = m.fail[k-1]
		}
		if phrase[i] == phrase[k] {
			k++
		}
		m.fail[i] = k
	}
}

// find says whether seq holds the phrase, and the comparisons it took.
func (m *phraseMatcher) find(seq []int32) (found bool, steps int) {
	k := 0
	for _, t := range seq {
		for k > 0 && t != m.phrase[k] {
			k = m.fail[k-1]
			steps++
		}
		steps++
		if t == m.phrase[k] {
			if k++; k == len(m.phrase) {
				return true, steps
			}
		}
	}
	return false, steps
}

// stakedStats says whether the collection statistics are the staked cards' (the index
// holds at least one staked card) rather than every card's.
func (x *Index) stakedStats() bool { return x.live > x.unstaked }

// df is term t's document frequency in the collection statistics.
func (x *Index) df(t int32) int {
	if x.stakedStats() {
		return int(x.terms[t].stakedDF)
	}
	return len(x.terms[t].postings)
}

// prefixTerms gives the term numbers prefix p expands to: the known terms that start with
// p, and the stems p extends by up to 3 bytes (stems are shorter than words: "translati*"
// finds "translat"); the MaxPrefixExpansions most frequent (by df), then by bytes.
func (x *Index) prefixTerms(p string) []int32 {
	key := p
	if k := prefixKeys(p); len(k) > 0 {
		key = k[len(k)-1]
	}
	var out []int32
	for _, t := range x.prefixes[key] {
		te := &x.terms[t]
		if len(te.postings) == 0 {
			continue
		}
		if strings.HasPrefix(te.text, p) || len(te.text) >= len(p)-3 && len(te.text) >= 4 && strings.HasPrefix(p, te.text) {
			out = append(out, t)
		}
	}
	// By the statistics' df (see stats): while staked cards exist, the terms staked cards
	// hold come first and unstaked cards cannot change which of them are kept.
	slices.SortFunc(out, func(a, b int32) int {
		if da, db := x.df(a), x.df(b); da != db {
			return db - da
		}
		return strings.Compare(x.terms[a].text, x.terms[b].text)
	})
	return out[:min(len(out), MaxPrefixExpansions)]
}
