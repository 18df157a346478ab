package reputation

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// TestIncrementalMatchesFull: a recomputation at the last one's time carries its pair sums
// over (the live graph's changes followed since) instead of summing every audit again, and
// gives exactly, to the last bit, what a full computation over the same audits, stakes and
// imported feedback gives: random graphs, random rounds of new audits, replacements (a later
// audit of the same target, backed or not), new agents (whose DIDs sort anywhere among the
// old ones, so every index shifts), stakes that change, appear and go, and imported feedback
// about known and unknown agents.
func TestIncrementalMatchesFull(t *testing.T) {
	for seed := range uint64(12) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 31))
			params := Params{}
			if seed%4 == 3 {
				params.Own = -1 // the rule before issue 25: another path through relative
			}
			now := time.Unix(1_800_000_000, 0).UTC()
			svc := NewService(ServiceConfig{Params: params, Now: func() time.Time { return now }})
			svc.live.ids, svc.live.loaded = map[string]int32{}, true
			did := func() string { return fmt.Sprintf("did:key:z%06d", r.IntN(1_000_000)) }
			var agents []string
			for range 20 + r.IntN(60) {
				agents = append(agents, did())
			}
			staked := map[string]float64{}
			restake := func() {
				for range 1 + r.IntN(8) {
					d := agents[r.IntN(len(agents))]
					switch x := r.IntN(10); {
					case seed%4 == 1: // nobody staked above the minimum: pre-trust over everyone
						staked[d] = 0.05
					case x < 2:
						delete(staked, d)
					case x < 3:
						staked[did()] = 1 + r.Float64() // staked, no audits (yet)
					default:
						staked[d] = r.Float64() * 5
					}
				}
			}
			type key struct{ auditor, subject, target string }
			var keys []key
			put := func(k key) {
				a := &Audit{Auditor: k.auditor, Subject: k.subject, Envelope: k.target, Score: r.Float64(), Time: now.Unix() - r.Int64N(3e7)}
				svc.follow(a, r.IntN(3) == 0, r.Float64()*2)
			}
			change := func() {
				switch x := r.IntN(10); {
				case x < 3 && len(keys) > 0: // a later audit of a target: replaces the one that counted
					put(keys[r.IntN(len(keys))])
				case x < 5: // a new agent, audited or auditing
					agents = append(agents, did())
					fallthrough
				default:
					a, s := agents[r.IntN(len(agents))], agents[r.IntN(len(agents))]
					if x == 4 {
						a = agents[len(agents)-1]
					}
					if a == s {
						return
					}
					k := key{a, s, strconv.Itoa(r.IntN(4))}
					keys = append(keys, k)
					put(k)
				}
			}
			var ext []ExternalSignal
			feedback := func() {
				ext = ext[:0]
				for range r.IntN(6) {
					s := agents[r.IntN(len(agents))]
					if r.IntN(4) == 0 {
						s = did() // about an agent the graph does not hold
					}
					ext = append(ext, ExternalSignal{Subject: s, Client: common.Address{byte(r.IntN(256))}, Score: r.Float64(), Time: now.Unix() - r.Int64N(1e7), Settled: r.Float64()})
				}
			}
			restake()
			for range 150 + r.IntN(300) {
				change()
			}
			svc.recompute(now, staked, ext, true)
			carried, same := 0, 0 // recomputations carried, and those at the last one's time and stakes (all carried)
			for round := range 10 {
				for range r.IntN(40) {
					change()
				}
				restaked := r.IntN(2) == 0
				if restaked {
					restake()
				}
				if r.IntN(2) == 0 {
					feedback()
				}
				if round == 6 {
					now = now.Add(time.Minute) // a new score time: every audit's decay changes
				}
				svc.recompute(now, staked, ext, false)
				got := svc.snapshot
				if got.carried {
					carried++
				}
				if !restaked && round != 6 {
					same++
					if !got.carried {
						t.Errorf("round %d: at the last recomputation's time and stakes, the sums were not carried over", round)
					}
				}
				g, dids := svc.live.graph(now.Unix(), staked, subjects(ext)...)
				g.External = externalEdges(ext, indexOf(dids), now.Unix())
				want := newSnapshot(now, g, dids, params)
				sameSnapshot(t, fmt.Sprint("round ", round), want, got)
			}
			if same < 2 {
				t.Errorf("%d of 10 recomputations at the last one's time and stakes, want at least 2", same)
			}
		})
	}
}

// sameSnapshot fails t unless got holds exactly want's agents, counts and scores, bit for bit.
func sameSnapshot(t *testing.T, round string, want, got *snapshot) {
	t.Helper()
	if !slices.Equal(want.dids, got.dids) {
		t.Fatalf("%s: agents differ:\nwant %v\ngot  %v", round, want.dids, got.dids)
	}
	if !slices.Equal(want.audits, got.audits) {
		t.Errorf("%s: audits per subject differ", round)
	}
	if !slices.Equal(want.stake, got.stake) {
		t.Errorf("%s: stakes differ", round)
	}
	w, g := want.scores, got.scores
	if w.Iterations != g.Iterations || w.Everyone != g.Everyone || math.Float64bits(w.Scale) != math.Float64bits(g.Scale) {
		t.Errorf("%s: iterations %d/%d, everyone %v/%v, scale %v/%v", round, w.Iterations, g.Iterations, w.Everyone, g.Everyone, w.Scale, g.Scale)
	}
	for _, f := range []struct {
		name      string
		want, got []float64
	}{{"standing", w.Standing, g.Standing}, {"score", w.Score, g.Score}, {"confidence", w.Confidence, g.Confidence},
		{"weight", w.Weight, g.Weight}, {"external", w.External, g.External}, {"relative", w.Relative, g.Relative}} {
		if len(f.want) != len(f.got) {
			t.Fatalf("%s: %d %s, want %d", round, len(f.got), f.name, len(f.want))
		}
		for i := range f.want {
			if math.Float64bits(f.want[i]) != math.Float64bits(f.got[i]) {
				t.Errorf("%s: %s of %s is %v (%x), a full computation says %v (%x)", round, f.name, want.dids[i],
					f.got[i], math.Float64bits(f.got[i]), f.want[i], math.Float64bits(f.want[i]))
			}
		}
	}
	// Every pair got keeps (snapshot.keeps: its auditor's word can weigh anything) has the sums
	// a full computation gives it, and got keeps no fewer than a full computation over the
	// live graph would sum (the pairs of every auditor that speaks).
	kept := func(ps []pairEntry) []pairEntry {
		return slices.DeleteFunc(slices.Clone(ps), func(e pairEntry) bool { return e.sum == pairSum{} || !got.keeps(int(e.key.auditor)) })
	}
	if !slices.Equal(kept(w.pairs), kept(g.pairs)) {
		t.Errorf("%s: pair sums differ", round)
	}
	speaks := got.params.speakers(got.stake[:got.n])
	for i := range got.n {
		if (speaks == nil || speaks[i]) && !got.keeps(i) {
			t.Errorf("%s: %s speaks, and its pairs are not kept", round, got.dids[i])
		}
	}
}
