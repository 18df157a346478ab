package sqlite_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/surety-ioa/surety/internal/sqlite"
)

// TestCommitsLeaveCheckpointsToTheCheckpointer: a connection checkpoints by itself only
// past a long WAL (so a commit does not wait for the copy and its syncs), and a Checkpointer
// copies what was committed into the database file in the background.
func TestCommitsLeaveCheckpointsToTheCheckpointer(t *testing.T) {
	db, path := open(t)
	ctx := context.Background()
	var pages int
	if err := db.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if pages < 10_000 {
		t.Errorf("wal_autocheckpoint = %d pages: commits would checkpoint", pages)
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE t_blobs (b TEXT)`); err != nil {
		t.Fatal(err)
	}
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	for range 200 { // some 200 pages: far below the automatic checkpoint
		if _, err := db.ExecContext(ctx, `INSERT INTO t_blobs VALUES (?)`, strings.Repeat("x", 4000)); err != nil {
			t.Fatal(err)
		}
	}
	if got := size(); got > before+100_000 {
		t.Fatalf("the database file grew from %d to %d bytes without a checkpointer: a commit checkpointed", before, got)
	}
	c := sqlite.StartCheckpointer(db, 10*time.Millisecond, nil)
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for size() < before+200*4000 {
		if time.Now().After(deadline) {
			t.Fatalf("the checkpointer copied nothing into the database file in 10 s (%d bytes)", size())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
