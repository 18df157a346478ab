package txn

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
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

// Call is one contract call to send.
type Call struct {
	To    common.Address
	Data  []byte
	Value *big.Int
	// Decode turns the error of a call the contract refuses (at gas estimation, or when a
	// relayed transaction is simulated) into the caller's own error, decoding the revert.
	// A refusal the chain answered that it leaves as it is (or that nil leaves) is
	// ErrReverted, wrapping the chain's error.
	Decode func(error) error
}

func (c Call) decode(err error) error {
	if c.Decode != nil {
		if d := c.Decode(err); d != err {
			return d
		}
	}
	// A revert the chain answered for a reason no decoder knows (a selector the contract
	// lacks, a bare revert): still the contract's refusal, not the node's failure. The chain's
	// error stays wrapped, so contracts.Revert finds the revert data in it. Any other error
	// the chain answers (a provider's rate limit, a missing header, an internal error) is
	// not the contract's word, and stays as it is: the call may go through later.
	if reverted(err) {
		msg := err.Error()
		if len(msg) > maxChainMessage {
			msg = msg[:maxChainMessage] + "…"
		}
		return &Error{Err: fmt.Errorf("%w: %w", ErrReverted, err), Msg: "the contract refuses the call: " + msg}
	}
	return err
}

// reverted says whether err is the chain's answer that the call reverted: JSON-RPC error code
// 3 (execution reverted, as geth and Anvil answer it, with or without revert data).
func reverted(err error) bool {
	var answered rpc.Error
	return errors.As(err, &answered) && answered.ErrorCode() == 3
}

// Sender sends transactions from one wallet. It hands out nonces itself and broadcasts each
// transaction while it holds the wallet's lock, so concurrent requests from the same wallet
// never collide and the chain always receives them in nonce order (a chain may sit on a
// transaction whose predecessor arrived late: seen on Anvil). A failed broadcast makes it
// re-read the nonce from the chain. Gas is estimated per transaction (a revert shows up there,
// decoded by the call's hook), receipts are awaited with a timeout, and a transaction still
// unmined after a while is broadcast again.
type Sender struct {
	client  Backend
	signer  Signer
	addr    common.Address
	chainID *big.Int
	timeout time.Duration

	mu    sync.Mutex
	nonce *uint64 // next nonce to use; nil until read from the chain

	progress func(Progress) // hears each broadcast and receipt; nil: nobody
	fees     Fees
}

// Fees fixes or bounds what a Sender offers for gas. The zero value takes the chain's
// suggestion: its tip, and a fee cap of the tip plus twice the head's base fee.
type Fees struct {
	// Tip and FeeCap, when set, are offered as they are (Foundry's --priority-gas-price and
	// --gas-price).
	Tip, FeeCap *big.Int
	// MaxSuggestedTip, when set, refuses a suggested tip above it: a chain reached through
	// someone else's relay could suggest a tip the wallet would pay in full.
	MaxSuggestedTip *big.Int
}

// SetFees makes the sender offer fees as f says. Set it before the sender is used.
func (s *Sender) SetFees(f Fees) { s.fees = f }

// Stage is how far a transaction got.
type Stage string

// Stages a Sender reports.
const (
	// StageSent: the chain took the transaction into its pool.
	StageSent Stage = "sent"
	// StageMined: the transaction is in a block (Block), successful or reverted.
	StageMined Stage = "mined"
)

// Progress is one step of a transaction the Sender sent.
type Progress struct {
	Stage Stage
	Tx    common.Hash
	To    common.Address
	// Block is the block that holds the transaction, and Reverted says it failed there
	// (StageMined).
	Block    uint64
	Reverted bool
}

// OnProgress makes the sender tell f of each transaction it broadcasts and each receipt it
// gets (a CLI shows them while it waits). Set it before the sender is used.
func (s *Sender) OnProgress(f func(Progress)) { s.progress = f }

// progressKey carries a request's own progress listener in its context (WithProgress).
type progressKey struct{}

// WithProgress returns ctx carrying f: a Sender sending under ctx tells f of each broadcast
// and receipt, besides its own OnProgress listener (the API follows one request this way).
func WithProgress(ctx context.Context, f func(Progress)) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

func (s *Sender) report(ctx context.Context, p Progress) {
	if s.progress != nil {
		s.progress(p)
	}
	Report(ctx, p)
}

