package stake

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/txn"
)

// OpKind is what a stake Op does.
type OpKind string

// Stake ops: a wallet the node holds bonds stake for an agent in StakeRegistry. They go
// through package txn like the bounty calls, so they share the wallet's nonce order and the
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
	// OpRevoke revokes agent Op.Agent under Op.From, a wallet that bound it
	// (StakeRegistry.revoke): every node refuses the DID from then on. Its stake stops
	// counting but can still be unbonded and withdrawn.
	OpRevoke OpKind = "revoke"
	// OpRotate moves agent Op.Agent under Op.From to Op.Successor, stake and all
	// (StakeRegistry.rotate). Op.Proof is the successor's binding to the wallet, both keys
	// signed, as for a bind: nodes count the successor only when it verifies, and refuse the
	// old DID from then on. Not while claimed bounties lock the stake.
	OpRotate OpKind = "rotate"
)

// Op is one stake request from a wallet the node holds.
type Op struct {
	Kind OpKind
	From common.Address
	// Agent is the agent id (keccak256 of its DID); Amount what to stake or unbond; Proof the
	// wallet binding StakeRegistry.bind records (OpBind, and OpStake when it binds first), or
	// the successor's binding StakeRegistry.rotate records (OpRotate).
	Agent  common.Hash
	Amount *big.Int
	Proof  []byte
	// Successor is the agent id OpRotate moves to.
	Successor common.Hash
}

// Sentinels of stake calls, found before sending or decoded from the registry's errors.
var (
	// ErrInvalid: an argument the registry refuses (no agent, a zero amount, ...).
	ErrInvalid = errors.New("stake: invalid argument")
	// ErrAgentClosed: the agent is revoked or rotated under this wallet; its stake can only
	// be unbonded and withdrawn.
	ErrAgentClosed = errors.New("stake: the agent is revoked or rotated on chain")
	// ErrNotStaked: the wallet has never bound (so never staked for) the agent.
	ErrNotStaked = errors.New("stake: the wallet holds no stake for the agent")
	// ErrNotController: the wallet has never bound the agent, so it cannot revoke or rotate
	// it: only a controller can.
	ErrNotController = errors.New("stake: the wallet is not a controller of the agent")
	// ErrStakeTooLow: less stake than the call asks for.
	ErrStakeTooLow = errors.New("stake: less stake than asked for")
	// ErrStillBonded: the unbonding delay has not passed.
	ErrStillBonded = errors.New("stake: the stake is still bonded")
	// ErrStakeLocked: claimed bounties lock the agent's stake; rotation waits until they end.
	ErrStakeLocked = errors.New("stake: stake is locked by claimed bounties")
	// ErrAlreadyBound: the wallet has already bound the agent on chain.
	ErrAlreadyBound = errors.New("stake: the wallet already bound the agent on chain")
	// ErrTransferFailed: a token or ETH transfer of stake failed.
	ErrTransferFailed = errors.New("stake: transfer failed")
	// ErrNothingToWithdraw: no unbonding stake to withdraw.
	ErrNothingToWithdraw = errors.New("stake: nothing to withdraw")
)

// Error is an error about one agent's stake under one wallet, with a message for people.
// It matches its Err with errors.Is.
type Error struct {
	Agent common.Hash
	Err   error
	Msg   string
}

// Error is the message for people.
func (e *Error) Error() string { return e.Msg }

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

// StatusNone is the status of a record the registry does not have.
const StatusNone Status = "none"

// chainStatuses are the registry's Status enum, in its order.
var chainStatuses = []Status{StatusNone, StatusBound, StatusRotated, StatusRevoked}

