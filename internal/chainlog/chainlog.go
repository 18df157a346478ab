// Package chainlog follows contracts' logs from a chain into SQLite, crash-safely and
// reorg-safely, for any package that keeps a projection of them (the escrow's bounties, the
// stake registry's agents).
//
// A Follower reads confirmed blocks in batches. Each batch is written in one transaction: the
// handler stores and projects the batch's logs, and the follower stores its cursor (the last
// block and its hash) and the hash of every block that had logs. A crash, even kill -9, leaves
// the index at a whole batch and the next run resumes after it, so no log is lost or applied
// twice. Before each sync the cursor's hash is compared with the chain's; a difference means
// blocks the index trusted were replaced, and the follower walks back to the last block whose
// hash still matches, has the handler forget everything after it, and reads on from there.
package chainlog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"golang.org/x/sync/singleflight"

	"github.com/surety-ioa/surety/internal/sqlite"
)

// Defaults of Config.
const (
	// DefaultBatchBlocks bounds the block range of one log query and one transaction.
	DefaultBatchBlocks = 5000
	// DefaultPoll is how often the chain is checked when nobody nudges the follower.
	DefaultPoll = time.Second
	// headTimeout bounds one read of the chain's head that CatchUp's callers share.
	headTimeout = 10 * time.Second
)

// migrations are the follower's tables, shared by every follower in the database and told
// apart by name.
var migrations = []sqlite.Migration{{Version: 1, SQL: `
CREATE TABLE chainlog_cursor (
	chain INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	name  TEXT    NOT NULL,
	block INTEGER NOT NULL,
	hash  TEXT    NOT NULL,
	PRIMARY KEY (chain, name)
) STRICT;

CREATE TABLE chainlog_blocks (
	chain INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	name  TEXT    NOT NULL,
	block INTEGER NOT NULL,
	hash  TEXT    NOT NULL,
	PRIMARY KEY (chain, name, block)
) STRICT;
`}}

// Migrate creates the follower's tables. New calls it; a package whose own migration moves an
// older cursor into chainlog_cursor calls it first.
func Migrate(ctx context.Context, db *sql.DB) error {
	return sqlite.Migrate(ctx, db, "chainlog", migrations)
}

// Source is what the follower reads from the chain.
type Source interface {
	FilterLogs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error)
	BlockNumber(ctx context.Context) (uint64, error)
	HeaderByNumber(ctx context.Context, number *big.Int) (*types.Header, error)
}

// Handler keeps a projection of the logs. Both methods run inside the follower's transaction:
// what they write commits together with the cursor, or not at all.
type Handler interface {
	// Apply stores and projects one batch of logs, in chain order (logs a reorganization
	// removed are left out). A log can come twice when a range is read again; the handler
	// keys what it stores so that the second time changes nothing. The returned function,
	// when not nil, runs after the batch committed (to tell subscribers) and before
	// WaitIndexed returns for the batch's blocks.
	Apply(ctx context.Context, tx *sql.Tx, logs []types.Log) (after func(), err error)
	// Rollback forgets every log of blocks after block and rebuilds what they touched.
	Rollback(ctx context.Context, tx *sql.Tx, block uint64) error
}

// Preparer is a Handler that reads the chain for what it applies (a call at the logs'
// block, say): Prepare runs with each batch before the follower's transaction opens, so the
// reads never hold the database's write lock, and Apply finds what Prepare read.
type Preparer interface {
	Prepare(ctx context.Context, logs []types.Log) error
}

// Config sets up a Follower.
type Config struct {
	DB *sql.DB
	// Chain is the chains-table row that scopes the index (sqlite.EnterChain).
	Chain int64
	// Name tells this follower's cursor from other followers' (e.g. "escrow").
	Name string
	// Client reads logs and heads.
	Client Source
	// Addresses are the contracts whose logs are followed; StartBlock is the block they
	// were deployed in.
	Addresses  []common.Address
	StartBlock uint64
	// Confirmations: blocks newer than head - Confirmations are not read yet (0 on the
	// embedded chain, which never reorganizes).
	Confirmations uint64
	// BatchBlocks bounds one log query and one transaction; 0 means DefaultBatchBlocks.
	BatchBlocks uint64
	// Poll is how often the chain is checked when nobody nudges; 0 means DefaultPoll.
	Poll   time.Duration
	Logger *slog.Logger
}

// Follower follows the configured contracts' logs into a Handler.
type Follower struct {
	cfg Config
	h   Handler

	mu      sync.Mutex
	cond    *sync.Cond
	indexed uint64 // highest block fully indexed
	nudge   chan struct{}
	heads   singleflight.Group // CatchUp's reads of the head, one at a time for all callers
}

