package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ethereum/go-ethereum/common"
)

// Job is an ERC-8183 job as the index shows it.
type Job struct {
	ID     uint64         `json:"id"`
	Status Status         `json:"status"`
	Client common.Address `json:"client"`
	// Provider is the provider of record (for a Surety job, the hook's pool; its workers are
	// in Workers and, with their entries, in Surety).
	Provider    common.Address `json:"provider"`
	Evaluator   common.Address `json:"evaluator"`
	Hook        common.Address `json:"hook"`
	ExpiredAt   uint64         `json:"expiredAt"`
	Description string         `json:"description"`
	// ProviderAgentID is the provider's ERC-8004 agent id (decimal; "0": none).
	ProviderAgentID string `json:"providerAgentId"`
	// Token is the payment token (zero until a budget is set) and Budget its amount (base
	// units, decimal): once funded, what arrived.
	Token        common.Address `json:"token"`
	Budget       string         `json:"budget"`
	Deliverable  string         `json:"deliverable,omitempty"`
	Reason       string         `json:"reason,omitempty"`
	RejectedBy   common.Address `json:"rejectedBy,omitzero"`
	Payout       string         `json:"payout"`
	PlatformFee  string         `json:"platformFee"`
	EvaluatorFee string         `json:"evaluatorFee"`
	Refund       string         `json:"refund"`
	CreatedBlock uint64         `json:"createdBlock"`
	UpdatedBlock uint64         `json:"updatedBlock"`
	// Workers are the wallets that entered the job through its hook (competing workers),
	// in the order they entered; empty for a job with one provider.
	Workers []common.Address `json:"workers,omitempty"`
	// Surety is the job's side in SuretyHook (plan, entries, dispute, settlement, milestone
	// parts), when it is a Surety job; List gives its phase only.
	Surety *Surety `json:"surety,omitempty"`
	// History is the job's events (JobEscrow's and its hook's) in chain order, the latest
	// MaxHistory of them (Get only).
	History []Event `json:"history,omitempty"`
}

// Filter selects jobs; zero fields match everything.
type Filter struct {
	Status Status
	Client common.Address
	// Provider matches the provider of record and the workers who entered through the hook.
	Provider  common.Address
	Evaluator common.Address
	// Limit bounds the answer (0 means DefaultLimit, at most MaxLimit); After pages by id.
	Limit int
	After uint64
}

const jobColumns = `id, status, client, provider, evaluator, hook, expired_at, description, agent_id, token, budget, deliverable, reason, rejected_by,
	payout, platform_fee, evaluator_fee, refund, created_block, updated_block`

func scanJob(scan func(...any) error) (*Job, error) {
	var j Job
	var status, client, provider, evaluator, hook, token, rejectedBy string
	var expired int64
	if err := scan(&j.ID, &status, &client, &provider, &evaluator, &hook, &expired, &j.Description, &j.ProviderAgentID, &token, &j.Budget,
		&j.Deliverable, &j.Reason, &rejectedBy, &j.Payout, &j.PlatformFee, &j.EvaluatorFee, &j.Refund, &j.CreatedBlock, &j.UpdatedBlock); err != nil {
		return nil, err
	}
	j.Status, j.ExpiredAt = Status(status), uint64(expired)
	j.Client, j.Provider, j.Evaluator, j.Hook = common.HexToAddress(client), common.HexToAddress(provider), common.HexToAddress(evaluator), common.HexToAddress(hook)
	if token != "" {
		j.Token = common.HexToAddress(token)
	}
	if rejectedBy != "" {
		j.RejectedBy = common.HexToAddress(rejectedBy)
	}
	return &j, nil
}

