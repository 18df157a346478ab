package jobs

import (
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/contracts"
)

// Plan is a Surety job's plan: the rules the client's setBudget hands SuretyHook (its
// optParams, abi-encoded ISuretyHook.Plan).
type Plan = contracts.ISuretyHookPlan

// PlanData abi-encodes p as setBudget's optParams for SuretyHook.
func PlanData(p Plan) ([]byte, error) {
	if p.MinStake == nil {
		p.MinStake = new(big.Int)
	}
	if p.PrevPart == nil {
		p.PrevPart = new(big.Int)
	}
	return contracts.EncodePlan(p)
}

// SuretyCreate is the createJob of a Surety job on JobEscrow: SuretyHook's pool as provider,
// the hook as evaluator and hook (the hook's rule), the rest of r as given.
func SuretyCreate(r CreateRequest, hook, pool common.Address) ([]byte, error) {
	r.Provider, r.Evaluator, r.Hook = pool, hook, hook
	return CreateData(r)
}

// Hook actions: the calls a Surety job takes at SuretyHook.
const (
	ActionJoin           Action = "join"            // a worker enters the funded job (locks minStake of its agent's stake)
	ActionApprove        Action = "approve"         // the client pays a single worker's submission
	ActionPick           Action = "pick"            // the client picks winners and shares among competing workers
	ActionDispute        Action = "dispute"         // the client rejects the submissions: the arbiter decides
	ActionResolve        Action = "resolve"         // the arbiter splits a dispute (and may slash a single worker)
	ActionResolveExpired Action = "resolve-expired" // anyone, past the arbiter's time: half and half
	ActionRelease        Action = "release"         // anyone, past a silent review window: the first submitters share
	ActionCancel         Action = "cancel"          // the client takes the budget back before any submission
	ActionClose          Action = "close"           // anyone: end the stake locks of an expired job
)

// HookArgs are the extra arguments of the hook's calls.
type HookArgs struct {
	AgentID common.Hash // join: the worker's agent (keccak256 of its DID)
	Hash    common.Hash // submit: the deliverable; dispute: the reason
	// Winners and Bps are a pick's or a ruling's split (basis points).
	Winners []common.Address
	Bps     []uint16
	Slash   *big.Int // resolve: stake of a single worker to the client
}

// HookActionData is SuretyHook's call of action (ActionSubmit, or one of the hook actions)
// on job j.
func HookActionData(j *Job, action Action, a HookArgs) ([]byte, error) {
	id := j.ID
	if j.Surety != nil && j.Surety.Phase == "settled" {
		return nil, &JobError{ID: id, Err: ErrWrongStatus, Msg: fmt.Sprintf("job %d is already settled (%s)", id, j.Surety.Settlement.outcome())}
	}
	jid := new(big.Int).SetUint64(id)
	h := contracts.NewSuretyHook()
	split := func() error {
		if len(a.Winners) != len(a.Bps) || len(a.Winners) == 0 && action == ActionPick {
			return &JobError{ID: id, Err: ErrInvalid, Msg: "invalid argument: name the winners and their shares (--winner ADDR:BPS, repeated)"}
		}
		sum := 0
		for _, b := range a.Bps {
			sum += int(b)
		}
		if sum > 10_000 || action == ActionPick && sum != 10_000 {
			return &JobError{ID: id, Err: ErrInvalid, Msg: fmt.Sprintf("invalid argument: the shares add up to %d basis points (a pick: exactly 10000; a ruling: at most 10000, the rest to the client)", sum)}
		}
		return nil
	}
	switch action {
	case ActionJoin:
		if stake := j.Surety.minStake(); a.AgentID == (common.Hash{}) && stake != "0" {
			return nil, &JobError{ID: id, Err: ErrInsufficientStake, Msg: fmt.Sprintf("job %d locks %s (base units) of a worker's agent stake: name the agent whose stake it locks (surety job join --key or --agent)", id, stake)}
		}
		return h.PackJoin(jid, a.AgentID), nil
	case ActionSubmit:
		return h.PackSubmit(jid, a.Hash), nil
	case ActionApprove:
		return h.PackApprove(jid), nil
	case ActionPick:
		if err := split(); err != nil {
			return nil, err
		}
		return h.PackPick(jid, a.Winners, a.Bps), nil
	case ActionDispute, ActionReject:
		return h.PackReject(jid, a.Hash), nil
	case ActionResolve:
		if err := split(); err != nil {
			return nil, err
		}
		slash := a.Slash
		if slash == nil {
			slash = new(big.Int)
		}
		return h.PackResolve(jid, a.Winners, a.Bps, slash), nil
	case ActionResolveExpired:
		return h.PackResolveExpired(jid), nil
	case ActionRelease:
		return h.PackRelease(jid), nil
	case ActionCancel:
		return h.PackCancel(jid), nil
	case ActionClose:
		return h.PackClose(jid), nil
	}
	return nil, &JobError{ID: id, Err: ErrInvalid, Msg: fmt.Sprintf("invalid argument: unknown hook action %q", action)}
}

// outcome is the settlement's outcome, or "" without one.
func (s *Settlement) outcome() string {
	if s == nil {
		return ""
	}
	return s.Outcome
}

// minStake is the plan's minStake ("0" without a plan or a stake gate).
func (s *Surety) minStake() string {
	if s == nil || len(s.Plan) == 0 {
		return "0"
	}
	var p struct {
		MinStake json.Number `json:"minStake"`
	}
	if json.Unmarshal(s.Plan, &p) != nil || p.MinStake == "" {
		return "0"
	}
	return p.MinStake.String()
}
