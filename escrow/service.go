package escrow

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/chain"
)

// ErrUnknownWallet reports a wallet the node does not hold.
var ErrUnknownWallet = errors.New("escrow: the node holds no such wallet")

// Chain is what the service needs from the chain: sending (Backend) and contract calls
// (allowances), as go-ethereum's bind.ContractBackend has them.
type Chain interface {
	Backend
	bind.ContractBackend
}

// ServiceConfig wires a Service.
type ServiceConfig struct {
	Chain   Chain
	Escrow  common.Address
	Indexer *Indexer
	// StakeRegistry is where the stake ops go (OpStake, OpUnbond, OpWithdrawStake); zero
	// when the node does not offer them.
	StakeRegistry common.Address
	// ReceiptTimeout bounds the wait for each receipt; 0 means 2 minutes.
	ReceiptTimeout time.Duration
}

// Service turns the escrow contract into a bounty service: it sends each call from a wallet
// the node holds, waits for the receipt and for the index to show the result.
type Service struct {
	cfg   ServiceConfig
	abi   *contracts.BountyEscrow
	erc20 *contracts.IERC20
	stake *contracts.StakeRegistry

	mu       sync.Mutex
	senders  map[common.Address]*Sender
	stakeTok common.Address // the registry's stake token, once read
	// stakeTokKnown says stakeTok was read (the zero address is ETH).
	stakeTokKnown bool
}

// NewService builds the bounty service. Requests a previous run left half-prepared (it
// stopped before storing their transaction, so nothing was sent) are forgotten: their
// retries start over.
func NewService(ctx context.Context, cfg ServiceConfig) (*Service, error) {
	if cfg.ReceiptTimeout == 0 {
		cfg.ReceiptTimeout = 2 * time.Minute
	}
	s := &Service{cfg: cfg, abi: contracts.NewBountyEscrow(), erc20: contracts.NewIERC20(), stake: contracts.NewStakeRegistry(), senders: map[common.Address]*Sender{}}
	if err := s.execRequest(ctx, `DELETE FROM escrow_requests WHERE chain = ? AND state = 'preparing'`, cfg.Indexer.cfg.Chain); err != nil {
		return nil, err
	}
	return s, nil
}

// AddWallet lets the node send from key's account.
func (s *Service) AddWallet(ctx context.Context, key *ecdsa.PrivateKey) (common.Address, error) {
	snd, err := NewSender(ctx, s.cfg.Chain, key, s.cfg.ReceiptTimeout)
	if err != nil {
		return common.Address{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.senders[snd.Address()] = snd
	return snd.Address(), nil
}

// HasWallet reports whether the node can send from addr.
func (s *Service) HasWallet(addr common.Address) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.senders[addr]
	return ok
}

// Transact sends a call of data to `to` from a wallet the node holds and waits for its
// receipt, in the wallet's nonce order with everything else it sends (other services of the
// node use it, e.g. to anchor the audit log).
func (s *Service) Transact(ctx context.Context, from, to common.Address, data []byte) (*types.Receipt, error) {
	snd, err := s.sender(from)
	if err != nil {
		return nil, err
	}
	return snd.Send(ctx, to, data, nil)
}

func (s *Service) sender(addr common.Address) (*Sender, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snd, ok := s.senders[addr]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownWallet, addr.Hex())
	}
	return snd, nil
}

// Indexer is the service's index.
func (s *Service) Indexer() *Indexer { return s.cfg.Indexer }

// Result is what a mutating call returns: the bounty as indexed after the transaction, and
// the transaction.
type Result struct {
	Bounty *Bounty `json:"bounty,omitempty"`
	TxHash string  `json:"txHash"`
	Block  uint64  `json:"block"`
	// GasUsed is what the transaction cost in gas.
	GasUsed uint64 `json:"gasUsed"`
	// Stake is the agent's stake after a stake op, read from the chain.
	Stake *StakeRecord `json:"stake,omitempty"`
}

// PostRequest says what to post.
type PostRequest struct {
	Token        common.Address
	Amount       *big.Int
	Arbiter      common.Address
	Deadline     uint64
	ReviewWindow uint32
	MinStake     *big.Int
	SpecHash     common.Hash
	// Salt makes the bounty id, BountyEscrow.bountyId(poster, salt): a salt posts once, so a
	// request replayed anywhere reverts (ErrAlreadyPosted) instead of paying again. Zero
	// picks a random one.
	Salt common.Hash
}

