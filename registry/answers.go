package registry

import (
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/surety-ioa/surety/registry/search"
	"github.com/surety-ioa/surety/registry/semantic"
)

// answerKey is what an index answer depends on besides the cards: the query's text and
// capability, whether its meaning is compared (hybrid), and how many hits it asks for.
type answerKey struct {
	text, capability string
	hybrid           bool
	limit            int
}

// answerCache keeps the search index's answers (the hits before reputation is read) to
// recent queries, each for as long as no write could change it: a write (a card indexed,
// replaced or dropped) forgets exactly the answers it could change (answer.changedBy), and
// the others stay, each equal, bit for bit, to the answer the indexes would give again.
// An answer is kept only when no write ran, even in part, while it was computed (epoch).
// With an answer the HTTP edge may keep the body it encoded from it (attach): the cards of
// its hits do not change while it is kept (a write of one of them forgets it), so the body
// stands for as long as the reputation weights it was encoded with. Entries are evicted one
// at a time, the least recently used first, past maxAnswers or maxAnswerBytes.
type answerCache struct {
	mu sync.Mutex
	// epoch advances at the start and at the end of every write; writing counts the writes
	// under way (the registry runs one at a time, under r.mu); written holds the last
	// maxLoggedWrites writes, with the epoch each ended at, for put.
	epoch   uint64
	writing int
	written []loggedWrite
	// keepNone keeps nothing computed (tests: SearchFresh).
	keepNone bool
	answers  map[answerKey]*answer
	bytes    int    // what the kept answers weigh (answer.size)
	tick     uint64 // advanced by every use: answer.used orders evictions
	// text and unstaked are the indexes the answers come from (the text index, the
	// unstaked cards' vectors), which the rules of changedBy may read.
	text     *search.Index
	unstaked *semantic.Index
	rankKept int // the times rankRule kept an answer a write read (tests)
	// computing holds, per key, the search computing its answer (claim): the others asking
	// meanwhile wait for it and take the answer if it was kept, rather than compute it too.
	computing map[answerKey]chan struct{}
}

// maxLoggedWrites is how many of the last writes answerCache remembers: an answer whose
// search began before them is not kept. The log is outside maxAnswerBytes: each write holds
// the two summaries of its card (terms, fields, capabilities: up to about 90 KB for a 16 KiB
// card), so up to about 6 MB, whoever wrote the cards.
const maxLoggedWrites = 64

// loggedWrite is a write that ended at epoch (w nil: every answer changed).
type loggedWrite struct {
	epoch uint64
	w     *indexWrite
}

// answerKind is how an answer is computed, which decides what a write can change in it.
type answerKind uint8

const (
	// byStake answers a query without text: the cards (with the capability) by stake
	// factor, DID and id, no corpus statistics.
	byStake answerKind = iota
	// byText answers a keyword query: BM25F over the index's statistics.
	byText
	// byMeaning answers a hybrid query: text and the vectors' nearest neighbours.
	byMeaning
)

// answer is a kept index answer and what a write must be checked against.
type answer struct {
	hits []search.Hit
	kind answerKind
	// capability narrows the query; limit is the candidates asked (opt.Limit).
	capability string
	limit      int
	// terms are the query's terms and their aliases, prefixes its prefixes (byText): a
	// card holding none of them, nor a term one of them starts or ends, reads none of the
	// query's postings.
	terms    map[string]bool
	prefixes []string
	// pq is the query as the index reads it (byText, byMeaning). floor is the least of the
	// hits' Text × stake factor, when the answer is full (limit hits) and a staked card
	// matches its text (a hit staked with Text > 0: the best staked text is then the
	// relevance's divisor): an unstaked card whose text × factor is below it cannot enter
	// (rankRule). 0 when either fails.
	pq      search.Query
	floor   float64
	maxText float64
	// textKey is pq's terms and prefixes (what TextOf reads), vecKey the bits of query.
	textKey, vecKey string
	// query is the query's vector of meaning and sem the semantic scores the index ranked
	// with (search.Options.Semantic), by card (byMeaning; nil when no term has a vector).
	query semantic.Vector
	sem   map[int64]float64
	// body is what the HTTP edge encoded from this answer for a limit (bodyLimit) with the
	// reputation weights of the hits, in order (weights).
	body      []byte
	bodyLimit int
	weights   []float64
	size      int
	used      uint64
}

