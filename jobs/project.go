package jobs

import (
	"context"
	"database/sql"
	"fmt"
	"math/big"
	"unicode/utf8"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/contracts"
)

// The contracts the index follows, by the names events are stored under.
const (
	escrowName = "JobEscrow"
	hookName   = "SuretyHook"
)

// contractSources are the followed contracts with their ABIs (the hook only when it has an
// address).
func contractSources(escrow, hook common.Address) ([]source, error) {
	out := []source{}
	escrowABI, err := contracts.JobEscrowMetaData.ParseABI()
	if err != nil {
		return nil, err
	}
	out = append(out, source{name: escrowName, addr: escrow, abi: escrowABI})
	if hook != (common.Address{}) {
		hookABI, err := hookABI()
		if err != nil {
			return nil, err
		}
		out = append(out, source{name: hookName, addr: hook, abi: hookABI})
	}
	return out, nil
}

// jobIDArg is the argument by which every event of JobEscrow and SuretyHook names its job.
const jobIDArg = "jobId"

// createdExtra are the fields of a job no event carries, read with getJob at the block that
// created it and kept with its JobCreated event under this key.
const createdExtra = "job"

// readCreated reads what JobCreated does not say of job id (its description and provider
// agent id) with getJob at block; nil when the chain does not answer (the job goes without).
func (ix *Indexer) readCreated(ctx context.Context, id uint64, block uint64) (map[string]any, error) {
	if ix.cfg.Caller == nil {
		return nil, nil
	}
	input, err := ix.escrow.Pack("getJob", new(big.Int).SetUint64(id))
	if err != nil {
		return nil, err
	}
	to := ix.cfg.JobEscrow
	out, err := ix.cfg.Caller.CallContract(ctx, ethereum.CallMsg{To: &to, Data: input}, new(big.Int).SetUint64(block))
	if err != nil {
		// A chain that keeps only recent state (most nodes) cannot answer at an old block:
		// the description never changes, so the head's answer is as good.
		if out, err = ix.cfg.Caller.CallContract(ctx, ethereum.CallMsg{To: &to, Data: input}, nil); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			// Never stall the index for what no event carries: the job goes without it.
			ix.cfg.Logger.Warn("jobs index: getJob failed; the job's description is left out", "job", id, "block", block, "err", err)
			return nil, nil
		}
	}
	vals, err := ix.escrow.Unpack("getJob", out)
	if err != nil || len(vals) != 1 {
		ix.cfg.Logger.Warn("jobs index: getJob answered what its ABI does not decode; the job's description is left out", "job", id, "err", err)
		return nil, nil
	}
	job, _ := jsonValueOf(vals[0]).(map[string]any)
	desc, _ := job["description"].(string)
	if len(desc) > MaxDescription {
		desc = desc[:MaxDescription]
		for !utf8.ValidString(desc) {
			desc = desc[:len(desc)-1]
		}
	}
	extra := map[string]any{"description": desc, "providerAgentId": "0"}
	if a, ok := job["providerAgentId"]; ok {
		extra["providerAgentId"] = a
	}
	return extra, nil
}

// project applies a job's event to its rows. Events arrive in chain order.
func (ix *Indexer) project(ctx context.Context, tx *sql.Tx, ev Event) error {
	a, err := ev.args()
	if err != nil {
		return err
	}
	chain, id, blk := ix.cfg.Chain, int64(ev.JobID), int64(ev.Block)
	exec := func(q string, args ...any) error {
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("jobs index: apply %s to job %d: %w", ev.Name, ev.JobID, err)
		}
		return nil
	}
	set := func(cols string, args ...any) error {
		q := `UPDATE jobs_jobs SET updated_block = ?` + cols + ` WHERE chain = ? AND id = ?`
		all := append([]any{blk}, args...)
		return exec(q, append(all, chain, id)...)
	}
	if ev.Contract == hookName {
		return ix.projectHook(ctx, tx, ev, a, set, exec)
	}
	switch ev.Name {
	case "JobCreated":
		desc, agent := "", "0"
		if extra, ok := a[createdExtra].(map[string]any); ok {
			desc, _ = extra["description"].(string)
			agent = Args(extra).Amount("providerAgentId")
		}
		return exec(`INSERT INTO jobs_jobs (chain, id, client, provider, evaluator, hook, expired_at, description, agent_id, status, created_block, updated_block)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			chain, id, a.Address("client").Hex(), a.Address("provider").Hex(), a.Address("evaluator").Hex(), a.Address("hook").Hex(),
			int64(clampUint(a, "expiredAt")), desc, agent, string(StatusOpen), blk, blk)
	case "ProviderSet":
		return set(`, provider = ?, agent_id = ?`, a.Address("provider").Hex(), a.Amount("agentId"))
	case "BudgetSet":
		return set(`, token = ?, budget = ?`, a.Address("token").Hex(), a.Amount("amount"))
	case "JobFunded":
		// The budget is what arrived (a fee-on-transfer token funds less than was set).
		return set(`, status = ?, budget = ?`, string(StatusFunded), a.Amount("amount"))
	case "JobSubmitted":
		return set(`, status = ?, deliverable = ?`, string(StatusSubmitted), a.Str("deliverable"))
	case "JobCompleted":
		return set(`, status = ?, reason = ?`, string(StatusCompleted), a.Str("reason"))
	case "JobRejected":
		return set(`, status = ?, reason = ?, rejected_by = ?`, string(StatusRejected), a.Str("reason"), a.Address("rejector").Hex())
	case "JobExpired":
		return set(`, status = ?`, string(StatusExpired))
	case "PaymentReleased":
		return set(`, payout = ?`, a.Amount("amount"))
	case "Refunded":
		return set(`, refund = ?`, a.Amount("amount"))
	case "PlatformFeePaid":
		return set(`, platform_fee = ?`, a.Amount("amount"))
	case "EvaluatorFeePaid":
		return set(`, evaluator_fee = ?`, a.Amount("amount"))
	}
	return nil
}

// clampUint is an integer argument, at most the largest int64 (a far-future expiry set as
// type(uint256).max shows as that).
func clampUint(a Args, name string) uint64 {
	n, ok := a.Uint(name)
	if !ok || n > 1<<63-1 {
		if a.Amount(name) != "0" {
			return 1<<63 - 1
		}
		return 0
	}
	return n
}
