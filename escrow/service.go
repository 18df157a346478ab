package escrow

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/txn"
)

// Chain is what the service reads from the chain: contract calls (allowances, relays) and
// receipts.
type Chain interface {
	bind.ContractBackend
}

// ServiceConfig wires a Service.
type ServiceConfig struct {
	// Tx sends the calls, from wallets it holds.
	Tx      *txn.Service
	Chain   Chain
	Escrow  common.Address
	Indexer *Indexer
}

// Service turns the escrow contract into a bounty service: it sends each call through Tx
// from a wallet the node holds, and waits for the index to show the result.
type Service struct {
	cfg   ServiceConfig
	abi   *contracts.BountyEscrow
	erc20 *contracts.IERC20
}

// NewService builds the bounty service.
func NewService(cfg ServiceConfig) *Service {
	return &Service{cfg: cfg, abi: contracts.NewBountyEscrow(), erc20: contracts.NewIERC20()}
}

// Escrow is the escrow contract's address.
func (s *Service) Escrow() common.Address { return s.cfg.Escrow }

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
	return s.Do(ctx, Op{Kind: OpPost, From: from, Post: r}, txn.Idempotency{})
}

// ensureAllowance approves spender for amount of token when the allowance is short.
func (s *Service) ensureAllowance(ctx context.Context, snd *txn.Sender, token, spender common.Address, amount *big.Int) error {
	inst := s.erc20.Instance(s.cfg.Chain, token)
	have, err := bind.Call(inst, &bind.CallOpts{Context: ctx}, s.erc20.PackAllowance(snd.Address(), spender), s.erc20.UnpackAllowance)
	if err != nil {
		return fmt.Errorf("%w: token %s does not answer allowance(): %v", ErrInvalid, token.Hex(), err)
	}
	return snd.Raise(ctx, token, have, amount, func(x *big.Int) []byte { return s.erc20.PackApprove(spender, x) })
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
	// ActionUnclaim takes a bounty without a minimum stake back from a worker that has not
	// submitted within the escrow's claim window (BountyEscrow.CLAIM_WINDOW): the poster's
	// remedy against a claim that squats on it. Not to be confused with release, the
	// worker's payout after a silent review.
	ActionUnclaim Action = "unclaim"
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
	return s.Do(ctx, Op{Kind: OpAct, From: from, BountyID: id, Action: action, Args: args}, txn.Idempotency{})
}

// Withdraw sends wallet `from` what the escrow credited it in token.
func (s *Service) Withdraw(ctx context.Context, from, token common.Address) (*Result, error) {
	return s.Do(ctx, Op{Kind: OpWithdraw, From: from, Token: token}, txn.Idempotency{})
}

// OpKind is what an Op does.
type OpKind string

// Op kinds.
const (
	OpPost     OpKind = "post"
	OpAct      OpKind = "act"
	OpWithdraw OpKind = "withdraw"
)

// Op is one mutating request from a wallet the node holds: a post, an action on a bounty, or
// a withdrawal.
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
}

// call builds the escrow call of op: data and value.
func (s *Service) call(ctx context.Context, snd *txn.Sender, op Op) (data []byte, value *big.Int, err error) {
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
	data, err = ActionData(b, op.Action, args)
	return data, nil, err
}

// PostedID is the id of the bounty a post's receipt records (the Posted event of the escrow
// at escrowAddr).
func PostedID(r *types.Receipt, escrowAddr common.Address) (uint64, bool) {
	abi := contracts.NewBountyEscrow()
	for _, l := range r.Logs {
		if l.Address != escrowAddr {
			continue
		}
		if p, err := abi.UnpackPostedEvent(l); err == nil {
			return p.Id.Uint64(), true
		}
	}
	return 0, false
}

