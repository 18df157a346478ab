package stake

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

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chainlog"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/units"
)

// migrations are the stake package's tables. stake_events is what the chain said;
// stake_records is their projection, one row per (agent, controller) as the contract keeps
// them, with the verdict of the proof rule.
var migrations = []sqlite.Migration{{Version: 1, SQL: `
CREATE TABLE stake_events (
	chain      INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	block      INTEGER NOT NULL,
	tx_hash    TEXT    NOT NULL,
	log_index  INTEGER NOT NULL,
	agent_id   TEXT    NOT NULL,
	controller TEXT    NOT NULL,
	name       TEXT    NOT NULL,
	data       TEXT    NOT NULL,
	PRIMARY KEY (chain, tx_hash, log_index)
) STRICT;
CREATE INDEX stake_events_block ON stake_events (chain, block, log_index);

CREATE TABLE stake_records (
	chain        INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	agent_id     TEXT    NOT NULL,
	controller   TEXT    NOT NULL,
	did          TEXT    NOT NULL DEFAULT '', -- the DID the verified proof binds; '' if unverified
	verified     INTEGER NOT NULL,
	proof_error  TEXT    NOT NULL DEFAULT '',
	binding      TEXT    NOT NULL DEFAULT '', -- the verified proof as recorded
	status       TEXT    NOT NULL CHECK (status IN ('bound', 'rotated', 'revoked')),
	staked       TEXT    NOT NULL DEFAULT '0',
	unbonding    TEXT    NOT NULL DEFAULT '0',
	unlock_at    INTEGER NOT NULL DEFAULT 0,
	successor    TEXT    NOT NULL DEFAULT '', -- the DID a verified rotation moved to
	bound_block  INTEGER NOT NULL,
	closed_block INTEGER NOT NULL DEFAULT 0, -- block and log of the rotation or revocation
	closed_log   INTEGER NOT NULL DEFAULT 0,
	updated      INTEGER NOT NULL,
	PRIMARY KEY (chain, agent_id, controller)
) STRICT;
CREATE INDEX stake_records_controller ON stake_records (chain, controller);
`}, {Version: 2, SQL: `
-- The part of staked that claimed bounties lock (StakeRegistry's Locked and Unlocked).
ALTER TABLE stake_records ADD COLUMN locked TEXT NOT NULL DEFAULT '0';
`}}

// Status is where an (agent, controller) record is, as the contract names it.
type Status string

// Record statuses.
const (
	StatusBound   Status = "bound"
	StatusRotated Status = "rotated"
	StatusRevoked Status = "revoked"
)

// Config sets up an Index.
type Config struct {
	DB *sql.DB
	// Chain is the chains-table row that scopes the index (sqlite.EnterChain).
	Chain int64
	// Client reads logs and heads.
	Client chainlog.Source
	// ChainID and Registry are what a proof must name; StartBlock is the registry's
	// deployment block.
	ChainID    uint64
	Registry   common.Address
	StartBlock uint64
	// Confirmations: blocks newer than head - Confirmations are not indexed yet.
	Confirmations uint64
	// Poll is how often the chain is checked when nobody nudges; 0 means chainlog's default.
	Poll time.Duration
	// Token is the token the registry stakes, for StakedAgents' whole tokens; the zero value
	// means ETH.
	Token  units.Token
	Logger *slog.Logger
}

// Change is one event that changed a verified record: the node's caches of that DID (its
// card's stake and rank, its key's status) are stale.
type Change struct {
	DID        string
	Controller common.Address
	Event      string // Bound, Staked, UnbondRequested, Withdrawn, Locked, Unlocked, Slashed, Rotated, Revoked
	Block      uint64
}

// Index follows StakeRegistry's events into SQLite and answers from them.
type Index struct {
	*chainlog.Follower
	cfg    Config
	abi    *contracts.StakeRegistry
	parsed *abi.ABI

	mu       sync.Mutex
	watchers []func(context.Context, []Change)
}