// indexWrite is a write of card id as the search index had it before (old) and has it after
// (now); nil for none. stakedStats is the index's (search.Index.StakedStats) after it.
type indexWrite struct {
	id          int64
	old, now    *search.Summary
	stakedStats bool
	// exactUnstaked says whether the unstaked cards' vector index answered every query
	// exactly (semantic.Index.Exact) before the write and after it; unstakedScore is the
	// score it gives card id after the write (false: no vector).
	exactUnstaked bool
	unstakedScore func(q semantic.Vector) (float32, bool)
	// fresh are the terms of the card, before or after, that no other card holds: the
	// write adds them to the index's terms or takes them out (a query reading one may
	// expand its prefixes and spend its budget of expansions otherwise).
	fresh []string
	// The unstaked vector index's prefilter before and after the write (semantic.Prefilter
	// of its rows: whether it runs and the rows it wants), and the card's sign codes there
	// before and after (nil: no unstaked vector).
	prefBefore, prefAfter [2]int
	codesBefore           []semantic.Code
	codesAfter            []semantic.Code
	unstakedBefore        int // the unstaked vectors held before the write
}

// changedBy says whether w can change a, by the ranking of search.Index.Search
// (registry/search/rank.go): a kept answer that no write changed is the fresh one, bit for
// bit. It errs only towards yes.
func (a *answer) changedBy(w *indexWrite, j *judge) bool {
	if w.old == nil && w.now == nil {
		return false // nothing was indexed at id, and nothing is
	}
	// A hit rewritten or gone: its card (what the body shows) and its place change.
	if slices.ContainsFunc(a.hits, func(h search.Hit) bool { return h.ID == w.id }) {
		return true
	}
	// The card stored again as the indexes held it (a new seq, the same words in the same
	// fields, the same stake factor: its vector, made from the same words, is the same too)
	// changes no other answer.
	if w.old != nil && w.now != nil && w.old.Indexes(w.now) {
		return false
	}
	switch a.kind {
	case byStake:
		// The cards under the capability in the stake order, the first limit of them. A
		// card leaving it left the answer only if it was a hit (above); a card entering it
		// enters the answer if the answer has room or the card ranks before its last hit.
		if w.now == nil || !holdsCapability(w.now, a.capability) {
			return false
		}
		return len(a.hits) < a.limit || w.now.RanksBefore(a.hits[len(a.hits)-1])
	case byText:
		// A staked card moves the collection statistics (N, df, average lengths: every
		// text score's bits), as every card does while none is staked. An unstaked one then
		// changes only its own score, and the query's clauses only if it holds a term of
		// them (a term, an alias, what a prefix expands to: their members, the order and the
		// budget of expansions); one holding none and not under the capability is not read.
		// One read changes the answer only if it enters it (rankRule).
		if w.old != nil && w.old.Staked || w.now != nil && w.now.Staked || !w.stakedStats {
			return true
		}
		return (a.reads(w.old) || a.reads(w.now)) && !a.rankRule(w, j)
	default:
		// The text part as for byText. The semantic scores (the nearest staked and unstaked
		// cards, each side's best semanticCandidates from minSemantic up) through the
		// prefilter's thresholds depend on every vector of a large side; on a side that
		// answers exactly, an unstaked card that was not among them and now scores under
		// minSemantic leaves them as they were (entering the best, it could only push out
		// a card scoring under it, not kept either). The text matches' scores by meaning
		// (SemanticOf) are their own vectors'.
		if w.old != nil && w.old.Staked || w.now != nil && w.now.Staked || !w.stakedStats {
			return true
		}
		if a.query == nil {
			return (a.reads(w.old) || a.reads(w.now)) && !a.rankRule(w, j) // no term has a vector: text alone ranks
		}
		if filtered(a.capability, a.pq) {
			// The nearest among the cards that pass the query's filters (its capability, its
			// phrases' terms: search.Options.SemanticLater), the prefilter's thresholds read
			// from theirs alone: a card that passes them neither before nor now is not among
			// the nearest and leaves them as they were.
			if a.passes(w.old) || a.passes(w.now) {
				return true
			}
			return (a.reads(w.old) || a.reads(w.now)) && !a.rankRule(w, j)
		}
		if _, ok := a.sem[w.id]; ok {
			return true
		}
		if w.exactUnstaked {
			if w.now != nil {
				if s, ok := w.unstakedScore(a.query); ok && float64(s) >= minSemantic {
					return true
				}
			}
		} else if !a.beyondFirstPass(w, j) && !a.unmoved(w, j) {
			return true
		}
		// The nearest as they were, and the card not among them (it could only enter them
		// by scoring ≥ minSemantic, or by a code within the first pass's threshold): its
		// relevance is its text's alone, as rankRule takes it.
		return (a.reads(w.old) || a.reads(w.now)) && !a.rankRule(w, j)
	}
}

