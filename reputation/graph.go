package reputation

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/surety-ioa/surety/internal/memlimit"
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
	edges  edgeStore        // the current audit of each auditor, subject and target

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

// targetSeed keys the targets' hashes in the live graph: this process's own. An audit that
// counts is found by its auditor, subject and target, the target kept as a 64-bit hash under
// this seed (no one outside can aim for a collision, and two of one auditor's targets of one
// subject colliding by chance is a 2^-64 event): ten million audits' target strings would
// weigh more than the rest of the graph.
var targetSeed = maphash.MakeSeed()

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
	c := change{auditor: a.Auditor, subject: a.Subject, new: liveEdge{auditor: g.id(a.Auditor), subject: g.id(a.Subject), score: a.Score, time: a.Time, backed: backed, settled: settled}}
	if old, ok := g.edges.put(c.new, maphash.String(targetSeed, a.Target())); ok {
		c.old = &old
	}
	if g.capturing {
		g.changes = append(g.changes, c)
	}
	return c
}

// load reads the current audits from the store, once: those the rules refuse (Verdict.Refused)
// count nothing, and are not in the graph. The query reads one covering index
// (reputation_audits_counting_ids), in auditor order, never the envelopes, and names the
// DIDs by their ids in reputation_dids (didsMigration). Goroutines step the query, a range of
// auditors each, and copy its rows into batches, the targets hashed, while this one maps the
// DIDs' ids to the graph's own and files the rows: SQLite's work and the graph's run side by
// side. The DIDs' names are read once each, from reputation_dids, at the end.
func (g *liveGraph) load(ctx context.Context, s *Store) error {
	return g.loadBy(ctx, s, min(runtime.GOMAXPROCS(0), maxLoadReaders), splitLoadFrom)
}

