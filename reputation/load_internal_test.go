package reputation

import (
	"context"
	"database/sql"
	"fmt"
	"hash/maphash"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
)

// twoChains enters two chains in db and gives their rows.
func twoChains(ctx context.Context, t *testing.T, db *sql.DB) [2]int64 {
	t.Helper()
	var chains [2]int64
	for i := range chains {
		row, err := sqlite.EnterChain(ctx, db, sqlite.Chain{Key: fmt.Sprint("c", i), ChainID: uint64(1337 + i), Genesis: "g", Contracts: "{}"})
		if err != nil {
			t.Fatal(err)
		}
		chains[i] = row
	}
	return chains
}

// loadedEdges is the audits g holds, keyed by auditor, subject and target hash (DIDs by
// name, not by g's ids).
func loadedEdges(g *liveGraph) map[string]liveEdge {
	out := map[string]liveEdge{}
	for i := range g.edges.len() {
		e := g.edges.edge(int32(i))
		k := fmt.Sprint(g.dids[e.auditor], g.dids[e.subject], g.edges.target[i])
		e.auditor, e.subject = 0, 0
		out[k] = e
	}
	return out
}

// TestLoadInPartsReadsEveryAudit: the graph read by one goroutine holds exactly the audits
// that count, with their DIDs (read by their ids) and values; read by three goroutines, each
// a range of auditors in a read of its own, it holds the same, and none of the rows that do not count (superseded, refused, another
// chain's). And the columns are sized to the audits that count, not to every row of the
// table (review 31, finding 5: MAX(rowid) reserved room for rows the log keeps forever).
func TestLoadInPartsReadsEveryAudit(t *testing.T) {
	ctx := context.Background()
	db := testutil.DB(t)
	chains := twoChains(ctx, t, db)
	store, err := OpenStore(ctx, db, chains[0])
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	ins, err := tx.Prepare(`INSERT INTO reputation_audits (chain, leaf, auditor, subject, target, score, time, backed, settled, evidence_hash, evidence_uri, envelope, superseded_by, refused, auditor_id, subject_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, '', '', x'00', ?, ?, ?, ?)`)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(41, 3))
	const rows = 40_000
	counting := 0
	want := map[string]liveEdge{} // the rows that count, as the graph holds them (DIDs apart)
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
		auditor, subject := fmt.Sprintf("did:key:z%04d", r.IntN(400)), fmt.Sprintf("did:key:z%04d", r.IntN(400))
		var ids [2]int64
		for k, did := range []string{auditor, subject} {
			if ids[k], err = didID(ctx, tx, did); err != nil {
				t.Fatal(err)
			}
		}
		target, score, time, backed, settled := fmt.Sprint("target ", i), r.Float64(), int64(1_700_000_000+r.IntN(1e6)), r.IntN(2) == 1, r.Float64()
		if _, err := ins.Exec(chain, fmt.Sprintf("%064x", i), auditor, subject, target, score, time, backed, settled, superseded, refused, ids[0], ids[1]); err != nil {
			t.Fatal(err)
		}
		if superseded == nil && refused == "" && chain == chains[0] {
			want[fmt.Sprint(auditor, subject, maphash.String(targetSeed, target))] = liveEdge{score: score, time: time, backed: backed, settled: settled}
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
		return loadedEdges(g), g
	}
	one, _ := load(1)
	if len(one) != counting || !maps.Equal(one, want) {
		t.Fatalf("one reader loads %d audits, want the %d that count, with their DIDs and values", len(one), counting)
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

// TestDIDsMigrationNumbersStoredAudits: a store written before reputation_dids (version 14)
// gets every stored audit's DIDs numbered by the migration, and the graph loaded from the
// new index holds exactly the audits that count, with their DIDs and values.
func TestDIDsMigrationNumbersStoredAudits(t *testing.T) {
	ctx := context.Background()
	db := testutil.DB(t)
	chains := twoChains(ctx, t, db)
	if didsMigration.Version != len(migrations) || migrations[len(migrations)-1].Version != didsMigration.Version {
		t.Fatalf("the test migrates to the version before didsMigration (%d), the last of %d", didsMigration.Version, len(migrations))
	}
	if err := sqlite.Migrate(ctx, db, "reputation", migrations[:didsMigration.Version-1]); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(15, 1))
	want := map[string]liveEdge{}
	for i := range 3_000 {
		chain, superseded, refused := chains[0], any(nil), ""
		switch x := r.IntN(8); {
		case x < 3:
			superseded = "later"
		case x < 4:
			refused = "refused"
		case x < 5:
			chain = chains[1]
		}
		auditor, subject := fmt.Sprintf("did:key:z%03d", r.IntN(90)), fmt.Sprintf("did:key:y%03d", r.IntN(90))
		target, score, time, backed, settled := fmt.Sprint("target ", i), r.Float64(), int64(1_700_000_000+r.IntN(1e6)), r.IntN(2) == 1, r.Float64()
		if _, err := db.ExecContext(ctx, `INSERT INTO reputation_audits (chain, leaf, auditor, subject, target, score, time, backed, settled, evidence_hash, evidence_uri, envelope, superseded_by, refused)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, '', '', x'00', ?, ?)`, chain, fmt.Sprintf("%064x", i), auditor, subject, target, score, time, backed, settled, superseded, refused); err != nil {
			t.Fatal(err)
		}
		if superseded == nil && refused == "" && chain == chains[0] {
			want[fmt.Sprint(auditor, subject, maphash.String(targetSeed, target))] = liveEdge{score: score, time: time, backed: backed, settled: settled}
		}
	}
	store, err := OpenStore(ctx, db, chains[0])
	if err != nil {
		t.Fatal(err)
	}
	var wrong, dids int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM reputation_audits a WHERE auditor_id IS NOT (SELECT id FROM reputation_dids WHERE did = a.auditor)
		OR subject_id IS NOT (SELECT id FROM reputation_dids WHERE did = a.subject)`).Scan(&wrong); err != nil || wrong != 0 {
		t.Fatalf("%d audits name other ids than their DIDs' (%v)", wrong, err)
	}
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM reputation_dids`).Scan(&dids); err != nil || dids != 180 {
		t.Fatalf("%d DIDs numbered, want the 180 the audits name (%v)", dids, err)
	}
	g := &liveGraph{}
	if err := g.loadBy(ctx, store, 3, 0); err != nil {
		t.Fatal(err)
	}
	if got := loadedEdges(g); !maps.Equal(got, want) {
		t.Fatalf("after the migration the graph holds %d audits, want the %d that count, with their DIDs and values", len(got), len(want))
	}
}

