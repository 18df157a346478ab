package semantic

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestExactIsSearchExact: while Exact says so, Search gives SearchExact's answer; past
// prefilterRows rows it says not.
func TestExactIsSearchExact(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 7))
	vec := func() Vector { return randomVector(rnd) }
	x := NewIndex()
	for i := range 3000 {
		x.PutKeyed(int64(i), "", vec())
	}
	if !x.Exact() {
		t.Fatal("3,000 rows: not exact")
	}
	for range 5 {
		q := vec()
		if diff := cmp.Diff(x.SearchExact(q, 200), x.Search(q, 200)); diff != "" {
			t.Fatalf("Exact, yet Search is not SearchExact (-exact +search):\n%s", diff)
		}
	}
	for i := 3000; i <= prefilterRows; i++ {
		x.PutKeyed(int64(i), "", vec())
	}
	if x.Exact() {
		t.Errorf("%d rows: exact", x.Len())
	}
}

// randomVector is a vector of Dim normal components from rnd.
func randomVector(rnd *rand.Rand) Vector {
	v := make(Vector, Dim)
	for j := range v {
		v[j] = float32(rnd.NormFloat64())
	}
	return v
}

// pastPrefilterRows is an index of n random rows, keyed 0 to n−1, 4,000 past where the
// prefilter runs (prefilterRows) and its first pass keeps fewer than every row (prefilterNear
// × prefilterCandidates), and three random queries.
func pastPrefilterRows(rnd *rand.Rand) (x *Index, n int64, queries []Vector) {
	x, n = NewIndex(), int64(max(prefilterRows, prefilterNear*prefilterCandidates)+4000)
	for i := range n {
		x.PutKeyed(i, "", randomVector(rnd))
	}
	return x, n, []Vector{randomVector(rnd), randomVector(rnd), randomVector(rnd)}
}

// TestFirstPassBoundsTheNearest: past prefilterRows rows, a write (a row put, replaced or
// deleted) whose codes before and after are farther from the query's than FirstPass's
// threshold after it, wanting as many rows, leaves Search's answer as it was (the registry
// keeps hybrid answers across such writes); writes within it do change answers (the test
// can tell).
func TestFirstPassBoundsTheNearest(t *testing.T) {
	rnd := rand.New(rand.NewPCG(11, 3))
	vec := func() Vector { return randomVector(rnd) }
	x, n, queries := pastPrefilterRows(rnd)
	far, changedNear := 0, 0
	for step := range 600 {
		q := queries[step%len(queries)]
		before, kept := x.Search(q, 200), firstPass(x, q)
		_, wantBefore := x.Prefilter(200)
		var codes []Code
		id := rnd.Int64N(n + 50)
		if c, ok := x.Code(id); ok {
			codes = append(codes, c)
		}
		switch rnd.IntN(3) {
		case 0:
			x.Delete(id)
		case 1:
			x.PutKeyed(id, "", vec())
		default: // a row facing away from the query: its code far from the query's
			v := vec()
			for j := range v {
				v[j] = v[j]/4 - q[j]
			}
			x.PutKeyed(id, "", v)
		}
		if c, ok := x.Code(id); ok {
			codes = append(codes, c)
		}
		on, want, h := x.FirstPass(q, 200)
		if !on || want != wantBefore {
			t.Fatalf("step %d: the prefilter's wants moved (%v %d → %d)", step, on, wantBefore, want)
		}
		beyond := true
		for _, c := range codes {
			beyond = beyond && Distance(q, c) > h
		}
		after, keptAfter := x.Search(q, 200), firstPass(x, q)
		if !beyond {
			if !cmp.Equal(before, after) {
				changedNear++
			}
			continue
		}
		far++
		if diff := cmp.Diff(before, after); diff != "" {
			t.Fatalf("step %d: a write beyond the first pass's threshold %d changed the answer (-before +after):\n%s", step, h, diff)
		}
		if diff := cmp.Diff(kept, keptAfter); diff != "" {
			t.Fatalf("step %d: a write beyond the first pass's threshold %d changed the rows it keeps (-before +after):\n%s", step, h, diff)
		}
	}
	if far < 30 || changedNear == 0 {
		t.Errorf("%d writes beyond the threshold, %d within it changed the answer: the test checks little", far, changedNear)
	}
}