// loadBy is load with at most readers reading goroutines, one for a table under splitFrom
// rows.
func (g *liveGraph) loadBy(ctx context.Context, s *Store, readers int, splitFrom int64) error {
	if g.loaded {
		return nil
	}
	g.ids, g.dids, g.order, g.edges = map[string]int32{}, nil, nil, edgeStore{}
	// Rows sampled across the table say about how many count (room is made for them, so ten
	// million audits are not copied as the columns double, and superseded or refused rows,
	// which the log keeps forever, reserve nothing), and where to split the auditors among
	// the readers, so each reads about as many rows, each in a read transaction of its own.
	// That is safe because every key (auditor, subject, target) is in one part, and an audit
	// stored after its part was read is filed by follow once the load ends (it waits on
	// g.mu).
	split, counting, err := s.sampleAudits(ctx, readers-1, splitFrom)
	if err != nil {
		return fmt.Errorf("reputation: read audits: %w", err)
	}
	var top sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT MAX(id) FROM reputation_dids`).Scan(&top); err != nil {
		return fmt.Errorf("reputation: read audits: %w", err)
	}
	if top.Int64 > math.MaxInt32 {
		return fmt.Errorf("reputation: read audits: DID ids up to %d, beyond the load's 31 bits", top.Int64)
	}
	g.edges.grow(counting + counting/8) // and an eighth more for the audits that follow
	// The columns, and the table of places built at the end, are what the graph keeps: the
	// node's memory limit follows them now (memlimit.Hold), so the collector does not run back
	// to back while they fill, as it would until the limit next follows the live heap.
	memlimit.Hold(int64(cap(g.edges.auditor))*auditBytes + 4*int64(slotsFor(cap(g.edges.auditor))))
	type part struct {
		conn  *sql.Conn
		query string
		args  []driver.NamedValue
	}
	var parts []part
	defer func() {
		for _, p := range parts {
			p.conn.Close()
		}
	}()
	for i := range len(split) + 1 {
		// The two ids in one integer: a value less for the driver to box per row.
		q, args := `SELECT auditor_id << 32 | subject_id, target, score, time, backed, settled FROM reputation_audits INDEXED BY reputation_audits_counting_ids
			WHERE chain = ? AND superseded_by IS NULL AND refused = ''`, []driver.NamedValue{{Ordinal: 1, Value: s.chain}}
		if i > 0 {
			q, args = q+` AND auditor_id >= ?`, append(args, driver.NamedValue{Ordinal: len(args) + 1, Value: split[i-1]})
		}
		if i < len(split) {
			q, args = q+` AND auditor_id < ?`, append(args, driver.NamedValue{Ordinal: len(args) + 1, Value: split[i]})
		}
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return fmt.Errorf("reputation: read audits: %w", err)
		}
		// The index's order, said (SQLite reads it so, with no sort): the rows of one key
		// arrive together, in the order the load keeps the last of them by.
		q += ` ORDER BY auditor_id, subject_id, target, score, time, backed, settled`
		parts = append(parts, part{conn, q, args})
	}
	full, free := make(chan *loadBatch, loadBatches*len(parts)), make(chan *loadBatch, loadBatches*len(parts))
	for range loadBatches * len(parts) {
		free <- &loadBatch{}
	}
	var reading sync.WaitGroup
	for i, p := range parts {
		reading.Go(func() { readBatches(ctx, p.conn, p.query, p.args, i, full, free) })
	}
	go func() { reading.Wait(); close(full) }() // before the rows are closed: full is drained
	// A part's rows come in key order (auditor, subject, target), so the rows of one key, if
	// a store ever held more than one that counts, are next to each other: the last one read
	// counts, as it would through put. The rows need no lookup in the table of places, which
	// is built once at the end.
	last := make([]int32, len(parts)) // the place of each part's last row, -1 for none
	for i := range last {
		last[i] = -1
	}
	var local []int32 // reputation_dids id → the graph's id + 1 (0: not met yet)
	var met []int64   // the graph's id → reputation_dids id
	idOf := func(db int64) int32 {
		if db <= 0 || db > math.MaxInt32 {
			return -1
		}
		if int(db) >= len(local) {
			local = append(local, make([]int32, int(db)+1-len(local)+len(local)/2)...)
		}
		if i := local[db]; i > 0 {
			return i - 1
		}
		met = append(met, db)
		local[db] = int32(len(met))
		return int32(len(met) - 1)
	}
	es := &g.edges
	for b := range full {
		if err == nil {
			err = b.err
			prev := last[b.part]
			for r := range b.score {
				auditor, subject := idOf(b.ids[r]>>32), idOf(b.ids[r]&math.MaxUint32)
				if auditor < 0 || subject < 0 {
					err = fmt.Errorf("an audit names DID ids %d and %d", b.ids[r]>>32, b.ids[r]&math.MaxUint32)
					break
				}
				if prev >= 0 && es.auditor[prev] == auditor && es.subject[prev] == subject && es.target[prev] == b.target[r] {
					es.score[prev], es.time[prev], es.backed[prev], es.settled[prev] = b.score[r], b.time[r], b.backed[r], b.settled[r]
					continue
				}
				prev = int32(es.len())
				es.auditor, es.subject, es.target = append(es.auditor, auditor), append(es.subject, subject), append(es.target, b.target[r])
				es.score, es.time, es.backed, es.settled = append(es.score, b.score[r]), append(es.time, b.time[r]), append(es.backed, b.backed[r]), append(es.settled, b.settled[r])
			}
			last[b.part] = prev
		}
		free <- b
	}
	if err != nil {
		return fmt.Errorf("reputation: read audits: %w", err)
	}
	for _, p := range parts { // back to the pool: the names' read takes one of them
		p.conn.Close()
	}
	parts = nil
	var names sync.WaitGroup
	names.Go(func() { err = g.name(ctx, s, met, local) })
	es.rehash(slotsFor(max(cap(es.auditor), es.len())))
	names.Wait()
	if err != nil {
		return fmt.Errorf("reputation: read audits' DIDs: %w", err)
	}
	g.loaded = true
	return nil
}

// name gives the graph's DIDs met (by their ids in reputation_dids, the graph's id + 1 at
// local[id]) their names, in one read of reputation_dids (stepRows): every id an audit
// names is there, as the store records a DID's id before the audit that names it.
func (g *liveGraph) name(ctx context.Context, s *Store, met []int64, local []int32) error {
	g.dids = make([]string, len(met))
	g.ids = make(map[string]int32, len(met))
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	err = stepRows(ctx, conn, `SELECT id, did FROM reputation_dids`, nil, 2, func(row []driver.Value) error {
		id, ok := row[0].(int64)
		if !ok {
			return fmt.Errorf("a DID's id of type %T", row[0])
		}
		if id <= 0 || id >= int64(len(local)) || local[id] == 0 {
			return nil
		}
		var did string
		switch v := row[1].(type) {
		case string:
			did = v
		case []byte:
			did = string(v)
		default:
			return fmt.Errorf("a DID of type %T", row[1])
		}
		g.dids[local[id]-1] = did
		g.ids[did] = local[id] - 1
		return nil
	})
	if err != nil {
		return err
	}
	if len(g.ids) != len(met) {
		return fmt.Errorf("%d of the %d DIDs the audits name have no id", len(met)-len(g.ids), len(met))
	}
	return nil
}

// loadBatch is rows of the load's query, as its reading goroutine hands them on.
type loadBatch struct {
	part    int     // the query's
	ids     []int64 // the auditor's and the subject's reputation_dids ids, 32 bits each
	target  []uint64
	score   []float64
	time    []int64
	backed  []bool
	settled []float64
	err     error // the query's, in the last batch
}

// readBatches runs query on conn, for part, and steps its rows (stepRows) into batches taken
// from free and sends them on full, the last with the query's error.
func readBatches(ctx context.Context, conn *sql.Conn, query string, args []driver.NamedValue, part int, full, free chan *loadBatch) {
	b := <-free
	b.reset(part)
	b.err = stepRows(ctx, conn, query, args, 6, func(row []driver.Value) error {
		ids, ok1 := row[0].(int64)
		time, ok2 := row[3].(int64)
		backed, ok3 := row[4].(int64)
		score, ok4 := realOf(row[2])
		settled, ok5 := realOf(row[5])
		var target uint64
		switch t := row[1].(type) {
		case string:
			target = maphash.String(targetSeed, t)
		case []byte:
			target = maphash.Bytes(targetSeed, t)
		default:
			ok1 = false
		}
		if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || backed != 0 && backed != 1 {
			return fmt.Errorf("a row of types %T %T %T %T %T %T", row[0], row[1], row[2], row[3], row[4], row[5])
		}
		b.ids, b.target = append(b.ids, ids), append(b.target, target)
		b.score, b.time, b.backed, b.settled = append(b.score, score), append(b.time, time), append(b.backed, backed == 1), append(b.settled, settled)
		if len(b.score) == loadBatchRows {
			full <- b
			b = <-free
			b.reset(part)
		}
		return nil
	})
	full <- b
}

// stepRows runs query on conn and gives each row of its n columns to each, in order, stepping
// the driver's rows itself: database/sql's Rows would lock, convert and copy every value once
// more (at ten million audits, seconds). The row's slice is reused: each copies what it keeps.
func stepRows(ctx context.Context, conn *sql.Conn, query string, args []driver.NamedValue, n int, each func(row []driver.Value) error) error {
	return conn.Raw(func(dc any) error {
		q, ok := dc.(driver.QueryerContext)
		if !ok {
			return fmt.Errorf("the SQLite driver's connection (%T) takes no queries", dc)
		}
		rows, err := q.QueryContext(ctx, query, args)
		if err != nil {
			return err
		}
		defer rows.Close()
		row := make([]driver.Value, n)
		for {
			switch err := rows.Next(row); {
			case errors.Is(err, io.EOF):
				return nil
			case err != nil:
				return err
			}
			if err := each(row); err != nil {
				return err
			}
		}
	})
}

// realOf is a REAL column's value, as database/sql would scan it into a float64 (an integer
// is converted).
func realOf(v driver.Value) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	}
	return 0, false
}

func (b *loadBatch) reset(part int) {
	b.part = part
	b.ids, b.target, b.score, b.time, b.backed, b.settled = b.ids[:0], b.target[:0], b.score[:0], b.time[:0], b.backed[:0], b.settled[:0]
}

// sampleAudits looks at loadSamples rows spread over the table (rowids are about dense): it
// gives an upper estimate of how many audits count (the share of the rows sampled that do,
// plus three standard deviations, times the rows), and k auditor ids (reputation_dids) that
// split the audits that count into k+1 parts of about as many rows (none under splitFrom
// rows).
func (s *Store) sampleAudits(ctx context.Context, k int, splitFrom int64) (split []int64, counting int, err error) {
	var top sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT MAX(rowid) FROM reputation_audits`).Scan(&top); err != nil || top.Int64 <= 0 {
		return nil, 0, err
	}
	rows := top.Int64
	samples := min(rows, loadSamples)
	var ids []int64
	for i := range samples {
		var id int64
		var counts bool
		err := s.db.QueryRowContext(ctx, `SELECT auditor_id, chain = ? AND superseded_by IS NULL AND refused = '' FROM reputation_audits WHERE rowid >= ? ORDER BY rowid LIMIT 1`,
			s.chain, rows*(2*i+1)/(2*samples)).Scan(&id, &counts)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return nil, 0, err
		case counts:
			ids = append(ids, id)
		}
	}
	hits := float64(len(ids))
	counting = int(float64(rows) * min(1, (hits+float64(3*math.Sqrt(hits))+1)/float64(samples))) // no fused multiply-add (TestNoFusedMultiplyAdd)
	if rows < splitFrom || len(ids) == 0 {
		return nil, counting, nil
	}
	slices.Sort(ids)
	for i := 1; i <= k; i++ {
		if id := ids[i*len(ids)/(k+1)]; len(split) == 0 || id > split[len(split)-1] {
			split = append(split, id)
		}
	}
	return split, counting, nil
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