// judge is what changedBy may read besides the write: the indexes, when they are as the
// writes judged left them (live: the state after the last write that ended, none under
// way), and a budget of the rules that read the indexes (each costs about a search's
// scoring of one card, or a pass over the unstaked codes), past which it answers yes.
type judge struct {
	live     bool
	single   bool // live, and the state is the one right after the only write judged
	text     *search.Index
	unstaked *semantic.Index
	budget   int
	// What the rules computed, by the query's text key (answer.textKey, and the card) or its
	// vector's (answer.vecKey): answers to one query differing only in their keys (spaces, a
	// capability, a limit) cost one computation a write.
	texts   map[string]float64
	h       map[string]int // FirstPass thresholds (-1: no prefilter)
	unmoved map[string]bool
	ranked  int // the times rankRule said yes (answerCache.rankKept)
}

// rankRule says whether w, an unstaked write (old and now unstaked, the statistics the
// staked cards') of a card that is not a hit of a (byText, or byMeaning with the nearest
// unchanged and the card not among them), leaves a as it is: the proof is in
// docs/SEARCH.md. Then every other card's text score is as it was (the statistics, and
// the query's clauses: the card neither adds nor takes away a term the query reads, fresh),
// the divisor of relevance too (a staked match exists: floor > 0), so a's hits keep their
// scores and order, and the card would enter only by scoring above the last of them. Its
// score is (TextShare ×) text/maxText × factor (its semantic score 0, not among the nearest;
// the hits' at least 0), against each hit's at least Text/maxText × factor: it stays out
// when its text × factor is below floor, with a margin far above the rounding of either.
// The card is judged as the index holds it now (live): in put, the writes that ended
// since the answer's search began are judged together, each card at its last version.
func (a *answer) rankRule(w *indexWrite, j *judge) bool {
	if j == nil || !j.live || a.floor <= 0 {
		return false
	}
	for _, t := range w.fresh {
		if a.readsTerm(t) {
			return false
		}
	}
	if w.now == nil {
		j.ranked++
		return true // gone, it was not a hit: the others as they were
	}
	if j.budget <= 0 {
		if _, ok := j.texts[a.textKey+"\x00"+strconv.FormatInt(w.id, 10)]; !ok {
			return false
		}
	}
	factor, staked, ok := j.text.Rank(w.id)
	if !ok {
		return true // dropped since: a later write, judged on its own
	}
	if staked {
		return false
	}
	k := a.textKey + "\x00" + strconv.FormatInt(w.id, 10)
	text, ok := j.texts[k]
	if !ok {
		j.budget--
		text, _ = j.text.TextOf(a.pq, w.id)
		if j.texts == nil {
			j.texts = map[string]float64{}
		}
		j.texts[k] = text
	}
	score := float64(text * factor)
	if a.maxText > 0 { // a hybrid answer's: the card's relevance, its text's alone
		score = float64(float64(search.TextShare*text)/(a.maxText*(1-rankMargin))) * factor
	}
	if score < a.floor*(1-rankMargin) {
		j.ranked++
		return true
	}
	return false
}