// Holding is one agent's stake under one controller wallet, as the chain holds it now.
// Amounts are decimal strings in the stake token's base unit (wei for ETH).
type Holding struct {
	Agent      common.Hash    `json:"agentId"`
	Controller common.Address `json:"controller"`
	Status     Status         `json:"status"`
	// Staked counts as stake, Locked of it by claimed bounties (not unbondable until they
	// end; a dispute ruling may slash it); Unbonding is leaving and withdrawable from UnlockAt
	// (unix seconds; 0 when nothing is unbonding).
	Staked    string         `json:"staked"`
	Locked    string         `json:"locked"`
	Unbonding string         `json:"unbonding"`
	UnlockAt  uint64         `json:"unlockAt,omitempty"`
	Token     common.Address `json:"token"`
}

// Result is what a stake op returns: its transaction, and the agent's stake after it.
type Result struct {
	TxHash string `json:"txHash"`
	Block  uint64 `json:"block"`
	// GasUsed is what the transaction cost in gas.
	GasUsed uint64   `json:"gasUsed"`
	Stake   *Holding `json:"stake,omitempty"`
}

// Chain is what the stake service reads from the chain: contract calls and the head.
type Chain interface {
	bind.ContractBackend
	HeaderByNumber(ctx context.Context, number *big.Int) (*types.Header, error)
}

// ServiceConfig wires a Service.
type ServiceConfig struct {
	Tx       *txn.Service
	Chain    Chain
	Registry common.Address
	// Index, when set, is waited for after each op, so the answer's reader sees the change
	// in the node's index (stake weights, bindings).
	Index *Index
}

// Service sends stake ops to StakeRegistry from wallets the node holds.
type Service struct {
	cfg   ServiceConfig
	abi   *contracts.StakeRegistry
	erc20 *contracts.IERC20

	mu       sync.Mutex
	tok      common.Address // the registry's stake token (immutable), once read
	tokKnown bool           // tok was read (the zero address is ETH)
}

// NewService builds the stake service.
func NewService(cfg ServiceConfig) *Service {
	return &Service{cfg: cfg, abi: contracts.NewStakeRegistry(), erc20: contracts.NewIERC20()}
}

// Registry is the StakeRegistry's address.
func (s *Service) Registry() common.Address { return s.cfg.Registry }

// Do performs op once per Idempotency (see txn.Do). A call the registry would refuse is
// refused before anything is sent, with a *Error that says why.
func (s *Service) Do(ctx context.Context, op Op, idem txn.Idempotency) (*Result, error) {
	return txn.Do(ctx, s.cfg.Tx, idem, s.request(op))
}

// Retry answers a request made before under idem (see txn.Retry).
func (s *Service) Retry(ctx context.Context, op Op, idem txn.Idempotency) (*Result, error) {
	return txn.Retry(ctx, s.cfg.Tx, idem, s.request(op))
}

// Run performs op from a wallet its caller holds (snd), with no request store: the
// non-custodial path of a client such as the CLI. The checks and preparatory calls (a bind,
// an approval) are Do's; op.From is snd's wallet.
func (s *Service) Run(ctx context.Context, snd *txn.Sender, op Op) (*Result, error) {
	op.From = snd.Address()
	return txn.Run(ctx, snd, s.request(op))
}

// Broadcast sends a StakeRegistry call an external wallet signed without waiting for it to
// be mined (see txn.Service.Broadcast).
func (s *Service) Broadcast(ctx context.Context, raw []byte) (*types.Transaction, error) {
	return s.cfg.Tx.Broadcast(ctx, raw, []common.Address{s.cfg.Registry}, decodeRevert)
}

// Relay sends a StakeRegistry call an external wallet signed (see txn.Service.Relay).
func (s *Service) Relay(ctx context.Context, raw []byte) (*Result, error) {
	r, err := s.cfg.Tx.Relay(ctx, raw, []common.Address{s.cfg.Registry}, decodeRevert)
	if err != nil {
		return nil, err
	}
	return s.settle(ctx, r)
}