// Post posts a bounty from wallet `from`. For an ERC-20 it first approves the escrow when the
// allowance is short.
func (s *Service) Post(ctx context.Context, from common.Address, r PostRequest) (*Result, error) {
	return s.Do(ctx, Op{Kind: OpPost, From: from, Post: r}, Idempotency{})
}

func (s *Service) ensureAllowance(ctx context.Context, snd *Sender, token, spender common.Address, amount *big.Int) error {
	inst := s.erc20.Instance(s.cfg.Chain, token)
	have, err := bind.Call(inst, nil, s.erc20.PackAllowance(snd.Address(), spender), s.erc20.UnpackAllowance)
	if err != nil {
		return fmt.Errorf("%w: token %s does not answer allowance(): %v", ErrInvalid, token.Hex(), err)
	}
	if have.Cmp(amount) >= 0 {
		return nil
	}
	_, err = snd.Send(ctx, token, s.erc20.PackApprove(spender, amount), nil)
	if err != nil {
		return fmt.Errorf("approve %s for %s: %w", token.Hex(), spender.Hex(), err)
	}
	return nil
}

// settle waits until the receipt's block is indexed and returns the bounty as the index
// now shows it.
func (s *Service) settle(ctx context.Context, id uint64, r *types.Receipt) (*Result, error) {
	res := &Result{TxHash: r.TxHash.Hex(), Block: r.BlockNumber.Uint64(), GasUsed: r.GasUsed}
	if err := s.cfg.Indexer.WaitIndexed(ctx, res.Block); err != nil {
		return res, err
	}
	if id != 0 {
		b, err := s.cfg.Indexer.Get(ctx, id)
		if err != nil {
			return res, err
		}
		res.Bounty = b
	}
	return res, nil
}

// Action is a bounty call after post.
type Action string

// Actions.
const (
	ActionClaim          Action = "claim"
	ActionAssign         Action = "assign"
	ActionSubmit         Action = "submit"
	ActionAccept         Action = "accept"
	ActionReject         Action = "reject"
	ActionDispute        Action = "dispute"
	ActionResolve        Action = "resolve"
	ActionResolveExpired Action = "resolve-expired"
	ActionRelease        Action = "release"
	ActionRefund         Action = "refund"
	ActionCancel         Action = "cancel"
)

// ActionArgs are the extra arguments some actions take.
type ActionArgs struct {
	AgentID    common.Hash    // claim
	Worker     common.Address // assign
	ResultHash common.Hash    // submit
	ReasonHash common.Hash    // reject, dispute
	WorkerBps  uint16         // resolve
	Slash      *big.Int       // resolve: locked stake taken to the poster; nil means none
}

// Act performs action on bounty id from wallet `from`, with the terms and worker the index
// holds. A call the contract would refuse is refused before anything is sent, with the
// decoded reason ("bounty 7 is already accepted").
func (s *Service) Act(ctx context.Context, from common.Address, id uint64, action Action, args ActionArgs) (*Result, error) {
	return s.Do(ctx, Op{Kind: OpAct, From: from, BountyID: id, Action: action, Args: args}, Idempotency{})
}

// Withdraw sends wallet `from` what the escrow credited it in token.
func (s *Service) Withdraw(ctx context.Context, from, token common.Address) (*Result, error) {
	return s.Do(ctx, Op{Kind: OpWithdraw, From: from, Token: token}, Idempotency{})
}

// OpKind is what an Op does.
type OpKind string

// Op kinds.
const (
	OpPost     OpKind = "post"
	OpAct      OpKind = "act"
	OpWithdraw OpKind = "withdraw"
)

