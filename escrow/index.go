package escrow

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/chainlog"
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
type LogSource = chainlog.Source

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
	// 0 means chainlog.DefaultBatchBlocks.
	BatchBlocks uint64
	// Poll is how often the chain is checked when nobody nudges the indexer; 0 means 1s.
	Poll   time.Duration
	Logger *slog.Logger
}

// cursorMigration moves the escrow's cursor into the shared follower's tables (version 3 of
// the escrow tables); chainlog.Migrate runs first.
var cursorMigration = sqlite.Migration{Version: 3, SQL: `
INSERT INTO chainlog_cursor (chain, name, block, hash) SELECT chain, 'escrow', block, hash FROM escrow_cursor;
INSERT OR IGNORE INTO chainlog_blocks (chain, name, block, hash) SELECT DISTINCT chain, 'escrow', block, block_hash FROM escrow_events;
DROP TABLE escrow_cursor;
`}

// Indexer follows the escrow's events into SQLite, through a chainlog.Follower: each batch of
// blocks is written in one transaction together with the cursor, so a crash (even kill -9)
// resumes from the last whole batch and no event is lost or stored twice. Events are keyed by
// transaction hash and log index, and bounty rows are a projection of them, rebuilt when a
// reorganization deeper than the confirmation depth replaces blocks already indexed.
type Indexer struct {
	*chainlog.Follower
	cfg    IndexerConfig
	abi    *abi.ABI
	escrow *contracts.BountyEscrow

	mu       sync.Mutex
	subs     map[uint64][]chan Event
	watchers []func(context.Context, []Event)
}

// Watch calls fn with the events of every batch the index commits that were new to it, in
// chain order, before WaitIndexed returns for the batch. fn runs on the indexer's goroutine,
// with its context: it must not block for long.
func (ix *Indexer) Watch(fn func(context.Context, []Event)) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.watchers = append(ix.watchers, fn)
}

// requestMigration was the table behind Idempotency-Key, which package txn keeps now (its
// migration 1 creates it where this did not).
var requestMigration = sqlite.Migration{Version: 2, SQL: `SELECT 1;`}

// NewIndexer migrates the escrow tables and loads the cursor.
func NewIndexer(ctx context.Context, cfg IndexerConfig) (*Indexer, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if err := chainlog.Migrate(ctx, cfg.DB); err != nil {
		return nil, err
	}
	if err := sqlite.Migrate(ctx, cfg.DB, "escrow", append(migrations, requestMigration, cursorMigration, specMigration)); err != nil {
		return nil, err
	}
	parsed, err := contracts.BountyEscrowMetaData.ParseABI()
	if err != nil {
		return nil, err
	}
	ix := &Indexer{cfg: cfg, abi: parsed, escrow: contracts.NewBountyEscrow(), subs: map[uint64][]chan Event{}}
	ix.Follower, err = chainlog.New(ctx, chainlog.Config{DB: cfg.DB, Chain: cfg.Chain, Name: "escrow", Client: cfg.Client,
		Addresses: []common.Address{cfg.Escrow}, StartBlock: cfg.StartBlock, Confirmations: cfg.Confirmations,
		BatchBlocks: cfg.BatchBlocks, Poll: cfg.Poll, Logger: cfg.Logger}, (*escrowLogs)(ix))
	if err != nil {
		return nil, err
	}
	return ix, nil
}

// EndsBounty reports whether an event of that name ends a bounty in a settlement
// (Accepted, Released, Resolved, Refunded, Cancelled).
func EndsBounty(name string) bool {
	switch name {
	case "Accepted", "Released", "Resolved", "Refunded", "Cancelled":
		return true
	}
	return false
}

// escrowLogs is the Indexer as the follower's handler.
type escrowLogs Indexer

// Rollback forgets events after block and rebuilds the bounties they touched.
func (h *escrowLogs) Rollback(ctx context.Context, tx *sql.Tx, block uint64) error {
	ix := (*Indexer)(h)
	ids, err := chainlog.ForgetAfter(ctx, tx, "escrow_events", "bounty_id", ix.cfg.Chain, block)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := ix.rebuild(ctx, tx, id); err != nil {
			return err
		}
	}
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

// Apply stores one batch of the escrow's logs and projects them onto the bounty rows; the
// events new to the index go to their bounty's subscribers once the batch commits.
func (h *escrowLogs) Apply(ctx context.Context, tx *sql.Tx, logs []types.Log) (func(), error) {
	ix := (*Indexer)(h)
	var fresh []Event
	for i := range logs {
		l := &logs[i]
		ev, ok, err := ix.decode(l)
		if err != nil {
			return nil, err
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
			return nil, fmt.Errorf("store event: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			continue // already indexed (a range re-read after a reorg check)
		}
		if ev.HasBounty {
			if err := ix.project(ctx, tx, ev); err != nil {
				return nil, err
			}
		}
		fresh = append(fresh, ev)
	}
	if len(fresh) == 0 {
		return nil, nil
	}
	return func() { ix.publish(ctx, fresh) }, nil
}

// publish hands fresh events to the watchers and to their bounties' subscribers.
func (ix *Indexer) publish(ctx context.Context, fresh []Event) {
	ix.mu.Lock()
	ws := append([]func(context.Context, []Event){}, ix.watchers...)
	ix.mu.Unlock()
	for _, w := range ws {
		w(ctx, fresh)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, ev := range fresh {
		for _, ch := range ix.subs[ev.BountyID] {
			select {
			case ch <- ev:
			default: // a slow subscriber misses live events; it can re-read the history
			}
		}
	}
}
