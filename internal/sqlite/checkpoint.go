package sqlite

import (
	"context"
	"database/sql"
	"log/slog"
	"time"
)

// Limits of the connections and the write-ahead log, in one place.
const (
	// idleConns is how many open connections a database keeps for reuse when no one uses
	// them (database/sql keeps 2 by default and closes the rest as they are put back). Under
	// a flood of requests a node uses scores of connections at once: closing all but 2 of
	// them as each request ends and opening new ones for the next (each reads the schema
	// again and fills a page cache) churned C memory through glibc's per-thread arenas, which
	// kept most of it as free pages: node 0's C heap under BenchmarkPublicNodeLoad reached
	// 122 MB, 107 MB of them free, for a SQLite peak of 54 MB. A connection kept idle holds
	// its schema, page cache and prepared statements: some 190 KB when opened (node 0's
	// schema), at most its page cache's 2 MiB more (SQLite's default cache_size), so the idle
	// ones hold at most about 70 MB; database/sql reuses the one put back last, so those a
	// burst opened age out (idleConnLife) once it is over.
	idleConns = 32
	// idleConnLife closes a connection that stayed idle this long, so that what a burst
	// opened goes when the burst is over.
	idleConnLife = time.Minute
	// stmtCacheSize is how many prepared statements each connection keeps for reuse: the
	// few a write path runs again and again (a registration's), not every statement a node
	// ever ran, since each kept one holds memory on every connection (64 put node 0 of
	// BenchmarkPublicNodeLoad about 20 MB higher at its peak; 16 registers as fast).
	stmtCacheSize = 16
	// autoCheckpointPages is the WAL's length (in pages of 4 KiB) past which the commit that
	// passes it copies the WAL into the database itself (SQLite's automatic checkpoint,
	// 1,000 by default), syncing both files while the writer waits: milliseconds, the tail of
	// every write's latency. A Checkpointer does it in the background long before; this is
	// the bound when none runs, or when it falls behind.
	autoCheckpointPages = 16_384
	// CheckpointEvery is how often a Checkpointer copies the WAL into the database: a node
	// writing a thousand cards a second adds some 1,000 pages between two.
	CheckpointEvery = 100 * time.Millisecond
)

// Checkpointer copies a database's write-ahead log into the database in the background
// (SQLite's passive checkpoint: it never blocks a writer or a reader, and copies what no
// reader still needs), so that commits do not: a commit only appends to the WAL, and
// waits for no sync of the database file. It changes nothing of durability: a transaction
// is as durable as the database's synchronous setting makes it once it commits, whether or
// not it has been copied. Close stops it.
type Checkpointer struct {
	stop context.CancelFunc
	done chan struct{}
}

// StartCheckpointer checkpoints db every interval (CheckpointEvery when 0) until Close.
// Errors (a database closed under it, a full disk) are logged and the next round tries
// again.
func StartCheckpointer(db *sql.DB, interval time.Duration, log *slog.Logger) *Checkpointer {
	if interval <= 0 {
		interval = CheckpointEvery
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, stop := context.WithCancel(context.Background())
	c := &Checkpointer{stop: stop, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			var busy, frames, copied int
			if err := db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &copied); err != nil && ctx.Err() == nil {
				log.Warn("sqlite: checkpoint", "err", err)
			}
		}
	}()
	return c
}

// Close stops the checkpoints and waits for the one under way.
func (c *Checkpointer) Close() {
	c.stop()
	<-c.done
}