// firstPass is the ids of the rows the prefilter's first pass keeps for Search(q, 200), in
// order, as candidates computes them (not through FirstPass).
func firstPass(x *Index, q Vector) []int64 {
	qq, _ := quantize8(q)
	qc := signCode(&qq)
	x.mu.RLock()
	defer x.mu.RUnlock()
	_, want := prefilterOf(len(x.ids), 200)
	var hist [Dim + 1]int32
	dist := make([]int, len(x.ids))
	for i := range x.ids {
		dist[i] = bits.OnesCount64(x.codes[2*i]^qc[0]) + bits.OnesCount64(x.codes[2*i+1]^qc[1])
		hist[dist[i]]++
	}
	h := threshold(hist[:], prefilterNear*want)
	var ids []int64
	for i, id := range x.ids {
		if dist[i] <= h {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// TestUnmovedIsCandidates: past prefilterRows rows, when Unmoved says a write left the
// prefilter's thresholds as they were, the rows the prefilter hands to the exact scoring
// (candidates) before and after the write differ only by the written rows, each a candidate
// where Unmoved says it is; and most writes that the first pass alone could not clear
// (a code within its threshold) are cleared.
func TestUnmovedIsCandidates(t *testing.T) {
	rnd := rand.New(rand.NewPCG(13, 5))
	vec := func() Vector { return randomVector(rnd) }
	x, n, queries := pastPrefilterRows(rnd)
	cleared, within := 0, 0
	for step := range 400 {
		q := queries[step%len(queries)]
		id := rnd.Int64N(n + 50)
		candBefore, nBefore := candidateIDs(x, q), x.Len()
		var before, after []Code
		if c, ok := x.Code(id); ok {
			before = append(before, c)
		}
		if rnd.IntN(3) == 0 {
			x.Delete(id)
		} else {
			x.PutKeyed(id, "", vec())
		}
		if c, ok := x.Code(id); ok {
			after = append(after, c)
		}
		candAfter := candidateIDs(x, q)
		same, inBefore, inAfter := x.Unmoved(q, 200, before, after, nBefore)
		_, _, h := x.FirstPass(q, 200)
		near := false
		for _, c := range append(slices.Clone(before), after...) {
			near = near || Distance(q, c) <= h
		}
		if near {
			within++
		}
		if !same {
			continue
		}
		if near {
			cleared++
		}
		if len(before) > 0 && inBefore[0] != slices.Contains(candBefore, id) {
			t.Fatalf("step %d: Unmoved says the row before is a candidate: %v; it is: %v", step, inBefore[0], !inBefore[0])
		}
		if len(after) > 0 && inAfter[0] != slices.Contains(candAfter, id) {
			t.Fatalf("step %d: Unmoved says the row after is a candidate: %v; it is: %v", step, inAfter[0], !inAfter[0])
		}
		others := func(ids []int64) []int64 {
			return slices.DeleteFunc(slices.Clone(ids), func(v int64) bool { return v == id })
		}
		if diff := cmp.Diff(others(candBefore), others(candAfter)); diff != "" {
			t.Fatalf("step %d: Unmoved, yet the other candidates moved (-before +after):\n%s", step, diff)
		}
	}
	if within < 50 || cleared < within/2 {
		t.Errorf("%d writes within the first pass's threshold, %d of them cleared by Unmoved: the test checks little", within, cleared)
	}
}

// candidateIDs is the ids of the rows Search(q, 200)'s prefilter scores exactly, in order.
func candidateIDs(x *Index, q Vector) []int64 {
	qq, _ := quantize8(q)
	sc := prefilters.Get().(*prefilterScratch)
	defer prefilters.Put(sc)
	x.mu.RLock()
	defer x.mu.RUnlock()
	_, want := prefilterOf(len(x.ids), 200)
	var ids []int64
	for _, i := range x.candidates(&qq, want, sc, nil) {
		ids = append(ids, x.ids[i])
	}
	slices.Sort(ids)
	return ids
}

// TestSearchAmongIsASmallerIndex: a search among some of the rows gives, to the last bit, the
// answer of an index that holds those rows alone (put in another order): through the
// prefilter when they are more than prefilterRows (its thresholds theirs), exactly when
// fewer; an empty set finds nothing.
func TestSearchAmongIsASmallerIndex(t *testing.T) {
	rnd := rand.New(rand.NewPCG(11, 13))
	x := NewIndex()
	const n = 60_000
	vecs := make([]Vector, n)
	for i := range n {
		vecs[i] = randomVector(rnd)
		x.PutKeyed(int64(i), "", vecs[i])
	}
	for _, tt := range []struct {
		name string
		keep func(id int64) bool
	}{
		{"two in three (past prefilterRows)", func(id int64) bool { return id%3 != 0 }},
		{"one in ten (compared one by one)", func(id int64) bool { return id%10 == 0 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var ids []int64
			twin := NewIndex()
			for i := n - 1; i >= 0; i-- {
				if tt.keep(int64(i)) {
					ids = append(ids, int64(i))
					twin.PutKeyed(int64(i), "", vecs[i])
				}
			}
			among := idsOf(ids)
			if twin.Exact() != (len(ids) <= prefilterRows) {
				t.Fatalf("%d rows: Exact %v", len(ids), twin.Exact())
			}
			for range 4 {
				q := randomVector(rnd)
				if diff := cmp.Diff(twin.Search(q, 200), x.SearchAmong(q, 200, among)); diff != "" {
					t.Fatalf("SearchAmong is not the smaller index's Search (-twin +among):\n%s", diff)
				}
				if diff := cmp.Diff(twin.SearchExact(q, 200), x.search(q, 200, true, among)); diff != "" {
					t.Fatalf("SearchAmong comparing every row is not the smaller index's SearchExact (-twin +among):\n%s", diff)
				}
			}
		})
	}
	if got := x.SearchAmong(randomVector(rnd), 10, idsOf(nil)); len(got) != 0 {
		t.Errorf("among no id: %d hits", len(got))
	}
	if s := idsOf([]int64{0, 63, 64, 1000}); !s.Has(63) || !s.Has(64) || s.Has(65) || s.Has(-1) || s.Has(1<<40) || !s.Has(1000) {
		t.Error("IDs.Has disagrees with the ids it was made of")
	}
}

// idsOf is the set of ids, as a bitmap (IDsOf); a negative id is left out.
func idsOf(ids []int64) *IDs {
	var top int64 = -1
	for _, id := range ids {
		top = max(top, id)
	}
	words := make([]uint64, top/64+1)
	for _, id := range ids {
		if id >= 0 {
			words[id/64] |= 1 << (id % 64)
		}
	}
	return IDsOf(words)
}