// List returns the jobs matching f, by id.
func (ix *Indexer) List(ctx context.Context, f Filter) ([]*Job, error) {
	if f.Limit <= 0 {
		f.Limit = DefaultLimit
	}
	f.Limit = min(f.Limit, MaxLimit)
	where := []string{"chain = ?", "id > ?"}
	args := []any{ix.cfg.Chain, int64(min(f.After, 1<<63-1))}
	if f.Status != "" {
		where, args = append(where, "status = ?"), append(args, string(f.Status))
	}
	if f.Client != (common.Address{}) {
		where, args = append(where, "client = ?"), append(args, f.Client.Hex())
	}
	if f.Evaluator != (common.Address{}) {
		where, args = append(where, "evaluator = ?"), append(args, f.Evaluator.Hex())
	}
	if f.Provider != (common.Address{}) {
		where = append(where, "(provider = ? OR id IN (SELECT job_id FROM jobs_workers w WHERE w.chain = jobs_jobs.chain AND w.worker = ?))")
		args = append(args, f.Provider.Hex(), f.Provider.Hex())
	}
	// A Surety job's hook phase comes along (its whole side only with Get).
	rows, err := ix.cfg.DB.QueryContext(ctx, `SELECT `+jobColumns+`, COALESCE((SELECT json_extract(h.state, '$.phase') FROM jobs_hook h
		WHERE h.chain = jobs_jobs.chain AND h.job_id = jobs_jobs.id), '') FROM jobs_jobs WHERE `+strings.Join(where, " AND ")+` ORDER BY id LIMIT ?`,
		append(args, f.Limit)...)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	defer rows.Close()
	out := []*Job{}
	for rows.Next() {
		var phase string
		j, err := scanJob(func(dst ...any) error { return rows.Scan(append(dst, &phase)...) })
		if err != nil {
			return nil, fmt.Errorf("list jobs: %w", err)
		}
		if phase != "" {
			j.Surety = &Surety{Phase: phase}
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// Get returns job id with its workers and history, or an ErrUnknownJob error.
func (ix *Indexer) Get(ctx context.Context, id uint64) (*Job, error) {
	if id > 1<<63-1 {
		return nil, Unknown(id, false)
	}
	row := ix.cfg.DB.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM jobs_jobs WHERE chain = ? AND id = ?`, ix.cfg.Chain, int64(id))
	j, err := scanJob(row.Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Unknown(id, false)
	}
	if err != nil {
		return nil, fmt.Errorf("get job %d: %w", id, err)
	}
	if j.Workers, err = ix.workers(ctx, id); err != nil {
		return nil, err
	}
	if j.Surety, err = ix.surety(ctx, id); err != nil {
		return nil, err
	}
	if j.History, err = ix.latestEvents(ctx, id, MaxHistory); err != nil {
		return nil, err
	}
	return j, nil
}

// latestEvents returns the last n events of job id, in chain order.
func (ix *Indexer) latestEvents(ctx context.Context, id uint64, n int) ([]Event, error) {
	rows, err := ix.cfg.DB.QueryContext(ctx, `SELECT contract, name, block, tx_hash, log_index, data FROM jobs_events WHERE chain = ? AND job_id = ?
		ORDER BY block DESC, log_index DESC LIMIT ?`, ix.cfg.Chain, int64(id), n)
	if err != nil {
		return nil, fmt.Errorf("job %d history: %w", id, err)
	}
	out, err := scanEvents(rows, id)
	slices.Reverse(out)
	return out, err
}

// workers are the wallets that entered job id through its hook, in the order they entered.
func (ix *Indexer) workers(ctx context.Context, id uint64) ([]common.Address, error) {
	rows, err := ix.cfg.DB.QueryContext(ctx, `SELECT worker FROM jobs_workers WHERE chain = ? AND job_id = ? ORDER BY rowid`, ix.cfg.Chain, int64(id))
	if err != nil {
		return nil, fmt.Errorf("job %d workers: %w", id, err)
	}
	defer rows.Close()
	var out []common.Address
	for rows.Next() {
		var w string
		if err := rows.Scan(&w); err != nil {
			return nil, err
		}
		out = append(out, common.HexToAddress(w))
	}
	return out, rows.Err()
}

// History returns the events of job id in chain order.
func (ix *Indexer) History(ctx context.Context, id uint64) ([]Event, error) {
	return ix.events(ctx, ix.cfg.DB, id)
}

// Count returns how many jobs and events the index holds.
func (ix *Indexer) Count(ctx context.Context) (jobs, events int, err error) {
	if err = ix.cfg.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM jobs_jobs WHERE chain = ?`, ix.cfg.Chain).Scan(&jobs); err != nil {
		return
	}
	err = ix.cfg.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM jobs_events WHERE chain = ?`, ix.cfg.Chain).Scan(&events)
	return
}
