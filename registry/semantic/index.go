package semantic

import (
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"
)

// Hit is a card of a Search: its id and the cosine of its vector and the query's.
type Hit struct {
	ID    int64
	Score float32
	// Key is the tie key the card was put with (PutKeyed): equal scores are ordered by it,
	// then by id.
	Key string
}

// Index holds a vector per id and finds the ones nearest a query by brute force over one
// contiguous int8 matrix: at 100k cards a search reads 12.8 MB in about 5 ms, under the 20
// ms the registry allows (BenchmarkSemanticSearch); an HNSW graph would answer faster but
// approximately, and its answers would depend on the order cards arrived. Vectors are
// quantized to int8 (step max|x|/127), and a query too, so every score is an integer dot
// product times two scales: exact, the same on every machine. It is safe for concurrent use.
type Index struct {
	mu     sync.RWMutex
	ids    []int64
	keys   []string  // per row: the tie key (PutKeyed)
	rows   []int8    // len(ids)·Dim
	codes  []uint64  // per row, codeWords of them: the signs of its components (signCode)
	scales []float32 // per row
	pos    map[int64]int
	gen    uint64 // counts the writes (PutKeyed, Delete): see Gen
}

// NewIndex returns an empty index.
func NewIndex() *Index {
	return &Index{pos: map[int64]int{}}
}

// Len is the number of vectors held.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.ids)
}

// Gen is the index's generation: it grows with every write (Put, PutKeyed, Delete, whether
// or not it changed anything), so two reads of the same Gen saw the same vectors.
func (x *Index) Gen() uint64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.gen
}

// Put sets id's vector, replacing the one it had. A nil vector (no term had one) deletes it.
// Equal scores are then ordered by id alone: PutKeyed orders them by a key that does not
// depend on the order cards arrived.
func (x *Index) Put(id int64, v Vector) { x.PutKeyed(id, "", v) }

// PutKeyed is Put with a tie key: of two cards with equal scores, the one with the lower key
// comes first (the registry gives the DID, so that every node cuts a tie the same way,
// whatever ids its cards got).
func (x *Index) PutKeyed(id int64, key string, v Vector) {
	if len(v) != Dim {
		x.Delete(id)
		return
	}
	q, s := quantize8(v)
	x.mu.Lock()
	defer x.mu.Unlock()
	x.gen++
	i, ok := x.pos[id]
	if !ok {
		i = len(x.ids)
		x.pos[id] = i
		x.ids = append(x.ids, id)
		x.keys = append(x.keys, key)
		x.rows = append(x.rows, q[:]...)
		c := signCode(&q)
		x.codes = append(x.codes, c[:]...)
		x.scales = append(x.scales, s)
		return
	}
	copy(x.rows[i*Dim:], q[:])
	c := signCode(&q)
	copy(x.codes[i*codeWords:], c[:])
	x.scales[i] = s
	x.keys[i] = key
}

// Delete removes id's vector, if it has one. The last row takes its place: the order of rows
// never shows in results.
func (x *Index) Delete(id int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.gen++
	i, ok := x.pos[id]
	if !ok {
		return
	}
	last := len(x.ids) - 1
	if i != last {
		x.ids[i] = x.ids[last]
		x.keys[i] = x.keys[last]
		copy(x.rows[i*Dim:(i+1)*Dim], x.rows[last*Dim:])
		copy(x.codes[i*codeWords:(i+1)*codeWords], x.codes[last*codeWords:])
		x.scales[i] = x.scales[last]
		x.pos[x.ids[i]] = i
	}
	x.ids = x.ids[:last]
	x.keys[last] = ""
	x.keys = x.keys[:last]
	x.rows = x.rows[:last*Dim]
	x.codes = x.codes[:last*codeWords]
	x.scales = x.scales[:last]
	delete(x.pos, id)
}

