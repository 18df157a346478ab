package escrow

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/contracts"
)

// Stake ops: a wallet the node holds bonds stake for an agent in StakeRegistry. They go
// through Do like the bounty calls, so they share the wallet's nonce order and the
// Idempotency-Key guarantee.
const (
	// OpStake adds Op.Amount to the stake of agent Op.Agent controlled by Op.From. When the
	// wallet has not bound the agent on chain yet, it first sends StakeRegistry.bind with
	// Op.Proof (the wallet binding both keys signed); for an ERC-20 stake token it approves
	// the registry when the allowance is short.
	OpStake OpKind = "stake"
	// OpUnbond starts unbonding Op.Amount of that stake; it can be withdrawn after the
	// registry's delay.
	OpUnbond OpKind = "unbond"
	// OpWithdrawStake pays the wallet its unbonded stake once the delay has passed.
	OpWithdrawStake OpKind = "withdraw-stake"
	// OpBind records Op.Proof, the wallet binding both keys signed, on chain: the wallet
	// Op.From becomes a controller of agent Op.Agent (StakeRegistry.bind).
	OpBind OpKind = "bind"
)

// Sentinels of stake calls, found before sending (or decoded from the registry's errors).
var (
	// ErrAgentClosed: the agent is revoked or rotated under this wallet; its stake can only
	// be unbonded and withdrawn.
	ErrAgentClosed = errors.New("escrow: the agent is revoked or rotated on chain")
	// ErrNotStaked: the wallet has never bound (so never staked for) the agent.
	ErrNotStaked = errors.New("escrow: the wallet holds no stake for the agent")
	// ErrStakeTooLow: less stake than the call asks for.
	ErrStakeTooLow = errors.New("escrow: less stake than asked for")
	// ErrStillBonded: the unbonding delay has not passed.
	ErrStillBonded = errors.New("escrow: the stake is still bonded")
	// ErrStakeLocked: claimed bounties lock the agent's stake; rotation waits until they end.
	ErrStakeLocked = errors.New("escrow: stake is locked by claimed bounties")
	// ErrAlreadyBound: the wallet has already bound the agent on chain.
	ErrAlreadyBound = errors.New("escrow: the wallet already bound the agent on chain")
)

// StakeError is an error about one agent's stake under one wallet, with a message for people.
// It matches its Err with errors.Is.
type StakeError struct {
	Agent common.Hash
	Err   error
	Msg   string
}

// Error is the message for people.
func (e *StakeError) Error() string { return e.Msg }

// Unwrap returns the sentinel.
func (e *StakeError) Unwrap() error { return e.Err }

// StakeStatus is where an (agent, wallet) record in StakeRegistry is.
type StakeStatus string

// Stake statuses, in the contract's order.
const (
	StakeNone    StakeStatus = "none"
	StakeBound   StakeStatus = "bound"
	StakeRotated StakeStatus = "rotated"
	StakeRevoked StakeStatus = "revoked"
)

var stakeStatuses = []StakeStatus{StakeNone, StakeBound, StakeRotated, StakeRevoked}

// StakeRecord is one agent's stake under one controller wallet, as the chain holds it.
// Amounts are decimal strings in the stake token's base unit (wei for ETH).
type StakeRecord struct {
	Agent      common.Hash    `json:"agentId"`
	Controller common.Address `json:"controller"`
	Status     StakeStatus    `json:"status"`
	// Staked counts as stake, Locked of it by claimed bounties (not unbondable until they
	// end; a dispute ruling may slash it); Unbonding is leaving and withdrawable from UnlockAt
	// (unix seconds; 0 when nothing is unbonding).
	Staked    string         `json:"staked"`
	Locked    string         `json:"locked"`
	Unbonding string         `json:"unbonding"`
	UnlockAt  uint64         `json:"unlockAt,omitempty"`
	Token     common.Address `json:"token"`
}

type stakeRecord struct {
	contracts.IStakeRegistryRecord
	status StakeStatus
}

func (s *Service) stakeInstance() *bind.BoundContract {
	return s.stake.Instance(s.cfg.Chain, s.cfg.StakeRegistry)
}

