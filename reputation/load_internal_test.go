package reputation

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
)

// TestLoadInPartsReadsEveryAudit: the graph read by three goroutines, each a range of
// auditors in a read of its own, holds exactly the audits that count that one reader finds,
// with their values, and none of the rows that do not count (superseded, refused, another
// chain's). And the columns are sized to the audits that count, not to every row of the
// table (review 31, finding 5: MAX(rowid) reserved room for rows the log keeps forever).
func TestLoadInPartsReadsEveryAudit(t *testing.T) {
	ctx := context.Background()
	db := testutil.DB(t)
	var chains [2]int64
	for i := range chains {
		row, err := sqlite.EnterChain(ctx, db, sqlite.Chain{Key: fmt.Sprint("c", i), ChainID: uint64(1337 + i), Genesis: "g", Contracts: "{}"})
		if err != nil {
			t.Fatal(err)
		}
		chains[i] = row
	}
	store, err := OpenStore(ctx, db, chains[0])
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	ins, err := tx.Prepare(`INSERT INTO reputation_audits (chain, leaf, auditor, subject, target, score, time, backed, settled, evidence_hash, evidence_uri, envelope, superseded_by, refused)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, '', '', x'00', ?, ?)`)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(41, 3))
	const rows = 40_000
	counting := 0
	for i := range rows {
		chain, superseded, refused := chains[0], any(nil), ""
		switch x := r.IntN(8); {
		case x < 4:
			superseded = "later"
		case x < 5:
			refused = "refused"
		case x < 6:
			chain = chains[1]
		default:
			counting++
		}
		if _, err := ins.Exec(chain, fmt.Sprintf("%064x", i), fmt.Sprintf("did:key:z%04d", r.IntN(400)), fmt.Sprintf("did:key:z%04d", r.IntN(400)),
			fmt.Sprint("target ", i), r.Float64(), 1_700_000_000+r.IntN(1e6), r.IntN(2), r.Float64(), superseded, refused); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	load := func(readers int) (map[string]liveEdge, *liveGraph) {
		g := &liveGraph{}
		if err := g.loadBy(ctx, store, readers, 0); err != nil {
			t.Fatal(err)
		}
		out := map[string]liveEdge{}
		for i := range g.edges.len() {
			e := g.edges.edge(int32(i))
			k := fmt.Sprint(g.dids[e.auditor], g.dids[e.subject], g.edges.target[i])
			e.auditor, e.subject = 0, 0
			out[k] = e
		}
		return out, g
	}
	one, _ := load(1)
	if len(one) != counting {
		t.Fatalf("one reader loads %d audits, want the %d that count", len(one), counting)
	}
	split, _, err := store.sampleAudits(ctx, 2, 0)
	if err != nil || len(split) != 2 {
		t.Fatalf("splits %v, %v: want two", split, err)
	}
	three, g := load(3)
	if !maps.Equal(one, three) {
		t.Fatalf("three readers load %d audits, one %d, or other values", len(three), len(one))
	}
	if c := cap(g.edges.auditor); c < counting || c > 2*counting {
		t.Fatalf("room for %d audits, for %d that count among %d rows", c, counting, rows)
	}
}