// Score is the score Search would give id for q, and whether id has a vector.
func (x *Index) Score(id int64, q Vector) (float32, bool) {
	if len(q) != Dim {
		return 0, false
	}
	qq, qs := quantize8(q)
	x.mu.RLock()
	defer x.mu.RUnlock()
	i, ok := x.pos[id]
	if !ok {
		return 0, false
	}
	return score(dotFast(&qq, x.rows[i*Dim:(i+1)*Dim]), qs, x.scales[i]), true
}

// Scorer is Score with the query quantized once, for scoring many ids against one q; nil
// when q is not a vector.
func (x *Index) Scorer(q Vector) func(id int64) (float32, bool) {
	if len(q) != Dim {
		return nil
	}
	qq, qs := quantize8(q)
	return func(id int64) (float32, bool) {
		x.mu.RLock()
		defer x.mu.RUnlock()
		i, ok := x.pos[id]
		if !ok {
			return 0, false
		}
		return score(dotFast(&qq, x.rows[i*Dim:(i+1)*Dim]), qs, x.scales[i]), true
	}
}

// Search returns the k ids whose vectors are nearest q, best first; equal scores are
// ordered by key (PutKeyed), then id, so the result does not depend on the order vectors
// were put. Up to prefilterRows rows it compares q with every row (SearchExact); above, it
// compares exactly only the rows whose sign codes are nearest q's (candidates): the answer
// is then the exact order of those rows, the same on every node that holds the same rows,
// and nearly always the exact answer (recall@200 in BenchmarkSemanticSearch and
// TestPrefilterRecall).
func (x *Index) Search(q Vector, k int) []Hit {
	return x.search(q, k, false, nil)
}

// SearchExact is Search comparing q with every row, whatever the index's size.
func (x *Index) SearchExact(q Vector, k int) []Hit {
	return x.search(q, k, true, nil)
}

// SearchAmong is Search over the rows whose ids among holds, as if the index held those
// alone (nil: every row): the prefilter, when the rows among holds are more than
// prefilterRows, takes its thresholds from theirs.
func (x *Index) SearchAmong(q Vector, k int, among *IDs) []Hit {
	return x.search(q, k, false, among)
}

// IDs is a set of ids (a bitmap by id): the rows a SearchAmong may return.
type IDs struct{ bits []uint64 }

// IDsOf is the set whose bitmap is words: bit id%64 of word id/64 holds id. It reads words,
// which must not change while it is in use.
func IDsOf(words []uint64) *IDs { return &IDs{bits: words} }

// Has says whether the set holds id.
func (s *IDs) Has(id int64) bool {
	w := id / 64
	return id >= 0 && w < int64(len(s.bits)) && s.bits[w]&(1<<(id%64)) != 0
}