// Report tells the listener ctx carries (WithProgress), if any, of p: the Sender does for
// what it sends, the relay for a transaction its user signed.
func Report(ctx context.Context, p Progress) {
	if f, ok := ctx.Value(progressKey{}).(func(Progress)); ok {
		f(p)
	}
}

// NewSender makes a sender for signer's wallet. timeout bounds the wait for each receipt (0:
// DefaultReceiptTimeout).
func NewSender(ctx context.Context, client Backend, signer Signer, timeout time.Duration) (*Sender, error) {
	id, err := client.ChainID(ctx)
	if err != nil {
		return nil, fmt.Errorf("sender: chain id: %w", err)
	}
	if timeout == 0 {
		timeout = DefaultReceiptTimeout
	}
	return &Sender{client: client, signer: signer, addr: signer.Address(), chainID: id, timeout: timeout}, nil
}

// Address is the wallet's address.
func (s *Sender) Address() common.Address { return s.addr }

// Send builds, signs and sends call and waits for its receipt. A call the contract would
// refuse fails at estimation (decoded by call.Decode) and sends nothing; a mined transaction
// that reverted is reported as ErrReverted.
func (s *Sender) Send(ctx context.Context, call Call) (*types.Receipt, error) {
	tx, err := s.SendAsync(ctx, call, nil)
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
func (s *Sender) SendAsync(ctx context.Context, call Call, record func(*types.Transaction) error) (*types.Transaction, error) {
	tx, err := s.sendAsync(ctx, call, record)
	if err == nil {
		s.report(ctx, Progress{Stage: StageSent, Tx: tx.Hash(), To: call.To}) // after the wallet's lock: a slow listener holds up nobody
	}
	return tx, err
}

func (s *Sender) sendAsync(ctx context.Context, call Call, record func(*types.Transaction) error) (*types.Transaction, error) {
	fees, err := s.estimate(ctx, call)
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
		tx, err := s.sign(ctx, fees, *s.nonce)
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

// Sign signs call for the wallet's next nonce as the chain sees it, without sending it or
// reserving the nonce: a transaction for someone else to broadcast (the node's relay, say).
func (s *Sender) Sign(ctx context.Context, call Call) (*types.Transaction, error) {
	fees, err := s.estimate(ctx, call)
	if err != nil {
		return nil, err
	}
	n, err := s.client.PendingNonceAt(ctx, s.addr)
	if err != nil {
		return nil, fmt.Errorf("sign: nonce: %w", err)
	}
	return s.sign(ctx, fees, n)
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
func (s *Sender) estimate(ctx context.Context, call Call) (*unsigned, error) {
	value := call.Value
	if value == nil {
		value = new(big.Int)
	}
	gas, err := s.client.EstimateGas(ctx, ethereum.CallMsg{From: s.addr, To: &call.To, Data: call.Data, Value: value})
	if err != nil {
		if strings.Contains(err.Error(), "insufficient funds") {
			return nil, s.cannotPay()
		}
		return nil, call.decode(err)
	}
	gas += gas / gasHeadroomDiv
	head, err := s.client.HeaderByNumber(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("send: head: %w", err)
	}
	tip := s.fees.Tip
	if tip == nil {
		if tip, err = s.client.SuggestGasTipCap(ctx); err != nil {
			return nil, fmt.Errorf("send: tip: %w", err)
		}
		if limit := s.fees.MaxSuggestedTip; limit != nil && tip.Cmp(limit) > 0 {
			return nil, &Error{Err: ErrFeeTooHigh, Msg: fmt.Sprintf("the chain suggests a priority fee of %s wei a gas, above %s: name the fee you will pay", tip, limit)}
		}
	}
	feeCap := s.fees.FeeCap
	if feeCap == nil {
		feeCap = new(big.Int).Add(tip, new(big.Int).Mul(head.BaseFee, big.NewInt(2)))
	}
	if feeCap.Cmp(tip) < 0 {
		return nil, &Error{Err: ErrFeeTooHigh, Msg: fmt.Sprintf("the fee cap %s wei a gas is below the priority fee %s", feeCap, tip)}
	}
	return &unsigned{to: call.To, data: call.Data, value: value, gas: gas, tip: tip, feeCap: feeCap}, nil
}

func (s *Sender) sign(ctx context.Context, u *unsigned, nonce uint64) (*types.Transaction, error) {
	tx := types.NewTx(&types.DynamicFeeTx{
		ChainID: s.chainID, Nonce: nonce, To: &u.to, Value: u.value, Data: u.data,
		Gas: u.gas, GasTipCap: u.tip, GasFeeCap: u.feeCap,
	})
	signed, err := s.signer.SignTx(ctx, tx, s.chainID)
	if err != nil {
		return nil, fmt.Errorf("sign with wallet %s: %w", s.addr.Hex(), err)
	}
	if from, err := types.Sender(types.LatestSignerForChainID(s.chainID), signed); err != nil || from != s.addr {
		return nil, fmt.Errorf("sign with wallet %s: the signer signed for %s (%v)", s.addr.Hex(), from.Hex(), err)
	}
	return signed, nil
}

func (s *Sender) cannotPay() error {
	return &Error{Err: ErrCannotPay, Msg: fmt.Sprintf("wallet %s cannot pay for this transaction", s.addr.Hex())}
}

// sendError explains a failed broadcast, marked ErrChainRefused when the chain answered with
// a refusal (a JSON-RPC error), so the caller knows the transaction can never be mined.
func (s *Sender) sendError(err error) error {
	var answered rpc.Error
	if !errors.As(err, &answered) {
		return fmt.Errorf("send: %w: %w", ErrChainUnreachable, err)
	}
	if strings.Contains(err.Error(), "insufficient funds") {
		return &Error{Err: errors.Join(ErrCannotPay, ErrChainRefused), Msg: s.cannotPay().Error()}
	}
	msg := err.Error()
	if len(msg) > maxChainMessage {
		msg = msg[:maxChainMessage] + "…"
	}
	return &Error{Err: ErrChainRefused, Msg: "the chain refused the transaction: " + msg}
}

// Rebroadcast sends a stored transaction again after a restart. It reports stale=true when
// its nonce was taken by another transaction, so it can never be mined; a transaction the
// chain already has (mined, or pending) is not stale.
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
	r, err := waitMined(ctx, s.client, tx, s.timeout, true)
	if r != nil {
		p := Progress{Stage: StageMined, Tx: tx.Hash(), Block: r.BlockNumber.Uint64(), Reverted: r.Status != types.ReceiptStatusSuccessful}
		if tx.To() != nil {
			p.To = *tx.To()
		}
		s.report(ctx, p)
	}
	return r, err
}

// waitMined waits for tx's receipt up to timeout, rebroadcasting it meanwhile when asked to.
// The rebroadcasting goroutine is owned here: it ends before waitMined returns.
func waitMined(ctx context.Context, client Backend, tx *types.Transaction, timeout time.Duration, rebroadcast bool) (*types.Receipt, error) {
	wctx, cancel := context.WithTimeout(ctx, timeout)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	if rebroadcast {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(rebroadcastEvery)
			defer t.Stop()
			for {
				select {
				case <-wctx.Done():
					return
				case <-t.C:
					_ = client.SendTransaction(wctx, tx) // "already known" and "nonce too low" are expected
				}
			}
		}()
	}
	r, err := chain.WaitMined(wctx, client, tx.Hash())
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			// A deadline too, so callers (and the API's 504) treat it as the timeout it is.
			return nil, &Error{Err: errors.Join(ErrNotMined, context.DeadlineExceeded), Msg: fmt.Sprintf("transaction %s not mined within %s", tx.Hash().Hex(), timeout)}
		}
		return nil, err
	}
	if r.Status != types.ReceiptStatusSuccessful {
		return r, &Error{Err: ErrReverted, Msg: fmt.Sprintf("transaction %s reverted", tx.Hash().Hex())}
	}
	return r, nil
}

// Raise makes sure a spender may take amount of an ERC-20 token from the wallet, given the
// allowance it has now (have) and the data of approve(spender, x) for any x: nothing when
// have suffices, else an approval of amount, reset to zero first when have is not (some
// tokens, USDT among them, refuse to change an allowance that is not zero). Callers read
// the allowance and pack the call, so this package knows no contract.
func (s *Sender) Raise(ctx context.Context, token common.Address, have, amount *big.Int, approve func(*big.Int) []byte) error {
	if have.Cmp(amount) >= 0 {
		return nil
	}
	if have.Sign() > 0 {
		if _, err := s.Send(ctx, Call{To: token, Data: approve(new(big.Int))}); err != nil {
			return fmt.Errorf("reset the allowance of token %s: %w", token.Hex(), err)
		}
	}
	if _, err := s.Send(ctx, Call{To: token, Data: approve(amount)}); err != nil {
		return fmt.Errorf("approve token %s: %w", token.Hex(), err)
	}
	return nil
}
