package registry

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
)

// TestCandidateQueriesReadInRankOrder: search stays fast at any size only while SQLite reads
// candidates from an index in rank order and stops at the limit. A plan that sorts the matches
// (a temporary B-tree) or reads the large card rows would scale with the number of matches.
func TestCandidateQueriesReadInRankOrder(t *testing.T) {
	ctx := context.Background()
	db, row := chainDB(t)
	r, err := New(ctx, Config{DB: db, Chain: row})
	skipWithoutFTS5(t, err)
	tests := []struct {
		name string
		q    Query
	}{
		{"text", Query{Text: "translate legal"}},
		{"capability", Query{Capability: "audit"}},
		{"text and capability", Query{Text: "research", Capability: "medical"}},
		{"everything", Query{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			query, args := r.candidateQuery(Query{Text: tt.q.Text, Capability: tt.q.Capability, Limit: 20})
			rows, err := db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			text := strings.Join(plan, "\n")
			t.Logf("plan:\n%s", text)
			if strings.Contains(text, "TEMP B-TREE") {
				t.Errorf("the plan sorts the matches:\n%s", text)
			}
			if !strings.Contains(text, "COVERING INDEX registry_cards_rank") {
				t.Errorf("the plan reads card rows, not the covering rank index:\n%s", text)
			}
			if tt.q.Capability != "" && tt.q.Text == "" && !strings.Contains(text, "registry_capabilities_rank") {
				t.Errorf("the plan does not use the capability rank index:\n%s", text)
			}
		})
	}
}

// chainDB is a fresh database with one chain entered, for the package's own tests.
func chainDB(t *testing.T) (*sql.DB, int64) {
	t.Helper()
	db := testutil.DB(t)
	row, err := sqlite.EnterChain(context.Background(), db, sqlite.Chain{Key: "t", ChainID: 1, Genesis: "g", Contracts: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	return db, row
}

// skipWithoutFTS5 skips outside CI when SQLite lacks FTS5, and fails on any other error.
func skipWithoutFTS5(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), "fts5") && !testutil.InCI() {
		t.Skip("skipping: SQLite built without FTS5; run with -tags sqlite_fts5 (make test does)")
	}
	if err != nil {
		t.Fatal(err)
	}
}