func (x *Index) search(q Vector, k int, exact bool, among *IDs) []Hit {
	if len(q) != Dim || k <= 0 {
		return nil
	}
	qq, qs := quantize8(q)
	lut := luts.Get().(*queryTable)
	defer luts.Put(lut)
	if !fastDot {
		lut.set(&qq)
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := len(x.ids)
	sc := prefilters.Get().(*prefilterScratch)
	defer prefilters.Put(sc)
	var sub []int32 // the rows among holds; nil: every row
	m := n
	if among != nil {
		sub = sc.among[:0]
		for i, id := range x.ids {
			if among.Has(id) {
				sub = append(sub, int32(i))
			}
		}
		sc.among, m = sub, len(sub)
		if m == 0 {
			return nil
		}
	}
	if !exact && m > prefilterRows {
		_, want := prefilterOf(m, k)
		sc.rows = x.candidates(&qq, want, sc, sub)
		return x.rerank(&qq, lut, qs, sc.rows, n, k, sc)
	}
	return x.rerank(&qq, lut, qs, sub, n, k, sc)
}

// codeWords is the number of uint64 in a sign code: one bit per component.
const codeWords = Dim / 64

// signCode is a row's sign code: bit j is set when component j is positive. The Hamming
// distance of two codes estimates the angle between their vectors (the components are
// random projections, docs/SEMANTIC.md), at a sixteenth of the bytes of the row.
func signCode(q *[Dim]int8) [codeWords]uint64 {
	var c [codeWords]uint64
	for j, v := range q {
		if v > 0 {
			c[j/64] |= 1 << (j % 64)
		}
	}
	return c
}

// hamming is the Hamming distance of the sign code (c0, c1) to qc: how many components'
// signs differ.
func hamming(c0, c1 uint64, qc [codeWords]uint64) int {
	return bits.OnesCount64(c0^qc[0]) + bits.OnesCount64(c1^qc[1])
}

// prefilterScratch is one search's working memory for candidates, pooled: a search over a
// million rows would otherwise allocate megabytes.
type prefilterScratch struct {
	far  [codeWords * 8][256]uint16 // by byte of a code and its value: the query's weight there (set)
	ham  []uint8                    // by row: the Hamming distance of its code to the query's
	near []int32                    // by part, from its first row on: the rows the Hamming distance keeps
	dist []uint16                   // by place in near: that row's weighted distance
	// per part of the passes (inParts): the rows at each distance
	hhist [][Dim + 1]int32
	hist  [][maxFar>>farShift + 1]int32
	kept  []int // by part: the end of its stretch of near
	rows  []int32
	among []int32 // SearchAmong's rows
	// rerank's: the candidates' scores, and a copy to select in
	scores, sorted []float32
	dots           []int32 // dotRows's
}

// maxFar bounds a row's weighted distance (every sign differs from a query of components
// ±127); the distances are counted in buckets of 1<<farShift.
const (
	maxFar   = Dim * 127
	farShift = 3
)

var prefilters = sync.Pool{New: func() any { return new(prefilterScratch) }}

// set fills the table of q's weights: far[b][v] is the sum of |q[j]| over the bits j of byte
// b of a code that v sets.
// Each entry is the entry without v's lowest bit plus that bit's weight: the same sums.
func (sc *prefilterScratch) set(q *[Dim]int8) {
	for b := range sc.far {
		far := &sc.far[b]
		far[0] = 0
		for v := 1; v < 256; v++ {
			low := bits.TrailingZeros8(uint8(v))
			far[v] = far[v&(v-1)] + uint16(abs8(q[b*8+low]))
		}
	}
}

func abs8(v int8) int {
	if v < 0 {
		return -int(v)
	}
	return int(v)
}

// inParts runs f over [0, n) in parts, at most cpus (GOMAXPROCS, read once by the caller:
// it can change while a search runs, and the caller's per-part scratch is sized by it) and
// as many as hold parallelRows rows each, each on its own goroutine, and waits for them;
// f(from, to, part). What the parts compute must not depend on the split.
func inParts(n, cpus int, f func(from, to, part int)) {
	inPartsOf(n, cpus, parallelRows, f)
}

// partsOf is the number of parts inPartsOf(n, cpus, least, …) splits [0, n) in: part p is
// [n·p/parts, n·(p+1)/parts).
func partsOf(n, cpus, least int) int { return max(1, min(cpus, n/least)) }

// inPartsOf is inParts with parts of at least least rows.
func inPartsOf(n, cpus, least int, f func(from, to, part int)) {
	parts := partsOf(n, cpus, least)
	if parts == 1 {
		f(0, n, 0)
		return
	}
	var wg sync.WaitGroup
	for p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(n*p/parts, n*(p+1)/parts, p)
		}()
	}
	wg.Wait()
}

