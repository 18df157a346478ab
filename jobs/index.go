package jobs

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/big"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/surety-ioa/surety/internal/chainlog"
	"github.com/surety-ioa/surety/internal/sqlite"
)

// migrations are the jobs package's tables. Every row belongs to one chain (see
// internal/sqlite's chains table) and goes when that chain's state is dropped.
var migrations = []sqlite.Migration{{Version: 1, SQL: `
CREATE TABLE jobs_events (
	chain      INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	block      INTEGER NOT NULL,
	block_hash TEXT    NOT NULL,
	tx_hash    TEXT    NOT NULL,
	log_index  INTEGER NOT NULL,
	contract   TEXT    NOT NULL,
	job_id     INTEGER,
	name       TEXT    NOT NULL,
	data       TEXT    NOT NULL,
	PRIMARY KEY (chain, tx_hash, log_index)
) STRICT;
CREATE INDEX jobs_events_job ON jobs_events (chain, job_id, block, log_index);
CREATE INDEX jobs_events_block ON jobs_events (chain, block);

CREATE TABLE jobs_jobs (
	chain         INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	id            INTEGER NOT NULL,
	client        TEXT    NOT NULL,
	provider      TEXT    NOT NULL,
	evaluator     TEXT    NOT NULL,
	hook          TEXT    NOT NULL,
	expired_at    INTEGER NOT NULL,
	description   TEXT    NOT NULL DEFAULT '',
	agent_id      TEXT    NOT NULL DEFAULT '0',
	token         TEXT    NOT NULL DEFAULT '',
	budget        TEXT    NOT NULL DEFAULT '0',
	status        TEXT    NOT NULL,
	deliverable   TEXT    NOT NULL DEFAULT '',
	reason        TEXT    NOT NULL DEFAULT '',
	rejected_by   TEXT    NOT NULL DEFAULT '',
	payout        TEXT    NOT NULL DEFAULT '0',
	platform_fee  TEXT    NOT NULL DEFAULT '0',
	evaluator_fee TEXT    NOT NULL DEFAULT '0',
	refund        TEXT    NOT NULL DEFAULT '0',
	created_block INTEGER NOT NULL,
	updated_block INTEGER NOT NULL,
	PRIMARY KEY (chain, id)
) STRICT;
CREATE INDEX jobs_jobs_status ON jobs_jobs (chain, status);
CREATE INDEX jobs_jobs_client ON jobs_jobs (chain, client);
CREATE INDEX jobs_jobs_provider ON jobs_jobs (chain, provider);

-- The workers of a job besides its provider of record: SuretyHook's entrants, so that a
-- list by provider finds the jobs a worker competes in.
CREATE TABLE jobs_workers (
	chain  INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	job_id INTEGER NOT NULL,
	worker TEXT    NOT NULL,
	PRIMARY KEY (chain, job_id, worker)
) STRICT;
CREATE INDEX jobs_workers_worker ON jobs_workers (chain, worker);
`}}

// Status is a job's status (ERC-8183's JobStatus), as the index shows it.
type Status string

// Statuses, in the standard's order.
const (
	StatusOpen      Status = "open"
	StatusFunded    Status = "funded"
	StatusSubmitted Status = "submitted"
	StatusCompleted Status = "completed"
	StatusRejected  Status = "rejected"
	StatusExpired   Status = "expired"
)

// Statuses lists every status, in the standard's order (JobStatus's values).
var Statuses = []Status{StatusOpen, StatusFunded, StatusSubmitted, StatusCompleted, StatusRejected, StatusExpired}

// Terminal reports whether nothing can happen to a job in status s any more.
func (s Status) Terminal() bool {
	return s == StatusCompleted || s == StatusRejected || s == StatusExpired
}

// Valid reports whether s is one of the statuses.
func (s Status) Valid() bool {
	for _, v := range Statuses {
		if s == v {
			return true
		}
	}
	return false
}

// Caller makes read-only contract calls at a block (bind.ContractCaller).
type Caller interface {
	CallContract(ctx context.Context, call ethereum.CallMsg, blockNumber *big.Int) ([]byte, error)
}

// IndexerConfig sets up an Indexer.
type IndexerConfig struct {
	DB *sql.DB
	// Chain is the chains-table row that scopes the index (sqlite.EnterChain).
	Chain int64
	// Client reads logs and heads.
	Client chainlog.Source
	// Caller reads what no event carries (a job's description and agent id, with getJob at
	// the block that created the job); nil leaves them out.
	Caller Caller
	// JobEscrow is the ERC-8183 contract; Hook is SuretyHook (zero: none). StartBlock is
	// the block they were deployed in.
	JobEscrow  common.Address
	Hook       common.Address
	StartBlock uint64
	// Confirmations: blocks newer than head - Confirmations are not indexed yet (0 on the
	// embedded chain, which never reorganizes).
	Confirmations uint64
	// BatchBlocks bounds one log query and one database transaction; 0 means
	// chainlog.DefaultBatchBlocks.
	BatchBlocks uint64
	// Poll is how often the chain is checked when nobody nudges the indexer; 0 means 1s.
	Poll   time.Duration
	Logger *slog.Logger
}

