package erc8004

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/surety-ioa/surety/internal/chainlog"
	"github.com/surety-ioa/surety/internal/sqlite"
)

// migrations are the package's tables. Every row belongs to one chain and goes when that
// chain's state is dropped. erc8004_events is the source of truth; the other tables are its
// projection, rebuilt per agent after a reorganization.
var migrations = []sqlite.Migration{{Version: 1, SQL: `
CREATE TABLE erc8004_events (
	chain      INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	block      INTEGER NOT NULL,
	block_hash TEXT    NOT NULL,
	tx_hash    TEXT    NOT NULL,
	log_index  INTEGER NOT NULL,
	registry   TEXT    NOT NULL,
	name       TEXT    NOT NULL,
	agent_id   INTEGER NOT NULL,
	block_time INTEGER NOT NULL,
	data       TEXT    NOT NULL,
	PRIMARY KEY (chain, tx_hash, log_index)
) STRICT;
CREATE INDEX erc8004_events_agent ON erc8004_events (chain, agent_id, block, log_index);
CREATE INDEX erc8004_events_block ON erc8004_events (chain, block);

CREATE TABLE erc8004_agents (
	chain            INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	agent_id         INTEGER NOT NULL,
	owner            TEXT    NOT NULL,
	wallet           TEXT    NOT NULL DEFAULT '',
	uri              TEXT    NOT NULL DEFAULT '',
	registered_block INTEGER NOT NULL,
	updated_block    INTEGER NOT NULL,
	PRIMARY KEY (chain, agent_id)
) STRICT;
CREATE INDEX erc8004_agents_owner ON erc8004_agents (chain, owner);
CREATE INDEX erc8004_agents_wallet ON erc8004_agents (chain, wallet);

CREATE TABLE erc8004_metadata (
	chain    INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	agent_id INTEGER NOT NULL,
	key      TEXT    NOT NULL,
	value    BLOB    NOT NULL,
	PRIMARY KEY (chain, agent_id, key)
) STRICT;
CREATE INDEX erc8004_metadata_value ON erc8004_metadata (chain, key, value);

CREATE TABLE erc8004_feedback (
	chain          INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	agent_id       INTEGER NOT NULL,
	client         TEXT    NOT NULL,
	feedback_index INTEGER NOT NULL,
	value          TEXT    NOT NULL,
	value_decimals INTEGER NOT NULL,
	tag1           TEXT    NOT NULL,
	tag2           TEXT    NOT NULL,
	endpoint       TEXT    NOT NULL,
	feedback_uri   TEXT    NOT NULL,
	feedback_hash  TEXT    NOT NULL,
	revoked        INTEGER NOT NULL DEFAULT 0,
	revoked_block  INTEGER NOT NULL DEFAULT 0,
	block          INTEGER NOT NULL,
	block_time     INTEGER NOT NULL,
	log_index      INTEGER NOT NULL,
	tx_hash        TEXT    NOT NULL,
	PRIMARY KEY (chain, agent_id, client, feedback_index)
) STRICT;
CREATE INDEX erc8004_feedback_order ON erc8004_feedback (chain, agent_id, block, log_index);
CREATE INDEX erc8004_feedback_client ON erc8004_feedback (chain, client);

CREATE TABLE erc8004_responses (
	chain          INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	agent_id       INTEGER NOT NULL,
	client         TEXT    NOT NULL,
	feedback_index INTEGER NOT NULL,
	responder      TEXT    NOT NULL,
	response_uri   TEXT    NOT NULL,
	response_hash  TEXT    NOT NULL,
	block          INTEGER NOT NULL,
	log_index      INTEGER NOT NULL,
	tx_hash        TEXT    NOT NULL,
	PRIMARY KEY (chain, tx_hash, log_index)
) STRICT;
CREATE INDEX erc8004_responses_feedback ON erc8004_responses (chain, agent_id, client, feedback_index);

CREATE TABLE erc8004_validations (
	chain         INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	request_hash  TEXT    NOT NULL,
	agent_id      INTEGER NOT NULL,
	validator     TEXT    NOT NULL,
	request_uri   TEXT    NOT NULL,
	responded     INTEGER NOT NULL DEFAULT 0,
	response      INTEGER NOT NULL DEFAULT 0,
	response_uri  TEXT    NOT NULL DEFAULT '',
	response_hash TEXT    NOT NULL DEFAULT '',
	tag           TEXT    NOT NULL DEFAULT '',
	block         INTEGER NOT NULL,
	updated_block INTEGER NOT NULL,
	PRIMARY KEY (chain, request_hash)
) STRICT;
CREATE INDEX erc8004_validations_agent ON erc8004_validations (chain, agent_id, block);
CREATE INDEX erc8004_validations_validator ON erc8004_validations (chain, validator, block);
`}}