// TestLoadKeepsOneAuditAKey: the load files a part's rows without looking them up, so two
// rows of one auditor, subject and target that both count (the store never leaves two, but
// the rows are read as they are) must still give one audit, the last in the index's order,
// as put would; and the table of places built after the rows finds every audit.
func TestLoadKeepsOneAuditAKey(t *testing.T) {
	ctx := context.Background()
	db := testutil.DB(t)
	row, err := sqlite.EnterChain(ctx, db, sqlite.Chain{Key: "c", ChainID: 1337, Genesis: "g", Contracts: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	store, err := OpenStore(ctx, db, row)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	add := func(i int, auditor, subject, target string, score float64) {
		t.Helper()
		var ids [2]int64
		for k, did := range []string{auditor, subject} {
			if ids[k], err = didID(ctx, tx, did); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO reputation_audits (chain, leaf, auditor, subject, target, score, time, backed, evidence_hash, evidence_uri, envelope, auditor_id, subject_id)
			VALUES (?, ?, ?, ?, ?, ?, 1700000000, 0, '', '', x'00', ?, ?)`, row, fmt.Sprintf("%064x", i), auditor, subject, target, score, ids[0], ids[1]); err != nil {
			t.Fatal(err)
		}
	}
	add(0, "did:key:zA", "did:key:zB", "target 1", 0.7)
	add(1, "did:key:zA", "did:key:zB", "target 1", 0.2) // the same key: 0.7 comes last in the index
	add(2, "did:key:zA", "did:key:zB", "target 2", 0.5)
	add(3, "did:key:zB", "did:key:zA", "target 1", 0.4)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	g := &liveGraph{}
	if err := g.loadBy(ctx, store, 1, 0); err != nil {
		t.Fatal(err)
	}
	if g.edges.len() != 3 {
		t.Fatalf("%d audits loaded, want 3: one a key", g.edges.len())
	}
	for _, k := range []struct {
		auditor, subject, target string
		score                    float64
	}{{"did:key:zA", "did:key:zB", "target 1", 0.7}, {"did:key:zA", "did:key:zB", "target 2", 0.5}, {"did:key:zB", "did:key:zA", "target 1", 0.4}} {
		i, _, ok := g.edges.find(g.ids[k.auditor], g.ids[k.subject], maphash.String(targetSeed, k.target))
		if !ok || g.edges.score[i] != k.score {
			t.Errorf("%v: found %v at %d, want score %v", k, ok, i, k.score)
		}
	}
}
