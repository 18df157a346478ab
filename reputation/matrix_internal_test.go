package reputation

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFreeAuditorsCostTheIterationNothing: a world of 200 agents, 20 of them staked, and
// the same world with 20,000 free DIDs more (after them in DID order) that audit one another
// and the first 200, 200,000 audits. The trust matrix the power iteration walks is the same
// size in both (the same live subjects, weights and speakers), and the first 200's scores
// and standings are the same bits: what a free DID files costs every node's recomputation
// nothing beyond reading it once.
func TestFreeAuditorsCostTheIterationNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const agents, staked = 200, 20
	world := &Graph{Stake: make([]float64, agents)}
	for i := range staked {
		world.Stake[i*agents/staked] = 1 + float64(i%4)
	}
	for range 3_000 {
		world.Audits = append(world.Audits, Edge{Auditor: int32(r.IntN(agents)), Subject: int32(r.IntN(agents)), Score: r.Float64(), Age: r.Float64() * 1e7, Backed: r.IntN(2) == 0, Settled: r.Float64()})
	}
	const free = 20_000
	flooded := &Graph{Stake: append(append([]float64{}, world.Stake...), make([]float64, free)...), Audits: append([]Edge{}, world.Audits...)}
	for range 200_000 {
		flooded.Audits = append(flooded.Audits, Edge{Auditor: int32(agents + r.IntN(free)), Subject: int32(r.IntN(agents + free)), Score: r.Float64(), Backed: true, Settled: 10})
	}
	p := DefaultParams
	matrix := func(g *Graph) *incoming {
		pre, _, _ := p.preShares(g.Stake)
		return trustMatrix(collectPairs(g, p), pre, p, 2, p.speakers(g.Stake))
	}
	a, b := matrix(world), matrix(flooded)
	// What a recomputation borrows from the memory limit for the matrix (speaking) holds it,
	// and does not grow with the free DIDs either.
	if sa, sb := speaking(collectPairs(world, p), p.speakers(world.Stake)), speaking(collectPairs(flooded, p), p.speakers(flooded.Stake)); sa != sb || sb < len(b.from) {
		t.Errorf("speaking pairs %d -> %d, for a matrix of %d weights", sa, sb, len(b.from))
	}
	if len(a.subjects) != len(b.subjects) || len(a.from) != len(b.from) || a.speakers != b.speakers || a.speakers != staked {
		t.Errorf("the matrix grew with the free DIDs: live subjects %d -> %d, weights %d -> %d, speakers %d -> %d (want %d)",
			len(a.subjects), len(b.subjects), len(a.from), len(b.from), a.speakers, b.speakers, staked)
	}
	if len(b.from) == 0 || len(b.subjects) >= agents {
		t.Fatalf("the world checks little: %d weights, %d live subjects of %d", len(b.from), len(b.subjects), agents)
	}
	sa, sb := Compute(world, Params{}), Compute(flooded, Params{})
	if sa.Iterations != sb.Iterations {
		t.Errorf("iterations %d -> %d", sa.Iterations, sb.Iterations)
	}
	for j := range agents {
		for _, f := range []struct {
			name string
			x, y float64
		}{{"standing", sa.Standing[j], sb.Standing[j]}, {"score", sa.Score[j], sb.Score[j]}, {"weight", sa.Weight[j], sb.Weight[j]}} {
			if math.Float64bits(f.x) != math.Float64bits(f.y) {
				t.Fatalf("agent %d's %s moved with the free DIDs: %v -> %v", j, f.name, f.x, f.y)
			}
		}
	}
}