// Op is one mutating request from a wallet the node holds: a post, an action on a bounty, a
// withdrawal, or a stake op.
type Op struct {
	Kind OpKind
	From common.Address
	// Post is the bounty to post (OpPost).
	Post PostRequest
	// BountyID, Action and Args say what to do (OpAct).
	BountyID uint64
	Action   Action
	Args     ActionArgs
	// Token to withdraw (OpWithdraw; zero for ETH).
	Token common.Address
	// Agent is the agent id (keccak256 of its DID) of a stake op; Amount what to stake or
	// unbond; Proof the wallet binding StakeRegistry.bind records when OpStake binds first.
	Agent  common.Hash
	Amount *big.Int
	Proof  []byte
}

// CatchUpWait bounds how long a call that finds no bounty waits for this node's index to
// reach the chain's confirmed head before it says the bounty is unknown.
const CatchUpWait = 3 * time.Second

// call builds the escrow call of op: data and value.
func (s *Service) call(ctx context.Context, snd *Sender, op Op) (data []byte, value *big.Int, err error) {
	if isStakeOp(op.Kind) {
		return s.stakeCall(ctx, snd, op)
	}
	switch op.Kind {
	case OpPost:
		r := op.Post
		if r.Amount == nil || r.Amount.Sign() <= 0 {
			return nil, nil, &BountyError{Err: ErrInvalid, Msg: "invalid argument: amount must be positive"}
		}
		if r.MinStake == nil {
			r.MinStake = new(big.Int)
		}
		value = r.Amount
		if r.Token != (common.Address{}) {
			value = nil
			if err := s.ensureAllowance(ctx, snd, r.Token, s.cfg.Escrow, r.Amount); err != nil {
				return nil, nil, err
			}
		}
		if r.Salt == (common.Hash{}) {
			if _, err := rand.Read(r.Salt[:]); err != nil {
				return nil, nil, err
			}
		}
		return s.abi.PackPost(r.Token, r.Amount, r.Arbiter, r.Deadline, r.ReviewWindow, r.MinStake, r.SpecHash, r.Salt), value, nil
	case OpWithdraw:
		return s.abi.PackWithdraw(op.Token), nil, nil
	case OpAct:
	default:
		return nil, nil, &BountyError{Err: ErrInvalid, Msg: fmt.Sprintf("invalid argument: unknown operation %q", op.Kind)}
	}
	id, args := op.BountyID, op.Args
	b, err := s.cfg.Indexer.Get(ctx, id)
	if errors.Is(err, ErrUnknownBounty) {
		// Another node may have posted it a block ago: look again once this node's index
		// holds every confirmed block.
		wctx, cancel := context.WithTimeout(ctx, CatchUpWait)
		if s.cfg.Indexer.CatchUp(wctx) == nil {
			b, err = s.cfg.Indexer.Get(ctx, id)
		}
		cancel()
	}
	if err != nil {
		return nil, nil, err
	}
	if b.Status.Terminal() {
		return nil, nil, &BountyError{ID: id, Err: ErrBountyClosed, Msg: fmt.Sprintf("bounty %d is already %s", id, b.Status)}
	}
	t, w, bid := b.Terms(), b.Worker, new(big.Int).SetUint64(id)
	switch op.Action {
	case ActionClaim:
		data = s.abi.PackClaim(bid, t, args.AgentID)
	case ActionAssign:
		if args.Worker == (common.Address{}) {
			return nil, nil, &BountyError{ID: id, Err: ErrInvalid, Msg: "invalid argument: assign needs a worker address"}
		}
		data = s.abi.PackAssign(bid, t, args.Worker)
	case ActionSubmit:
		data = s.abi.PackSubmit(bid, t, w, args.ResultHash)
	case ActionAccept:
		data = s.abi.PackAccept(bid, t, w)
	case ActionReject:
		data = s.abi.PackReject(bid, t, w, args.ReasonHash)
	case ActionDispute:
		data = s.abi.PackDispute(bid, t, w, args.ReasonHash)
	case ActionResolve:
		if args.WorkerBps > 10_000 {
			return nil, nil, &BountyError{ID: id, Err: ErrInvalid, Msg: "invalid argument: workerBps is at most 10000"}
		}
		slash := args.Slash
		if slash == nil {
			slash = new(big.Int)
		}
		if slash.Cmp(t.MinStake) > 0 {
			return nil, nil, &BountyError{ID: id, Err: ErrInvalid, Msg: fmt.Sprintf("invalid argument: slash %s is above the %s the bounty locks", slash, t.MinStake)}
		}
		data = s.abi.PackResolve(bid, t, w, args.WorkerBps, slash)
	case ActionResolveExpired:
		data = s.abi.PackResolveExpired(bid, t, w)
	case ActionRelease:
		data = s.abi.PackRelease(bid, t, w)
	case ActionRefund:
		data = s.abi.PackRefund(bid, t, w)
	case ActionCancel:
		data = s.abi.PackCancel(bid, t)
	default:
		return nil, nil, &BountyError{ID: id, Err: ErrInvalid, Msg: fmt.Sprintf("invalid argument: unknown action %q", op.Action)}
	}
	return data, nil, nil
}

