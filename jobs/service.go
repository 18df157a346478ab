package jobs

import (
	"context"
	"errors"
	"math/big"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/surety-ioa/surety/txn"
)

// ServiceConfig wires a Service.
type ServiceConfig struct {
	Indexer *Indexer
	// Chain reads JobEscrow's jobCounter, to tell a job this node has not indexed yet from
	// one that does not exist; nil: every missing job is unknown.
	Chain     Caller
	JobEscrow common.Address
	Hook      common.Address
	// Tx relays calls to the job contracts that clients' own wallets signed (Broadcast); nil:
	// none are relayed.
	Tx *txn.Service
}

// Service answers the API's job reads from the index.
type Service struct {
	cfg ServiceConfig
}

// NewService builds the job service.
func NewService(cfg ServiceConfig) *Service { return &Service{cfg: cfg} }

// JobEscrow is the ERC-8183 contract's address; Hook is SuretyHook's (zero: none).
func (s *Service) JobEscrow() common.Address { return s.cfg.JobEscrow }

// Hook is SuretyHook's address (zero: none).
func (s *Service) Hook() common.Address { return s.cfg.Hook }

// Indexer is the service's index.
func (s *Service) Indexer() *Indexer { return s.cfg.Indexer }

// Contracts are the job contracts the node relays calls to: JobEscrow, and the hook when
// there is one.
func (s *Service) Contracts() []common.Address {
	out := []common.Address{s.cfg.JobEscrow}
	if s.cfg.Hook != (common.Address{}) {
		out = append(out, s.cfg.Hook)
	}
	return out
}

// Broadcast sends a call to a job contract an external wallet signed, without waiting for it
// to be mined (see txn.Service.Broadcast): a call the contract would refuse is refused with
// the decoded reason and never sent.
func (s *Service) Broadcast(ctx context.Context, raw []byte) (*types.Transaction, error) {
	if s.cfg.Tx == nil {
		return nil, &JobError{Err: ErrInvalid, Msg: "this node relays no job calls"}
	}
	return s.cfg.Tx.Broadcast(ctx, raw, s.Contracts(), func(err error) error { return DecodeRevert(err, 0, "") })
}

// List returns indexed jobs (see Indexer.List).
func (s *Service) List(ctx context.Context, f Filter) ([]*Job, error) {
	return s.cfg.Indexer.List(ctx, f)
}

// Get returns an indexed job with its history. A job the index lacks is looked for again
// once the index holds every confirmed block (within CatchUpWait); still missing, it is an
// ErrUnknownJob error that says whether the chain has it (its job counter is past id: this
// node has not indexed it yet) or not.
func (s *Service) Get(ctx context.Context, id uint64) (*Job, error) {
	j, err := s.cfg.Indexer.Get(ctx, id)
	if !errors.Is(err, ErrUnknownJob) || id == 0 {
		return j, err
	}
	wctx, cancel := context.WithTimeout(ctx, CatchUpWait)
	caught := s.cfg.Indexer.CatchUp(wctx)
	cancel()
	if caught == nil {
		if j, err = s.cfg.Indexer.Get(ctx, id); !errors.Is(err, ErrUnknownJob) {
			return j, err
		}
	}
	if n, ok := s.counter(ctx); ok && id <= n {
		return nil, Unknown(id, true)
	}
	return nil, err
}

// counter reads JobEscrow.jobCounter at the head.
func (s *Service) counter(ctx context.Context) (uint64, bool) {
	if s.cfg.Chain == nil || s.cfg.Indexer.escrow == nil {
		return 0, false
	}
	input, err := s.cfg.Indexer.escrow.Pack("jobCounter")
	if err != nil {
		return 0, false
	}
	to := s.cfg.JobEscrow
	out, err := s.cfg.Chain.CallContract(ctx, ethereum.CallMsg{To: &to, Data: input}, nil)
	if err != nil {
		return 0, false
	}
	vals, err := s.cfg.Indexer.escrow.Unpack("jobCounter", out)
	if err != nil || len(vals) != 1 {
		return 0, false
	}
	n, ok := vals[0].(*big.Int)
	if !ok || !n.IsUint64() {
		return 0, false
	}
	return n.Uint64(), true
}