// rankMargin is rankRule's relative margin (far above the rounding of a few divisions).
const rankMargin = 1e-9

// beyondFirstPass says whether the unstaked nearest to a's query are as they were across w:
// the prefilter runs before and after, wanting as many rows, and the card's codes, before
// and after, are farther from the query's than the first pass's threshold (live, as the
// index is now): then the rows at each distance up to it, the threshold, the rows kept and
// the nearest are the same (semantic.Index.FirstPass).
func (a *answer) beyondFirstPass(w *indexWrite, j *judge) bool {
	if j == nil || !j.live || w.prefBefore != w.prefAfter || w.prefAfter[0] == 0 {
		return false
	}
	h, ok := j.h[a.vecKey]
	if !ok {
		if j.budget <= 0 {
			return false
		}
		j.budget--
		on, want, th := j.unstaked.FirstPass(a.query, semanticCandidates)
		h = -1
		if on && want == w.prefAfter[1] {
			h = th
		}
		if j.h == nil {
			j.h = map[string]int{}
		}
		j.h[a.vecKey] = h
	}
	if h < 0 {
		return false
	}
	for _, c := range slices.Concat(w.codesBefore, w.codesAfter) {
		if semantic.Distance(a.query, c) <= h {
			return false
		}
	}
	return true
}

// unmoved says whether the unstaked nearest to a's query are as they were across w, judged
// by both of the prefilter's thresholds (semantic.Index.Unmoved) with the index as w left it
// (single: w is the only write judged): the other rows are candidates before exactly when
// after; the card before, a candidate or not, was not among the nearest (changedBy checked
// a.sem), so taking it out can only let in one scoring under it, under minSemantic too; the
// card after, if a candidate, must score under minSemantic.
func (a *answer) unmoved(w *indexWrite, j *judge) bool {
	if j == nil || !j.live || !j.single {
		return false
	}
	if out, ok := j.unmoved[a.vecKey]; ok {
		return out
	}
	if j.budget <= 0 {
		return false
	}
	j.budget--
	out := true
	same, _, inAfter := j.unstaked.Unmoved(a.query, semanticCandidates, w.codesBefore, w.codesAfter, w.unstakedBefore)
	if !same {
		out = false
	} else if len(inAfter) > 0 && inAfter[0] {
		if s, ok := w.unstakedScore(a.query); ok && float64(s) >= minSemantic {
			out = false
		}
	}
	if j.unmoved == nil {
		j.unmoved = map[string]bool{}
	}
	j.unmoved[a.vecKey] = out
	return out
}

// reads says whether a byText query reads card s: it holds a term of the query's clauses
// (or one a prefix could expand to, by either's bytes), or the query's capability. Its cost
// is the query's, not the card's: each term and prefix is a binary search of the card's
// sorted terms (review 41: a loop over a 16 KiB card's 1,100 terms for each of 128 kept
// answers' 32 prefixes held the answers' lock for 23 ms a write, a free identity's write).
func (a *answer) reads(s *search.Summary) bool {
	if s == nil {
		return false
	}
	if a.capability != "" && holdsCapability(s, a.capability) {
		return true
	}
	has := func(t string) bool {
		_, ok := slices.BinarySearch(s.Terms, t)
		return ok
	}
	for t := range a.terms {
		if has(t) {
			return true
		}
	}
	for _, p := range a.prefixes {
		// A term starting with p: the terms that do are the sorted run from p's place on.
		if i, _ := slices.BinarySearch(s.Terms, p); i < len(s.Terms) && strings.HasPrefix(s.Terms[i], p) {
			return true
		}
		// A term p starts with. The largest term up to q (at first p itself) is one, or
		// every term q starts with also starts it (it sorts between them), so shares the
		// start it has in common with q: look again up to that start, shorter each time.
		for q := p; q != ""; {
			i, found := slices.BinarySearch(s.Terms, q)
			if found {
				return true
			}
			if i == 0 {
				break
			}
			t := s.Terms[i-1]
			n := 0
			for n < len(t) && n < len(q) && t[n] == q[n] {
				n++
			}
			if n == len(t) {
				return true
			}
			q = q[:n]
		}
	}
	return false
}