// source is one contract the index follows: its name, address and ABI.
type source struct {
	name string
	addr common.Address
	abi  *abi.ABI
}

// Indexer follows JobEscrow's and SuretyHook's events into SQLite through a
// chainlog.Follower: each batch of blocks is written in one transaction with the cursor, so
// a crash (even kill -9) resumes after the last whole batch and no event is lost or stored
// twice. Events are keyed by transaction hash and log index; job rows are their projection,
// rebuilt when a reorganization replaces blocks already indexed.
type Indexer struct {
	*chainlog.Follower
	cfg     IndexerConfig
	sources map[common.Address]source
	escrow  *abi.ABI

	mu       sync.Mutex
	watchers []func(context.Context, []Event)
	// created holds what Prepare read with getJob for the batch's JobCreated logs, by log,
	// for Apply (which runs inside the database transaction and reads no chain).
	created map[logKey]map[string]any
}

// logKey names one log.
type logKey struct {
	tx    common.Hash
	index uint
}

// NewIndexer migrates the jobs tables and loads the cursor.
func NewIndexer(ctx context.Context, cfg IndexerConfig) (*Indexer, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.JobEscrow == (common.Address{}) {
		return nil, fmt.Errorf("jobs index: no JobEscrow address")
	}
	if err := sqlite.Migrate(ctx, cfg.DB, "jobs", append(migrations, hookMigration)); err != nil {
		return nil, err
	}
	ix := &Indexer{cfg: cfg, sources: map[common.Address]source{}}
	list, err := contractSources(cfg.JobEscrow, cfg.Hook)
	if err != nil {
		return nil, err
	}
	var addrs []common.Address
	for _, s := range list {
		ix.sources[s.addr] = s
		addrs = append(addrs, s.addr)
		if s.name == escrowName {
			ix.escrow = s.abi
		}
	}
	ix.Follower, err = chainlog.New(ctx, chainlog.Config{DB: cfg.DB, Chain: cfg.Chain, Name: "jobs", Client: cfg.Client,
		Addresses: addrs, StartBlock: cfg.StartBlock, Confirmations: cfg.Confirmations,
		BatchBlocks: cfg.BatchBlocks, Poll: cfg.Poll, Logger: cfg.Logger}, (*jobLogs)(ix))
	if err != nil {
		return nil, err
	}
	return ix, nil
}

// Watch calls fn with the events of every batch the index commits that were new to it, in
// chain order, before WaitIndexed returns for the batch. fn runs on the indexer's goroutine:
// it must not block for long.
func (ix *Indexer) Watch(fn func(context.Context, []Event)) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.watchers = append(ix.watchers, fn)
}

// Event is one event of JobEscrow or SuretyHook as the index keeps it.
type Event struct {
	// JobID is the job the event names (0: none, e.g. a fee setting).
	JobID uint64 `json:"jobId,omitempty"`
	// Contract is "JobEscrow" or "SuretyHook".
	Contract string `json:"contract"`
	Name     string `json:"name"`
	Block    uint64 `json:"block"`
	TxHash   string `json:"txHash"`
	LogIndex uint   `json:"logIndex"`
	// Data are the event's arguments by name (see Args).
	Data json.RawMessage `json:"data"`
}

// args decodes the event's arguments.
func (e *Event) args() (Args, error) {
	return decodeArgs(e.Data)
}

// decodeArgs reads stored Args, numbers as json.Number.
func decodeArgs(data []byte) (Args, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var a Args
	if err := dec.Decode(&a); err != nil {
		return nil, err
	}
	return a, nil
}

// decode turns a log of one of the followed contracts into an Event; ok is false for a log
// no ABI knows.
func (ix *Indexer) decode(ctx context.Context, l *types.Log) (ev Event, ok bool, err error) {
	src, known := ix.sources[l.Address]
	if !known || len(l.Topics) == 0 {
		return ev, false, nil
	}
	abiEv, err := src.abi.EventByID(l.Topics[0])
	if err != nil {
		return ev, false, nil // an event of no interest (or of an ABI this node predates)
	}
	args, err := unpackLog(*abiEv, l)
	if err != nil {
		return ev, false, fmt.Errorf("jobs index: %s.%s at %s/%d: %w", src.name, abiEv.Name, l.TxHash.Hex(), l.Index, err)
	}
	ev = Event{Contract: src.name, Name: abiEv.Name, Block: l.BlockNumber, TxHash: l.TxHash.Hex(), LogIndex: l.Index}
	ev.JobID, _ = args.Uint(jobIDArg)
	if src.name == escrowName && abiEv.Name == "JobCreated" && ev.JobID != 0 {
		ix.mu.Lock()
		extra, ok := ix.created[logKey{l.TxHash, l.Index}]
		ix.mu.Unlock()
		if ok {
			args[createdExtra] = extra
		}
	}
	if ev.Data, err = json.Marshal(args); err != nil {
		return ev, false, err
	}
	return ev, true, nil
}

