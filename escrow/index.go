package escrow

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/sqlite"
)

// migrations are the escrow package's tables. Every row belongs to one chain (see
// internal/sqlite's chains table) and goes when that chain's state is dropped.
var migrations = []sqlite.Migration{{Version: 1, SQL: `
CREATE TABLE escrow_cursor (
	chain INTEGER PRIMARY KEY REFERENCES chains(id) ON DELETE CASCADE,
	block INTEGER NOT NULL,
	hash  TEXT    NOT NULL
) STRICT;

CREATE TABLE escrow_events (
	chain      INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	block      INTEGER NOT NULL,
	block_hash TEXT    NOT NULL,
	tx_hash    TEXT    NOT NULL,
	log_index  INTEGER NOT NULL,
	bounty_id  INTEGER,
	name       TEXT    NOT NULL,
	data       TEXT    NOT NULL,
	PRIMARY KEY (chain, tx_hash, log_index)
) STRICT;
CREATE INDEX escrow_events_bounty ON escrow_events (chain, bounty_id, block, log_index);
CREATE INDEX escrow_events_block ON escrow_events (chain, block);

CREATE TABLE escrow_bounties (
	chain         INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	id            INTEGER NOT NULL,
	poster        TEXT    NOT NULL,
	token         TEXT    NOT NULL,
	amount        TEXT    NOT NULL,
	arbiter       TEXT    NOT NULL,
	deadline      INTEGER NOT NULL,
	review_window INTEGER NOT NULL,
	fee_bps       INTEGER NOT NULL,
	min_stake     TEXT    NOT NULL,
	spec_hash     TEXT    NOT NULL,
	worker        TEXT    NOT NULL DEFAULT '',
	status        TEXT    NOT NULL,
	result_hash   TEXT    NOT NULL DEFAULT '',
	payout        TEXT    NOT NULL DEFAULT '0',
	fee           TEXT    NOT NULL DEFAULT '0',
	poster_refund TEXT    NOT NULL DEFAULT '0',
	posted_block  INTEGER NOT NULL,
	updated_block INTEGER NOT NULL,
	PRIMARY KEY (chain, id)
) STRICT;
CREATE INDEX escrow_bounties_status ON escrow_bounties (chain, status);
CREATE INDEX escrow_bounties_poster ON escrow_bounties (chain, poster);
CREATE INDEX escrow_bounties_worker ON escrow_bounties (chain, worker);
`}}

// Status is a bounty's status, as the index shows it.
type Status string

// Statuses, in the contract's order.
const (
	StatusOpen      Status = "open"
	StatusAssigned  Status = "assigned"
	StatusSubmitted Status = "submitted"
	StatusDisputed  Status = "disputed"
	StatusAccepted  Status = "accepted"
	StatusReleased  Status = "released"
	StatusResolved  Status = "resolved"
	StatusRefunded  Status = "refunded"
	StatusCancelled Status = "cancelled"
)

// Terminal reports whether nothing can happen to a bounty in status s any more.
func (s Status) Terminal() bool {
	switch s {
	case StatusAccepted, StatusReleased, StatusResolved, StatusRefunded, StatusCancelled:
		return true
	}
	return false
}

// LogSource is what the indexer reads from the chain.
type LogSource interface {
	FilterLogs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error)
	BlockNumber(ctx context.Context) (uint64, error)
	HeaderByNumber(ctx context.Context, number *big.Int) (*types.Header, error)
}

// IndexerConfig sets up an Indexer.
type IndexerConfig struct {
	DB *sql.DB
	// Chain is the chains-table row that scopes the index (sqlite.EnterChain).
	Chain int64
	// Client reads logs and heads.
	Client LogSource
	// Escrow is the BountyEscrow address; StartBlock is its deployment block.
	Escrow     common.Address
	StartBlock uint64
	// Confirmations: blocks newer than head - Confirmations are not indexed yet (0 on the
	// embedded chain, which never reorganizes).
	Confirmations uint64
	// BatchBlocks bounds the block range of one log query and one database transaction;
	// 0 means 5000.
	BatchBlocks uint64
	// Poll is how often the chain is checked when nobody nudges the indexer; 0 means 1s.
	Poll   time.Duration
	Logger *slog.Logger
}

// Indexer follows the escrow's events into SQLite. Each batch of blocks is written in one
// transaction together with the cursor, so a crash (even kill -9) resumes from the last
// whole batch: no event is lost or stored twice. Events are keyed by transaction hash and log
// index, and bounty rows are a projection of them, rebuilt when a reorganization deeper than
// the confirmation depth replaces blocks already indexed.
type Indexer struct {
	cfg    IndexerConfig
	abi    *abi.ABI
	escrow *contracts.BountyEscrow

	mu      sync.Mutex
	cond    *sync.Cond
	indexed uint64 // highest block fully indexed
	err     error  // last sync error, for WaitIndexed
	nudge   chan struct{}
	subs    map[uint64][]chan Event
}