// candidates gives the rows nearest q by their sign codes, in two passes that each keep the
// rows within a threshold: first by the Hamming distance of the codes (two popcounts a
// row), keeping at least prefilterNear × want rows, then of those by a weighted distance,
// the sum of |q[j]| over the components j whose sign differs from q's (how much of q's dot
// product the signs alone put on the wrong side), keeping at least want. Each pass keeps
// every row within the least threshold that holds enough rows (the weighted distance counted
// in buckets of 1<<farShift), all the rows at the threshold included: the set depends only
// on the rows held, never on their order or on a tie cut. It holds more than want rows when
// many sit at a threshold (at most every row: the cost of SearchExact, plus these passes).
func (x *Index) candidates(q *[Dim]int8, want int, sc *prefilterScratch, sub []int32) []int32 {
	n := len(x.ids)
	if sub != nil {
		n = len(sub)
	}
	if cap(sc.ham) < n {
		sc.ham = make([]uint8, n+n/4)
	}
	parts := max(1, runtime.GOMAXPROCS(0))
	if len(sc.hhist) < parts {
		sc.hhist = make([][Dim + 1]int32, parts)
		sc.hist = make([][maxFar>>farShift + 1]int32, parts)
		sc.kept = make([]int, parts)
	}
	ham := sc.ham[:n]
	qc := signCode(q)
	codes := x.codes[:len(x.ids)*codeWords]
	// Every pass runs over the same parts of [0, n): a part keeps its rows in its own stretch
	// of near and dist, from its first row on.
	inParts(n, parts, func(from, to, part int) {
		hist := &sc.hhist[part]
		clear(hist[:])
		if sub != nil { // by place in sub
			for k := from; k < to; k++ {
				i := sub[k]
				d := hamming(codes[2*i], codes[2*i+1], qc)
				ham[k] = uint8(d)
				hist[d]++
			}
			return
		}
		cs, hs := codes[2*from:2*to], ham[from:to]
		var odd [Dim + 1]int32
		k := 0
		for ; k+1 < len(hs); k += 2 {
			d := hamming(cs[2*k], cs[2*k+1], qc)
			e := hamming(cs[2*k+2], cs[2*k+3], qc)
			hs[k], hs[k+1] = uint8(d), uint8(e)
			hist[d]++
			odd[e]++
		}
		for ; k < len(hs); k++ {
			d := hamming(cs[2*k], cs[2*k+1], qc)
			hs[k] = uint8(d)
			hist[d]++
		}
		for d, c := range odd {
			hist[d] += c
		}
	})
	var hhist [Dim + 1]int32
	for p := range min(parts, len(sc.hhist)) {
		for d, c := range sc.hhist[p] {
			hhist[d] += c
		}
		clear(sc.hhist[p][:])
	}
	h := threshold(hhist[:], prefilterNear*want)
	if cap(sc.near) < n {
		sc.near = make([]int32, n+n/4)
	}
	if cap(sc.dist) < n {
		sc.dist = make([]uint16, n+n/4)
	}
	near, dist := sc.near[:n], sc.dist[:n]
	sc.set(q)
	far := &sc.far
	inParts(n, parts, func(from, to, part int) {
		// The rows within h, written every one and kept by count (no branch to mispredict:
		// a third or so of the rows are kept, at random), then their weighted distances.
		// Local slices: the loops then keep them in registers.
		stretch, hs, kept := near[from:to], ham[from:to], 0
		if sub != nil {
			for k, s := range sub[from:to] {
				stretch[kept] = s
				kept += within(hs[k], h)
			}
		} else {
			for k, d := range hs {
				stretch[kept] = int32(from + k)
				kept += within(d, h)
			}
		}
		kept += from
		hist := &sc.hist[part]
		for k := from; k < kept; k++ {
			i := near[k]
			c0, c1 := codes[2*i]^qc[0], codes[2*i+1]^qc[1]
			d := far[0][uint8(c0)] + far[1][uint8(c0>>8)] + far[2][uint8(c0>>16)] + far[3][uint8(c0>>24)] +
				far[4][uint8(c0>>32)] + far[5][uint8(c0>>40)] + far[6][uint8(c0>>48)] + far[7][uint8(c0>>56)] +
				far[8][uint8(c1)] + far[9][uint8(c1>>8)] + far[10][uint8(c1>>16)] + far[11][uint8(c1>>24)] +
				far[12][uint8(c1>>32)] + far[13][uint8(c1>>40)] + far[14][uint8(c1>>48)] + far[15][uint8(c1>>56)]
			d >>= farShift
			dist[k] = d
			hist[d]++
		}
		sc.kept[part] = kept
	})
	var hist [maxFar>>farShift + 1]int32
	for p := range parts {
		for d, c := range sc.hist[p] {
			hist[d] += c
		}
		clear(sc.hist[p][:])
	}
	t := threshold(hist[:], want)
	// Each part keeps the rows within t at the start of its stretch; then the stretches are
	// put end to end.
	inParts(n, parts, func(from, _, part int) {
		kept := from
		for k := from; k < sc.kept[part]; k++ {
			near[kept] = near[k]
			if int(dist[k]) <= t {
				kept++
			}
		}
		sc.kept[part] = kept
	})
	rows := sc.rows[:0]
	for p, ps := 0, partsOf(n, parts, parallelRows); p < ps; p++ {
		rows = append(rows, near[n*p/ps:sc.kept[p]]...)
	}
	sc.rows = rows
	return rows
}

