package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/sqlite"
)

// hookMigration keeps what SuretyHook's events say of each job: its plan, phase, entries,
// dispute and settlement (state, JSON), and the part before it of a milestone job.
var hookMigration = sqlite.Migration{Version: 2, SQL: `
CREATE TABLE jobs_hook (
	chain     INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	job_id    INTEGER NOT NULL,
	prev_part INTEGER NOT NULL DEFAULT 0,
	state     TEXT    NOT NULL,
	PRIMARY KEY (chain, job_id)
) STRICT;
CREATE INDEX jobs_hook_prev ON jobs_hook (chain, prev_part);
`}

// Surety is a job's side in SuretyHook, Surety's extras: its plan, where it is, the workers'
// entries, a dispute and how it settled.
type Surety struct {
	// Phase is the hook's: planned, open, disputed or settled.
	Phase string `json:"phase"`
	// Plan is the client's plan (setBudget's optParams), as the hook stored it.
	Plan json.RawMessage `json:"plan,omitempty"`
	// Entries are the workers who joined, in order, with their submissions and awards.
	Entries []Entry `json:"entries,omitempty"`
	// Dispute is the client's rejection the arbiter rules on, once there is one.
	Dispute *Dispute `json:"dispute,omitempty"`
	// Settlement is how the job ended, once it did.
	Settlement *Settlement `json:"settlement,omitempty"`
	// Parts are the ids of a milestone job's parts in order (this job among them); empty for
	// a job of one part.
	Parts []uint64 `json:"parts,omitempty"`
}

// Entry is one worker's entry in a job.
type Entry struct {
	Worker common.Address `json:"worker"`
	// AgentID is the agent the worker joined for (its Surety agent id, whose stake a
	// minStake locks); LockID the stake lock, "0" without one.
	AgentID     string `json:"agentId"`
	LockID      string `json:"lockId"`
	Deliverable string `json:"deliverable,omitempty"`
	// Bps and Amount are the worker's award, once the job settled in its favour.
	Bps    uint64 `json:"bps,omitempty"`
	Amount string `json:"amount,omitempty"`
}

// Dispute is a client's rejection of a Surety job's submissions.
type Dispute struct {
	By         common.Address `json:"by"`
	ReasonHash string         `json:"reasonHash"`
}

// Settlement is how a Surety job ended.
type Settlement struct {
	// Outcome: approved, released, resolved, resolved-expired, cancelled or expired.
	Outcome   string `json:"outcome"`
	ToWorkers string `json:"toWorkers"`
	ToClient  string `json:"toClient"`
	Slash     string `json:"slash"`
}

// The hook's phases and outcomes, in its enums' order.
var (
	hookPhases   = []string{"none", "planned", "open", "disputed", "settled"}
	hookOutcomes = []string{"approved", "released", "resolved", "resolved-expired", "cancelled", "expired"}
)

// hookABI is SuretyHook's ABI.
func hookABI() (*abi.ABI, error) { return contracts.SuretyHookMetaData.ParseABI() }

