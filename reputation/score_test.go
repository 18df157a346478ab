package reputation_test

import (
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/surety-ioa/surety/reputation"
)

func TestScoreBasics(t *testing.T) {
	const day = 24 * 3600.0
	// Agent 0 is staked (the auditor), 1..4 are subjects.
	tests := []struct {
		name  string
		edges []reputation.Edge
		check func(s *reputation.Scores) bool
	}{
		{"no audits: the prior", nil, func(s *reputation.Scores) bool { return s.Score[1] == 0.5 && s.Confidence[1] == 0 }},
		{"a good backed audit raises", []reputation.Edge{{Auditor: 0, Subject: 1, Score: 1, Backed: true, Settled: 1}},
			func(s *reputation.Scores) bool { return s.Score[1] > 0.55 && s.Confidence[1] > 0 }},
		{"a bad backed audit lowers", []reputation.Edge{{Auditor: 0, Subject: 1, Score: 0, Backed: true, Settled: 1}},
			func(s *reputation.Scores) bool { return s.Score[1] < 0.45 }},
		{"unbacked counts for less", []reputation.Edge{{Auditor: 0, Subject: 1, Score: 1, Backed: true, Settled: 1}, {Auditor: 0, Subject: 2, Score: 1}},
			func(s *reputation.Scores) bool { return s.Weight[2] < s.Weight[1]/5 }},
		{"old audits fade", []reputation.Edge{{Auditor: 0, Subject: 1, Score: 1, Backed: true, Settled: 1}, {Auditor: 0, Subject: 2, Score: 1, Backed: true, Settled: 1, Age: 180 * day}},
			func(s *reputation.Scores) bool { return math.Abs(s.Weight[2]-s.Weight[1]/4) < 1e-6*s.Weight[1] }},
		{"self-audits and bad indices are ignored", []reputation.Edge{{Auditor: 1, Subject: 1, Score: 1, Backed: true, Settled: 1}, {Auditor: 0, Subject: 9, Score: 1}, {Auditor: 0, Subject: 2, Score: 2}},
			func(s *reputation.Scores) bool { return s.Score[1] == 0.5 && s.Score[2] == 0.5 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := reputation.Compute(&reputation.Graph{Stake: []float64{1, 0, 0, 0, 0}, Audits: tt.edges}, reputation.Params{})
			if !tt.check(s) {
				t.Errorf("scores %v, confidence %v, weights %v", s.Score, s.Confidence, s.Weight)
			}
		})
	}
}

// sybilWorld: 50 staked honest agents audit each other (backed, mostly good); 500 unstaked
// Sybils rate each other 1 and the honest 0, without settlement. Two honest agents were
// fooled into rating a Sybil well (unbacked), so some trust leaks into the ring.
func sybilWorld(withSybils bool) *reputation.Graph {
	r := rand.New(rand.NewPCG(1, 2))
	const honest, sybils = 50, 500
	g := &reputation.Graph{Stake: make([]float64, honest+sybils)}
	for i := range honest {
		g.Stake[i] = 1 + float64(i%5)
		for k := 1; k <= 5; k++ {
			j := (i + k*7) % honest
			g.Audits = append(g.Audits, reputation.Edge{Auditor: int32(i), Subject: int32(j), Score: 0.7 + 0.3*r.Float64(), Backed: true, Settled: 1, Age: r.Float64() * 3e6})
		}
	}
	if withSybils {
		for s := honest; s < honest+sybils; s++ {
			for k := 1; k <= 10; k++ {
				g.Audits = append(g.Audits, reputation.Edge{Auditor: int32(s), Subject: int32(honest + (s-honest+k)%sybils), Score: 1})
			}
			for k := range 5 {
				g.Audits = append(g.Audits, reputation.Edge{Auditor: int32(s), Subject: int32((s + k) % honest), Score: 0})
			}
		}
		g.Audits = append(g.Audits, reputation.Edge{Auditor: 3, Subject: honest, Score: 0.9}, reputation.Edge{Auditor: 17, Subject: honest + 250, Score: 0.8})
	}
	return g
}

