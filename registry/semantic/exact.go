package semantic

// Exact says whether Search compares a query with every row the index holds now (it holds
// at most prefilterRows), so that its answer is SearchExact's: the k best by score, key and
// id, which a row changes only by entering them or leaving them.
func (x *Index) Exact() bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.ids) <= prefilterRows
}

// Code is a row's sign code: all the prefilter's first pass reads of it.
type Code [codeWords]uint64

// Code gives id's sign code, if it has a vector.
func (x *Index) Code(id int64) (Code, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	i, ok := x.pos[id]
	if !ok {
		return Code{}, false
	}
	return Code(x.codes[i*codeWords : (i+1)*codeWords]), true
}

// FirstPass is the first pass of Search(q, k)'s prefilter over the index as it is: whether it
// runs (more than prefilterRows rows), the rows it wants, and its Hamming threshold h (the
// pass keeps every row whose code is within h of q's). A write of rows whose codes, before
// and after, are all farther than h from q's, that leaves want and whether it runs as they
// were, leaves the count of rows at each distance up to h, hence h, the rows the pass keeps
// and Search's answer, as they were.
func (x *Index) FirstPass(q Vector, k int) (on bool, want, h int) {
	if len(q) != Dim || k <= 0 {
		return false, 0, 0
	}
	qq, _ := quantize8(q)
	qc := signCode(&qq)
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := len(x.ids)
	if on, want = prefilterOf(n, k); !on {
		return false, 0, 0
	}
	var hist [Dim + 1]int32
	for i := range n {
		hist[hamming(x.codes[2*i], x.codes[2*i+1], qc)]++
	}
	return true, want, threshold(hist[:], prefilterNear*want)
}

// Distance is the Hamming distance of c to q's sign code (what FirstPass's h bounds).
func Distance(q Vector, c Code) int {
	if len(q) != Dim {
		return 0
	}
	qq, _ := quantize8(q)
	qc := signCode(&qq)
	return hamming(c[0], c[1], qc)
}

// Prefilter says whether Search(q, k) goes through the prefilter over the index as it is (it
// holds more than prefilterRows rows), and how many rows the prefilter wants then.
func (x *Index) Prefilter(k int) (on bool, want int) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return prefilterOf(len(x.ids), k)
}

func prefilterOf(n, k int) (on bool, want int) {
	if n <= prefilterRows {
		return false, 0
	}
	return true, max(prefilterCandidates, prefilterPerHit*k, n/prefilterShare)
}

// Unmoved says, for a write that took out rows whose sign codes were before (a row replaced
// or deleted) and put in rows whose codes are after, with the index now as the write left
// it and holding nBefore rows before it, whether Search(q, k) goes through the prefilter
// both before and after the write with the same wants and the same thresholds in both of
// its passes; and then, by row of before and of after, whether the row lies within both
// thresholds (a candidate Search scores exactly). The other rows of the index are
// candidates before the write exactly when they are after it: the answer then changes only
// by the written rows that are candidates, each by its own score.
func (x *Index) Unmoved(q Vector, k int, before, after []Code, nBefore int) (same bool, inBefore, inAfter []bool) {
	if len(q) != Dim || k <= 0 {
		return false, nil, nil
	}
	qq, _ := quantize8(q)
	qc := signCode(&qq)
	sc := prefilters.Get().(*prefilterScratch)
	defer prefilters.Put(sc)
	sc.set(&qq)
	ham := func(c *Code) int { return hamming(c[0], c[1], qc) }
	far := func(c *Code) int { // the weighted distance's bucket, as candidates computes it
		c0, c1 := c[0]^qc[0], c[1]^qc[1]
		var d uint16
		for b := range 8 {
			d += sc.far[b][uint8(c0>>(8*b))] + sc.far[8+b][uint8(c1>>(8*b))]
		}
		return int(d >> farShift)
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := len(x.ids)
	onA, wantA := prefilterOf(n, k)
	onB, wantB := prefilterOf(nBefore, k)
	if !onA || !onB || wantA != wantB {
		return false, nil, nil
	}
	var hist, histB [Dim + 1]int32
	for i := range n {
		hist[ham((*Code)(x.codes[2*i:2*i+2]))]++
	}
	histB = hist
	for _, c := range after {
		histB[ham(&c)]--
	}
	for _, c := range before {
		histB[ham(&c)]++
	}
	h := threshold(hist[:], prefilterNear*wantA)
	if threshold(histB[:], prefilterNear*wantA) != h {
		return false, nil, nil
	}
	var fhist, fhistB [maxFar>>farShift + 1]int32
	for i := range n {
		c := (*Code)(x.codes[2*i : 2*i+2])
		if ham(c) <= h {
			fhist[far(c)]++
		}
	}
	fhistB = fhist
	for _, c := range after {
		if ham(&c) <= h {
			fhistB[far(&c)]--
		}
	}
	for _, c := range before {
		if ham(&c) <= h {
			fhistB[far(&c)]++
		}
	}
	t := threshold(fhist[:], wantA)
	if threshold(fhistB[:], wantA) != t {
		return false, nil, nil
	}
	in := func(cs []Code) []bool {
		out := make([]bool, len(cs))
		for i := range cs {
			out[i] = ham(&cs[i]) <= h && far(&cs[i]) <= t
		}
		return out
	}
	return true, in(before), in(after)
}