// within is 1 when d <= h, else 0, without a branch.
func within(d uint8, h int) int {
	return int(uint(h-int(d))>>(bits.UintSize-1) ^ 1)
}

// threshold is the least t such that the buckets of hist up to t hold at least want rows (the
// last bucket when they hold fewer).
func threshold(hist []int32, want int) int {
	t, within := 0, int(hist[0])
	for within < want && t < len(hist)-1 {
		t++
		within += int(hist[t])
	}
	return t
}

// rerank gives the k best of the given rows (nil: every one of the n rows), best first: it
// scores every row, in parts (inParts; given rows, read scattered, in parts of
// scatteredRows), finds the k-th best score, and sorts only the rows that reach it (the
// ties at it with them), so the answer does not depend on the order of the rows or the
// split.
// The dot products are dotFast's (dotRows's for given rows) where the CPU has AVX2, else
// the table's (lut, set only then): the same integers.
func (x *Index) rerank(q *[Dim]int8, lut *queryTable, qs float32, rows []int32, n, k int, sc *prefilterScratch) []Hit {
	if rows != nil {
		n = len(rows)
	}
	row := func(j int) int {
		if rows == nil {
			return j
		}
		return int(rows[j])
	}
	if cap(sc.scores) < n {
		sc.scores = make([]float32, n+n/4)
	}
	scores := sc.scores[:n]
	if rows != nil && fastDot {
		// Scattered rows: each costs a wait on memory, so they are split in parts of
		// scatteredRows, and read through dotRows, which prefetches them.
		if cap(sc.dots) < n {
			sc.dots = make([]int32, n+n/4)
		}
		dots := sc.dots[:n]
		inPartsOf(n, runtime.GOMAXPROCS(0), scatteredRows, func(from, to, _ int) {
			dotRows(q, x.rows, rows[from:to], dots[from:to])
			for j := from; j < to; j++ {
				scores[j] = score(dots[j], qs, x.scales[rows[j]])
			}
		})
	} else {
		inParts(n, runtime.GOMAXPROCS(0), func(from, to, _ int) {
			for j := from; j < to; j++ {
				i := row(j)
				var d int32
				if fastDot {
					d = dotFast(q, x.rows[i*Dim:(i+1)*Dim])
				} else {
					d = lut.dot(x.rows[i*Dim : (i+1)*Dim])
				}
				scores[j] = score(d, qs, x.scales[i])
			}
		})
	}
	cut := float32(math.Inf(-1))
	if n > k {
		sc.sorted = append(sc.sorted[:0], scores...)
		cut = kthLargest(sc.sorted, k)
	}
	var out []Hit
	for j, s := range scores {
		if s >= cut {
			i := row(j)
			out = append(out, Hit{x.ids[i], s, x.keys[i]})
		}
	}
	slices.SortFunc(out, func(a, b Hit) int {
		if better(a, b) {
			return -1
		}
		if better(b, a) {
			return 1
		}
		return 0
	})
	return out[:min(k, len(out))]
}