func (s *Service) readStake(ctx context.Context, agent common.Hash, wallet common.Address) (*stakeRecord, error) {
	if s.cfg.StakeRegistry == (common.Address{}) {
		return nil, errors.New("escrow: no stake registry configured")
	}
	r, err := bind.Call(s.stakeInstance(), &bind.CallOpts{Context: ctx}, s.stake.PackRecordOf(agent, wallet), s.stake.UnpackRecordOf)
	if err != nil {
		return nil, fmt.Errorf("read stake of %s: %w", agent.Hex(), err)
	}
	st := StakeStatus(fmt.Sprint(r.Status))
	if int(r.Status) < len(stakeStatuses) {
		st = stakeStatuses[r.Status]
	}
	return &stakeRecord{IStakeRegistryRecord: r, status: st}, nil
}

func (s *Service) stakeToken(ctx context.Context) (common.Address, error) {
	s.mu.Lock()
	tok, known := s.stakeTok, s.stakeTokKnown
	s.mu.Unlock()
	if known {
		return tok, nil
	}
	tok, err := bind.Call(s.stakeInstance(), &bind.CallOpts{Context: ctx}, s.stake.PackStakeToken(), s.stake.UnpackStakeToken)
	if err != nil {
		return common.Address{}, fmt.Errorf("read the stake token: %w", err)
	}
	s.mu.Lock()
	s.stakeTok, s.stakeTokKnown = tok, true
	s.mu.Unlock()
	return tok, nil
}

// StakeOf reads agent's stake under wallet from the chain.
func (s *Service) StakeOf(ctx context.Context, agent common.Hash, wallet common.Address) (*StakeRecord, error) {
	r, err := s.readStake(ctx, agent, wallet)
	if err != nil {
		return nil, err
	}
	tok, err := s.stakeToken(ctx)
	if err != nil {
		return nil, err
	}
	return &StakeRecord{Agent: agent, Controller: wallet, Status: r.status, Staked: r.Staked.String(), Locked: r.Locked.String(),
		Unbonding: r.Unbonding.String(), UnlockAt: r.UnlockAt, Token: tok}, nil
}

// stakeCall builds the StakeRegistry call of a stake op, refusing what the registry would
// refuse with a message that says why, and sending first what the call needs (the bind, an
// approval).
func (s *Service) stakeCall(ctx context.Context, snd *Sender, op Op) (data []byte, value *big.Int, err error) {
	agent := op.Agent
	se := func(sentinel error, format string, args ...any) error {
		return &StakeError{Agent: agent, Err: sentinel, Msg: fmt.Sprintf(format, args...)}
	}
	if agent == (common.Hash{}) {
		return nil, nil, se(ErrInvalid, "invalid argument: no agent id")
	}
	if op.Kind != OpWithdrawStake && op.Kind != OpBind && (op.Amount == nil || op.Amount.Sign() <= 0) {
		return nil, nil, se(ErrInvalid, "invalid argument: amount must be positive")
	}
	r, err := s.readStake(ctx, agent, snd.Address())
	if err != nil {
		return nil, nil, err
	}
	switch op.Kind {
	case OpBind:
		switch {
		case len(op.Proof) == 0:
			return nil, nil, se(ErrInvalid, "invalid argument: no binding to record")
		case r.status == StakeBound:
			return nil, nil, se(ErrAlreadyBound, "wallet %s has already bound agent %s on chain", snd.Address().Hex(), agent.Hex())
		case r.status != StakeNone:
			return nil, nil, se(ErrAgentClosed, "agent %s is %s under wallet %s", agent.Hex(), r.status, snd.Address().Hex())
		}
		return s.stake.PackBind(agent, op.Proof), nil, nil
	case OpStake:
		switch r.status {
		case StakeNone:
			if len(op.Proof) == 0 {
				return nil, nil, se(ErrInvalid, "invalid argument: the wallet has not bound agent %s on chain and no binding was given", agent.Hex())
			}
			if _, err := snd.Send(ctx, s.cfg.StakeRegistry, s.stake.PackBind(agent, op.Proof), nil); err != nil {
				return nil, nil, fmt.Errorf("bind agent %s to wallet %s on chain: %w", agent.Hex(), snd.Address().Hex(), err)
			}
		case StakeBound:
		default:
			return nil, nil, se(ErrAgentClosed, "agent %s is %s under wallet %s: its stake can only be unbonded and withdrawn", agent.Hex(), r.status, snd.Address().Hex())
		}
		tok, err := s.stakeToken(ctx)
		if err != nil {
			return nil, nil, err
		}
		if tok == (common.Address{}) {
			return s.stake.PackStake(agent, op.Amount), op.Amount, nil
		}
		if err := s.ensureAllowance(ctx, snd, tok, s.cfg.StakeRegistry, op.Amount); err != nil {
			return nil, nil, err
		}
		return s.stake.PackStake(agent, op.Amount), nil, nil
	case OpUnbond:
		if r.status == StakeNone {
			return nil, nil, se(ErrNotStaked, "wallet %s holds no stake for agent %s", snd.Address().Hex(), agent.Hex())
		}
		if free := new(big.Int).Sub(r.Staked, r.Locked); op.Amount.Cmp(free) > 0 {
			return nil, nil, se(ErrStakeTooLow, "agent %s has %s staked under wallet %s, %s of it locked by claimed bounties; %s is free, less than the %s asked for",
				agent.Hex(), r.Staked, snd.Address().Hex(), r.Locked, free, op.Amount)
		}
		return s.stake.PackRequestUnbond(agent, op.Amount), nil, nil
	case OpWithdrawStake:
		if r.Unbonding.Sign() == 0 {
			return nil, nil, se(ErrNothingToWithdraw, "agent %s has no unbonding stake under wallet %s (unbond first)", agent.Hex(), snd.Address().Hex())
		}
		head, err := s.cfg.Chain.HeaderByNumber(ctx, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("read the head block: %w", err)
		}
		if head.Time < r.UnlockAt {
			return nil, nil, se(ErrStillBonded, "the %s unbonding for agent %s unlocks at %s", r.Unbonding, agent.Hex(),
				time.Unix(int64(r.UnlockAt), 0).UTC().Format(time.RFC3339))
		}
		return s.stake.PackWithdraw(agent), nil, nil
	}
	return nil, nil, se(ErrInvalid, "invalid argument: unknown operation %q", op.Kind)
}