// projectHook applies a SuretyHook event to its job's hook state.
func (ix *Indexer) projectHook(ctx context.Context, tx *sql.Tx, ev Event, a Args, set func(string, ...any) error, exec func(string, ...any) error) error {
	chain, id := ix.cfg.Chain, int64(ev.JobID)
	var st Surety
	var raw string
	prev := int64(0)
	err := tx.QueryRowContext(ctx, `SELECT prev_part, state FROM jobs_hook WHERE chain = ? AND job_id = ?`, chain, id).Scan(&prev, &raw)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return err
	default:
		if err := json.Unmarshal([]byte(raw), &st); err != nil {
			return fmt.Errorf("jobs index: job %d hook state: %w", id, err)
		}
	}
	entry := func(w common.Address) *Entry {
		for i := range st.Entries {
			if st.Entries[i].Worker == w {
				return &st.Entries[i]
			}
		}
		return nil
	}
	switch ev.Name {
	case "Planned":
		st.Phase = hookPhases[1]
		if st.Plan, err = json.Marshal(a["plan"]); err != nil {
			return err
		}
		if p, ok := a.Uint("prevPart"); ok && p <= 1<<63-1 {
			prev = int64(p)
		}
	case "Opened":
		st.Phase = hookPhases[2]
	case "Joined":
		w := a.Address("worker")
		if entry(w) == nil {
			st.Entries = append(st.Entries, Entry{Worker: w, AgentID: a.Str("agentId"), LockID: a.Amount("lockId")})
		}
		if err := exec(`INSERT INTO jobs_workers (chain, job_id, worker) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, chain, id, w.Hex()); err != nil {
			return err
		}
	case "EntrySubmitted":
		// On a job without a stake gate a worker may submit without joining first: the
		// submission is its entry.
		w := a.Address("worker")
		e := entry(w)
		if e == nil {
			st.Entries = append(st.Entries, Entry{Worker: w, AgentID: common.Hash{}.Hex(), LockID: "0"})
			e = &st.Entries[len(st.Entries)-1]
			if err := exec(`INSERT INTO jobs_workers (chain, job_id, worker) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, chain, id, w.Hex()); err != nil {
				return err
			}
		}
		e.Deliverable = a.Str("deliverable")
	case "Disputed":
		st.Phase = hookPhases[3]
		st.Dispute = &Dispute{By: a.Address("by"), ReasonHash: a.Str("reasonHash")}
	case "Awarded":
		if e := entry(a.Address("worker")); e != nil {
			e.Bps, _ = a.Uint("bps")
			e.Amount = a.Amount("amount")
		}
	case "Settled":
		st.Phase = hookPhases[4]
		outcome := "unknown"
		if n, ok := a.Uint("outcome"); ok && n < uint64(len(hookOutcomes)) {
			outcome = hookOutcomes[n]
		}
		st.Settlement = &Settlement{Outcome: outcome, ToWorkers: a.Amount("toWorkers"), ToClient: a.Amount("toClient"), Slash: a.Amount("slash")}
	default:
		return nil
	}
	st.Parts = nil // computed when read
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if err := exec(`INSERT INTO jobs_hook (chain, job_id, prev_part, state) VALUES (?, ?, ?, ?)
		ON CONFLICT (chain, job_id) DO UPDATE SET prev_part = excluded.prev_part, state = excluded.state`, chain, id, prev, string(b)); err != nil {
		return err
	}
	return set(``)
}

// surety reads job id's hook state and its milestone parts (nil: the hook has none).
func (ix *Indexer) surety(ctx context.Context, id uint64) (*Surety, error) {
	var raw string
	var prev int64
	err := ix.cfg.DB.QueryRowContext(ctx, `SELECT prev_part, state FROM jobs_hook WHERE chain = ? AND job_id = ?`, ix.cfg.Chain, int64(id)).Scan(&prev, &raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("job %d hook state: %w", id, err)
	}
	var st Surety
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		return nil, err
	}
	// The parts: back to the first through prev_part, then forward through the parts that
	// name each as theirs, bounded (a chain of parts is a client's own, but not endless).
	first := int64(id)
	for p, n := prev, 0; p != 0 && n < maxParts; n++ {
		first = p
		if err := ix.cfg.DB.QueryRowContext(ctx, `SELECT prev_part FROM jobs_hook WHERE chain = ? AND job_id = ?`, ix.cfg.Chain, p).Scan(&p); err != nil {
			break
		}
	}
	parts := []uint64{uint64(first)}
	for cur, n := first, 0; n < maxParts; n++ {
		var next int64
		if err := ix.cfg.DB.QueryRowContext(ctx, `SELECT job_id FROM jobs_hook WHERE chain = ? AND prev_part = ? ORDER BY job_id LIMIT 1`, ix.cfg.Chain, cur).Scan(&next); err != nil {
			break
		}
		parts, cur = append(parts, uint64(next)), next
	}
	if len(parts) > 1 {
		st.Parts = parts
	}
	return &st, nil
}

// revertUnpackers are the generated error decoders of the job contracts, JobEscrow's first.
func revertUnpackers() []func([]byte) (any, error) {
	return []func([]byte) (any, error){contracts.NewJobEscrow().UnpackError, contracts.NewSuretyHook().UnpackError}
}

// phaseName is the hook's phase n, as Surety.Phase names it.
func phaseName(n uint8) string {
	if int(n) < len(hookPhases) {
		return hookPhases[n]
	}
	return fmt.Sprint(n)
}