// ActionData is the escrow call of action on bounty b, with b's terms and worker (as an
// index holds them), its arguments checked as the escrow checks them. The node's Act and a
// client sending from its own wallet build their calls with it.
func ActionData(b *Bounty, action Action, args ActionArgs) ([]byte, error) {
	id := b.ID
	if b.Status.Terminal() {
		return nil, &BountyError{ID: id, Err: ErrBountyClosed, Msg: fmt.Sprintf("bounty %d is already %s", id, b.Status)}
	}
	t, w, bid := b.Terms(), b.Worker, new(big.Int).SetUint64(id)
	abi := contracts.NewBountyEscrow()
	var data []byte
	switch action {
	case ActionClaim:
		data = abi.PackClaim(bid, t, args.AgentID)
	case ActionAssign:
		if args.Worker == (common.Address{}) {
			return nil, &BountyError{ID: id, Err: ErrInvalid, Msg: "invalid argument: assign needs a worker address"}
		}
		data = abi.PackAssign(bid, t, args.Worker)
	case ActionSubmit:
		data = abi.PackSubmit(bid, t, w, args.ResultHash)
	case ActionAccept:
		data = abi.PackAccept(bid, t, w)
	case ActionReject:
		data = abi.PackReject(bid, t, w, args.ReasonHash)
	case ActionDispute:
		data = abi.PackDispute(bid, t, w, args.ReasonHash)
	case ActionResolve:
		if args.WorkerBps > 10_000 {
			return nil, &BountyError{ID: id, Err: ErrInvalid, Msg: "invalid argument: workerBps is at most 10000"}
		}
		slash := args.Slash
		if slash == nil {
			slash = new(big.Int)
		}
		if slash.Cmp(t.MinStake) > 0 {
			return nil, &BountyError{ID: id, Err: ErrInvalid, Msg: fmt.Sprintf("invalid argument: slash %s is above the %s the bounty locks", slash, t.MinStake)}
		}
		data = abi.PackResolve(bid, t, w, args.WorkerBps, slash)
	case ActionResolveExpired:
		data = abi.PackResolveExpired(bid, t, w)
	case ActionRelease:
		data = abi.PackRelease(bid, t, w)
	case ActionRefund:
		data = abi.PackRefund(bid, t, w)
	case ActionCancel:
		data = abi.PackCancel(bid, t)
	case ActionUnclaim:
		data = abi.PackUnclaim(bid, t, w)
	default:
		return nil, &BountyError{ID: id, Err: ErrInvalid, Msg: fmt.Sprintf("invalid argument: unknown action %q", action)}
	}
	return data, nil
}

// Do performs op once per Idempotency (see txn.Do): a call the contract would refuse is
// refused before anything is sent, with the decoded reason ("bounty 7 is already accepted").
func (s *Service) Do(ctx context.Context, op Op, idem txn.Idempotency) (*Result, error) {
	return txn.Do(ctx, s.cfg.Tx, idem, s.request(op))
}

// Retry answers a request made before under idem, and never starts a new one (see
// txn.Retry).
func (s *Service) Retry(ctx context.Context, op Op, idem txn.Idempotency) (*Result, error) {
	return txn.Retry(ctx, s.cfg.Tx, idem, s.request(op))
}

func (s *Service) request(op Op) txn.Request[*Result] {
	return txn.Request[*Result]{
		From: op.From,
		Prepare: func(ctx context.Context, snd *txn.Sender) (txn.Call, error) {
			data, value, err := s.call(ctx, snd, op)
			return txn.Call{To: s.cfg.Escrow, Data: data, Value: value, Decode: decodeRevert}, err
		},
		Finish: func(ctx context.Context, r *types.Receipt) (*Result, error) {
			id := op.BountyID
			if op.Kind == OpPost {
				id, _ = PostedID(r, s.cfg.Escrow)
			}
			return s.settle(ctx, id, r)
		},
	}
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

// Broadcast sends an escrow call an external wallet signed without waiting for it to be
// mined (see txn.Service.Broadcast).
func (s *Service) Broadcast(ctx context.Context, raw []byte) (*types.Transaction, error) {
	return s.cfg.Tx.Broadcast(ctx, raw, []common.Address{s.cfg.Escrow}, decodeRevert)
}

// Relay sends an escrow call an external wallet signed (EIP-2718 bytes): it is first
// simulated, so a call the contract would refuse is refused with the decoded reason and never
// sent. Sending the same signed bytes twice cannot make two transactions: a retry only waits
// for the first.
func (s *Service) Relay(ctx context.Context, raw []byte) (*Result, error) {
	r, err := s.cfg.Tx.Relay(ctx, raw, []common.Address{s.cfg.Escrow}, decodeRevert)
	if err != nil {
		return nil, err
	}
	var id uint64
	for _, l := range r.Logs {
		if ev, ok, err := s.cfg.Indexer.decode(l); err == nil && ok && ev.HasBounty {
			id = ev.BountyID
		}
	}
	return s.settle(ctx, id, r)
}
