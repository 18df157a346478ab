package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-sqlite3"
)

// ErrMigrationOrder reports a migration list whose versions do not count up from 1.
var ErrMigrationOrder = errors.New("sqlite: migrations must be numbered 1, 2, 3, ... in order")

// driverName is mattn/go-sqlite3's driver with the connection settings the DSN cannot
// carry (autoCheckpointPages).
const driverName = "sqlite3-surety"

func init() {
	sql.Register(driverName, &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		// Through the interface: a build without cgo has a SQLiteConn without methods.
		ex, ok := any(c).(driver.ExecerContext)
		if !ok {
			return errors.New("sqlite: the driver's connection cannot execute statements")
		}
		_, err := ex.ExecContext(context.Background(), "PRAGMA wal_autocheckpoint = "+strconv.Itoa(autoCheckpointPages), nil)
		return err
	}})
}

// Open opens (creating if needed) the database file at path with WAL journaling, foreign keys
// enforced, a busy timeout, prepared statements kept per connection, up to idleConns idle
// connections kept for reuse (each for up to idleConnLife), a WAL that a commit checkpoints
// only past autoCheckpointPages (a Checkpointer keeps it short), write transactions that
// take the lock when they begin, so two writers never deadlock on a lock upgrade, and no
// mutex per connection (_mutex=no, below). The directory is created if missing.
func Open(path string) (*sql.DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_foreign_keys", "on")
	q.Set("_busy_timeout", "5000")
	q.Set("_synchronous", "NORMAL")
	q.Set("_txlock", "immediate")
	// SQLite's multi-thread mode (SQLITE_OPEN_NOMUTEX): a connection no longer locks a mutex
	// of its own in every call. database/sql already hands a connection to one goroutine at a
	// time, and a row read cost two lock pairs a column (a quarter of the time a node takes at
	// start to read a million audits). It holds while no *sql.Tx or *sql.Conn, nor rows or a
	// statement of one, is used by two goroutines at once; nothing in Surety shares one so.
	q.Set("_mutex", "no")
	// Each connection keeps its last statements prepared (the driver's cache, reset before
	// reuse): a write that runs the same few statements each time skips parsing them again.
	q.Set("_stmt_cache_size", strconv.Itoa(stmtCacheSize))
	db, err := sql.Open(driverName, "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	db.SetMaxIdleConns(idleConns)
	db.SetConnMaxIdleTime(idleConnLife)
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		db.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		db.Close()
		return nil, fmt.Errorf("open database %s: journal mode is %q, want wal", path, mode)
	}
	return db, nil
}

// Migration is one step of a package's schema. Versions count up from 1 per owner; a step
// that has been applied is never run again, so steps are only ever appended, never edited.
type Migration struct {
	Version int
	SQL     string
}

// Migrate applies the migrations of owner (a package name) that the database has not seen
// yet, each in its own transaction together with its bookkeeping row, so a crash leaves the
// schema at a whole step.
func Migrate(ctx context.Context, db *sql.DB, owner string, migrations []Migration) error {
	return MigrateLogged(ctx, db, owner, migrations, nil)
}

// MigrateLogged is Migrate, saying on log (when not nil) when each step of a database that
// had a schema starts and how long it took: a step that rewrites every row of a large table
// takes minutes (a new database's steps run on empty tables, unsaid). After an upgrade's
// steps it truncates the write-ahead log, which holds a copy of every page they wrote (a
// TRUNCATE checkpoint waits for the database's readers and writers: a new database skips it).
func MigrateLogged(ctx context.Context, db *sql.DB, owner string, migrations []Migration, log *slog.Logger) error {
	for i, m := range migrations {
		if m.Version != i+1 {
			return fmt.Errorf("migrate %s: %w (got %d at position %d)", owner, ErrMigrationOrder, m.Version, i+1)
		}
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		owner      TEXT    NOT NULL,
		version    INTEGER NOT NULL,
		applied_at INTEGER NOT NULL DEFAULT (unixepoch()),
		PRIMARY KEY (owner, version)
	) STRICT`); err != nil {
		return fmt.Errorf("migrate %s: %w", owner, err)
	}
	var applied int
	if err := db.QueryRowContext(ctx,
		`SELECT COALESCE(MAX(version), 0) FROM schema_migrations WHERE owner = ?`, owner,
	).Scan(&applied); err != nil {
		return fmt.Errorf("migrate %s: %w", owner, err)
	}
	if applied > len(migrations) {
		return fmt.Errorf("migrate %s: database is at version %d, this build knows %d: it was written by a newer surety", owner, applied, len(migrations))
	}
	if log == nil || applied == 0 {
		log = slog.New(slog.DiscardHandler)
	}
	for _, m := range migrations[applied:] {
		start := time.Now()
		log.Info("migrating the database", "owner", owner, "version", m.Version)
		if err := apply(ctx, db, owner, m); err != nil {
			return fmt.Errorf("migrate %s to version %d: %w", owner, m.Version, err)
		}
		log.Info("migrated the database", "owner", owner, "version", m.Version, "took", time.Since(start).Round(time.Millisecond))
	}
	if applied > 0 && applied < len(migrations) { // an upgrade: its log may be a table's size
		if _, err := db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
			return fmt.Errorf("migrate %s: checkpoint: %w", owner, err)
		}
	}
	return nil
}

func apply(ctx context.Context, db *sql.DB, owner string, m Migration) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO schema_migrations (owner, version) VALUES (?, ?)`, owner, m.Version); err != nil {
		return err
	}
	return tx.Commit()
}