func (s *Service) request(op Op) txn.Request[*Result] {
	return txn.Request[*Result]{
		From: op.From,
		Prepare: func(ctx context.Context, snd *txn.Sender) (txn.Call, error) {
			data, value, err := s.call(ctx, snd, op)
			return txn.Call{To: s.cfg.Registry, Data: data, Value: value, Decode: decodeRevert}, err
		},
		Finish: func(ctx context.Context, r *types.Receipt) (*Result, error) {
			res, err := s.settle(ctx, r)
			if err != nil {
				return nil, err
			}
			agent := op.Agent
			if op.Kind == OpRotate {
				agent = op.Successor // the stake moved with the agent
			}
			if res.Stake, err = s.StakeOf(ctx, agent, op.From); err != nil {
				return nil, err
			}
			return res, nil
		},
	}
}

// settle waits until the node's index holds the receipt's block.
func (s *Service) settle(ctx context.Context, r *types.Receipt) (*Result, error) {
	res := &Result{TxHash: r.TxHash.Hex(), Block: r.BlockNumber.Uint64(), GasUsed: r.GasUsed}
	if s.cfg.Index != nil {
		if err := s.cfg.Index.WaitIndexed(ctx, res.Block); err != nil {
			return res, err
		}
	}
	return res, nil
}

type chainRecord struct {
	contracts.IStakeRegistryRecord
	status Status
}

func (s *Service) instance() *bind.BoundContract { return s.abi.Instance(s.cfg.Chain, s.cfg.Registry) }

func (s *Service) readRecord(ctx context.Context, agent common.Hash, wallet common.Address) (*chainRecord, error) {
	r, err := bind.Call(s.instance(), &bind.CallOpts{Context: ctx}, s.abi.PackRecordOf(agent, wallet), s.abi.UnpackRecordOf)
	if err != nil {
		return nil, fmt.Errorf("read stake of %s: %w", agent.Hex(), err)
	}
	st := Status(fmt.Sprint(r.Status))
	if int(r.Status) < len(chainStatuses) {
		st = chainStatuses[r.Status]
	}
	return &chainRecord{IStakeRegistryRecord: r, status: st}, nil
}

// token is the registry's stake token, read from the chain once (it is immutable).
func (s *Service) token(ctx context.Context) (common.Address, error) {
	s.mu.Lock()
	tok, known := s.tok, s.tokKnown
	s.mu.Unlock()
	if known {
		return tok, nil
	}
	tok, err := bind.Call(s.instance(), &bind.CallOpts{Context: ctx}, s.abi.PackStakeToken(), s.abi.UnpackStakeToken)
	if err != nil {
		return common.Address{}, fmt.Errorf("read the stake token: %w", err)
	}
	s.mu.Lock()
	s.tok, s.tokKnown = tok, true
	s.mu.Unlock()
	return tok, nil
}

// StakeOf reads agent's stake under wallet from the chain.
func (s *Service) StakeOf(ctx context.Context, agent common.Hash, wallet common.Address) (*Holding, error) {
	r, err := s.readRecord(ctx, agent, wallet)
	if err != nil {
		return nil, err
	}
	tok, err := s.token(ctx)
	if err != nil {
		return nil, err
	}
	return &Holding{Agent: agent, Controller: wallet, Status: r.status, Staked: r.Staked.String(), Locked: r.Locked.String(),
		Unbonding: r.Unbonding.String(), UnlockAt: r.UnlockAt, Token: tok}, nil
}