// kthLargest is the k-th largest of s (1-based), reordering s (quickselect; the pivot is
// the middle element, and the answer does not depend on the order of s).
func kthLargest(s []float32, k int) float32 {
	lo, hi, want := 0, len(s)-1, k-1
	for lo < hi {
		pivot := s[lo+(hi-lo)/2]
		i, j := lo, hi
		for i <= j {
			for s[i] > pivot {
				i++
			}
			for s[j] < pivot {
				j--
			}
			if i <= j {
				s[i], s[j] = s[j], s[i]
				i++
				j--
			}
		}
		switch {
		case want <= j:
			hi = j
		case want >= i:
			lo = i
		default:
			return s[want]
		}
	}
	return s[want]
}

// score is a row's cosine with the query: products only, no sum, so no machine can fuse it
// differently.
func score(dot int32, qs, rs float32) float32 {
	return float32(float64(dot) * (float64(qs) * float64(rs)))
}

// better orders hits: higher score first, then lower key, then lower id.
func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	if a.Key != b.Key {
		return a.Key < b.Key
	}
	return a.ID < b.ID
}

// quantize8 rounds v to int8 components with the step max|v|/127 and returns them with the
// step.
func quantize8(v Vector) ([Dim]int8, float32) {
	var q [Dim]int8
	var mx float32
	for _, x := range v {
		mx = max(mx, float32(math.Abs(float64(x))))
	}
	if mx == 0 {
		return q, 0
	}
	step := mx / 127
	for j, x := range v {
		q[j] = int8(max(-127, min(127, math.Round(float64(x/step)))))
	}
	return q, step
}

// queryTable holds, for each component j and each int8 value r, q[j]·r: a row's dot
// product with the query is then one table read and one add a component, faster in Go than
// multiplying (about 3.8 ms for 100k rows against 6.5 ms), and the same integers.
type queryTable [Dim][256]int32

var luts = sync.Pool{New: func() any { return new(queryTable) }}

func (t *queryTable) set(q *[Dim]int8) {
	for j, qj := range q {
		for r := range 256 {
			t[j][r] = int32(qj) * int32(int8(uint8(r)))
		}
	}
}

func (t *queryTable) dot(row []int8) int32 {
	r := (*[Dim]int8)(row[:Dim])
	var s0, s1, s2, s3 int32
	for j := 0; j < Dim; j += 4 {
		s0 += t[j][uint8(r[j])]
		s1 += t[j+1][uint8(r[j+1])]
		s2 += t[j+2][uint8(r[j+2])]
		s3 += t[j+3][uint8(r[j+3])]
	}
	return s0 + s1 + s2 + s3
}

// dot8Rows is dotRows in Go: dot8 of q and row idx[j] of rows, into out[j].
func dot8Rows(q *[Dim]int8, rows []int8, idx []int32, out []int32) {
	for j, i := range idx {
		out[j] = dot8(q, rows[int(i)*Dim:(int(i)+1)*Dim])
	}
}

// dot8 is the dot product of a query and a row, in integers.
func dot8(q *[Dim]int8, row []int8) int32 {
	row = row[:Dim]
	var s0, s1, s2, s3 int32
	for j := 0; j < Dim; j += 4 {
		s0 += int32(q[j]) * int32(row[j])
		s1 += int32(q[j+1]) * int32(row[j+1])
		s2 += int32(q[j+2]) * int32(row[j+2])
		s3 += int32(q[j+3]) * int32(row[j+3])
	}
	return s0 + s1 + s2 + s3
}
