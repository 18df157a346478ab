package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"

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
func hookABI() (*abi.ABI, error) {
	return nil, errors.New("jobs: this build knows no SuretyHook ABI")
}

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
		if e := entry(a.Address("worker")); e != nil {
			e.Deliverable = a.Str("deliverable")
		}
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
	return []func([]byte) (any, error){contractsJobEscrow().UnpackError}
}

// decodeHookValue maps SuretyHook's custom errors (nil for one it has no sentinel for).
func decodeHookValue(v any, id uint64, status Status) *JobError {
	return nil
}