// readsTerm says whether a byText query reads term t: a term of its clauses, or one a prefix
// could expand to (by either's bytes, as reads).
func (a *answer) readsTerm(t string) bool {
	if a.terms[t] {
		return true
	}
	for _, p := range a.prefixes {
		if strings.HasPrefix(t, p) || strings.HasPrefix(p, t) {
			return true
		}
	}
	return false
}

// filtered says whether a hybrid query with capability and pq finds its nearest in meaning
// among the cards that pass its filters (search.Options.SemanticLater's among), not all.
func filtered(capability string, pq search.Query) bool {
	return capability != "" || len(pq.Phrases) > 0
}

// passes says whether card s passes a's filters: it is under a's capability (any, without
// one) and holds every term of a's phrases.
func (a *answer) passes(s *search.Summary) bool {
	if s == nil || !holdsCapability(s, a.capability) {
		return false
	}
	for _, p := range a.pq.Phrases {
		for _, t := range p {
			if _, ok := slices.BinarySearch(s.Terms, t); !ok {
				return false
			}
		}
	}
	return true
}

// holdsCapability says whether the card is found under capability c ("" for every card).
func holdsCapability(s *search.Summary, c string) bool {
	return c == "" || slices.Contains(s.Caps, c)
}

// newAnswer describes the answer hits of index x to key's query pq, for changedBy.
// sem and of are the index's Options.Semantic and SemanticOf for a hybrid query.
func newAnswer(x *search.Index, key answerKey, pq search.Query, hits []search.Hit, sem map[int64]float64, of func(int64) float64) *answer {
	a := &answer{hits: hits, capability: key.capability, limit: key.limit, pq: pq}
	switch {
	case pq.Empty():
		a.kind = byStake
	default:
		a.kind = byText
		if key.hybrid {
			a.kind = byMeaning
			if sem != nil {
				a.sem, a.query = sem, queryVector(key.text)
			}
		}
		a.terms = map[string]bool{}
		for _, t := range pq.Terms {
			a.terms[t] = true
			for _, al := range search.Aliases(t) {
				a.terms[al] = true
			}
		}
		a.prefixes = pq.Prefixes
		a.floor, a.maxText = textFloor(x, hits, key.limit, a.sem, of)
		a.textKey = strings.Join(pq.Terms, " ") + "\x00" + strings.Join(pq.Prefixes, " ")
		if a.query != nil {
			b := make([]byte, 0, 4*len(a.query))
			for _, v := range a.query {
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
			}
			a.vecKey = string(b)
		}
	}
	a.size = answerSize(key, a)
	return a
}

