package txn

import (
	"context"
	"crypto/ecdsa"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/surety-ioa/surety/internal/sqlite"
)

// Config wires a Service.
type Config struct {
	DB *sql.DB
	// Chain is the chains-table row that scopes stored requests (sqlite.EnterChain).
	Chain  int64
	Client Backend
	// ReceiptTimeout bounds the wait for each receipt; 0 means DefaultReceiptTimeout.
	ReceiptTimeout time.Duration
}

// Service holds the node's wallets and sends their transactions, once per request.
type Service struct {
	cfg Config

	mu      sync.Mutex
	senders map[common.Address]*Sender
}

// New opens the request store. Requests a previous run left half-prepared (it stopped
// before storing their transaction, so nothing was sent) are forgotten: their retries start
// over.
func New(ctx context.Context, cfg Config) (*Service, error) {
	if cfg.ReceiptTimeout == 0 {
		cfg.ReceiptTimeout = DefaultReceiptTimeout
	}
	if err := sqlite.Migrate(ctx, cfg.DB, "txn", migrations); err != nil {
		return nil, err
	}
	s := &Service{cfg: cfg, senders: map[common.Address]*Sender{}}
	if err := s.exec(ctx, `DELETE FROM escrow_requests WHERE chain = ? AND state = 'preparing'`, cfg.Chain); err != nil {
		return nil, err
	}
	return s, nil
}