// NewIndex migrates the stake tables and loads the cursor.
func NewIndex(ctx context.Context, cfg Config) (*Index, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Token == (units.Token{}) {
		cfg.Token = units.Ether
	}
	if err := sqlite.Migrate(ctx, cfg.DB, "stake", migrations); err != nil {
		return nil, err
	}
	parsed, err := contracts.StakeRegistryMetaData.ParseABI()
	if err != nil {
		return nil, err
	}
	ix := &Index{cfg: cfg, abi: contracts.NewStakeRegistry(), parsed: parsed}
	ix.Follower, err = chainlog.New(ctx, chainlog.Config{DB: cfg.DB, Chain: cfg.Chain, Name: "stake", Client: cfg.Client,
		Addresses: []common.Address{cfg.Registry}, StartBlock: cfg.StartBlock, Confirmations: cfg.Confirmations,
		Poll: cfg.Poll, Logger: cfg.Logger}, (*registryLogs)(ix))
	if err != nil {
		return nil, err
	}
	return ix, nil
}

// Watch calls fn with the changes of every batch the index commits, in chain order. fn runs
// on the indexer's goroutine, with its context: it must not block for long.
func (ix *Index) Watch(fn func(context.Context, []Change)) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.watchers = append(ix.watchers, fn)
}

// event is one StakeRegistry event in the form stake_events keeps (data) and applies.
type event struct {
	Name       string         `json:"-"`
	Agent      common.Hash    `json:"-"`
	Controller common.Address `json:"-"`
	Block      uint64         `json:"-"`
	LogIndex   uint           `json:"-"`

	Proof    []byte      `json:"proof,omitempty"`    // Bound, Rotated
	NewAgent common.Hash `json:"newAgent,omitzero"`  // Rotated
	Amount   string      `json:"amount,omitempty"`   // Staked, UnbondRequested, Withdrawn, Locked, Unlocked, Slashed
	Staked   string      `json:"staked,omitempty"`   // Staked: the record's total after it
	UnlockAt uint64      `json:"unlockAt,omitempty"` // UnbondRequested
	// LockID is the lock of a Locked, Unlocked or Slashed event (decimal): a bounty id, or a
	// job lock id of the SuretyHook (IsJobLock). The records sum the amounts alike.
	LockID string `json:"lockId,omitempty"`
}

// jobLockBit is StakeRegistry.JOB_LOCK_BIT: set on the lock ids of the job locker (Surety's
// ERC-8183 hook), never on a bounty id.
var jobLockBit = new(big.Int).Lsh(big.NewInt(1), 255)

// IsJobLock reports whether lockID is a job lock id (the SuretyHook's, JOB_LOCK_BIT set)
// rather than a bounty id (the escrow's).
func IsJobLock(lockID *big.Int) bool {
	return lockID != nil && lockID.Cmp(jobLockBit) >= 0
}

// decode reads a log of the registry; ok is false for the events the index does not keep
// (administration).
func (ix *Index) decode(l *types.Log) (ev event, ok bool, err error) {
	if len(l.Topics) == 0 {
		return ev, false, nil
	}
	a := ix.abi
	ev.Block, ev.LogIndex = l.BlockNumber, l.Index
	abiEv, err := ix.parsed.EventByID(l.Topics[0])
	if err != nil {
		return ev, false, nil // not ours
	}
	switch abiEv.Name {
	case "Bound":
		e, err := a.UnpackBoundEvent(l)
		if err != nil {
			return ev, false, err
		}
		ev.Name, ev.Agent, ev.Controller, ev.Proof = "Bound", e.AgentId, e.Controller, e.Proof
	case "Staked":
		e, err := a.UnpackStakedEvent(l)
		if err != nil {
			return ev, false, err
		}
		ev.Name, ev.Agent, ev.Controller, ev.Amount, ev.Staked = "Staked", e.AgentId, e.Controller, e.Amount.String(), e.Staked.String()
	case "UnbondRequested":
		e, err := a.UnpackUnbondRequestedEvent(l)
		if err != nil {
			return ev, false, err
		}
		ev.Name, ev.Agent, ev.Controller, ev.Amount, ev.UnlockAt = "UnbondRequested", e.AgentId, e.Controller, e.Amount.String(), e.UnlockAt
	case "Withdrawn":
		e, err := a.UnpackWithdrawnEvent(l)
		if err != nil {
			return ev, false, err
		}
		ev.Name, ev.Agent, ev.Controller, ev.Amount = "Withdrawn", e.AgentId, e.Controller, e.Amount.String()
	case "Locked":
		e, err := a.UnpackLockedEvent(l)
		if err != nil {
			return ev, false, err
		}
		ev.Name, ev.Agent, ev.Controller, ev.Amount, ev.LockID = "Locked", e.AgentId, e.Controller, e.Amount.String(), e.LockId.String()
	case "Unlocked":
		e, err := a.UnpackUnlockedEvent(l)
		if err != nil {
			return ev, false, err
		}
		ev.Name, ev.Agent, ev.Controller, ev.Amount, ev.LockID = "Unlocked", e.AgentId, e.Controller, e.Amount.String(), e.LockId.String()
	case "Slashed":
		e, err := a.UnpackSlashedEvent(l)
		if err != nil {
			return ev, false, err
		}
		ev.Name, ev.Agent, ev.Controller, ev.Amount = "Slashed", e.AgentId, e.Controller, e.Amount.String()
		ev.LockID = new(big.Int).SetBytes(e.Reason[:]).String() // the reason is the lock id
	case "Rotated":
		e, err := a.UnpackRotatedEvent(l)
		if err != nil {
			return ev, false, err
		}
		ev.Name, ev.Agent, ev.Controller, ev.NewAgent, ev.Proof = "Rotated", e.AgentId, e.Controller, e.NewAgentId, e.Proof
	case "Revoked":
		e, err := a.UnpackRevokedEvent(l)
		if err != nil {
			return ev, false, err
		}
		ev.Name, ev.Agent, ev.Controller = "Revoked", e.AgentId, e.Controller
	default:
		return ev, false, nil
	}
	return ev, true, nil
}