// textFloor is answer.floor of a text answer's hits, and the divisor of text it is in
// (answer.maxText; 0: text × factor); floor is 0 unless there are limit hits and one of
// them is staked with Text > 0 (the divisor is then the best staked text, which no unstaked
// write moves). With sem (a hybrid answer ranked with the nearest: its hits' relevance is
// TextShare · text/maxText + SemanticShare · semantic) the floor is in score units: a hit
// among the nearest scores as it was chosen (Score), one not among them was chosen by its
// text alone (TextShare · Text/maxText × factor; its Score adds its semantic score after),
// and maxText is read back from a hit whose text part is at least a thousandth of its
// relevance, to about 1e-12 (maxText is not handed back by the index), its semantic score
// sem's or, not among the nearest, of's (Options.SemanticOf: the same bits as the index
// added).
// The factors are read from the index after the search: a hit whose card changed since
// (its factor too) was written meanwhile, and that write forgets the answer (its hit).
func textFloor(x *search.Index, hits []search.Hit, limit int, sem map[int64]float64, of func(int64) float64) (floor, maxText float64) {
	if x == nil || len(hits) < limit || limit == 0 {
		return 0, 0
	}
	factors := make([]float64, len(hits))
	stakedMatch := false
	for i, h := range hits {
		factor, staked, ok := x.Rank(h.ID)
		if !ok {
			return 0, 0
		}
		factors[i] = factor
		// A hit staked with text, or one whose text is above the divisor (then not every
		// match's best: the best staked), says a staked card matches.
		stakedMatch = stakedMatch || staked && h.Text > 0 || sem == nil && h.Relevance > 1+rankMargin
	}
	floor = math.Inf(1)
	if sem == nil {
		if !stakedMatch {
			return 0, 0
		}
		for i, h := range hits {
			floor = min(floor, float64(h.Text*factors[i]))
		}
		return floor, 0
	}
	for _, h := range hits {
		s, ok := sem[h.ID]
		if !ok && of != nil {
			s = of(h.ID)
		}
		if h.Text <= 0 {
			continue
		}
		if part := h.Relevance - float64(search.SemanticShare*s); part >= h.Relevance/1000 {
			maxText = max(maxText, float64(search.TextShare*h.Text)/part)
		}
	}
	if maxText <= 0 {
		return 0, 0
	}
	for _, h := range hits {
		stakedMatch = stakedMatch || h.Text > maxText*(1+1e-6)
	}
	if !stakedMatch {
		return 0, 0
	}
	hi := maxText * (1 + rankMargin)
	for i, h := range hits {
		if _, ok := sem[h.ID]; ok {
			floor = min(floor, h.Score)
		} else {
			floor = min(floor, float64(float64(search.TextShare*h.Text)/hi)*factors[i])
		}
	}
	return floor, maxText
}

// answerSize is about what a weighs in memory, with its key.
func answerSize(key answerKey, a *answer) int {
	size := 256 + len(key.text) + len(key.capability) + len(a.body) + 8*len(a.weights)
	for _, h := range a.hits {
		size += int(unsafe.Sizeof(h)) + len(h.DID)
	}
	for t := range a.terms {
		size += 48 + len(t)
	}
	for _, p := range a.prefixes {
		size += 16 + len(p)
	}
	size += 4*len(a.query) + 48*len(a.sem) + len(a.textKey) + len(a.vecKey)
	return size
}

// start gives the epoch a search reads before the indexes, for put.
func (c *answerCache) start() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.epoch
}

// get gives the answer kept for k.
func (c *answerCache) get(k answerKey) *answer {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := c.answers[k]
	if a != nil {
		c.tick++
		a.used = c.tick
	}
	return a
}

// put keeps a as the answer for k, computed from the indexes after epoch (start, read before
// the search), unless a write that ended since could change it (changedBy). A keyword or
// stake answer reads one state of the text index (one read lock): a write it missed is
// checked here as endWrite would have checked it, one it saw changes nothing it can be
// judged by (an answer computed after a write is the answer after it), one under way is
// checked by its endWrite, which sees a. A hybrid answer reads the text and the vector
// indexes apart, so it may hold part of a write: changedBy judges the two parts apart, and a
// write that changes neither gives the same answer from either state of each. Other answers stay (the least recently used go
// when the bounds are reached). It gives back a when kept.
func (c *answerCache) put(k answerKey, epoch uint64, a *answer) *answer {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keepNone || a.size > maxAnswerBytes/16 {
		return nil
	}
	if epoch != c.epoch {
		j := c.judge(c.writing == 0)
		i := len(c.written)
		for i > 0 && c.written[i-1].epoch > epoch {
			i--
		}
		j.single = j.live && i == len(c.written)-1
		if i == 0 && len(c.written) == maxLoggedWrites {
			return nil // more writes than remembered ended since it began
		}
		for _, lw := range c.written[i:] {
			if lw.w == nil || a.changedBy(lw.w, j) {
				return nil
			}
		}
		c.rankKept += j.ranked
	}
	if old := c.answers[k]; old != nil {
		c.drop(k, old)
	}
	if c.answers == nil {
		c.answers = map[answerKey]*answer{}
	}
	c.makeRoom(a.size, nil)
	c.tick++
	a.used = c.tick
	c.answers[k] = a
	c.bytes += a.size
	return a
}