// decodeHookValue maps SuretyHook's custom errors, and the stake registry's a join meets (nil
// for one it has no sentinel for).
func decodeHookValue(v any, id uint64, status Status) *JobError {
	je := func(sentinel error, format string, args ...any) *JobError {
		return &JobError{ID: id, Err: sentinel, Msg: jobPrefix(id) + fmt.Sprintf(format, args...)}
	}
	switch e := v.(type) {
	case *contracts.SuretyHookNotCore:
		return je(ErrNotAllowed, "only JobEscrow calls the hook's callbacks (caller %s)", e.Caller.Hex())
	case *contracts.SuretyHookNotJobLocker:
		return je(ErrInvalid, "invalid argument: the stake registry %s does not name this hook its job locker (a foreign deployment)", e.Registry.Hex())
	case *contracts.SuretyHookUnknownJob:
		return je(ErrWrongStatus, "job %v is not a Surety job of this hook yet (no plan, or not funded)", e.JobId)
	case *contracts.SuretyHookNotSuretyJob:
		return je(ErrInvalid, "invalid argument: a job naming SuretyHook must name its pool as provider and the hook as evaluator (surety job create --surety does)")
	case *contracts.SuretyHookNotClient:
		return je(ErrNotAllowed, "only the job's client may do this (caller %s)", e.Caller.Hex())
	case *contracts.SuretyHookNotArbiter:
		return je(ErrNotAllowed, "only the job's arbiter may do this (caller %s)", e.Caller.Hex())
	case *contracts.SuretyHookWrongPhase:
		return je(ErrWrongStatus, "the job is %s in the hook: that call is not possible now", phaseName(e.Phase))
	case *contracts.SuretyHookInvalidPlan:
		return je(ErrInvalid, "invalid argument: the plan's %s breaks the hook's rules", e.Field)
	case *contracts.SuretyHookTooLate:
		return je(ErrTooLate, "the plan's review, ruling and settle window end at %s, after the job expires (%s): create the job with a later --expires", unixTime(e.FinishBy), unixTime(e.ExpiredAt))
	case *contracts.SuretyHookJobFull:
		return je(ErrWrongStatus, "the job takes no more workers")
	case *contracts.SuretyHookNotAllowed:
		return je(ErrNotAllowed, "%s may not join this job (a named worker, a milestone part's worker, the client and the arbiter decide who may)", e.Caller.Hex())
	case *contracts.SuretyHookAlreadyJoined:
		return je(ErrWrongStatus, "%s joined already", e.Worker.Hex())
	case *contracts.SuretyHookNotEntrant:
		return je(ErrNotAllowed, "%s has not joined this job (surety job join %v first)", e.Worker.Hex(), e.JobId)
	case *contracts.SuretyHookAlreadySubmitted:
		return je(ErrWrongStatus, "%s submitted already", e.Worker.Hex())
	case *contracts.SuretyHookNothingSubmitted:
		return je(ErrWrongStatus, "nothing was submitted yet")
	case *contracts.SuretyHookReviewWindowOpen:
		return je(ErrTooEarly, "the client's review window is open until %s", unixTime(e.EndsAt))
	case *contracts.SuretyHookReviewWindowClosed:
		return je(ErrTooLate, "the review window closed at %s (the workers may release)", unixTime(e.EndedAt))
	case *contracts.SuretyHookArbiterTimeNotUp:
		return je(ErrTooEarly, "the arbiter has until %s to rule", unixTime(e.EndsAt))
	case *contracts.SuretyHookInvalidSplit:
		return je(ErrInvalid, "invalid argument: the winners and shares do not fit (each a worker that submitted, at most maxWinners, shares in basis points adding up to 10000 for a pick, at most 10000 for a ruling)")
	case *contracts.SuretyHookInvalidSlash:
		return je(ErrInvalid, "invalid argument: a slash of %v is above the job's minStake, or the job has competing workers (losers lose no stake)", e.Slash)
	case *contracts.SuretyHookHasEntries:
		return je(ErrWrongStatus, "workers have joined: the job can be cancelled only once their entries have closed")
	case *contracts.SuretyHookCoreStatus:
		return je(ErrWrongStatus, "the core job's status (%s) does not allow this", statusName(e.Status))
	case *contracts.SuretyHookTransferFailed:
		return je(ErrTransferFailed, "a transfer failed")
	case *contracts.StakeRegistryInsufficientStake:
		return je(ErrInsufficientStake, "the agent's free stake %v under this wallet is below the %v the job's plan locks", e.Available, e.Requested)
	case *contracts.StakeRegistryZeroAgentId:
		return je(ErrInsufficientStake, "the join names no agent, and the job's plan locks an agent's stake: name the agent (its DID's keccak256)")
	case *contracts.StakeRegistryWrongStatus:
		return je(ErrInsufficientStake, "agent %s is not staked (bound and active) under wallet %s: it has no stake to lock", common.Hash(e.AgentId).Hex(), e.Controller.Hex())
	}
	return nil
}

// statusName is the core's JobStatus n as the index names it.
func statusName(n uint8) Status {
	if int(n) < len(Statuses) {
		return Statuses[n]
	}
	return Status(fmt.Sprint(n))
}

// unixTime renders a chain timestamp (seconds) for people, in UTC.
func unixTime(sec *big.Int) string {
	if sec == nil || !sec.IsInt64() {
		return fmt.Sprint(sec)
	}
	return time.Unix(sec.Int64(), 0).UTC().Format(time.RFC3339)
}
