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
	if value == nil {
		value = new(big.Int)
	}
	msg := ethereum.CallMsg{From: s.addr, To: &to, Data: data, Value: value}
	gas, err := s.client.EstimateGas(ctx, msg)
	if err != nil {
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
	if err := s.client.SendTransaction(ctx, tx); err != nil {
		s.nonce = nil // resynchronize with the chain on the next send
		if strings.Contains(err.Error(), "insufficient funds") {
			return nil, fmt.Errorf("%w: wallet %s cannot pay for this transaction", ErrInvalid, s.addr.Hex())
		}
		return nil, fmt.Errorf("send: %w", err)
	}
	*s.nonce++
	return tx, nil
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