// NewIndexer migrates the escrow tables and loads the cursor.
func NewIndexer(ctx context.Context, cfg IndexerConfig) (*Indexer, error) {
	if cfg.BatchBlocks == 0 {
		cfg.BatchBlocks = 5000
	}
	if cfg.Poll == 0 {
		cfg.Poll = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if err := sqlite.Migrate(ctx, cfg.DB, "escrow", append(migrations, requestMigration)); err != nil {
		return nil, err
	}
	parsed, err := contracts.BountyEscrowMetaData.ParseABI()
	if err != nil {
		return nil, err
	}
	ix := &Indexer{cfg: cfg, abi: parsed, escrow: contracts.NewBountyEscrow(), nudge: make(chan struct{}, 1), subs: map[uint64][]chan Event{}}
	ix.cond = sync.NewCond(&ix.mu)
	var block uint64
	err = cfg.DB.QueryRowContext(ctx, `SELECT block FROM escrow_cursor WHERE chain = ?`, cfg.Chain).Scan(&block)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if cfg.StartBlock > 0 {
			block = cfg.StartBlock - 1
		}
	case err != nil:
		return nil, fmt.Errorf("escrow index: read cursor: %w", err)
	}
	ix.indexed = block
	return ix, nil
}

// Indexed is the highest block whose events are all in the index.
func (ix *Indexer) Indexed() uint64 {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.indexed
}

// Nudge asks the indexer to look at the chain now (after a transaction was mined).
func (ix *Indexer) Nudge() {
	select {
	case ix.nudge <- struct{}{}:
	default:
	}
}

// Run syncs until ctx ends: whenever nudged, and every Poll otherwise.
func (ix *Indexer) Run(ctx context.Context) error {
	t := time.NewTicker(ix.cfg.Poll)
	defer t.Stop()
	for {
		if _, err := ix.Sync(ctx); err != nil && ctx.Err() == nil {
			ix.cfg.Logger.Warn("escrow index: sync failed; will retry", "err", err)
		}
		select {
		case <-ctx.Done():
			ix.mu.Lock()
			ix.err = ctx.Err()
			ix.cond.Broadcast()
			ix.mu.Unlock()
			return nil
		case <-ix.nudge:
		case <-t.C:
		}
	}
}

// WaitIndexed blocks until block is indexed (or ctx ends).
func (ix *Indexer) WaitIndexed(ctx context.Context, block uint64) error {
	ix.Nudge()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			ix.mu.Lock()
			ix.cond.Broadcast()
			ix.mu.Unlock()
		case <-done:
		}
	}()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for ix.indexed < block {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("wait for block %d to be indexed: %w", block, err)
		}
		ix.cond.Wait()
	}
	return nil
}

// Sync indexes every confirmed block not yet indexed and returns the new cursor.
func (ix *Indexer) Sync(ctx context.Context) (uint64, error) {
	head, err := ix.cfg.Client.BlockNumber(ctx)
	if err != nil {
		return 0, fmt.Errorf("escrow index: head: %w", err)
	}
	if head < ix.cfg.Confirmations {
		return ix.Indexed(), nil
	}
	target := head - ix.cfg.Confirmations
	if err := ix.checkReorg(ctx); err != nil {
		return 0, err
	}
	for from := ix.Indexed() + 1; from <= target; {
		to := min(from+ix.cfg.BatchBlocks-1, target)
		if err := ix.indexRange(ctx, from, to); err != nil {
			return 0, err
		}
		from = to + 1
	}
	return ix.Indexed(), nil
}

