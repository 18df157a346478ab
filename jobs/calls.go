package jobs

import (
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/surety-ioa/surety/contracts"
)

// CreatedID is the id of the job a createJob receipt records (the JobCreated event of the
// JobEscrow at escrow); a receipt that opened several (a milestone job through the hook)
// gives the first.
func CreatedID(r *types.Receipt, escrow common.Address) (uint64, bool) {
	ids := CreatedIDs(r, escrow)
	if len(ids) == 0 {
		return 0, false
	}
	return ids[0], true
}

// CreatedIDs are the ids of every job a receipt records created, in log order.
func CreatedIDs(r *types.Receipt, escrow common.Address) []uint64 {
	abi := contracts.NewJobEscrow()
	var out []uint64
	for _, l := range r.Logs {
		if l.Address != escrow {
			continue
		}
		if ev, err := abi.UnpackJobCreatedEvent(l); err == nil && ev.JobId.IsUint64() {
			out = append(out, ev.JobId.Uint64())
		}
	}
	return out
}

// CreateRequest is a createJob call.
type CreateRequest struct {
	// Provider may be zero (set later with ActionProvider); AgentID is its ERC-8004 agent id
	// (nil: none).
	Provider    common.Address
	Evaluator   common.Address
	ExpiredAt   uint64
	Description string
	Hook        common.Address
	AgentID     *big.Int
}

// CreateData is the createJob call of r, its arguments checked as the contract checks them.
func CreateData(r CreateRequest) ([]byte, error) {
	switch {
	case r.Evaluator == (common.Address{}):
		return nil, &JobError{Err: ErrInvalid, Msg: "invalid argument: a job needs an evaluator (--evaluator ADDR)"}
	case r.Provider == r.Evaluator:
		return nil, &JobError{Err: ErrInvalid, Msg: "invalid argument: the provider cannot also be the evaluator"}
	}
	agent := r.AgentID
	if agent == nil {
		agent = new(big.Int)
	}
	return contracts.NewJobEscrow().PackCreateJob(r.Provider, r.Evaluator, new(big.Int).SetUint64(r.ExpiredAt), r.Description, r.Hook, agent), nil
}

// Action is a job call after createJob.
type Action string

// Actions, as `surety job` names them.
const (
	ActionProvider Action = "provider" // setProvider: the client names the provider
	ActionBudget   Action = "budget"   // setBudget: the client or the provider sets token and amount
	ActionFund     Action = "fund"     // fund: the client escrows the budget the index shows
	ActionSubmit   Action = "submit"   // submit: the provider hands in the deliverable
	ActionComplete Action = "complete" // complete: the evaluator accepts; the provider is paid
	ActionReject   Action = "reject"   // reject: the client (open) or the evaluator
	ActionRefund   Action = "refund"   // claimRefund: anyone, after the expiry
)

// ActionArgs are the extra arguments some actions take.
type ActionArgs struct {
	Provider common.Address // provider
	AgentID  *big.Int       // provider: its ERC-8004 agent id (nil: none)
	Token    common.Address // budget
	Amount   *big.Int       // budget
	// Hash is the deliverable (submit) or the reason (complete, reject).
	Hash common.Hash
	// OptParams are passed to the job's hook (budget: a Surety plan; see the hook).
	OptParams []byte
}

// ActionData is the JobEscrow call of action on job j (as an index holds it), its arguments
// checked as the contract checks them. fund expects the budget j shows: if it changed since,
// the contract refuses (ErrBudgetMismatch) and nothing is paid.
func ActionData(j *Job, action Action, args ActionArgs) ([]byte, error) {
	id := j.ID
	if j.Status.Terminal() && action != "" {
		return nil, &JobError{ID: id, Err: ErrWrongStatus, Msg: fmt.Sprintf("job %d is already %s", id, j.Status)}
	}
	jid := new(big.Int).SetUint64(id)
	abi := contracts.NewJobEscrow()
	open := func() error {
		if j.Status != StatusOpen {
			return &JobError{ID: id, Err: ErrWrongStatus, Msg: fmt.Sprintf("job %d is %s: only an open job takes that call", id, j.Status)}
		}
		return nil
	}
	switch action {
	case ActionProvider:
		if err := open(); err != nil {
			return nil, err
		}
		if args.Provider == (common.Address{}) {
			return nil, &JobError{ID: id, Err: ErrInvalid, Msg: "invalid argument: name the provider (--provider ADDR)"}
		}
		agent := args.AgentID
		if agent == nil {
			agent = new(big.Int)
		}
		return abi.PackSetProvider(jid, args.Provider, agent), nil
	case ActionBudget:
		if err := open(); err != nil {
			return nil, err
		}
		if args.Token == (common.Address{}) {
			return nil, &JobError{ID: id, Err: ErrInvalid, Msg: "invalid argument: ERC-8183 pays in an ERC-20: name it (--token ADDR)"}
		}
		if args.Amount == nil || args.Amount.Sign() < 0 {
			return nil, &JobError{ID: id, Err: ErrInvalid, Msg: "invalid argument: give the budget (--amount)"}
		}
		return abi.PackSetBudget(jid, args.Token, args.Amount, args.OptParams), nil
	case ActionFund:
		if err := open(); err != nil {
			return nil, err
		}
		if j.Provider == (common.Address{}) {
			return nil, &JobError{ID: id, Err: ErrInvalid, Msg: fmt.Sprintf("job %d has no provider yet: set one first (surety job provider %d --provider ADDR)", id, id)}
		}
		budget, ok := new(big.Int).SetString(j.Budget, 10)
		if !ok {
			budget = new(big.Int)
		}
		return abi.PackFund(jid, budget, args.OptParams), nil
	case ActionSubmit:
		return abi.PackSubmit(jid, args.Hash, args.OptParams), nil
	case ActionComplete:
		return abi.PackComplete(jid, args.Hash, args.OptParams), nil
	case ActionReject:
		return abi.PackReject(jid, args.Hash, args.OptParams), nil
	case ActionRefund:
		return abi.PackClaimRefund(jid), nil
	}
	return nil, &JobError{ID: id, Err: ErrInvalid, Msg: fmt.Sprintf("invalid argument: unknown action %q", action)}
}