// registryLogs is the Index as the follower's handler.
type registryLogs Index

// Apply stores one batch of the registry's events and projects them onto the records.
func (h *registryLogs) Apply(ctx context.Context, tx *sql.Tx, logs []types.Log) (func(), error) {
	ix := (*Index)(h)
	var changes []Change
	for i := range logs {
		l := &logs[i]
		ev, ok, err := ix.decode(l)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		data, err := json.Marshal(ev)
		if err != nil {
			return nil, err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO stake_events (chain, block, tx_hash, log_index, agent_id, controller, name, data)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			ix.cfg.Chain, l.BlockNumber, l.TxHash.Hex(), l.Index, ev.Agent.Hex(), ev.Controller.Hex(), ev.Name, string(data))
		if err != nil {
			return nil, fmt.Errorf("store event: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			continue // already indexed (a range read again)
		}
		ch, err := ix.apply(ctx, tx, ev)
		if err != nil {
			return nil, err
		}
		changes = append(changes, ch...)
	}
	if len(changes) == 0 {
		return nil, nil
	}
	return func() { ix.tell(ctx, changes) }, nil
}

func (ix *Index) tell(ctx context.Context, changes []Change) {
	ix.mu.Lock()
	ws := append([]func(context.Context, []Change){}, ix.watchers...)
	ix.mu.Unlock()
	for _, w := range ws {
		w(ctx, changes)
	}
}

// Rollback forgets the events after block and projects the records again from the rest.
// Reorganizations deeper than the confirmation depth are rare; replaying every event keeps
// rotations, which touch two records, exact.
func (h *registryLogs) Rollback(ctx context.Context, tx *sql.Tx, block uint64) error {
	ix := (*Index)(h)
	if _, err := tx.ExecContext(ctx, `DELETE FROM stake_events WHERE chain = ? AND block > ?`, ix.cfg.Chain, block); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM stake_records WHERE chain = ?`, ix.cfg.Chain); err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, `SELECT block, log_index, agent_id, controller, name, data FROM stake_events WHERE chain = ? ORDER BY block, log_index`, ix.cfg.Chain)
	if err != nil {
		return err
	}
	var evs []event
	for rows.Next() {
		var ev event
		var agent, controller, data string
		if err := rows.Scan(&ev.Block, &ev.LogIndex, &agent, &controller, &ev.Name, &data); err != nil {
			rows.Close()
			return err
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			rows.Close()
			return err
		}
		ev.Agent, ev.Controller = common.HexToHash(agent), common.HexToAddress(controller)
		evs = append(evs, ev)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, ev := range evs {
		if _, err := ix.apply(ctx, tx, ev); err != nil {
			return err
		}
	}
	return nil
}

// record is a stake_records row being projected.
type record struct {
	agent      common.Hash
	controller common.Address
	did        string
	verified   bool
	proofErr   string
	binding    string
	status     Status
	staked     *big.Int
	unbonding  *big.Int
	locked     *big.Int
	unlockAt   uint64
	successor  string
	boundBlock uint64
	closed     [2]uint64 // block, log index
}

func (ix *Index) load(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, agent common.Hash, controller common.Address) (*record, error) {
	r := &record{agent: agent, controller: controller}
	var verified int
	var staked, unbonding, locked, status string
	err := q.QueryRowContext(ctx, `SELECT did, verified, proof_error, binding, status, staked, unbonding, locked, unlock_at, successor, bound_block, closed_block, closed_log
		FROM stake_records WHERE chain = ? AND agent_id = ? AND controller = ?`, ix.cfg.Chain, agent.Hex(), controller.Hex()).
		Scan(&r.did, &verified, &r.proofErr, &r.binding, &status, &staked, &unbonding, &locked, &r.unlockAt, &r.successor, &r.boundBlock, &r.closed[0], &r.closed[1])
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("stake record: %w", err)
	}
	r.verified, r.status = verified == 1, Status(status)
	r.staked, _ = new(big.Int).SetString(staked, 10)
	r.unbonding, _ = new(big.Int).SetString(unbonding, 10)
	r.locked, _ = new(big.Int).SetString(locked, 10)
	if r.staked == nil || r.unbonding == nil || r.locked == nil {
		return nil, fmt.Errorf("stake record %s/%s: bad amount", agent.Hex(), controller.Hex())
	}
	return r, nil
}

func (ix *Index) save(ctx context.Context, tx *sql.Tx, r *record, block uint64) error {
	verified := 0
	if r.verified {
		verified = 1
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO stake_records (chain, agent_id, controller, did, verified, proof_error, binding, status, staked, unbonding, locked, unlock_at, successor, bound_block, closed_block, closed_log, updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (chain, agent_id, controller) DO UPDATE SET did = excluded.did, verified = excluded.verified, proof_error = excluded.proof_error,
			binding = excluded.binding, status = excluded.status, staked = excluded.staked, unbonding = excluded.unbonding, locked = excluded.locked, unlock_at = excluded.unlock_at,
			successor = excluded.successor, bound_block = excluded.bound_block, closed_block = excluded.closed_block, closed_log = excluded.closed_log, updated = excluded.updated`,
		ix.cfg.Chain, r.agent.Hex(), r.controller.Hex(), r.did, verified, r.proofErr, r.binding, string(r.status), r.staked.String(), r.unbonding.String(),
		r.locked.String(), int64(r.unlockAt), r.successor, int64(r.boundBlock), int64(r.closed[0]), int64(r.closed[1]), int64(block))
	if err != nil {
		return fmt.Errorf("store stake record: %w", err)
	}
	return nil
}