// IndexerConfig sets up an Indexer.
type IndexerConfig struct {
	DB *sql.DB
	// Chain is the chains-table row that scopes the index (sqlite.EnterChain).
	Chain int64
	// Client reads logs and heads.
	Client chainlog.Source
	// The registries' addresses; StartBlock is the block of the first deployment.
	IdentityRegistry, ReputationRegistry, ValidationRegistry common.Address
	StartBlock                                               uint64
	// Confirmations: blocks newer than head - Confirmations are not indexed yet.
	Confirmations uint64
	// BatchBlocks bounds one log query and one transaction; 0 means chainlog's default.
	BatchBlocks uint64
	// Poll is how often the chain is checked when nobody nudges; 0 means chainlog's default.
	Poll time.Duration
	// Bindings, when set, says which wallets control a DID (the stake index): FeedbackFor
	// counts an agent for a DID only when its owner or wallet is one of them.
	Bindings Bindings
	Logger   *slog.Logger
}

// Bindings lists the wallets that control a DID on chain (stake.Index.WalletsOf): a handful
// per DID, so a DID's agents are found in one query however many agent ids claim it.
type Bindings interface {
	WalletsOf(ctx context.Context, did string) ([]common.Address, error)
}

// Indexer follows the ERC-8004 registries' events into SQLite through a chainlog.Follower:
// one transaction per batch with the cursor (a crash resumes from the last whole batch),
// events keyed by transaction hash and log index, and the agents a reorganization touched
// rebuilt from the events that remain.
type Indexer struct {
	*chainlog.Follower
	cfg IndexerConfig
	dec *decoder

	mu         sync.Mutex
	onFeedback []func()
	// rolledBack says a reorganization forgot events since the last batch told the watchers.
	rolledBack bool
}

// OnFeedback calls fn after every batch the index commits that changed what AllFeedback
// answers: feedback given or revoked, or an agent's owner, wallet or "did" claim changed (and
// after a reorganization rolled any of it back). fn runs on the indexer's goroutine: it must
// not block for long.
func (ix *Indexer) OnFeedback(fn func()) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.onFeedback = append(ix.onFeedback, fn)
}