// New migrates the follower's tables and loads its cursor.
func New(ctx context.Context, cfg Config, h Handler) (*Follower, error) {
	if cfg.Name == "" {
		return nil, errors.New("chainlog: a follower needs a name")
	}
	if cfg.BatchBlocks == 0 {
		cfg.BatchBlocks = DefaultBatchBlocks
	}
	if cfg.Poll == 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if err := Migrate(ctx, cfg.DB); err != nil {
		return nil, err
	}
	f := &Follower{cfg: cfg, h: h, nudge: make(chan struct{}, 1)}
	f.cond = sync.NewCond(&f.mu)
	var block uint64
	err := cfg.DB.QueryRowContext(ctx, `SELECT block FROM chainlog_cursor WHERE chain = ? AND name = ?`, cfg.Chain, cfg.Name).Scan(&block)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if cfg.StartBlock > 0 {
			block = cfg.StartBlock - 1
		}
	case err != nil:
		return nil, fmt.Errorf("%s index: read cursor: %w", cfg.Name, err)
	}
	f.indexed = block
	return f, nil
}

// Indexed is the highest block whose logs are all in the index.
func (f *Follower) Indexed() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.indexed
}

// Nudge asks the follower to look at the chain now (after a transaction was mined).
func (f *Follower) Nudge() {
	select {
	case f.nudge <- struct{}{}:
	default:
	}
}

// Run syncs until ctx ends: whenever nudged, and every Poll otherwise.
func (f *Follower) Run(ctx context.Context) error {
	t := time.NewTicker(f.cfg.Poll)
	defer t.Stop()
	for {
		if _, err := f.Sync(ctx); err != nil && ctx.Err() == nil {
			f.cfg.Logger.Warn(f.cfg.Name+" index: sync failed; will retry", "err", err)
		}
		select {
		case <-ctx.Done():
			f.mu.Lock()
			f.cond.Broadcast()
			f.mu.Unlock()
			return nil
		case <-f.nudge:
		case <-t.C:
		}
	}
}

// WaitIndexed blocks until block is indexed (or ctx ends).
func (f *Follower) WaitIndexed(ctx context.Context, block uint64) error {
	f.Nudge()
	stop := context.AfterFunc(ctx, func() {
		f.mu.Lock()
		f.cond.Broadcast()
		f.mu.Unlock()
	})
	defer stop()
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.indexed < block {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("wait for block %d to be indexed: %w", block, err)
		}
		f.cond.Wait()
	}
	return nil
}

// CatchUp waits (within ctx) until the index holds every block that is confirmed now: for a
// reader that found nothing and must know whether the chain has it, not whether this node
// has read it yet.
func (f *Follower) CatchUp(ctx context.Context) error {
	head, err := f.head(ctx)
	if err != nil {
		return fmt.Errorf("%s index: head: %w", f.cfg.Name, err)
	}
	if head < f.cfg.Confirmations {
		return nil
	}
	return f.WaitIndexed(ctx, head-f.cfg.Confirmations)
}

// head reads the chain's head for CatchUp: callers at the same time share one read (readers
// of a public node call CatchUp per request, and a flood of requests must not become a
// flood of chain calls), which no one caller's ctx cancels for the others.
func (f *Follower) head(ctx context.Context) (uint64, error) {
	ch := f.heads.DoChan("head", func() (any, error) {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), headTimeout)
		defer cancel()
		return f.cfg.Client.BlockNumber(rctx)
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return 0, r.Err
		}
		return r.Val.(uint64), nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// Sync indexes every confirmed block not yet indexed and returns the new cursor.
func (f *Follower) Sync(ctx context.Context) (uint64, error) {
	head, err := f.cfg.Client.BlockNumber(ctx)
	if err != nil {
		return 0, fmt.Errorf("%s index: head: %w", f.cfg.Name, err)
	}
	if head < f.cfg.Confirmations {
		return f.Indexed(), nil
	}
	target := head - f.cfg.Confirmations
	if err := f.checkReorg(ctx); err != nil {
		return 0, err
	}
	for from := f.Indexed() + 1; from <= target; {
		to := min(from+f.cfg.BatchBlocks-1, target)
		if err := f.indexRange(ctx, from, to); err != nil {
			return 0, err
		}
		from = to + 1
	}
	return f.Indexed(), nil
}