// TestSybilsStayAtThePrior is the acceptance simulation: with 500 colluding Sybils, the 50
// honest agents keep the top ranks and their scores barely move; the Sybils stay near the
// prior, except the two that honest agents rated themselves (and those still rank below
// every honest agent).
func TestSybilsStayAtThePrior(t *testing.T) {
	base := reputation.Compute(sybilWorld(false), reputation.Params{})
	attacked := reputation.Compute(sybilWorld(true), reputation.Params{})
	order := make([]int, len(attacked.Score))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case attacked.Score[a] > attacked.Score[b]:
			return -1
		case attacked.Score[a] < attacked.Score[b]:
			return 1
		}
		return 0
	})
	for rank, i := range order[:50] {
		if i >= 50 {
			t.Fatalf("rank %d is Sybil %d (score %.4f)", rank+1, i, attacked.Score[i])
		}
	}
	var honestMove, sybilMove float64
	for i := range 50 {
		honestMove = max(honestMove, math.Abs(attacked.Score[i]-base.Score[i]))
	}
	for i := 50; i < len(attacked.Score); i++ {
		if i == 50 || i == 300 {
			t.Logf("Sybil %d, rated by a fooled honest agent: %.4f", i, attacked.Score[i])
			continue
		}
		sybilMove = max(sybilMove, math.Abs(attacked.Score[i]-0.5))
	}
	t.Logf("honest scores moved at most %.6f; the other Sybils' at most %.6f from the prior 0.5; standing iterations %d", honestMove, sybilMove, attacked.Iterations)
	if honestMove > 0.01 || sybilMove > 0.02 {
		t.Errorf("honest moved %.4f (want < 0.01), Sybils %.4f from the prior (want < 0.02)", honestMove, sybilMove)
	}
}

// TestScoresIgnoreArrivalOrder: the same audits in any order give bit-identical scores.
func TestScoresIgnoreArrivalOrder(t *testing.T) {
	g := sybilWorld(true)
	want := reputation.Compute(g, reputation.Params{})
	r := rand.New(rand.NewPCG(3, 4))
	for range 5 {
		r.Shuffle(len(g.Audits), func(i, j int) { g.Audits[i], g.Audits[j] = g.Audits[j], g.Audits[i] })
		got := reputation.Compute(g, reputation.Params{})
		if !slices.Equal(got.Score, want.Score) || !slices.Equal(got.Standing, want.Standing) || !slices.Equal(got.Confidence, want.Confidence) {
			t.Fatal("a different order of the same audits changed the scores")
		}
	}
}

// randomGraph has agents agents (1 in 10 staked) and audits audits.
func randomGraph(agents, audits int) *reputation.Graph {
	r := rand.New(rand.NewPCG(5, 6))
	g := &reputation.Graph{Stake: make([]float64, agents), Audits: make([]reputation.Edge, audits)}
	for i := 0; i < agents; i += 10 {
		g.Stake[i] = r.Float64() * 10
	}
	for k := range g.Audits {
		g.Audits[k] = reputation.Edge{Auditor: int32(r.IntN(agents)), Subject: int32(r.IntN(agents)), Score: r.Float64(), Age: r.Float64() * 1e7, Backed: r.IntN(2) == 0, Settled: r.Float64() * 2}
	}
	return g
}

// BenchmarkRecompute is a full recomputation over 100,000 agents and 1,000,000 audits
// (target ≤ 0.5 s on 2 cores); SURETY_BENCH_SCALE=10 runs 1,000,000 / 10,000,000 (≤ 5 s).
func BenchmarkRecompute(b *testing.B) {
	scale := 1
	if v, err := strconv.Atoi(os.Getenv("SURETY_BENCH_SCALE")); err == nil && v > 0 {
		scale = v
	}
	g := randomGraph(100_000*scale, 1_000_000*scale)
	b.ResetTimer()
	var s *reputation.Scores
	for range b.N {
		s = reputation.Compute(g, reputation.Params{})
	}
	b.ReportMetric(float64(s.Iterations), "iterations")
}

