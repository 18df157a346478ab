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
	"github.com/ethereum/go-ethereum/rpc"

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

// Sender sends transactions from one wallet. It hands out nonces itself and broadcasts each
// transaction while it holds the wallet's lock, so concurrent requests from the same wallet
// never collide and the chain always receives them in nonce order (a chain may sit on a
// transaction whose predecessor arrived late: seen on Anvil). A failed broadcast makes it
// re-read the nonce from the chain. Gas is estimated per transaction (a revert shows up there,
// decoded), receipts are awaited with a timeout, and a transaction still unmined after a while
// is broadcast again.
type Sender struct {
	client  Backend
	key     *ecdsa.PrivateKey
	addr    common.Address
	chainID *big.Int
	timeout time.Duration

	mu    sync.Mutex
	nonce *uint64 // next nonce to use; nil until read from the chain
}

// rebroadcastEvery is how long Wait waits for a receipt before it sends the transaction again
// (a node may have dropped it from its pool); a node that still has it just says so.
const rebroadcastEvery = 3 * time.Second

// errRefused marks a send the chain answered with a refusal: the transaction is not in its
// pool and never will be. Any other failed send (a lost connection, a timeout) may have
// reached the chain.
var errRefused = ErrChainRefused

// ErrChainUnreachable: the broadcast got no answer from the chain (a lost connection, a
// timeout); the chain may have the transaction, so a retry with the same Idempotency-Key
// waits for it rather than sending another.
var ErrChainUnreachable = errors.New("escrow: the chain did not answer the broadcast")

// ErrChainRefused: the chain refused to take the transaction (it is not in its pool, and
// nothing was spent); the detail is the chain's own message.
var ErrChainRefused = errors.New("escrow: the chain refused the transaction")

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
	tx, err := s.SendAsync(ctx, to, data, value, nil)
	if err != nil {
		return nil, err
	}
	return s.Wait(ctx, tx)
}

// SendAsync estimates gas (a call the contract refuses fails here, decoded, and nothing is
// signed), signs with the next nonce and broadcasts, without waiting for the receipt. When
// record is not nil it gets the signed transaction before the broadcast, to store it, so that
// a crash in between never leads to a second, different transaction; when record fails,
// nothing is sent and the nonce stays free.
func (s *Sender) SendAsync(ctx context.Context, to common.Address, data []byte, value *big.Int, record func(*types.Transaction) error) (*types.Transaction, error) {
	fees, err := s.estimate(ctx, to, data, value)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for retried := false; ; retried = true {
		if s.nonce == nil {
			n, err := s.client.PendingNonceAt(ctx, s.addr)
			if err != nil {
				return nil, fmt.Errorf("send: nonce: %w", err)
			}
			s.nonce = &n
		}
		tx, err := s.sign(fees, *s.nonce)
		if err != nil {
			return nil, err
		}
		if record != nil {
			if err := record(tx); err != nil {
				return nil, err
			}
		}
		err = s.client.SendTransaction(ctx, tx)
		if err == nil {
			*s.nonce++
			return tx, nil
		}
		s.nonce = nil
		// Someone sent from this wallet outside the node and took the nonce: read it again
		// and send once more (record stores the new transaction over the old one).
		if !retried && nonceTaken(err) {
			continue
		}
		return nil, s.sendError(err)
	}
}

// nonceTaken reports a broadcast refused because the nonce was already used, or is held by a
// pending transaction the node did not send.
func nonceTaken(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "nonce too low") || strings.Contains(msg, "replacement transaction underpriced")
}

// Sign signs a call for the wallet's next nonce as the chain sees it, without sending it or
// reserving the nonce: a transaction for someone else to broadcast (the node's relay, say).
func (s *Sender) Sign(ctx context.Context, to common.Address, data []byte, value *big.Int) (*types.Transaction, error) {
	fees, err := s.estimate(ctx, to, data, value)
	if err != nil {
		return nil, err
	}
	n, err := s.client.PendingNonceAt(ctx, s.addr)
	if err != nil {
		return nil, fmt.Errorf("sign: nonce: %w", err)
	}
	return s.sign(fees, n)
}

// unsigned is a transaction but for its nonce.
type unsigned struct {
	to          common.Address
	data        []byte
	value       *big.Int
	gas         uint64
	tip, feeCap *big.Int
}

// estimate prices a call: gas with headroom, and EIP-1559 fees from the head block.
func (s *Sender) estimate(ctx context.Context, to common.Address, data []byte, value *big.Int) (*unsigned, error) {
	if value == nil {
		value = new(big.Int)
	}
	gas, err := s.client.EstimateGas(ctx, ethereum.CallMsg{From: s.addr, To: &to, Data: data, Value: value})
	if err != nil {
		if strings.Contains(err.Error(), "insufficient funds") {
			return nil, s.cannotPay()
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
	return &unsigned{to: to, data: data, value: value, gas: gas, tip: tip, feeCap: feeCap}, nil
}

func (s *Sender) sign(u *unsigned, nonce uint64) (*types.Transaction, error) {
	return types.SignNewTx(s.key, types.LatestSignerForChainID(s.chainID), &types.DynamicFeeTx{
		ChainID: s.chainID, Nonce: nonce, To: &u.to, Value: u.value, Data: u.data,
		Gas: u.gas, GasTipCap: u.tip, GasFeeCap: u.feeCap,
	})
}

func (s *Sender) cannotPay() error {
	return fmt.Errorf("%w: wallet %s cannot pay for this transaction", ErrInvalid, s.addr.Hex())
}

// sendError explains a failed broadcast, marked errRefused when the chain answered with a
// refusal (a JSON-RPC error), so the caller knows the transaction can never be mined.
func (s *Sender) sendError(err error) error {
	var answered rpc.Error
	if !errors.As(err, &answered) {
		return fmt.Errorf("send: %w: %w", ErrChainUnreachable, err)
	}
	if strings.Contains(err.Error(), "insufficient funds") {
		return fmt.Errorf("%w (%w)", s.cannotPay(), errRefused)
	}
	msg := err.Error()
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return &BountyError{Err: ErrChainRefused, Msg: "the chain refused the transaction: " + msg}
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

// Wait waits for tx's receipt, up to the sender's timeout, sending tx again every
// rebroadcastEvery while it is not mined.
func (s *Sender) Wait(ctx context.Context, tx *types.Transaction) (*types.Receipt, error) {
	wctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	go func() {
		t := time.NewTicker(rebroadcastEvery)
		defer t.Stop()
		for {
			select {
			case <-wctx.Done():
				return
			case <-t.C:
				_ = s.client.SendTransaction(wctx, tx) // "already known" and "nonce too low" are expected
			}
		}
	}()
	r, err := chain.WaitMined(wctx, s.client, tx.Hash())
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, fmt.Errorf("transaction %s not mined within %s", tx.Hash().Hex(), s.timeout)
		}
		return nil, err
	}
	if r.Status != types.ReceiptStatusSuccessful {
		return r, &BountyError{Err: ErrReverted, Msg: fmt.Sprintf("transaction %s reverted", tx.Hash().Hex())}
	}
	return r, nil
}