// run builds, signs, records (when idem is set), broadcasts and awaits op's transaction.
// A refused request leaves no record, so its retry is judged afresh.
func (s *Service) run(ctx context.Context, op Op, idem *Idempotency) (res *Result, err error) {
	forget := func() {
		if idem != nil {
			_ = s.execRequest(context.WithoutCancel(ctx), `DELETE FROM escrow_requests WHERE chain = ? AND caller = ? AND key = ? AND state = 'preparing'`,
				s.cfg.Indexer.cfg.Chain, idem.Caller, idem.Key)
		}
	}
	snd, err := s.sender(op.From)
	if err != nil {
		forget()
		return nil, err
	}
	data, value, err := s.call(ctx, snd, op)
	if err != nil {
		forget()
		return nil, err
	}
	recorded := false
	record := func(tx *types.Transaction) error {
		if idem == nil {
			return nil
		}
		raw, err := tx.MarshalBinary()
		if err != nil {
			return err
		}
		if err := s.execRequest(ctx, `UPDATE escrow_requests SET state = 'sent', wallet = ?, raw_tx = ?, tx_hash = ?, bounty_id = ? WHERE chain = ? AND caller = ? AND key = ?`,
			op.From.Hex(), raw, tx.Hash().Hex(), int64(op.BountyID), s.cfg.Indexer.cfg.Chain, idem.Caller, idem.Key); err != nil {
			return err
		}
		recorded = true
		return nil
	}
	to := s.cfg.Escrow
	if isStakeOp(op.Kind) {
		to = s.cfg.StakeRegistry
	}
	tx, err := snd.SendAsync(ctx, to, data, value, record)
	switch {
	case err == nil:
	case !recorded:
		forget() // nothing was sent
		return nil, err
	case errors.Is(err, errRefused):
		// The chain refused it outright, so it will never be mined: forget the request.
		_ = s.execRequest(context.WithoutCancel(ctx), `DELETE FROM escrow_requests WHERE chain = ? AND caller = ? AND key = ?`,
			s.cfg.Indexer.cfg.Chain, idem.Caller, idem.Key)
		return nil, err
	default:
		// The chain may have it: the stored transaction stays, and a retry with the same
		// Idempotency-Key waits for it (broadcasting it again) instead of sending another.
		return nil, err
	}
	r, err := snd.Wait(ctx, tx)
	if err != nil {
		return nil, err
	}
	return s.finish(ctx, idem, op.BountyID, op, r)
}