// checkReorg compares the cursor's block hash with the chain's. A difference means blocks
// the index trusted were replaced: it rolls the index back and re-reads from there.
func (ix *Indexer) checkReorg(ctx context.Context) error {
	var block uint64
	var hash string
	err := ix.cfg.DB.QueryRowContext(ctx, `SELECT block, hash FROM escrow_cursor WHERE chain = ?`, ix.cfg.Chain).Scan(&block, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	h, err := ix.cfg.Client.HeaderByNumber(ctx, new(big.Int).SetUint64(block))
	if err != nil {
		return fmt.Errorf("escrow index: header %d: %w", block, err)
	}
	if h.Hash().Hex() == hash {
		return nil
	}
	// Walk back to the last indexed block the chain still has.
	back := block
	for back > ix.cfg.StartBlock && back > 0 {
		back--
		var stored string
		err := ix.cfg.DB.QueryRowContext(ctx, `SELECT block_hash FROM escrow_events WHERE chain = ? AND block = ? LIMIT 1`, ix.cfg.Chain, back).Scan(&stored)
		if errors.Is(err, sql.ErrNoRows) {
			continue // no event there: nothing to compare, keep walking
		}
		if err != nil {
			return err
		}
		h, err := ix.cfg.Client.HeaderByNumber(ctx, new(big.Int).SetUint64(back))
		if err != nil {
			return err
		}
		if h.Hash().Hex() == stored {
			break
		}
	}
	ix.cfg.Logger.Warn("escrow index: chain reorganized; re-reading", "from", back+1, "was", block)
	return ix.rollback(ctx, back)
}

// rollback forgets events after block and rebuilds the bounties they touched.
func (ix *Indexer) rollback(ctx context.Context, block uint64) error {
	tx, err := ix.cfg.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT bounty_id FROM escrow_events WHERE chain = ? AND block > ? AND bounty_id IS NOT NULL`, ix.cfg.Chain, block)
	if err != nil {
		return err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if _, err := tx.ExecContext(ctx, `DELETE FROM escrow_events WHERE chain = ? AND block > ?`, ix.cfg.Chain, block); err != nil {
		return err
	}
	for _, id := range ids {
		if err := ix.rebuild(ctx, tx, id); err != nil {
			return err
		}
	}
	hash := ""
	if h, err := ix.cfg.Client.HeaderByNumber(ctx, new(big.Int).SetUint64(block)); err == nil {
		hash = h.Hash().Hex()
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO escrow_cursor (chain, block, hash) VALUES (?, ?, ?)
		ON CONFLICT (chain) DO UPDATE SET block = excluded.block, hash = excluded.hash`, ix.cfg.Chain, block, hash); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	ix.mu.Lock()
	ix.indexed = block
	ix.mu.Unlock()
	return nil
}

// rebuild replays a bounty's stored events onto a fresh row.
func (ix *Indexer) rebuild(ctx context.Context, tx *sql.Tx, id int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM escrow_bounties WHERE chain = ? AND id = ?`, ix.cfg.Chain, id); err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, `SELECT block, name, data FROM escrow_events WHERE chain = ? AND bounty_id = ? ORDER BY block, log_index`, ix.cfg.Chain, id)
	if err != nil {
		return err
	}
	type stored struct {
		block uint64
		name  string
		data  string
	}
	var evs []stored
	for rows.Next() {
		var s stored
		if err := rows.Scan(&s.block, &s.name, &s.data); err != nil {
			rows.Close()
			return err
		}
		evs = append(evs, s)
	}
	rows.Close()
	for _, s := range evs {
		if err := ix.project(ctx, tx, Event{BountyID: uint64(id), Name: s.name, Block: s.block, Data: json.RawMessage(s.data)}); err != nil {
			return err
		}
	}
	return nil
}

// indexRange reads the escrow's logs in [from, to] and stores them in one transaction with
// the cursor.
func (ix *Indexer) indexRange(ctx context.Context, from, to uint64) error {
	logs, err := ix.cfg.Client.FilterLogs(ctx, ethereum.FilterQuery{
		FromBlock: new(big.Int).SetUint64(from), ToBlock: new(big.Int).SetUint64(to),
		Addresses: []common.Address{ix.cfg.Escrow},
	})
	if err != nil {
		return fmt.Errorf("escrow index: logs %d-%d: %w", from, to, err)
	}
	head, err := ix.cfg.Client.HeaderByNumber(ctx, new(big.Int).SetUint64(to))
	if err != nil {
		return fmt.Errorf("escrow index: header %d: %w", to, err)
	}
	tx, err := ix.cfg.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var fresh []Event
	for i := range logs {
		l := &logs[i]
		if l.Removed {
			continue
		}
		ev, ok, err := ix.decode(l)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		var bountyID any
		if ev.HasBounty {
			bountyID = int64(ev.BountyID)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO escrow_events (chain, block, block_hash, tx_hash, log_index, bounty_id, name, data)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			ix.cfg.Chain, l.BlockNumber, l.BlockHash.Hex(), l.TxHash.Hex(), l.Index, bountyID, ev.Name, string(ev.Data))
		if err != nil {
			return fmt.Errorf("escrow index: store event: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			continue // already indexed (a range re-read after a reorg check)
		}
		if ev.HasBounty {
			if err := ix.project(ctx, tx, ev); err != nil {
				return err
			}
		}
		fresh = append(fresh, ev)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO escrow_cursor (chain, block, hash) VALUES (?, ?, ?)
		ON CONFLICT (chain) DO UPDATE SET block = excluded.block, hash = excluded.hash`, ix.cfg.Chain, to, head.Hash().Hex()); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("escrow index: commit: %w", err)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.indexed = to
	ix.cond.Broadcast()
	for _, ev := range fresh {
		for _, ch := range ix.subs[ev.BountyID] {
			select {
			case ch <- ev:
			default: // a slow subscriber misses live events; it can re-read the history
			}
		}
	}
	return nil
}