// feedbackChanged tells the OnFeedback watchers.
func (ix *Indexer) feedbackChanged() {
	ix.mu.Lock()
	fns := append([]func(){}, ix.onFeedback...)
	ix.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// changesFeedback says whether an event changes what AllFeedback answers.
func changesFeedback(ev Event) bool {
	switch ev.Name {
	case "NewFeedback", "FeedbackRevoked", "Transfer":
		return true
	case "MetadataSet":
		var d metadataData
		return json.Unmarshal(ev.Data, &d) != nil || d.Key == AgentWalletKey || d.Key == DIDKey
	}
	return false
}

// NewIndexer migrates the tables and loads the cursor.
func NewIndexer(ctx context.Context, cfg IndexerConfig) (*Indexer, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if err := chainlog.Migrate(ctx, cfg.DB); err != nil {
		return nil, err
	}
	if err := sqlite.Migrate(ctx, cfg.DB, "erc8004", migrations); err != nil {
		return nil, err
	}
	dec, err := newDecoder(cfg.IdentityRegistry, cfg.ReputationRegistry, cfg.ValidationRegistry)
	if err != nil {
		return nil, err
	}
	ix := &Indexer{cfg: cfg, dec: dec}
	ix.Follower, err = chainlog.New(ctx, chainlog.Config{DB: cfg.DB, Chain: cfg.Chain, Name: "erc8004", Client: cfg.Client,
		Addresses:  []common.Address{cfg.IdentityRegistry, cfg.ReputationRegistry, cfg.ValidationRegistry},
		StartBlock: cfg.StartBlock, Confirmations: cfg.Confirmations, BatchBlocks: cfg.BatchBlocks, Poll: cfg.Poll, Logger: cfg.Logger},
		(*handler)(ix))
	if err != nil {
		return nil, err
	}
	return ix, nil
}

// IdentityRegistry is the indexed identity registry's address.
func (ix *Indexer) IdentityRegistry() common.Address { return ix.cfg.IdentityRegistry }

// handler is the Indexer as the follower's handler.
type handler Indexer

// Apply stores a batch of the registries' logs and projects them.
func (h *handler) Apply(ctx context.Context, tx *sql.Tx, logs []types.Log) (func(), error) {
	ix := (*Indexer)(h)
	times := map[uint64]uint64{} // block -> its time, read once per block of the batch
	changed := false             // the batch changes what AllFeedback answers
	for i := range logs {
		l := &logs[i]
		ev, ok, err := ix.dec.decode(l)
		if err != nil {
			// A log of our registries that does not decode: not from the contracts we
			// deployed. Skipped, not fatal: the follower would retry it forever.
			ix.cfg.Logger.Warn("erc8004 index: skipping a log that does not decode", "tx", l.TxHash, "index", l.Index, "err", err)
			continue
		}
		if !ok {
			continue
		}
		if ev.Time, err = ix.blockTime(ctx, l, times); err != nil {
			return nil, err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO erc8004_events (chain, block, block_hash, tx_hash, log_index, registry, name, agent_id, block_time, data)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			ix.cfg.Chain, l.BlockNumber, l.BlockHash.Hex(), l.TxHash.Hex(), l.Index, string(ev.Registry), ev.Name, int64(ev.AgentID), int64(ev.Time), string(ev.Data))
		if err != nil {
			return nil, fmt.Errorf("store event: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			continue
		}
		if err := ix.project(ctx, tx, ev); err != nil {
			return nil, fmt.Errorf("project %s: %w", ev.Name, err)
		}
		changed = changed || changesFeedback(ev)
	}
	ix.mu.Lock()
	changed = changed || ix.rolledBack
	ix.rolledBack = false
	ix.mu.Unlock()
	if !changed {
		return nil, nil
	}
	return ix.feedbackChanged, nil
}

// blockTime is the time of l's block: the log's own BlockTimestamp where the chain sent it,
// else its header's (read once per block: times caches them).
func (ix *Indexer) blockTime(ctx context.Context, l *types.Log, times map[uint64]uint64) (uint64, error) {
	if l.BlockTimestamp != 0 {
		return l.BlockTimestamp, nil
	}
	if t, ok := times[l.BlockNumber]; ok {
		return t, nil
	}
	h, err := ix.cfg.Client.HeaderByNumber(ctx, new(big.Int).SetUint64(l.BlockNumber))
	if err != nil {
		return 0, fmt.Errorf("read the time of block %d: %w", l.BlockNumber, err)
	}
	times[l.BlockNumber] = h.Time
	return h.Time, nil
}

// Rollback forgets the events after block and rebuilds the agents they touched.
func (h *handler) Rollback(ctx context.Context, tx *sql.Tx, block uint64) error {
	ix := (*Indexer)(h)
	agents, err := chainlog.ForgetAfter(ctx, tx, "erc8004_events", "agent_id", ix.cfg.Chain, block)
	if err != nil {
		return err
	}
	if len(agents) > 0 {
		ix.mu.Lock()
		ix.rolledBack = true // the next batch tells the watchers, once it commits
		ix.mu.Unlock()
	}
	for _, id := range agents {
		if err := ix.rebuild(ctx, tx, id); err != nil {
			return err
		}
	}
	return nil
}

// projections are the tables rebuilt from the events, per agent.
var projections = []string{"erc8004_agents", "erc8004_metadata", "erc8004_feedback", "erc8004_responses", "erc8004_validations"}

// rebuild replays an agent's stored events onto fresh rows.
func (ix *Indexer) rebuild(ctx context.Context, tx *sql.Tx, agent int64) error {
	for _, t := range projections {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+t+` WHERE chain = ? AND agent_id = ?`, ix.cfg.Chain, agent); err != nil {
			return err
		}
	}
	rows, err := tx.QueryContext(ctx, `SELECT registry, name, block, block_time, tx_hash, log_index, data FROM erc8004_events
		WHERE chain = ? AND agent_id = ? ORDER BY block, log_index`, ix.cfg.Chain, agent)
	if err != nil {
		return err
	}
	var evs []Event
	for rows.Next() {
		ev := Event{AgentID: uint64(agent)}
		var reg, data string
		if err := rows.Scan(&reg, &ev.Name, &ev.Block, &ev.Time, &ev.TxHash, &ev.LogIndex, &data); err != nil {
			rows.Close()
			return err
		}
		ev.Registry, ev.Data = Registry(reg), json.RawMessage(data)
		evs = append(evs, ev)
	}
	rows.Close()
	for _, ev := range evs {
		if err := ix.project(ctx, tx, ev); err != nil {
			return err
		}
	}
	return nil
}

func addr(a common.Address) string { return strings.ToLower(a.Hex()) }

// project applies one event to the projection tables.
func (ix *Indexer) project(ctx context.Context, tx *sql.Tx, ev Event) error {
	chain, agent := ix.cfg.Chain, int64(ev.AgentID)
	exec := func(q string, args ...any) error {
		_, err := tx.ExecContext(ctx, q, append([]any{chain, agent}, args...)...)
		return err
	}
	switch ev.Name {
	case "Transfer":
		var d transferData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return err
		}
		// A mint creates the agent; a transfer changes its owner (and the registry clears the
		// wallet, which its MetadataSet event says too).
		return exec(`INSERT INTO erc8004_agents (chain, agent_id, owner, registered_block, updated_block) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (chain, agent_id) DO UPDATE SET owner = excluded.owner, wallet = '', updated_block = excluded.updated_block`,
			addr(d.To), ev.Block, ev.Block)
	case "Registered":
		var d registeredData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return err
		}
		return exec(`INSERT INTO erc8004_agents (chain, agent_id, owner, uri, registered_block, updated_block) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (chain, agent_id) DO UPDATE SET uri = excluded.uri, updated_block = excluded.updated_block`,
			addr(d.Owner), d.AgentURI, ev.Block, ev.Block)
	case "URIUpdated":
		var d uriData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return err
		}
		return exec(`UPDATE erc8004_agents SET uri = ?3, updated_block = ?4 WHERE chain = ?1 AND agent_id = ?2`, d.URI, ev.Block)
	case "MetadataSet":
		var d metadataData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return err
		}
		if d.Key == AgentWalletKey {
			wallet := ""
			if len(d.Value) == common.AddressLength {
				wallet = addr(common.BytesToAddress(d.Value))
			}
			return exec(`UPDATE erc8004_agents SET wallet = ?3, updated_block = ?4 WHERE chain = ?1 AND agent_id = ?2`, wallet, ev.Block)
		}
		return exec(`INSERT INTO erc8004_metadata (chain, agent_id, key, value) VALUES (?, ?, ?, ?)
			ON CONFLICT (chain, agent_id, key) DO UPDATE SET value = excluded.value`, d.Key, []byte(d.Value))
	case "NewFeedback":
		var d feedbackData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return err
		}
		return exec(`INSERT INTO erc8004_feedback (chain, agent_id, client, feedback_index, value, value_decimals, tag1, tag2,
			endpoint, feedback_uri, feedback_hash, block, block_time, log_index, tx_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT DO NOTHING`, addr(d.Client), int64(d.FeedbackIndex), d.Value, int64(d.ValueDecimals), d.Tag1, d.Tag2,
			d.Endpoint, d.FeedbackURI, d.FeedbackHash.Hex(), ev.Block, int64(ev.Time), int64(ev.LogIndex), ev.TxHash)
	case "FeedbackRevoked":
		var d revokedData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return err
		}
		return exec(`UPDATE erc8004_feedback SET revoked = 1, revoked_block = ?5 WHERE chain = ?1 AND agent_id = ?2 AND client = ?3 AND feedback_index = ?4`,
			addr(d.Client), int64(d.FeedbackIndex), ev.Block)
	case "ResponseAppended":
		var d responseData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return err
		}
		return exec(`INSERT INTO erc8004_responses (chain, agent_id, client, feedback_index, responder, response_uri, response_hash,
			block, log_index, tx_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			addr(d.Client), int64(d.FeedbackIndex), addr(d.Responder), d.ResponseURI, d.ResponseHash.Hex(), ev.Block, int64(ev.LogIndex), ev.TxHash)
	case "ValidationRequest":
		var d validationRequestData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return err
		}
		return exec(`INSERT INTO erc8004_validations (chain, agent_id, request_hash, validator, request_uri, block, updated_block)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, d.RequestHash.Hex(), addr(d.Validator), d.RequestURI, ev.Block, ev.Block)
	case "ValidationResponse":
		var d validationResponseData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return err
		}
		return exec(`UPDATE erc8004_validations SET responded = 1, response = ?4, response_uri = ?5, response_hash = ?6, tag = ?7,
			updated_block = ?8 WHERE chain = ?1 AND agent_id = ?2 AND request_hash = ?3`,
			d.RequestHash.Hex(), int64(d.Response), d.ResponseURI, d.ResponseHash.Hex(), d.Tag, ev.Block)
	}
	return nil
}
