package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/surety-ioa/surety/internal/sqlite"
)

func open(t *testing.T) (*sql.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sub", "surety.db")
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

func TestOpenUsesWALAndForeignKeys(t *testing.T) {
	db, _ := open(t)
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want wal", mode)
	}
	var fk int
	if err := db.QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil {
		t.Fatal(err)
	}
	if fk != 1 {
		t.Errorf("foreign_keys = %d, want 1", fk)
	}
}

func tables(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 't_%' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	return names
}

func TestMigrate(t *testing.T) {
	v1 := sqlite.Migration{Version: 1, SQL: `CREATE TABLE t_one (x INTEGER)`}
	v2 := sqlite.Migration{Version: 2, SQL: `CREATE TABLE t_two (x INTEGER)`}
	bad := sqlite.Migration{Version: 2, SQL: `CREATE TABLE t_half (x INTEGER); SELECT nonsense FROM nowhere`}
	tests := []struct {
		name       string
		steps      [][]sqlite.Migration // applied one after another
		wantErr    string               // of the last step
		wantTables []string
	}{
		{name: "fresh database", steps: [][]sqlite.Migration{{v1, v2}}, wantTables: []string{"t_one", "t_two"}},
		{name: "applied twice is a no-op", steps: [][]sqlite.Migration{{v1, v2}, {v1, v2}}, wantTables: []string{"t_one", "t_two"}},
		{name: "appended step runs alone", steps: [][]sqlite.Migration{{v1}, {v1, v2}}, wantTables: []string{"t_one", "t_two"}},
		{name: "out of order", steps: [][]sqlite.Migration{{v2}}, wantErr: "numbered 1, 2, 3"},
		{name: "newer database", steps: [][]sqlite.Migration{{v1, v2}, {v1}}, wantErr: "newer surety", wantTables: []string{"t_one", "t_two"}},
		{name: "failed step rolls back whole", steps: [][]sqlite.Migration{{v1, bad}}, wantErr: "to version 2", wantTables: []string{"t_one"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, _ := open(t)
			var err error
			for _, step := range tt.steps {
				err = sqlite.Migrate(context.Background(), db, "test", step)
			}
			if tt.wantErr == "" && err != nil {
				t.Fatalf("Migrate: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Migrate error = %v, want one containing %q", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.wantTables, tables(t, db)); diff != "" {
				t.Errorf("tables (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMigrationsSurviveReopen(t *testing.T) {
	db, path := open(t)
	m := []sqlite.Migration{{Version: 1, SQL: `CREATE TABLE t_kept (x INTEGER); INSERT INTO t_kept VALUES (42)`}}
	if err := sqlite.Migrate(context.Background(), db, "test", m); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db2, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	// Re-running must not insert the row a second time.
	if err := sqlite.Migrate(context.Background(), db2, "test", m); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db2.QueryRow(`SELECT COUNT(*) FROM t_kept`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("rows = %d, want 1", n)
	}
}

// TestMigrateLoggedSaysLongSteps: a database that had a schema hears of each new step, when
// it starts and how long it took (a step may rewrite a large table for minutes); a new one's
// steps, on empty tables, say nothing; after the steps the write-ahead log is empty.
func TestMigrateLoggedSaysLongSteps(t *testing.T) {
	ctx := context.Background()
	db, path := open(t)
	steps := []sqlite.Migration{
		{Version: 1, SQL: `CREATE TABLE t_rows (x INTEGER)`},
		{Version: 2, SQL: `WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 20000) INSERT INTO t_rows SELECT x FROM n`},
		{Version: 3, SQL: `UPDATE t_rows SET x = x + 1`},
	}
	var fresh strings.Builder
	if err := sqlite.MigrateLogged(ctx, db, "test", steps[:2], slog.New(slog.NewTextHandler(&fresh, nil))); err != nil {
		t.Fatal(err)
	}
	if fresh.Len() != 0 {
		t.Errorf("a new database's steps logged:\n%s", fresh.String())
	}
	var upgrade strings.Builder
	if err := sqlite.MigrateLogged(ctx, db, "test", steps, slog.New(slog.NewTextHandler(&upgrade, nil))); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(upgrade.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `msg="migrating the database" owner=test version=3`) ||
		!strings.Contains(lines[1], `msg="migrated the database" owner=test version=3 took=`) {
		t.Errorf("an upgrade's log:\n%s", upgrade.String())
	}
	if fi, err := os.Stat(path + "-wal"); err != nil {
		t.Error(err)
	} else if fi.Size() != 0 {
		t.Errorf("write-ahead log after the steps: %d bytes; want it truncated", fi.Size())
	}
}

func TestEnterChainScopesState(t *testing.T) {
	ctx := context.Background()
	db, _ := open(t)
	enter := func(c sqlite.Chain) int64 {
		t.Helper()
		id, err := sqlite.EnterChain(ctx, db, c)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	anvil := sqlite.Chain{Key: "31337-aa", ChainID: 31337, Genesis: "0xaa", Contracts: "{}"}
	embedded1 := sqlite.Chain{Key: "1337-01", ChainID: 1337, Genesis: "0x01", Contracts: "{}", Ephemeral: true}
	embedded2 := sqlite.Chain{Key: "1337-02", ChainID: 1337, Genesis: "0x02", Contracts: "{}", Ephemeral: true}

	anvilID := enter(anvil)
	if again := enter(anvil); again != anvilID {
		t.Errorf("re-entering the same chain gave id %d, want %d", again, anvilID)
	}
	e1 := enter(embedded1)
	// A chain-scoped table, as later packages declare them.
	if _, err := db.Exec(`CREATE TABLE t_scoped (chain INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE, v TEXT)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO t_scoped VALUES (?, 'anvil row'), (?, 'old embedded row')`, anvilID, e1); err != nil {
		t.Fatal(err)
	}

	// A new embedded chain drops the old one's rows and keeps the external chain's.
	e2 := enter(embedded2)
	if e2 == e1 {
		t.Fatalf("new embedded chain reused id %d", e1)
	}
	var left []string
	rows, err := db.Query(`SELECT v FROM t_scoped ORDER BY v`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		left = append(left, v)
	}
	rows.Close()
	if diff := cmp.Diff([]string{"anvil row"}, left); diff != "" {
		t.Errorf("rows after a new embedded chain (-want +got):\n%s", diff)
	}
	got, err := sqlite.Chains(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]sqlite.Chain{anvil, embedded2}, got); diff != "" {
		t.Errorf("chains (-want +got):\n%s", diff)
	}
}

func TestMigrateRefusesBadOrder(t *testing.T) {
	db, _ := open(t)
	err := sqlite.Migrate(context.Background(), db, "x", []sqlite.Migration{{Version: 1, SQL: "SELECT 1"}, {Version: 3, SQL: "SELECT 1"}})
	if !errors.Is(err, sqlite.ErrMigrationOrder) {
		t.Errorf("err = %v, want ErrMigrationOrder", err)
	}
}

// TestCachedStatementsFollowTheSchema: a statement the connection keeps prepared sees a
// table that changed under it (SQLite prepares it again), and a dropped table fails it.
func TestCachedStatementsFollowTheSchema(t *testing.T) {
	db, _ := open(t)
	db.SetMaxOpenConns(1) // one connection: the second run takes the cached statement
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE t_cache (a INTEGER)`); err != nil {
		t.Fatal(err)
	}
	const q = `SELECT * FROM t_cache`
	columns := func() ([]string, error) {
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		return rows.Columns()
	}
	if cols, err := columns(); err != nil || len(cols) != 1 {
		t.Fatalf("columns = %v, %v", cols, err)
	}
	if _, err := db.ExecContext(ctx, `ALTER TABLE t_cache ADD COLUMN b TEXT`); err != nil {
		t.Fatal(err)
	}
	if cols, err := columns(); err != nil || len(cols) != 2 {
		t.Errorf("after a column was added: columns = %v, %v; want a and b", cols, err)
	}
	if _, err := db.ExecContext(ctx, `DROP TABLE t_cache`); err != nil {
		t.Fatal(err)
	}
	if _, err := columns(); err == nil {
		t.Error("the cached statement still runs on a dropped table")
	}
}