// bind makes a fresh Bound record from a proof, judged by CheckProof.
func (ix *Index) bind(agent common.Hash, controller common.Address, proof []byte, block uint64) *record {
	r := &record{agent: agent, controller: controller, status: StatusBound, staked: new(big.Int), unbonding: new(big.Int), locked: new(big.Int), boundBlock: block}
	b, err := CheckProof(proof, agent, controller, ix.cfg.ChainID, ix.cfg.Registry)
	if err != nil {
		r.proofErr = err.Error()
		return r
	}
	r.verified, r.did, r.binding = true, b.Statement.DID, string(proof)
	return r
}

// apply projects one event onto the records and returns the changes to verified ones.
func (ix *Index) apply(ctx context.Context, tx *sql.Tx, ev event) ([]Change, error) {
	r, err := ix.load(ctx, tx, ev.Agent, ev.Controller)
	if err != nil {
		return nil, err
	}
	if ev.Name == "Bound" {
		if r != nil {
			return nil, fmt.Errorf("stake index: %s bound twice under %s", ev.Agent.Hex(), ev.Controller.Hex())
		}
		r = ix.bind(ev.Agent, ev.Controller, ev.Proof, ev.Block)
		if !r.verified {
			ix.cfg.Logger.Info("stake index: ignoring a binding whose proof does not verify", "agent", ev.Agent.Hex(), "controller", ev.Controller.Hex(), "block", ev.Block, "why", r.proofErr)
		}
		return changed(r, ev), ix.save(ctx, tx, r, ev.Block)
	}
	if r == nil {
		// The contract emits nothing else for a record it never bound; keep going rather than
		// wedge the index, with a record that counts for nothing.
		r = &record{agent: ev.Agent, controller: ev.Controller, status: StatusBound, staked: new(big.Int), unbonding: new(big.Int), locked: new(big.Int),
			boundBlock: ev.Block, proofErr: "no Bound event"}
	}
	amount, _ := new(big.Int).SetString(ev.Amount, 10)
	if amount == nil {
		amount = new(big.Int)
	}
	var out []Change
	switch ev.Name {
	case "Staked":
		if s, ok := new(big.Int).SetString(ev.Staked, 10); ok {
			r.staked = s
		}
	case "UnbondRequested":
		r.staked = nonNeg(new(big.Int).Sub(r.staked, amount))
		r.unbonding = new(big.Int).Add(r.unbonding, amount)
		r.unlockAt = ev.UnlockAt
	case "Withdrawn":
		r.unbonding = new(big.Int)
	case "Locked":
		r.locked = new(big.Int).Add(r.locked, amount)
	case "Unlocked":
		r.locked = nonNeg(new(big.Int).Sub(r.locked, amount))
	case "Slashed":
		// Only locked stake is slashed, and the Unlocked before it already freed the lock.
		r.staked = nonNeg(new(big.Int).Sub(r.staked, amount))
	case "Revoked":
		r.status, r.closed = StatusRevoked, [2]uint64{ev.Block, uint64(ev.LogIndex)}
	case "Rotated":
		n := ix.bind(ev.NewAgent, ev.Controller, ev.Proof, ev.Block)
		if !r.verified && n.verified {
			// A rotation out of a record that never counted does not make its successor count.
			n.verified, n.did, n.binding, n.proofErr = false, "", "", "rotated from a record whose proof does not verify"
		}
		if n.verified {
			// Nor does one out of a DID another controller closed first: a revoked DID stays
			// revoked for every controller, and its standing does not go on under a key one
			// of them picks.
			closed, err := ix.closedElsewhere(ctx, tx, r)
			if err != nil {
				return nil, err
			}
			if closed {
				n.verified, n.did, n.binding, n.proofErr = false, "", "", "rotated from a DID another controller closed first"
			}
		}
		n.staked, n.unbonding, n.unlockAt = r.staked, r.unbonding, r.unlockAt
		if n.verified {
			r.successor = n.did
		}
		r.status, r.closed = StatusRotated, [2]uint64{ev.Block, uint64(ev.LogIndex)}
		r.staked, r.unbonding, r.unlockAt = new(big.Int), new(big.Int), 0
		if err := ix.save(ctx, tx, n, ev.Block); err != nil {
			return nil, err
		}
		out = changed(n, event{Name: "Bound", Block: ev.Block})
	}
	return append(changed(r, ev), out...), ix.save(ctx, tx, r, ev.Block)
}

// closedElsewhere says whether r's DID was closed (revoked or rotated away) under another
// controller, as far as tx has applied.
func (ix *Index) closedElsewhere(ctx context.Context, tx *sql.Tx, r *record) (bool, error) {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM stake_records WHERE chain = ? AND agent_id = ? AND did = ? AND verified = 1
		AND status != 'bound' AND controller != ?`, ix.cfg.Chain, r.agent.Hex(), r.did, r.controller.Hex()).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("stake index: is %s closed: %w", r.did, err)
	}
	return n > 0, nil
}

func changed(r *record, ev event) []Change {
	if !r.verified {
		return nil
	}
	return []Change{{DID: r.did, Controller: r.controller, Event: ev.Name, Block: ev.Block}}
}

func nonNeg(x *big.Int) *big.Int {
	if x.Sign() < 0 {
		return new(big.Int)
	}
	return x
}

// agentID is the key the contract uses (keccak256 of the DID); a DID's records are found by it.
var agentID = identity.AgentID