// pairs sums the graph's audits at now per auditor and subject, indexed by pos (view.pos),
// in CSR order: what collectPairs gives from the engine's input (Graph.Audits), without
// copying the audits into it first, split among procs goroutines. The caller holds g.mu.
// Only the pairs of auditors that speak (speaks, by index; nil: every auditor) are summed
// and listed: no computation reads another's (computePairs), so free DIDs' audits, most of
// a world's, cost the list neither memory nor a decay each.
// When into is set, it is given the graph's audits by auditor once they are sorted, every
// auditor's (a snapshot reading its sums from the graph may need any), and how many pairs
// are listed, before any is summed: a list it returns with room for them is filled instead
// of a new one.
func (g *liveGraph) pairs(now int64, pos []int32, p Params, procs int, speaks []bool, into func(idx *byAuditor, n int) []pairEntry) []pairEntry {
	n := len(pos)
	es := &g.edges
	at := make([]int32, n+1)      // by arrival id of the auditor: grouped, then sorted by index
	counted := func(i int) bool { // Edge.valid
		return es.auditor[i] != es.subject[i] && es.score[i] >= 0 && es.score[i] <= 1
	}
	for i := range es.len() {
		if counted(i) {
			at[es.auditor[i]+1]++
		}
	}
	for i := range n {
		at[i+1] += at[i]
	}
	perm := make([]int32, at[n]) // edges grouped by auditor
	fill := slices.Clone(at[:n])
	for i := range es.len() {
		if counted(i) {
			a := es.auditor[i]
			perm[fill[a]] = int32(i)
			fill[a]++
		}
	}
	fill = nil
	// Each auditor's audits by subject, and the pairs counted, so the list the snapshot
	// keeps is no longer than they are (an auditor's repeated audits of one subject are one
	// pair: with room for every audit, the slack would stay until the next computation); then
	// each auditor's pairs summed, in index order. The auditors are split among procs
	// goroutines (about as many audits each), which sort, count and sum their own: each pair
	// is summed by one, and the list comes out in the same order.
	order := g.order
	listed := func(id int32) bool { return speaks == nil || speaks[pos[id]] }
	audits := 0 // those summed
	for _, id := range order {
		if listed(id) {
			audits += int(at[id+1] - at[id])
		}
	}
	bounds := []int{0}
	if work := split(audits, procs, parallelChunk); len(work) > 2 {
		done := 0
		for k, id := range order {
			if !listed(id) {
				continue
			}
			if done += int(at[id+1] - at[id]); done >= work[len(bounds)] && len(bounds) < len(work)-1 {
				bounds = append(bounds, k+1)
			}
		}
	}
	bounds = append(bounds, len(order))
	counts := make([]int, len(bounds))
	run(bounds, func(part, lo, hi int) {
		count := 0
		for _, id := range order[lo:hi] {
			if !listed(id) {
				continue
			}
			row := perm[at[id]:at[id+1]]
			slices.SortFunc(row, func(a, b int32) int { return int(pos[es.subject[a]] - pos[es.subject[b]]) })
			for k := range row {
				if k == 0 || pos[es.subject[row[k]]] != pos[es.subject[row[k-1]]] {
					count++
				}
			}
		}
		counts[part+1] = count
	})
	for part := range len(counts) - 1 {
		counts[part+1] += counts[part]
	}
	var pairs []pairEntry
	if total := counts[len(counts)-1]; into != nil {
		pairs = into(&byAuditor{at: at, perm: perm, pos: pos, speaks: speaks}, total)
	}
	if total := counts[len(counts)-1]; cap(pairs) >= total {
		pairs = pairs[:total]
	} else {
		pairs = make([]pairEntry, total, withSlack(total)) // room for carry
	}
	edge := func(e int32) Edge {
		return Edge{Score: es.score[e], Age: float64(now - es.time[e]), Backed: es.backed[e], Settled: es.settled[e]}
	}
	run(bounds, func(part, lo, hi int) {
		out := pairs[counts[part]:counts[part]:counts[part+1]]
		// A row's evidence, a block at a time, two audits' side by side (evidence2).
		var evs [64]pairSum
		for _, id := range order[lo:hi] { // auditors in DID order, so in index order
			if !listed(id) {
				continue
			}
			row := perm[at[id]:at[id+1]]
			var ps pairSum
			j := int32(-1)
			for base := 0; base < len(row); base += len(evs) {
				block := row[base:min(base+len(evs), len(row))]
				k := 0
				for ; k+1 < len(block); k += 2 {
					a, b := edge(block[k]), edge(block[k+1])
					evs[k], evs[k+1] = p.evidence2(&a, &b)
				}
				if k < len(block) {
					a := edge(block[k])
					evs[k] = p.evidence(&a)
				}
				for k, e := range block {
					if s := pos[es.subject[e]]; s != j {
						if j >= 0 {
							out = append(out, pairEntry{pairKey{pos[id], j}, ps})
						}
						ps, j = pairSum{}, s
					}
					ps.add(evs[k])
				}
			}
			if j >= 0 {
				out = append(out, pairEntry{pairKey{pos[id], j}, ps})
			}
		}
	})
	return pairs
}