// call builds the StakeRegistry call of op, refusing what the registry would refuse with a
// message that says why, and sending first what the call needs (the bind, an approval).
func (s *Service) call(ctx context.Context, snd *txn.Sender, op Op) (data []byte, value *big.Int, err error) {
	agent := op.Agent
	se := func(sentinel error, format string, args ...any) error {
		return &Error{Agent: agent, Err: sentinel, Msg: fmt.Sprintf(format, args...)}
	}
	if agent == (common.Hash{}) {
		return nil, nil, se(ErrInvalid, "invalid argument: no agent id")
	}
	if (op.Kind == OpStake || op.Kind == OpUnbond) && (op.Amount == nil || op.Amount.Sign() <= 0) {
		return nil, nil, se(ErrInvalid, "invalid argument: amount must be positive")
	}
	r, err := s.readRecord(ctx, agent, snd.Address())
	if err != nil {
		return nil, nil, err
	}
	switch op.Kind {
	case OpBind:
		switch {
		case len(op.Proof) == 0:
			return nil, nil, se(ErrInvalid, "invalid argument: no binding to record")
		case r.status == StatusBound:
			return nil, nil, se(ErrAlreadyBound, "wallet %s has already bound agent %s on chain", snd.Address().Hex(), agent.Hex())
		case r.status != StatusNone:
			return nil, nil, se(ErrAgentClosed, "agent %s is %s under wallet %s", agent.Hex(), r.status, snd.Address().Hex())
		}
		return s.abi.PackBind(agent, op.Proof), nil, nil
	case OpStake:
		switch r.status {
		case StatusNone:
			if len(op.Proof) == 0 {
				return nil, nil, se(ErrInvalid, "invalid argument: the wallet has not bound agent %s on chain and no binding was given", agent.Hex())
			}
			bindCall := txn.Call{To: s.cfg.Registry, Data: s.abi.PackBind(agent, op.Proof), Decode: decodeRevert}
			if _, err := snd.Send(ctx, bindCall); err != nil {
				return nil, nil, fmt.Errorf("bind agent %s to wallet %s on chain: %w", agent.Hex(), snd.Address().Hex(), err)
			}
		case StatusBound:
		default:
			return nil, nil, se(ErrAgentClosed, "agent %s is %s under wallet %s: its stake can only be unbonded and withdrawn", agent.Hex(), r.status, snd.Address().Hex())
		}
		tok, err := s.token(ctx)
		if err != nil {
			return nil, nil, err
		}
		if tok == (common.Address{}) {
			return s.abi.PackStake(agent, op.Amount), op.Amount, nil
		}
		if err := s.ensureAllowance(ctx, snd, tok, op.Amount); err != nil {
			return nil, nil, err
		}
		return s.abi.PackStake(agent, op.Amount), nil, nil
	case OpUnbond:
		if r.status == StatusNone {
			return nil, nil, se(ErrNotStaked, "wallet %s holds no stake for agent %s", snd.Address().Hex(), agent.Hex())
		}
		if free := new(big.Int).Sub(r.Staked, r.Locked); op.Amount.Cmp(free) > 0 {
			return nil, nil, se(ErrStakeTooLow, "agent %s has %s staked under wallet %s, %s of it locked by claimed bounties; %s is free, less than the %s asked for",
				agent.Hex(), r.Staked, snd.Address().Hex(), r.Locked, free, op.Amount)
		}
		return s.abi.PackRequestUnbond(agent, op.Amount), nil, nil
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
		return s.abi.PackWithdraw(agent), nil, nil
	case OpRevoke, OpRotate:
		switch r.status {
		case StatusNone:
			return nil, nil, se(ErrNotController, "wallet %s has not bound agent %s on chain: only a wallet that bound it can %s it", snd.Address().Hex(), agent.Hex(), op.Kind)
		case StatusRevoked:
			return nil, nil, se(ErrAgentClosed, "agent %s is already revoked under wallet %s", agent.Hex(), snd.Address().Hex())
		case StatusRotated:
			return nil, nil, se(ErrAgentClosed, "agent %s is already rotated away under wallet %s: its successor acts now", agent.Hex(), snd.Address().Hex())
		}
		if op.Kind == OpRevoke {
			return s.abi.PackRevoke(agent), nil, nil
		}
		switch {
		case op.Successor == (common.Hash{}) || op.Successor == agent:
			return nil, nil, se(ErrInvalid, "invalid argument: the successor must be another agent")
		case len(op.Proof) == 0:
			return nil, nil, se(ErrInvalid, "invalid argument: no binding of the successor to record")
		case r.Locked.Sign() > 0:
			return nil, nil, se(ErrStakeLocked, "agent %s has %s stake locked by claimed bounties under wallet %s: it can rotate once they end", agent.Hex(), r.Locked, snd.Address().Hex())
		}
		n, err := s.readRecord(ctx, op.Successor, snd.Address())
		if err != nil {
			return nil, nil, err
		}
		if n.status != StatusNone {
			return nil, nil, se(ErrInvalid, "invalid argument: the successor %s is already %s under wallet %s: rotate to a fresh key", op.Successor.Hex(), n.status, snd.Address().Hex())
		}
		return s.abi.PackRotate(agent, op.Successor, op.Proof), nil, nil
	}
	return nil, nil, se(ErrInvalid, "invalid argument: unknown operation %q", op.Kind)
}

