package registry

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
)

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
