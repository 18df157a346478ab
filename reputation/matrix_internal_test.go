package reputation

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
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

// TestSnapshotsKeepOnlySpeakersPairs: the pair sums a node keeps between recomputations are
// those of auditors whose word can weigh anything (staked). A world of 200 agents, 20 of
// them staked, and 2,000 free DIDs filing 20,000 audits: the list holds exactly the staked
// auditors' pairs, and following 1,000 more free audits adds none. What it leaves out is
// summed again when it comes to count: a free auditor that stakes is not carried over (the
// scores are a full computation's, bit for bit), and a staked auditor that unstakes still
// weighs what it did in the snapshot that reads its sums from the live graph meanwhile.
func TestSnapshotsKeepOnlySpeakersPairs(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	now := time.Unix(1_800_000_000, 0).UTC()
	svc := NewService(ServiceConfig{Now: func() time.Time { return now }})
	svc.live.ids, svc.live.loaded = map[string]int32{}, true
	name := func(i int) string { return fmt.Sprintf("did:key:z%06d", i) }
	const agents, staked, free = 200, 20, 2_000
	stakes := map[string]float64{}
	for i := range staked {
		stakes[name(i*agents/staked)] = 1 + float64(i%4)
	}
	type pair struct{ auditor, subject string }
	filed := map[pair]bool{}
	audit := func(a, s int) {
		if a != s {
			filed[pair{name(a), name(s)}] = true
			svc.follow(&Audit{Auditor: name(a), Subject: name(s), Envelope: strconv.Itoa(r.IntN(1e9)), Score: r.Float64(), Time: now.Unix() - r.Int64N(1e7)}, r.IntN(2) == 0, r.Float64())
		}
	}
	for range 3_000 {
		audit(r.IntN(agents), r.IntN(agents))
	}
	for range 20_000 {
		audit(agents+r.IntN(free), r.IntN(agents+free))
	}
	speakers := func() int {
		n := 0
		for k := range filed {
			if stakes[k.auditor] > 0 {
				n++
			}
		}
		return n
	}
	full := func(at time.Time) *snapshot {
		g, dids := svc.live.graph(at.Unix(), stakes)
		svc.live.release()
		return newSnapshot(at, g, dids, Params{})
	}
	svc.recompute(now, stakes, nil, true)
	snap := svc.snapshot
	if len(snap.scores.pairs) != speakers() {
		t.Fatalf("%d pairs kept, want the staked auditors' %d (of %d)", len(snap.scores.pairs), speakers(), len(filed))
	}
	for range 1_000 {
		audit(agents+r.IntN(free), r.IntN(agents+free))
	}
	if len(snap.extra) != 0 {
		t.Errorf("following free DIDs' audits kept %d pairs more", len(snap.extra))
	}
	svc.recompute(now, stakes, nil, false)
	if !svc.snapshot.carried {
		t.Fatal("at the same time and stakes, the sums were not carried over")
	}
	sameSnapshot(t, "carried", full(now), svc.snapshot)

	// A free auditor with audits stakes, at the same time: its audits are summed again.
	var joined string
	for k := range filed {
		if stakes[k.auditor] == 0 {
			joined = k.auditor
			break
		}
	}
	stakes[joined] = 2
	svc.recompute(now, stakes, nil, false)
	if svc.snapshot.carried {
		t.Error("a free auditor staked, and the sums it had no pairs in were carried over")
	}
	sameSnapshot(t, "a free auditor staked", full(now), svc.snapshot)
	if len(svc.snapshot.scores.pairs) != speakers() {
		t.Errorf("%d pairs kept, want the staked auditors' %d", len(svc.snapshot.scores.pairs), speakers())
	}

	// A staked auditor unstakes, and the next computation, at a new time, takes the list
	// over: the last snapshot reads that auditor's sums from the live graph, whose audits
	// the computation left unsorted, and they weigh what they did.
	left := name(0)
	prev := svc.snapshot
	weights := map[string]float64{}
	for k := range filed {
		if k.auditor == left {
			weights[k.subject] = prev.pairWeight(left, k.subject)
		}
	}
	delete(stakes, left)
	later := now.Add(time.Hour)
	p := svc.cfg.Params.withDefaults()
	svc.live.mu.Lock()
	v := svc.live.index(stakes, nil)
	svc.live.pairs(later.Unix(), v.pos, p, 2, p.speakers(v.stake), svc.takeOver(prev))
	svc.live.mu.Unlock()
	if prev.graph == nil {
		t.Fatal("the last snapshot's list was not taken over")
	}
	nonzero := 0
	for subject, w := range weights {
		if got := prev.pairWeight(left, subject); math.Float64bits(got) != math.Float64bits(w) {
			t.Errorf("%s's audits of %s weigh %v read from the graph, %v before", left, subject, got, w)
		}
		if w > 0 {
			nonzero++
		}
	}
	if nonzero < 5 {
		t.Fatalf("%d of the unstaked auditor's pairs weigh anything: the test checks little", nonzero)
	}
	svc.live.release()
	svc.recompute(later, stakes, nil, false)
	sameSnapshot(t, "an auditor unstaked", full(later), svc.snapshot)
}
