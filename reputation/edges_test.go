package reputation

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestEdgeStoreMatchesAMap puts random audits, many of one key again, into an edgeStore (as
// it grows from empty, and reserved ahead) and a map from key to audit: each put reports the
// audit it replaced as the map does, and every key finds its current audit at the end.
func TestEdgeStoreMatchesAMap(t *testing.T) {
	type key struct {
		auditor, subject int32
		target           uint64
	}
	for _, reserve := range []int{0, 100, 5000} {
		r := rand.New(rand.NewPCG(uint64(reserve), 31))
		var s edgeStore
		s.reserve(reserve)
		want := map[key]liveEdge{}
		var keys []key
		for i := range 20_000 {
			var k key
			if len(keys) > 0 && r.IntN(3) == 0 {
				k = keys[r.IntN(len(keys))]
			} else {
				// Few agents and targets, so keys of one target differ only in auditor or
				// subject, and hashes share their slots.
				k = key{int32(r.IntN(50)), int32(r.IntN(50)), uint64(r.IntN(8))}
				keys = append(keys, k)
			}
			e := liveEdge{auditor: k.auditor, subject: k.subject, score: r.Float64(), time: int64(i), backed: r.IntN(2) == 0, settled: r.Float64()}
			old, ok := s.put(e, k.target)
			prev, had := want[k]
			if ok != had || ok && old != prev {
				t.Fatalf("put %d: replaced %v %+v, want %v %+v", i, ok, old, had, prev)
			}
			want[k] = e
		}
		if s.len() != len(want) {
			t.Fatalf("reserve %d: %d audits, want %d", reserve, s.len(), len(want))
		}
		if len(s.slots)*3 < s.len()*4 {
			t.Fatalf("reserve %d: %d slots for %d audits", reserve, len(s.slots), s.len())
		}
		for k, e := range want {
			i, _, ok := s.find(k.auditor, k.subject, k.target)
			if !ok || s.edge(i) != e {
				t.Fatalf("reserve %d: %+v finds %v, want %+v", reserve, k, ok, e)
			}
		}
		if _, _, ok := s.find(50, 0, 0); ok {
			t.Fatal("a key never put is found")
		}
	}
}

// TestLivePairsAreCollectPairs sums the live graph's pairs straight from its columns, with an
// auditor's repeated audits of one subject (new targets and replacements): the same pairs,
// to the bit, as collectPairs over the engine's input, and a list no longer than they are
// but for the room carry merges new pairs into (pairSlack).
func TestLivePairsAreCollectPairs(t *testing.T) {
	for _, tt := range []struct {
		name           string
		agents, audits int
		targets, procs int
	}{
		{"one goroutine", 30, 2_000, 4, 1},
		{"three goroutines", 3_000, 60_000, 2, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, 31))
			now := int64(1_800_000_000)
			g := liveGraph{ids: map[string]int32{}, loaded: true}
			for i := range tt.audits {
				a, s := r.IntN(tt.agents), r.IntN(tt.agents)
				g.put(&Audit{Auditor: fmt.Sprintf("did:key:z%05d", a), Subject: fmt.Sprintf("did:key:z%05d", s), Envelope: strconv.Itoa(r.IntN(tt.targets)),
					Score: r.Float64()*1.2 - 0.1, Time: now - int64(i)*3_600}, r.IntN(2) == 0, r.Float64()*2)
			}
			p := Params{}.withDefaults()
			computed, _ := g.graph(now, map[string]float64{"did:key:z00001": 2})
			v := g.index(map[string]float64{"did:key:z00001": 2}, nil)
			got, want := g.pairs(now, v.pos, p, tt.procs, nil, nil), collectPairs(computed, p)
			if !slices.Equal(got, want) {
				t.Fatalf("live pairs differ from collectPairs: %d and %d", len(got), len(want))
			}
			if cap(got) != withSlack(len(got)) || len(got) >= g.edges.len() {
				t.Fatalf("%d pairs in a list of %d for %d audits", len(got), cap(got), g.edges.len())
			}
		})
	}
}
