package reputation

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// liveGraph is the audit graph in memory: the audits that count, with DIDs interned in
// arrival order. It is read from the store once and then follows every audit the service
// records, so a recomputation never rereads the database.
type liveGraph struct {
	mu     sync.Mutex
	loaded bool
	ids    map[string]int32 // DID → arrival id
	dids   []string         // arrival id → DID
	order  []int32          // arrival ids in DID order (up to the last index)
	at     map[edgeKey]int  // the current audit of a target → its place in edges
	edges  []liveEdge

	// While a recomputation runs (from graph to the new snapshot), the changes it does not
	// see, to replay on its outcome.
	capturing bool
	changes   []change
}

// change is one audit that came to count, and the one it replaced (nil for none).
type change struct {
	auditor, subject string
	old              *liveEdge
	new              liveEdge
}

type edgeKey struct {
	auditor, subject int32
	target           string
}

type liveEdge struct {
	auditor, subject int32
	score            float64
	time             int64
	backed           bool
	settled          float64 // ETH its bounty settled (for a backed audit's weight)
}

func (g *liveGraph) id(did string) int32 {
	if i, ok := g.ids[did]; ok {
		return i
	}
	i := int32(len(g.dids))
	g.ids[did] = i
	g.dids = append(g.dids, did)
	return i
}

// put makes a the audit that counts for its target, and says what changed.
func (g *liveGraph) put(a *Audit, backed bool, settled float64) change {
	k := edgeKey{auditor: g.id(a.Auditor), subject: g.id(a.Subject), target: a.Target()}
	c := change{auditor: a.Auditor, subject: a.Subject, new: liveEdge{auditor: k.auditor, subject: k.subject, score: a.Score, time: a.Time, backed: backed, settled: settled}}
	if i, ok := g.at[k]; ok {
		old := g.edges[i]
		c.old = &old
		g.edges[i] = c.new
	} else {
		g.at[k] = len(g.edges)
		g.edges = append(g.edges, c.new)
	}
	if g.capturing {
		g.changes = append(g.changes, c)
	}
	return c
}

// load reads the current audits from the store, once: those the rules refuse (Verdict.Refused)
// count nothing, and are not in the graph.
func (g *liveGraph) load(ctx context.Context, s *Store) error {
	if g.loaded {
		return nil
	}
	g.ids, g.at, g.dids, g.order, g.edges = map[string]int32{}, map[edgeKey]int{}, nil, nil, nil
	rows, err := s.db.QueryContext(ctx, `SELECT auditor, subject, target, score, time, backed, settled FROM reputation_audits WHERE chain = ? AND superseded_by IS NULL AND refused = ''`, s.chain)
	if err != nil {
		return fmt.Errorf("reputation: read audits: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var a Audit
		var target string
		var backed bool
		var settled float64
		if err := rows.Scan(&a.Auditor, &a.Subject, &target, &a.Score, &a.Time, &backed, &settled); err != nil {
			return err
		}
		k := edgeKey{auditor: g.id(a.Auditor), subject: g.id(a.Subject), target: target}
		g.at[k] = len(g.edges)
		g.edges = append(g.edges, liveEdge{auditor: k.auditor, subject: k.subject, score: a.Score, time: a.Time, backed: backed, settled: settled})
	}
	if err := rows.Err(); err != nil {
		return err
	}
	g.loaded = true
	return nil
}

// graph is the engine's input at now: every agent in the graph or staked, indexed in DID
// order (so every node indexes alike), and the DIDs by index. From here on the graph keeps
// its changes, until release.
// Extra names agents to index besides (the subjects of imported feedback), without stake.
func (g *liveGraph) graph(now int64, staked map[string]float64, extra ...string) (*Graph, []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	v := g.index(staked, extra)
	return &Graph{Stake: v.stake, Audits: g.audits(now, v.pos)}, v.dids
}

// view is how one computation indexes the agents: in DID order.
type view struct {
	dids  []string  // by index
	pos   []int32   // the graph's arrival id → index
	stake []float64 // by index, ETH
}

// index indexes every agent in the graph or staked (above 0), and those extra names, in
// DID order, and starts keeping the graph's changes (until release); the caller holds g.mu.
// The graph's own DIDs are kept in DID order as they arrive (g.order), so a recomputation
// sorts only the newcomers, not every DID.
func (g *liveGraph) index(staked map[string]float64, extra []string) *view {
	g.capturing, g.changes = true, nil
	if n := len(g.order); n < len(g.dids) {
		fresh := make([]int32, 0, len(g.dids)-n)
		for i := n; i < len(g.dids); i++ {
			fresh = append(fresh, int32(i))
		}
		byDID := func(a, b int32) int { return strings.Compare(g.dids[a], g.dids[b]) }
		slices.SortFunc(fresh, byDID)
		merged := make([]int32, 0, len(g.dids))
		i, j := 0, 0
		for i < len(g.order) || j < len(fresh) {
			if j == len(fresh) || i < len(g.order) && byDID(g.order[i], fresh[j]) < 0 {
				merged = append(merged, g.order[i])
				i++
			} else {
				merged = append(merged, fresh[j])
				j++
			}
		}
		g.order = merged
	}
	var others []string // indexed, not in the graph
	for did, eth := range staked {
		if _, ok := g.ids[did]; !ok && eth > 0 {
			others = append(others, did)
		}
	}
	for _, did := range extra {
		if _, ok := g.ids[did]; !ok {
			others = append(others, did)
		}
	}
	slices.Sort(others)
	others = slices.Compact(others)
	v := &view{dids: make([]string, 0, len(g.order)+len(others)), pos: make([]int32, len(g.dids))}
	i, j := 0, 0
	for i < len(g.order) || j < len(others) {
		if j == len(others) || i < len(g.order) && g.dids[g.order[i]] < others[j] {
			v.pos[g.order[i]] = int32(len(v.dids))
			v.dids = append(v.dids, g.dids[g.order[i]])
			i++
		} else {
			v.dids = append(v.dids, others[j])
			j++
		}
	}
	v.stake = make([]float64, len(v.dids))
	for did, eth := range staked {
		if id, ok := g.ids[did]; ok {
			v.stake[v.pos[id]] = eth
		} else if k, ok := slices.BinarySearch(v.dids, did); ok {
			v.stake[k] = eth
		}
	}
	return v
}

// audits lists the graph's audits as the engine reads them, at now (pos: view.pos); the
// caller holds g.mu.
func (g *liveGraph) audits(now int64, pos []int32) []Edge {
	out := make([]Edge, len(g.edges))
	for i, e := range g.edges {
		out[i] = Edge{Auditor: pos[e.auditor], Subject: pos[e.subject], Score: e.score, Age: float64(now - e.time), Backed: e.backed, Settled: e.settled}
	}
	return out
}

// release hands over the changes since graph and stops keeping them; the caller holds g.mu.
func (g *liveGraph) release() []change {
	c := g.changes
	g.capturing, g.changes = false, nil
	return c
}