// ensureAllowance approves the registry for amount of token when the allowance is short.
func (s *Service) ensureAllowance(ctx context.Context, snd *txn.Sender, token common.Address, amount *big.Int) error {
	inst := s.erc20.Instance(s.cfg.Chain, token)
	have, err := bind.Call(inst, &bind.CallOpts{Context: ctx}, s.erc20.PackAllowance(snd.Address(), s.cfg.Registry), s.erc20.UnpackAllowance)
	if err != nil {
		return &Error{Err: ErrInvalid, Msg: fmt.Sprintf("invalid argument: token %s does not answer allowance(): %v", token.Hex(), err)}
	}
	return snd.Raise(ctx, token, have, amount, func(x *big.Int) []byte { return s.erc20.PackApprove(s.cfg.Registry, x) })
}

// DecodeRevert maps a StakeRegistry custom error to an *Error; it returns err unchanged
// when it carries no custom error. It is the txn.Call.Decode of registry calls.
func DecodeRevert(err error) error { return decodeRevert(err) }

// decodeRevert maps a StakeRegistry custom error to an *Error; it returns err unchanged when
// it carries no custom error.
func decodeRevert(err error) error {
	ce := contracts.DecodeRevert(err)
	if ce == nil {
		return err
	}
	se := func(agent common.Hash, sentinel error, format string, args ...any) error {
		return &Error{Agent: agent, Err: sentinel, Msg: fmt.Sprintf(format, args...)}
	}
	switch e := ce.Value.(type) {
	case *contracts.StakeRegistryWrongStatus:
		agent := common.Hash(e.AgentId)
		switch e.Status {
		case 0:
			return se(agent, ErrNotStaked, "agent %s is not bound to wallet %v on chain", agent.Hex(), e.Controller)
		case 1: // Bound: only a call that needs it unbound (bind) finds it so
			return se(agent, ErrAlreadyBound, "wallet %v has already bound agent %s on chain", e.Controller, agent.Hex())
		}
		return se(agent, ErrAgentClosed, "agent %s is %s under wallet %v", agent.Hex(), chainStatuses[min(int(e.Status), len(chainStatuses)-1)], e.Controller)
	case *contracts.StakeRegistryInsufficientStake:
		return se(common.Hash{}, ErrStakeTooLow, "%v free (staked, not locked by a claimed bounty), less than the %v asked for", e.Available, e.Requested)
	case *contracts.StakeRegistryStakeLocked:
		agent := common.Hash(e.AgentId)
		return se(agent, ErrStakeLocked, "agent %s has %v stake locked by claimed bounties: it can rotate once they end", agent.Hex(), e.Locked)
	case *contracts.StakeRegistryStillBonded:
		return se(common.Hash{}, ErrStillBonded, "the unbonding stake unlocks at %v", e.UnlockAt)
	case *contracts.BountyEscrowTransferFailed: // the registry's TransferFailed: same selector
		return se(common.Hash{}, ErrTransferFailed, "transfer of %v of token %s failed (allowance or balance?)", e.Amount, e.Token.Hex())
	case *contracts.BountyEscrowInvalidAmount, *contracts.BountyEscrowInvalidValue, *contracts.BountyEscrowZeroAddress,
		*contracts.StakeRegistryAmountTooLarge, *contracts.StakeRegistryZeroAgentId, *contracts.StakeRegistryInvalidSuccessor:
		// InvalidAmount, InvalidValue and ZeroAddress read as the escrow's: same selectors.
		return se(common.Hash{}, ErrInvalid, "invalid argument: %s", ce.Error())
	}
	return &txn.Error{Err: txn.ErrReverted, Msg: "the stake registry refused: " + ce.Error()}
}