// checkReorg compares the cursor's block hash with the chain's. A difference means blocks
// the index trusted were replaced: it rolls the index back and re-reads from there.
func (f *Follower) checkReorg(ctx context.Context) error {
	var block uint64
	var hash string
	err := f.cfg.DB.QueryRowContext(ctx, `SELECT block, hash FROM chainlog_cursor WHERE chain = ? AND name = ?`, f.cfg.Chain, f.cfg.Name).Scan(&block, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	same, err := f.sameHash(ctx, block, hash)
	if err != nil || same {
		return err
	}
	// Walk back through the blocks that had logs to the last one the chain still has.
	back := f.cfg.StartBlock
	if back > 0 {
		back--
	}
	rows, err := f.cfg.DB.QueryContext(ctx, `SELECT block, hash FROM chainlog_blocks WHERE chain = ? AND name = ? AND block < ? ORDER BY block DESC`,
		f.cfg.Chain, f.cfg.Name, block)
	if err != nil {
		return err
	}
	type seen struct {
		block uint64
		hash  string
	}
	var list []seen
	for rows.Next() {
		var s seen
		if err := rows.Scan(&s.block, &s.hash); err != nil {
			rows.Close()
			return err
		}
		list = append(list, s)
	}
	rows.Close()
	for _, s := range list {
		same, err := f.sameHash(ctx, s.block, s.hash)
		if err != nil {
			return err
		}
		if same {
			back = s.block
			break
		}
	}
	f.cfg.Logger.Warn(f.cfg.Name+" index: chain reorganized; re-reading", "from", back+1, "was", block)
	return f.rollback(ctx, back)
}

func (f *Follower) sameHash(ctx context.Context, block uint64, hash string) (bool, error) {
	h, err := f.cfg.Client.HeaderByNumber(ctx, new(big.Int).SetUint64(block))
	if err != nil {
		return false, fmt.Errorf("%s index: header %d: %w", f.cfg.Name, block, err)
	}
	return h.Hash().Hex() == hash, nil
}

// rollback forgets every block after block, in the handler's tables and the follower's.
func (f *Follower) rollback(ctx context.Context, block uint64) error {
	tx, err := f.cfg.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := f.h.Rollback(ctx, tx, block); err != nil {
		return fmt.Errorf("%s index: roll back to block %d: %w", f.cfg.Name, block, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM chainlog_blocks WHERE chain = ? AND name = ? AND block > ?`, f.cfg.Chain, f.cfg.Name, block); err != nil {
		return err
	}
	hash := ""
	if h, err := f.cfg.Client.HeaderByNumber(ctx, new(big.Int).SetUint64(block)); err == nil {
		hash = h.Hash().Hex()
	}
	if err := f.putCursor(ctx, tx, block, hash); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	f.mu.Lock()
	f.indexed = block
	f.mu.Unlock()
	return nil
}

func (f *Follower) putCursor(ctx context.Context, tx *sql.Tx, block uint64, hash string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO chainlog_cursor (chain, name, block, hash) VALUES (?, ?, ?, ?)
		ON CONFLICT (chain, name) DO UPDATE SET block = excluded.block, hash = excluded.hash`, f.cfg.Chain, f.cfg.Name, block, hash)
	return err
}

// indexRange reads the logs of [from, to] and stores them in one transaction with the cursor.
func (f *Follower) indexRange(ctx context.Context, from, to uint64) error {
	logs, err := f.cfg.Client.FilterLogs(ctx, ethereum.FilterQuery{
		FromBlock: new(big.Int).SetUint64(from), ToBlock: new(big.Int).SetUint64(to),
		Addresses: f.cfg.Addresses,
	})
	if err != nil {
		return fmt.Errorf("%s index: logs %d-%d: %w", f.cfg.Name, from, to, err)
	}
	head, err := f.cfg.Client.HeaderByNumber(ctx, new(big.Int).SetUint64(to))
	if err != nil {
		return fmt.Errorf("%s index: header %d: %w", f.cfg.Name, to, err)
	}
	kept := logs[:0]
	for _, l := range logs {
		if !l.Removed {
			kept = append(kept, l)
		}
	}
	// What a handler reads of the chain for a batch it reads before the database's write
	// transaction opens: a slow chain must not hold the lock every index shares.
	if p, ok := f.h.(Preparer); ok {
		if err := p.Prepare(ctx, kept); err != nil {
			return fmt.Errorf("%s index: blocks %d-%d: %w", f.cfg.Name, from, to, err)
		}
	}
	tx, err := f.cfg.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	after, err := f.h.Apply(ctx, tx, kept)
	if err != nil {
		return fmt.Errorf("%s index: blocks %d-%d: %w", f.cfg.Name, from, to, err)
	}
	for i, l := range kept {
		if i > 0 && kept[i-1].BlockNumber == l.BlockNumber {
			continue
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO chainlog_blocks (chain, name, block, hash) VALUES (?, ?, ?, ?)
			ON CONFLICT DO UPDATE SET hash = excluded.hash`, f.cfg.Chain, f.cfg.Name, l.BlockNumber, l.BlockHash.Hex()); err != nil {
			return err
		}
	}
	if err := f.putCursor(ctx, tx, to, head.Hash().Hex()); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s index: commit: %w", f.cfg.Name, err)
	}
	// The handler's after-commit work (its watchers) runs before WaitIndexed sees the new
	// cursor, so whoever waited for a block finds its consequences done.
	if after != nil {
		after()
	}
	f.mu.Lock()
	f.indexed = to
	f.cond.Broadcast()
	f.mu.Unlock()
	return nil
}