// TestSplittingStakeGainsNothing: one stake S behind one auditor, or split evenly across k
// auditors (k DIDs on one wallet, or k wallets), who all rate the same subject: the split
// never raises the subject's score, nor the pre-trust the attacker holds, for any k. And
// stake below the minimum counts as none.
func TestSplittingStakeGainsNothing(t *testing.T) {
	// Agents 0-3 are honest and staked 3 ETH each; they rate each other 0.9 and the
	// subject (agent 4) 0.2. The attacker's auditors come after.
	build := func(k int, total float64) *reputation.Graph {
		g := &reputation.Graph{Stake: []float64{3, 3, 3, 3, 0}}
		for i := range int32(4) {
			for j := range int32(4) {
				if i != j {
					g.Audits = append(g.Audits, reputation.Edge{Auditor: i, Subject: j, Score: 0.9, Backed: true, Settled: 1})
				}
			}
			g.Audits = append(g.Audits, reputation.Edge{Auditor: i, Subject: 4, Score: 0.2, Backed: true, Settled: 1})
		}
		for range k {
			idx := int32(len(g.Stake))
			g.Stake = append(g.Stake, total/float64(k))
			g.Audits = append(g.Audits, reputation.Edge{Auditor: idx, Subject: 4, Score: 1, Backed: true, Settled: 1})
		}
		return g
	}
	attackerStanding := func(s *reputation.Scores) float64 {
		var sum float64
		for i := 5; i < len(s.Standing); i++ {
			sum += s.Standing[i]
		}
		return sum
	}
	for _, total := range []float64{0.5, 2, 10} {
		one := reputation.Compute(build(1, total), reputation.Params{})
		for _, k := range []int{2, 5, 10, 50} {
			split := reputation.Compute(build(k, total), reputation.Params{})
			if split.Score[4] > one.Score[4]+1e-12 {
				t.Errorf("stake %v split %d ways lifts the subject from %.6f to %.6f", total, k, one.Score[4], split.Score[4])
			}
			if attackerStanding(split) > attackerStanding(one)+1e-12 {
				t.Errorf("stake %v split %d ways holds standing %.6f, more than %.6f in one piece", total, k, attackerStanding(split), attackerStanding(one))
			}
		}
	}
	// Below the minimum (0.1 ETH by default) a stake is no stake: 0.05 ETH gives the same
	// scores as none.
	below, none := build(1, 0.05), build(1, 0)
	if diff := cmp.Diff(reputation.Compute(none, reputation.Params{}).Score, reputation.Compute(below, reputation.Params{}).Score); diff != "" {
		t.Errorf("a stake below the minimum changed the scores (-none +below):\n%s", diff)
	}
	if s := reputation.Compute(below, reputation.Params{MinStake: -1}); s.Standing[5] == 0 {
		t.Error("with no minimum, 0.05 ETH still holds no standing")
	}
}

// TestBackingFollowsSettledValue: the attack measured at 66f817e backed audits with 1-wei
// bounties. A backed audit now weighs Unbacked + (1 − Unbacked)·min(1, settled / 1 ETH), with
// settled the bounty's amount plus 200 × its fee: a 1-wei bounty backs no more than nothing.
func TestBackingFollowsSettledValue(t *testing.T) {
	// Agent 0 is staked and audits each of the others once, all with score 1.
	tests := []struct {
		name string
		edge reputation.Edge
		want float64 // the audit's weight relative to an unbacked one
	}{
		{"unbacked", reputation.Edge{}, 1},
		{"backed by a 1-wei bounty", reputation.Edge{Backed: true, Settled: 1e-18}, 1},
		{"backed by 0.5 ETH settled", reputation.Edge{Backed: true, Settled: 0.5}, 5.5},
		{"backed by 0.25 ETH and 0.00125 ETH of fee (0.5 settled)", reputation.Edge{Backed: true, Settled: 0.25 + reputation.FeeWeight*0.00125}, 5.5},
		{"backed by 1 ETH settled", reputation.Edge{Backed: true, Settled: 1}, 10},
		{"backed by 50 ETH settled: capped", reputation.Edge{Backed: true, Settled: 50}, 10},
	}
	g := &reputation.Graph{Stake: make([]float64, len(tests)+1)}
	g.Stake[0] = 1
	for i, tt := range tests {
		e := tt.edge
		e.Auditor, e.Subject, e.Score = 0, int32(i+1), 1
		g.Audits = append(g.Audits, e)
	}
	s := reputation.Compute(g, reputation.Params{})
	unbacked := s.Weight[1]
	for i, tt := range tests {
		if got := s.Weight[i+1] / unbacked; math.Abs(got-tt.want) > 1e-6 {
			t.Errorf("%s: weighs %.6g× an unbacked audit, want %g×", tt.name, got, tt.want)
		}
	}
	// FullBacking < 0 restores the old rule: every backed audit in full.
	old := reputation.Compute(g, reputation.Params{FullBacking: -1})
	if got := old.Weight[2] / old.Weight[1]; math.Abs(got-10) > 1e-6 {
		t.Errorf("FullBacking -1: a 1-wei bounty's audit weighs %.6g× an unbacked one, want 10×", got)
	}
}