// HoldingAt reads agent's record under wallet as it stood at block, and the block's hash:
// what a stake credential states (identity.StakeSubject), so anyone with an RPC can check it
// with the same two reads.
func (s *Service) HoldingAt(ctx context.Context, agent common.Hash, wallet common.Address, block uint64) (*Holding, common.Hash, error) {
	h, err := s.cfg.Chain.HeaderByNumber(ctx, new(big.Int).SetUint64(block))
	if err != nil {
		return nil, common.Hash{}, fmt.Errorf("read block %d: %w", block, err)
	}
	r, err := bind.Call(s.instance(), &bind.CallOpts{Context: ctx, BlockNumber: new(big.Int).SetUint64(block)},
		s.abi.PackRecordOf(agent, wallet), s.abi.UnpackRecordOf)
	if err != nil {
		return nil, common.Hash{}, fmt.Errorf("read stake of %s at block %d: %w", agent.Hex(), block, err)
	}
	tok, err := s.token(ctx)
	if err != nil {
		return nil, common.Hash{}, err
	}
	st := Status(fmt.Sprint(r.Status))
	if int(r.Status) < len(chainStatuses) {
		st = chainStatuses[r.Status]
	}
	return &Holding{Agent: agent, Controller: wallet, Status: st, Staked: r.Staked.String(), Locked: r.Locked.String(),
		Unbonding: r.Unbonding.String(), UnlockAt: r.UnlockAt, Token: tok}, h.Hash(), nil
}

// ErrStakeFacts reports a stake credential whose facts the chain does not confirm.
var ErrStakeFacts = errors.New("stake: the chain does not confirm the credential's facts")

// CheckStakeSubject checks a stake credential's facts against a chain that answers as
// chainID: the block's hash at its number, and StakeRegistry.recordOf(agentId, wallet) at
// that block (bound, staked the amount stated). It returns ErrStakeFacts saying which fact
// differs, or the chain's error when it cannot tell.
func CheckStakeSubject(ctx context.Context, c Chain, chainID uint64, subj identity.StakeSubject) error {
	if subj.ChainID != chainID {
		return fmt.Errorf("%w: it is for chain %d, the RPC serves chain %d", ErrStakeFacts, subj.ChainID, chainID)
	}
	if !common.IsHexAddress(subj.Registry) || !common.IsHexAddress(subj.Wallet) {
		return fmt.Errorf("%w: stakeRegistry and wallet must be addresses", ErrStakeFacts)
	}
	if identity.AgentID(subj.ID).Hex() != subj.AgentID {
		return fmt.Errorf("%w: agentId %s is not keccak256 of %s", ErrStakeFacts, subj.AgentID, subj.ID)
	}
	svc := NewService(ServiceConfig{Chain: c, Registry: common.HexToAddress(subj.Registry)})
	h, hash, err := svc.HoldingAt(ctx, identity.AgentID(subj.ID), common.HexToAddress(subj.Wallet), subj.Block)
	if err != nil {
		return err
	}
	switch {
	case hash.Hex() != subj.BlockHash:
		return fmt.Errorf("%w: block %d has hash %s, the credential says %s (a reorg, or another chain)", ErrStakeFacts, subj.Block, hash.Hex(), subj.BlockHash)
	case h.Status != StatusBound:
		return fmt.Errorf("%w: at block %d the record is %s, not bound", ErrStakeFacts, subj.Block, h.Status)
	case h.Staked != subj.Amount:
		return fmt.Errorf("%w: at block %d the stake is %s, the credential says %s", ErrStakeFacts, subj.Block, h.Staked, subj.Amount)
	case h.Token.Hex() != subj.Token:
		return fmt.Errorf("%w: the stake token is %s, the credential says %s", ErrStakeFacts, h.Token.Hex(), subj.Token)
	}
	return nil
}