// subjectCounts counts, for each of n agents by index, the audits it is the subject of
// (subject: the audits' subjects as arrival ids; pos: view.pos). Each of up to procs
// goroutines counts a part of the audits by arrival id (one random access an audit, not
// two), and the parts' counts are added by index after: integers, so the same counts however
// the audits are split.
func subjectCounts(subject, pos []int32, n, procs int) []int {
	bounds := split(len(subject), procs, parallelChunk)
	parts := make([][]int32, len(bounds)-1)
	run(bounds, func(part, lo, hi int) {
		c := make([]int32, len(pos))
		for _, j := range subject[lo:hi] {
			c[j]++
		}
		parts[part] = c
	})
	counts := make([]int, n)
	for _, c := range parts {
		for j, k := range c {
			counts[pos[j]] += int(k)
		}
	}
	return counts
}

// byAuditor is the live graph's counted audits grouped by auditor, as pairs sorts them: the
// audits (places in the columns) of the auditor of arrival id a are perm[at[a]:at[a+1]], by
// their subjects' index (pos, the view's) when a's pairs are listed (speaks, by index; nil:
// every auditor's), in no order otherwise.
type byAuditor struct {
	at, perm, pos []int32
	speaks        []bool
}

// sum is what the audits of auditor a of subject s (arrival ids) give their pair at now, and
// whether there are any, as pairs sums them: the audits indexed when idx was made, with their
// values now (the caller knows that no change since touched the pair: snapshot.fromGraph).
// The caller holds g.mu, or keeps the graph from changing otherwise.
func (idx *byAuditor) sum(g *liveGraph, a, s int32, now int64, p Params) (ps pairSum, found bool) {
	if a < 0 || s < 0 || int(a)+1 >= len(idx.at) || int(s) >= len(idx.pos) {
		return ps, false
	}
	es, j := &g.edges, idx.pos[s]
	row := idx.perm[idx.at[a]:idx.at[a+1]]
	add := func(e int32) {
		ps.add(p.evidence(&Edge{Score: es.score[e], Age: float64(now - es.time[e]), Backed: es.backed[e], Settled: es.settled[e]}))
		found = true
	}
	if idx.speaks != nil && !idx.speaks[idx.pos[a]] { // a row pairs did not sort: the sums are fixed point, so in any order the same
		for _, e := range row {
			if idx.pos[es.subject[e]] == j {
				add(e)
			}
		}
		return ps, found
	}
	k, _ := slices.BinarySearchFunc(row, j, func(e, j int32) int { return cmp.Compare(idx.pos[es.subject[e]], j) })
	for ; k < len(row) && idx.pos[es.subject[row[k]]] == j; k++ {
		add(row[k])
	}
	return ps, found
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
	es := &g.edges
	out := make([]Edge, es.len())
	for i := range out {
		out[i] = Edge{Auditor: pos[es.auditor[i]], Subject: pos[es.subject[i]], Score: es.score[i], Age: float64(now - es.time[i]), Backed: es.backed[i], Settled: es.settled[i]}
	}
	return out
}

// release hands over the changes since graph and stops keeping them; the caller holds g.mu.
func (g *liveGraph) release() []change {
	c := g.changes
	g.capturing, g.changes = false, nil
	return c
}