// attach keeps body, encoded from a (still kept for k) for limit with the reputation
// weights of its hits, unless a was forgotten meanwhile or the body would make it too big.
func (c *answerCache) attach(k answerKey, a *answer, limit int, weights []float64, body []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.answers[k] != a {
		return
	}
	size := answerSize(k, &answer{hits: a.hits, terms: a.terms, prefixes: a.prefixes, query: a.query, sem: a.sem, textKey: a.textKey, vecKey: a.vecKey, body: body, weights: weights})
	if size > maxAnswerBytes/16 {
		return
	}
	c.bytes += size - a.size
	a.size, a.body, a.bodyLimit, a.weights = size, body, limit, weights
	c.makeRoom(0, a)
}

// bodyOf gives the body kept with a for limit, if it was encoded with these weights.
func (c *answerCache) bodyOf(a *answer, limit int, weights []float64) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a.body == nil || a.bodyLimit != limit || len(a.weights) != len(weights) {
		return nil
	}
	for i, w := range weights {
		if a.weights[i] != w {
			return nil
		}
	}
	return a.body
}

// makeRoom evicts the least recently used answers (never keep) until size more bytes and
// one more answer fit.
func (c *answerCache) makeRoom(size int, keep *answer) {
	for len(c.answers) > 0 && (c.bytes+size > maxAnswerBytes || len(c.answers)+boolInt(keep == nil) > maxAnswers) {
		var (
			oldest    answerKey
			oldestAns *answer
		)
		for k, a := range c.answers {
			if a != keep && (oldestAns == nil || a.used < oldestAns.used) {
				oldest, oldestAns = k, a
			}
		}
		if oldestAns == nil {
			return
		}
		c.drop(oldest, oldestAns)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (c *answerCache) drop(k answerKey, a *answer) {
	delete(c.answers, k)
	c.bytes -= a.size
}

// beginWrite marks a write under way (its endWrite checks the answers kept meanwhile).
func (c *answerCache) beginWrite() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writing++
	c.epoch++
}

// endWrite ends a write begun with beginWrite: it forgets the answers w changes (every
// answer for a nil w), and remembers w for the searches under way (put).
func (c *answerCache) endWrite(w *indexWrite) {
	c.mu.Lock()
	defer c.mu.Unlock()
	j := c.judge(true)
	j.single = j.live
	for k, a := range c.answers {
		if w == nil || a.changedBy(w, j) {
			c.drop(k, a)
		}
	}
	c.rankKept += j.ranked
	c.writing--
	c.epoch++
	if len(c.written) == maxLoggedWrites {
		c.written = append(c.written[:0], c.written[1:]...)
	}
	c.written = append(c.written, loggedWrite{c.epoch, w})
}

// judge gives what changedBy may read: the indexes, live when they are as the writes
// logged left them.
func (c *answerCache) judge(live bool) *judge {
	return &judge{live: live && c.text != nil, text: c.text, unstaked: c.unstaked, budget: maxJudged}
}

// claim makes the caller the one search computing k's answer (mine: it calls release when
// done), or gives the channel that closes when the one computing it is done.
func (c *answerCache) claim(k answerKey) (done <-chan struct{}, mine bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, ok := c.computing[k]; ok {
		return ch, false
	}
	if c.computing == nil {
		c.computing = map[answerKey]chan struct{}{}
	}
	c.computing[k] = make(chan struct{})
	return nil, true
}

// release ends the caller's claim on k.
func (c *answerCache) release(k answerKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	close(c.computing[k])
	delete(c.computing, k)
}

// forget forgets every answer.
func (c *answerCache) forget() {
	c.beginWrite()
	c.endWrite(nil)
}