// AddWallet lets the node send from signer's wallet.
func (s *Service) AddWallet(ctx context.Context, signer Signer) (common.Address, error) {
	snd, err := NewSender(ctx, s.cfg.Client, signer, s.cfg.ReceiptTimeout)
	if err != nil {
		return common.Address{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.senders[snd.Address()] = snd
	return snd.Address(), nil
}

// AddKey lets the node send from key's account (a key it holds).
func (s *Service) AddKey(ctx context.Context, key *ecdsa.PrivateKey) (common.Address, error) {
	return s.AddWallet(ctx, NewKeySigner(key))
}

// HasWallet reports whether the node can send from addr.
func (s *Service) HasWallet(addr common.Address) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.senders[addr]
	return ok
}

// Sender is addr's sender, or an ErrUnknownWallet error.
func (s *Service) Sender(addr common.Address) (*Sender, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snd, ok := s.senders[addr]
	if !ok {
		return nil, &Error{Err: ErrUnknownWallet, Msg: fmt.Sprintf("%v: %s", ErrUnknownWallet, addr.Hex())}
	}
	return snd, nil
}

// SignTypedData signs EIP-712 data as wallet addr, which the node holds (ErrUnknownWallet
// when it holds none): the wallet's half of a binding the node records for an agent it acts
// for, such as a rotation's successor.
func (s *Service) SignTypedData(ctx context.Context, addr common.Address, data apitypes.TypedData) ([]byte, error) {
	snd, err := s.Sender(addr)
	if err != nil {
		return nil, err
	}
	ts, ok := snd.signer.(TypedDataSigner)
	if !ok {
		return nil, fmt.Errorf("wallet %s signs transactions only, no typed data", addr.Hex())
	}
	return ts.SignTypedData(ctx, data)
}

// Transact sends call from a wallet the node holds and waits for its receipt, in the
// wallet's nonce order with everything else it sends.
func (s *Service) Transact(ctx context.Context, from common.Address, call Call) (*types.Receipt, error) {
	snd, err := s.Sender(from)
	if err != nil {
		return nil, err
	}
	return snd.Send(ctx, call)
}

// Relay sends a transaction an external wallet signed (EIP-2718 bytes), if it calls one of
// the contracts in to: it is first simulated, so a call the contract would refuse is refused
// (decoded by decode) and never sent. Sending the same signed bytes twice cannot make two
// transactions: a retry only waits for the first. It returns the receipt once mined.
func (s *Service) Relay(ctx context.Context, raw []byte, to []common.Address, decode func(error) error) (*types.Receipt, error) {
	tx, err := s.Broadcast(ctx, raw, to, decode)
	if err != nil {
		return nil, err
	}
	r, err := waitMined(ctx, s.cfg.Client, tx, s.cfg.ReceiptTimeout, false)
	if err != nil && r == nil {
		return nil, fmt.Errorf("relay: wait for %s: %w", tx.Hash().Hex(), err)
	}
	Report(ctx, Progress{Stage: StageMined, Tx: tx.Hash(), To: *tx.To(), Block: r.BlockNumber.Uint64(), Reverted: r.Status != types.ReceiptStatusSuccessful})
	return r, err
}

// Broadcast is Relay without the wait: it checks, simulates and broadcasts the signed
// transaction, and returns it once the chain has taken it (or had it already). A nonce above
// the wallet's next one is refused (ErrNonceGap), unsent.
func (s *Service) Broadcast(ctx context.Context, raw []byte, to []common.Address, decode func(error) error) (*types.Transaction, error) {
	var tx types.Transaction
	if err := tx.UnmarshalBinary(raw); err != nil {
		return nil, &Error{Err: ErrNotRelayable, Msg: "invalid argument: not a signed transaction: " + err.Error()}
	}
	switch tx.Type() {
	case types.LegacyTxType, types.AccessListTxType, types.DynamicFeeTxType:
	default:
		// A blob or set-code transaction carries more than the call simulated here (a
		// set-code one delegates whole accounts): not relayed.
		return nil, &Error{Err: ErrNotRelayable, Msg: fmt.Sprintf("invalid argument: transactions of type %d are not relayed (legacy, access-list and EIP-1559 calls are)", tx.Type())}
	}
	id, err := s.cfg.Client.ChainID(ctx)
	if err != nil {
		return nil, fmt.Errorf("relay: chain id: %w", err)
	}
	if !tx.Protected() || tx.ChainId().Cmp(id) != 0 {
		return nil, &Error{Err: ErrNotRelayable, Msg: fmt.Sprintf("invalid argument: the transaction is for chain %s, the node's is %s (unprotected ones, valid on any chain, are not relayed)", tx.ChainId(), id)}
	}
	if tx.To() == nil || !slices.Contains(to, *tx.To()) {
		names := make([]string, len(to))
		for i, a := range to {
			names[i] = a.Hex()
		}
		return nil, &Error{Err: ErrNotRelayable, Msg: "invalid argument: the node relays only calls to " + strings.Join(names, " and ")}
	}
	from, err := types.Sender(types.LatestSignerForChainID(tx.ChainId()), &tx)
	if err != nil {
		return nil, &Error{Err: ErrNotRelayable, Msg: "invalid argument: bad transaction signature"}
	}
	// A nonce past the wallet's next one passes simulation and is never mined until the gap
	// is filled: whoever waits for it (the relay, an operation) would hold on for nothing.
	next, err := s.cfg.Client.PendingNonceAt(ctx, from)
	if err != nil {
		return nil, fmt.Errorf("relay: the next nonce of %s: %w", from.Hex(), err)
	}
	if tx.Nonce() > next {
		return nil, &Error{Err: ErrNonceGap, Msg: fmt.Sprintf("invalid argument: nonce %d is above the next nonce of %s, %d: send that one first (the node relays no transaction the chain cannot mine yet)",
			tx.Nonce(), from.Hex(), next)}
	}
	if _, err := s.cfg.Client.TransactionReceipt(ctx, tx.Hash()); err != nil {
		msg := ethereum.CallMsg{From: from, To: tx.To(), Data: tx.Data(), Value: tx.Value(), Gas: tx.Gas()}
		if _, err := s.callContract(ctx, msg); err != nil {
			return nil, Call{Decode: decode}.decode(err)
		}
		if err := s.cfg.Client.SendTransaction(ctx, &tx); err != nil && !strings.Contains(err.Error(), "already known") {
			return nil, &Error{Err: ErrNotRelayable, Msg: "the chain refused the transaction: " + err.Error()}
		}
	}
	Report(ctx, Progress{Stage: StageSent, Tx: tx.Hash(), To: *tx.To()})
	return &tx, nil
}

// callContract simulates msg at the head block.
func (s *Service) callContract(ctx context.Context, msg ethereum.CallMsg) ([]byte, error) {
	caller, ok := s.cfg.Client.(ethereum.ContractCaller)
	if !ok {
		return nil, fmt.Errorf("relay: the chain client cannot simulate calls")
	}
	return caller.CallContract(ctx, msg, nil)
}