// isStakeOp reports whether op calls StakeRegistry.
func isStakeOp(k OpKind) bool {
	return k == OpStake || k == OpUnbond || k == OpWithdrawStake || k == OpBind
}

// decodeStakeRevert maps a StakeRegistry custom error to a StakeError.
func decodeStakeRevert(ce *contracts.CustomError) error {
	se := func(agent common.Hash, sentinel error, format string, args ...any) error {
		return &StakeError{Agent: agent, Err: sentinel, Msg: fmt.Sprintf(format, args...)}
	}
	switch e := ce.Value.(type) {
	case *contracts.StakeRegistryWrongStatus:
		agent := common.Hash(e.AgentId)
		if e.Status == 0 {
			return se(agent, ErrNotStaked, "agent %s is not bound to wallet %v on chain", agent.Hex(), e.Controller)
		}
		return se(agent, ErrAgentClosed, "agent %s is %s under wallet %v", agent.Hex(), stakeStatuses[min(int(e.Status), len(stakeStatuses)-1)], e.Controller)
	case *contracts.StakeRegistryInsufficientStake:
		return se(common.Hash{}, ErrStakeTooLow, "%v free (staked, not locked by a claimed bounty), less than the %v asked for", e.Available, e.Requested)
	case *contracts.StakeRegistryStakeLocked:
		agent := common.Hash(e.AgentId)
		return se(agent, ErrStakeLocked, "agent %s has %v stake locked by claimed bounties: it can rotate once they end", agent.Hex(), e.Locked)
	case *contracts.StakeRegistryUnknownLock:
		return &BountyError{Err: ErrInvalid, Msg: fmt.Sprintf("invalid argument: bounty %v locked no stake (the poster assigned its worker), so there is nothing to slash", e.LockId)}
	case *contracts.StakeRegistryStillBonded:
		return se(common.Hash{}, ErrStillBonded, "the unbonding stake unlocks at %v", e.UnlockAt)
	}
	return se(common.Hash{}, ErrReverted, "the stake registry refused: %s", ce.Error())
}