// jobLogs is the Indexer as the follower's handler.
type jobLogs Indexer

// Prepare reads, before the batch's transaction, what the batch's JobCreated logs do not say
// (getJob at their block).
func (h *jobLogs) Prepare(ctx context.Context, logs []types.Log) error {
	ix := (*Indexer)(h)
	created := map[logKey]map[string]any{}
	for i := range logs {
		l := &logs[i]
		if l.Address != ix.cfg.JobEscrow || len(l.Topics) < 2 || ix.escrow == nil || l.Topics[0] != ix.escrow.Events["JobCreated"].ID {
			continue
		}
		id := new(big.Int).SetBytes(l.Topics[1].Bytes())
		if !id.IsUint64() {
			continue
		}
		extra, err := ix.readCreated(ctx, id.Uint64(), l.BlockNumber)
		if err != nil {
			return err
		}
		if extra != nil {
			created[logKey{l.TxHash, l.Index}] = extra
		}
	}
	ix.mu.Lock()
	ix.created = created
	ix.mu.Unlock()
	return nil
}

// Apply stores one batch of logs and projects them onto the job rows.
func (h *jobLogs) Apply(ctx context.Context, tx *sql.Tx, logs []types.Log) (func(), error) {
	ix := (*Indexer)(h)
	var fresh []Event
	for i := range logs {
		l := &logs[i]
		ev, ok, err := ix.decode(ctx, l)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		var jobID any
		if ev.JobID != 0 {
			jobID = int64(ev.JobID)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO jobs_events (chain, block, block_hash, tx_hash, log_index, contract, job_id, name, data)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			ix.cfg.Chain, l.BlockNumber, l.BlockHash.Hex(), l.TxHash.Hex(), l.Index, ev.Contract, jobID, ev.Name, string(ev.Data))
		if err != nil {
			return nil, fmt.Errorf("store event: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			continue // already indexed (a range read again)
		}
		if ev.JobID != 0 {
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

// Rollback forgets events after block and rebuilds the jobs they touched.
func (h *jobLogs) Rollback(ctx context.Context, tx *sql.Tx, block uint64) error {
	ix := (*Indexer)(h)
	ids, err := chainlog.ForgetAfter(ctx, tx, "jobs_events", "job_id", ix.cfg.Chain, block)
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

// rebuild replays a job's stored events onto fresh rows.
func (ix *Indexer) rebuild(ctx context.Context, tx *sql.Tx, id int64) error {
	for _, q := range []string{`DELETE FROM jobs_jobs WHERE chain = ? AND id = ?`, `DELETE FROM jobs_workers WHERE chain = ? AND job_id = ?`,
		`DELETE FROM jobs_hook WHERE chain = ? AND job_id = ?`} {
		if _, err := tx.ExecContext(ctx, q, ix.cfg.Chain, id); err != nil {
			return err
		}
	}
	evs, err := ix.events(ctx, tx, uint64(id))
	if err != nil {
		return err
	}
	for _, ev := range evs {
		if err := ix.project(ctx, tx, ev); err != nil {
			return err
		}
	}
	return nil
}

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// events reads job id's stored events in chain order.
func (ix *Indexer) events(ctx context.Context, q querier, id uint64) ([]Event, error) {
	rows, err := q.QueryContext(ctx, `SELECT contract, name, block, tx_hash, log_index, data FROM jobs_events WHERE chain = ? AND job_id = ? ORDER BY block, log_index`,
		ix.cfg.Chain, int64(id))
	if err != nil {
		return nil, fmt.Errorf("job %d history: %w", id, err)
	}
	return scanEvents(rows, id)
}

// scanEvents reads job id's events from rows of (contract, name, block, tx_hash, log_index,
// data), in the rows' order, and closes rows.
func scanEvents(rows *sql.Rows, id uint64) ([]Event, error) {
	defer rows.Close()
	var out []Event
	for rows.Next() {
		e := Event{JobID: id}
		var data string
		if err := rows.Scan(&e.Contract, &e.Name, &e.Block, &e.TxHash, &e.LogIndex, &data); err != nil {
			return nil, err
		}
		e.Data = json.RawMessage(data)
		out = append(out, e)
	}
	return out, rows.Err()
}

// publish hands fresh events to the watchers.
func (ix *Indexer) publish(ctx context.Context, fresh []Event) {
	ix.mu.Lock()
	ws := append([]func(context.Context, []Event){}, ix.watchers...)
	ix.mu.Unlock()
	for _, w := range ws {
		w(ctx, fresh)
	}
}