// finish waits for the index and, for an idempotent request, stores the answer.
func (s *Service) finish(ctx context.Context, idem *Idempotency, id uint64, op Op, r *types.Receipt) (*Result, error) {
	if op.Kind == OpPost {
		for _, l := range r.Logs {
			if p, err := s.abi.UnpackPostedEvent(l); err == nil {
				id = p.Id.Uint64()
			}
		}
	}
	res, err := s.settle(ctx, id, r)
	if err != nil {
		return nil, err
	}
	if isStakeOp(op.Kind) {
		if res.Stake, err = s.StakeOf(ctx, op.Agent, op.From); err != nil {
			return nil, err
		}
	}
	if idem != nil {
		b, _ := json.Marshal(res)
		if err := s.execRequest(ctx, `UPDATE escrow_requests SET state = 'done', bounty_id = ?, response = ? WHERE chain = ? AND caller = ? AND key = ?`,
			int64(id), string(b), s.cfg.Indexer.cfg.Chain, idem.Caller, idem.Key); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// AddressOf is the address of key (a convenience for wiring dev accounts).
func AddressOf(key *ecdsa.PrivateKey) common.Address { return crypto.PubkeyToAddress(key.PublicKey) }

// List returns indexed bounties (see Indexer.List).
func (s *Service) List(ctx context.Context, f Filter) ([]*Bounty, error) {
	return s.cfg.Indexer.List(ctx, f)
}

// Get returns an indexed bounty with its history (see Indexer.Get).
func (s *Service) Get(ctx context.Context, id uint64) (*Bounty, error) {
	return s.cfg.Indexer.Get(ctx, id)
}

// PutSpec stores a task text under its hash (Indexer.PutSpec).
func (s *Service) PutSpec(ctx context.Context, hash common.Hash, text string) error {
	return s.cfg.Indexer.PutSpec(ctx, hash, text)
}

// PutBountySpec stores the task text of an indexed bounty (Indexer.PutBountySpec).
func (s *Service) PutBountySpec(ctx context.Context, id uint64, text string) error {
	return s.cfg.Indexer.PutBountySpec(ctx, id, text)
}

// History returns a bounty's events (see Indexer.History).
func (s *Service) History(ctx context.Context, id uint64) ([]Event, error) {
	return s.cfg.Indexer.History(ctx, id)
}

// Subscribe follows a bounty's new events (see Indexer.Subscribe).
func (s *Service) Subscribe(id uint64) (<-chan Event, func()) { return s.cfg.Indexer.Subscribe(id) }

// Relay sends a transaction an external wallet signed (EIP-2718 bytes), if it calls the
// escrow: it is first simulated, so a call the contract would refuse is refused with the
// decoded reason and never sent. Sending the same signed bytes twice cannot make two
// transactions: a retry only waits for the first.
func (s *Service) Relay(ctx context.Context, raw []byte) (*Result, error) {
	var tx types.Transaction
	if err := tx.UnmarshalBinary(raw); err != nil {
		return nil, &BountyError{Err: ErrInvalid, Msg: "invalid argument: not a signed transaction: " + err.Error()}
	}
	if tx.To() == nil || *tx.To() != s.cfg.Escrow && (s.cfg.StakeRegistry == (common.Address{}) || *tx.To() != s.cfg.StakeRegistry) {
		return nil, &BountyError{Err: ErrInvalid, Msg: fmt.Sprintf("invalid argument: the node relays only calls to the escrow %s and the stake registry %s",
			s.cfg.Escrow.Hex(), s.cfg.StakeRegistry.Hex())}
	}
	from, err := types.Sender(types.LatestSignerForChainID(tx.ChainId()), &tx)
	if err != nil {
		return nil, &BountyError{Err: ErrInvalid, Msg: "invalid argument: bad transaction signature"}
	}
	if _, err := s.cfg.Chain.TransactionReceipt(ctx, tx.Hash()); err != nil {
		msg := ethereum.CallMsg{From: from, To: tx.To(), Data: tx.Data(), Value: tx.Value(), Gas: tx.Gas()}
		if _, err := s.cfg.Chain.CallContract(ctx, msg, nil); err != nil {
			return nil, decodeRevert(err)
		}
		if err := s.cfg.Chain.SendTransaction(ctx, &tx); err != nil && !strings.Contains(err.Error(), "already known") {
			return nil, &BountyError{Err: ErrInvalid, Msg: "the chain refused the transaction: " + err.Error()}
		}
	}
	wctx, cancel := context.WithTimeout(ctx, s.cfg.ReceiptTimeout)
	defer cancel()
	r, err := chain.WaitMined(wctx, s.cfg.Chain, tx.Hash())
	if err != nil {
		return nil, fmt.Errorf("relay: wait for %s: %w", tx.Hash().Hex(), err)
	}
	if r.Status != types.ReceiptStatusSuccessful {
		return nil, &BountyError{Err: ErrReverted, Msg: fmt.Sprintf("transaction %s reverted", tx.Hash().Hex())}
	}
	var id uint64
	for _, l := range r.Logs {
		if ev, ok, err := s.cfg.Indexer.decode(l); err == nil && ok && ev.HasBounty {
			id = ev.BountyID
		}
	}
	return s.settle(ctx, id, r)
}