// FuzzJunkMovesNothing states the property of issue 25: adding any number of zero-standing
// DIDs (no stake that counts, and no audits from anyone with standing) and any audits they
// file, backed or not, about anyone, changes no other agent's score, confidence, weight,
// standing or word, bit for bit, wherever their DIDs fall in the index order. On 5ab6450
// it failed at once: the number of agents normalized standing, so junk put every staked
// auditor at the cap.
func FuzzJunkMovesNothing(f *testing.F) {
	f.Add(uint64(1), uint16(1), uint16(3))
	f.Add(uint64(7), uint16(1000), uint16(2))
	f.Add(uint64(25), uint16(5000), uint16(1))
	f.Fuzz(func(t *testing.T, seed uint64, junk, per uint16) {
		r := rand.New(rand.NewPCG(seed, 25))
		const agents = 40
		base := &reputation.Graph{Stake: make([]float64, agents)}
		for i := range base.Stake {
			if r.IntN(3) > 0 {
				base.Stake[i] = r.Float64() * 4
			}
		}
		base.Stake[0] = 1 // someone's stake counts: in a world where nothing does, everyone holds pre-trust
		for range 4 * agents {
			base.Audits = append(base.Audits, reputation.Edge{Auditor: int32(r.IntN(agents)), Subject: int32(r.IntN(agents)), Score: r.Float64(),
				Age: r.Float64() * 1e7, Backed: r.IntN(2) == 0, Settled: r.Float64() * 2})
		}
		// Place the junk among the agents: at[i] is base agent i's index in the padded graph.
		n := agents + int(junk%10_000)
		isJunk := make([]bool, n)
		for _, j := range r.Perm(n)[:n-agents] {
			isJunk[j] = true
		}
		at := make([]int32, 0, agents)
		var junkAt []int32
		for i := range n {
			if isJunk[i] {
				junkAt = append(junkAt, int32(i))
			} else {
				at = append(at, int32(i))
			}
		}
		padded := &reputation.Graph{Stake: make([]float64, n)}
		for i, s := range base.Stake {
			padded.Stake[at[i]] = s
		}
		for _, e := range base.Audits {
			e.Auditor, e.Subject = at[e.Auditor], at[e.Subject]
			padded.Audits = append(padded.Audits, e)
		}
		for _, j := range junkAt {
			if r.IntN(4) == 0 {
				padded.Stake[j] = reputation.DefaultMinStake * r.Float64() // below the minimum: counts as none
			}
			for range int(per % 8) {
				subject := int32(r.IntN(n)) // anyone: junk, or an agent with standing
				padded.Audits = append(padded.Audits, reputation.Edge{Auditor: j, Subject: subject, Score: float64(r.IntN(2)),
					Backed: r.IntN(2) == 0, Settled: r.Float64() * 5})
			}
		}
		r.Shuffle(len(padded.Audits), func(a, b int) { padded.Audits[a], padded.Audits[b] = padded.Audits[b], padded.Audits[a] })

		want := reputation.Compute(base, reputation.Params{})
		got := reputation.Compute(padded, reputation.Params{})
		if got.Scale != want.Scale {
			t.Fatalf("%d junk DIDs moved the scale from %v to %v", len(junkAt), want.Scale, got.Scale)
		}
		for i := range agents {
			j := at[i]
			if got.Score[j] != want.Score[i] || got.Confidence[j] != want.Confidence[i] || got.Weight[j] != want.Weight[i] ||
				got.Standing[j] != want.Standing[i] || got.Relative[j] != want.Relative[i] {
				t.Fatalf("%d junk DIDs moved agent %d: score %v→%v, weight %v→%v, standing %v→%v", len(junkAt), i,
					want.Score[i], got.Score[j], want.Weight[i], got.Weight[j], want.Standing[i], got.Standing[j])
			}
		}
		for _, j := range junkAt {
			if got.Relative[j] != 0 {
				t.Fatalf("junk DID %d speaks with %v", j, got.Relative[j])
			}
		}
	})
}

// TestHalvingIsTwoToTheMinus: halving(x) is 2^(−x) within two units in the last place of
// math.Exp2 over ages from seconds to centuries, exact at whole half-lives, 1 at 0, and 0 from
// 1000 half-lives; and its steps leave no fused multiply-add (TestNoFusedMultiplyAdd in
// internal/repotest compiles the package for arm64 and amd64 v3 to check).
func TestHalvingIsTwoToTheMinus(t *testing.T) {
	for _, x := range []float64{0, 1e-9, 0.001, 0.25, 0.5, 0.999999, 1, 1.5, 2, 3.3, 10, 52.7, 100, 999.99} {
		got, want := reputation.Halving(x), math.Exp2(-x)
		if ulps := math.Abs(float64(int64(math.Float64bits(got)) - int64(math.Float64bits(want)))); ulps > 2 {
			t.Errorf("halving(%v) = %v, 2^-x = %v: %v ulps apart", x, got, want, ulps)
		}
		if x == math.Floor(x) && got != want {
			t.Errorf("halving(%v) = %v at a whole number of half-lives, want exactly %v", x, got, want)
		}
	}
	for _, x := range []float64{1000, 1e6, math.Inf(1)} {
		if got := reputation.Halving(x); got != 0 {
			t.Errorf("halving(%v) = %v, want 0", x, got)
		}
	}
	for _, x := range []float64{-1, math.NaN()} {
		if got := reputation.Halving(x); got != 1 {
			t.Errorf("halving(%v) = %v, want 1", x, got)
		}
	}
}
