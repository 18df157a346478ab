package escrow

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/internal/chain"
)

// Backend is what sending transactions needs from a chain.
type Backend interface {
	ethereum.GasEstimator
	ethereum.GasPricer
	ethereum.GasPricer1559
	ethereum.ChainStateReader
	ethereum.PendingStateReader
	ethereum.TransactionSender
	ethereum.ChainReader
	ethereum.ChainIDReader
	TransactionReceipt(ctx context.Context, txHash common.Hash) (*types.Receipt, error)
}

// Sender sends transactions from one wallet. It hands out nonces itself, so concurrent
// requests from the same wallet never collide, and it resynchronizes with the chain after a
// failed send. Gas is estimated per transaction (a revert shows up there, decoded), and
// receipts are awaited with a timeout.
type Sender struct {
	client  Backend
	key     *ecdsa.PrivateKey
	addr    common.Address
	chainID *big.Int
	timeout time.Duration

	mu    sync.Mutex
	nonce *uint64 // next nonce to use; nil until read from the chain
}

// NewSender makes a sender for key. timeout bounds the wait for each receipt (0: 2 minutes).
func NewSender(ctx context.Context, client Backend, key *ecdsa.PrivateKey, timeout time.Duration) (*Sender, error) {
	id, err := client.ChainID(ctx)
	if err != nil {
		return nil, fmt.Errorf("sender: chain id: %w", err)
	}
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	return &Sender{client: client, key: key, addr: crypto.PubkeyToAddress(key.PublicKey), chainID: id, timeout: timeout}, nil
}

// Address is the wallet's address.
func (s *Sender) Address() common.Address { return s.addr }

// Send builds, signs and sends a call of data to `to` with value, and waits for its receipt.
// A call the contract would refuse fails at estimation with the decoded reason and sends
// nothing; a mined transaction that reverted is reported as ErrReverted.
func (s *Sender) Send(ctx context.Context, to common.Address, data []byte, value *big.Int) (*types.Receipt, error) {
	tx, err := s.SendAsync(ctx, to, data, value)
	if err != nil {
		return nil, err
	}
	return s.Wait(ctx, tx)
}

// SendAsync signs and sends without waiting for the receipt.
func (s *Sender) SendAsync(ctx context.Context, to common.Address, data []byte, value *big.Int) (*types.Transaction, error) {
	tx, err := s.Prepare(ctx, to, data, value)
	if err != nil {
		return nil, err
	}
	if err := s.Broadcast(ctx, tx); err != nil {
		return nil, err
	}
	return tx, nil
}

// Prepare estimates gas (a call the contract refuses fails here, decoded, and nothing is
// signed), takes the next nonce and signs. The signed transaction can be stored before it is
// broadcast, so a crash in between never leads to a second, different transaction.
func (s *Sender) Prepare(ctx context.Context, to common.Address, data []byte, value *big.Int) (*types.Transaction, error) {
	if value == nil {
		value = new(big.Int)
	}
	msg := ethereum.CallMsg{From: s.addr, To: &to, Data: data, Value: value}
	gas, err := s.client.EstimateGas(ctx, msg)
	if err != nil {
		if strings.Contains(err.Error(), "insufficient funds") {
			return nil, fmt.Errorf("%w: wallet %s cannot pay for this transaction", ErrInvalid, s.addr.Hex())
		}
		return nil, decodeRevert(err)
	}
	gas += gas / 5 // headroom: state can move between estimate and inclusion
	head, err := s.client.HeaderByNumber(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("send: head: %w", err)
	}
	tip, err := s.client.SuggestGasTipCap(ctx)
	if err != nil {
		return nil, fmt.Errorf("send: tip: %w", err)
	}
	feeCap := new(big.Int).Add(tip, new(big.Int).Mul(head.BaseFee, big.NewInt(2)))

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nonce == nil {
		n, err := s.client.PendingNonceAt(ctx, s.addr)
		if err != nil {
			return nil, fmt.Errorf("send: nonce: %w", err)
		}
		s.nonce = &n
	}
	tx, err := types.SignNewTx(s.key, types.LatestSignerForChainID(s.chainID), &types.DynamicFeeTx{
		ChainID: s.chainID, Nonce: *s.nonce, To: &to, Value: value, Data: data,
		Gas: gas, GasTipCap: tip, GasFeeCap: feeCap,
	})
	if err != nil {
		return nil, err
	}
	*s.nonce++
	return tx, nil
}

// Broadcast sends a prepared transaction. When the chain refuses it, the sender re-reads its
// nonce from the chain before the next Prepare.
func (s *Sender) Broadcast(ctx context.Context, tx *types.Transaction) error {
	if err := s.client.SendTransaction(ctx, tx); err != nil {
		s.mu.Lock()
		s.nonce = nil
		s.mu.Unlock()
		if strings.Contains(err.Error(), "insufficient funds") {
			return fmt.Errorf("%w: wallet %s cannot pay for this transaction", ErrInvalid, s.addr.Hex())
		}
		return fmt.Errorf("send: %w", err)
	}
	return nil
}

// Rebroadcast sends a stored transaction again after a restart. It reports known=true when
// the chain already has it (mined, or pending), and stale=true when its nonce was taken by
// another transaction, so it can never be mined.
func (s *Sender) Rebroadcast(ctx context.Context, tx *types.Transaction) (stale bool, err error) {
	if _, err := s.client.TransactionReceipt(ctx, tx.Hash()); err == nil {
		return false, nil
	}
	err = s.client.SendTransaction(ctx, tx)
	if err == nil {
		return false, nil
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "already known"), strings.Contains(msg, "known transaction"):
		return false, nil
	case strings.Contains(msg, "nonce too low"):
		// Mined meanwhile (then it has a receipt), or its nonce went to another transaction.
		if _, rerr := s.client.TransactionReceipt(ctx, tx.Hash()); rerr == nil {
			return false, nil
		}
		return true, nil
	}
	return false, fmt.Errorf("rebroadcast %s: %w", tx.Hash().Hex(), err)
}

// Wait waits for tx's receipt, up to the sender's timeout.
func (s *Sender) Wait(ctx context.Context, tx *types.Transaction) (*types.Receipt, error) {
	wctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	r, err := chain.WaitMined(wctx, s.client, tx.Hash())
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("transaction %s not mined within %s", tx.Hash().Hex(), s.timeout)
		}
		return nil, err
	}
	if r.Status != types.ReceiptStatusSuccessful {
		return r, &BountyError{Err: ErrReverted, Msg: fmt.Sprintf("transaction %s reverted", tx.Hash().Hex())}
	}
	return r, nil
}
