package chain

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/params"
)

// EmbeddedChainID is the chain id of go-ethereum's simulated backend.
const EmbeddedChainID = 1337

// DefaultDevBalance is what each dev account holds at genesis: 10,000 ETH.
var DefaultDevBalance = new(big.Int).Mul(big.NewInt(10_000), big.NewInt(params.Ether))

// EmbeddedConfig sets up the embedded chain.
type EmbeddedConfig struct {
	// Funded accounts and their genesis balances.
	Alloc map[common.Address]*big.Int
	// GasLimit per block; 0 means go-ethereum's default.
	GasLimit uint64
}

// Embedded is an in-process chain. It mines one block for every accepted transaction, so a
// receipt is available as soon as SendTransaction returns. Its state lives in memory and ends
// with Close.
type Embedded struct {
	simulated.Client
	backend *simulated.Backend
	mu      sync.Mutex // serializes send+commit so each transaction gets its own block
}

// NewEmbedded starts an embedded chain. Each start has a genesis of its own (the genesis
// carries the start time and a random nonce), so state keyed by the genesis hash from an
// earlier run never matches.
func NewEmbedded(cfg EmbeddedConfig) (*Embedded, error) {
	alloc := types.GenesisAlloc{}
	for addr, bal := range cfg.Alloc {
		alloc[addr] = types.Account{Balance: new(big.Int).Set(bal)}
	}
	salt := make([]byte, 32)
	if _, err := rand.Read(salt); err != nil {
		return nil, fmt.Errorf("embedded chain: %w", err)
	}
	opts := []func(*node.Config, *ethconfig.Config){
		func(_ *node.Config, eth *ethconfig.Config) {
			eth.Genesis.ExtraData = salt
			eth.Genesis.Timestamp = uint64(time.Now().Unix())
			// go-ethereum's dev config also turns on forks that are not live anywhere yet
			// (Bogota), whose gas schedule differs from mainnet's and Anvil's. Stop at Osaka
			// so that gas measured here is gas paid on a real chain.
			cfg := *params.AllDevChainProtocolChanges
			cfg.BogotaTime = nil
			eth.Genesis.Config = &cfg
		},
	}
	if cfg.GasLimit > 0 {
		opts = append(opts, simulated.WithBlockGasLimit(cfg.GasLimit))
	}
	var (
		backend *simulated.Backend
		err     error
	)
	func() {
		// NewBackend panics when the in-memory node cannot start; report it as an error.
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("embedded chain: %v", r)
			}
		}()
		backend = simulated.NewBackend(alloc, opts...)
	}()
	if err != nil {
		return nil, err
	}
	return &Embedded{Client: backend.Client(), backend: backend}, nil
}

// SendTransaction submits tx and mines it into a new block before returning.
func (e *Embedded) SendTransaction(ctx context.Context, tx *types.Transaction) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.Client.SendTransaction(ctx, tx); err != nil {
		return err
	}
	e.backend.Commit()
	return nil
}

// Mine seals an empty block, moving the chain (and its clock) forward.
func (e *Embedded) Mine() common.Hash {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.backend.Commit()
}

// AdvanceTime mines an empty block d later than the head, moving the chain's clock forward
// (deadlines, review windows): dev chains and tests use it.
func (e *Embedded) AdvanceTime(d time.Duration) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	err := e.backend.AdjustTime(d)
	if err != nil && strings.Contains(err.Error(), "non-empty block") {
		// A transaction sent a moment ago is still pending: mine it, as automine would, then
		// move the clock.
		e.backend.Commit()
		err = e.backend.AdjustTime(d)
	}
	return err
}

// Fork makes the block with hash parent the head of a side chain that becomes canonical once
// it is longer than the current one (mine on it with Mine). Tests use it to reorganize.
func (e *Embedded) Fork(parent common.Hash) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.backend.Fork(parent); err != nil {
		return err
	}
	// The fork puts the dropped blocks' transactions back in the pool; a test that wants
	// them gone for good sends others in their place.
	e.backend.Rollback()
	return nil
}

// Close stops the chain; its state is gone afterwards.
func (e *Embedded) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	_ = e.backend.Close()
}

// DevKey returns the i-th dev account key. Dev keys are derived from a public, fixed phrase:
// they are the same on every machine, fund nothing of value, and must never hold real money.
func DevKey(i int) *ecdsa.PrivateKey {
	var idx [8]byte
	binary.BigEndian.PutUint64(idx[:], uint64(i))
	seed := crypto.Keccak256([]byte("surety dev account"), idx[:])
	key, err := crypto.ToECDSA(seed)
	if err != nil {
		// A keccak digest is a valid secp256k1 scalar except with negligible probability,
		// and the inputs here are fixed: this cannot happen for any i in use.
		panic(fmt.Sprintf("dev key %d: %v", i, err))
	}
	return key
}

// DevAlloc funds the first n dev accounts with balance each.
func DevAlloc(n int, balance *big.Int) map[common.Address]*big.Int {
	alloc := make(map[common.Address]*big.Int, n)
	for i := range n {
		alloc[crypto.PubkeyToAddress(DevKey(i).PublicKey)] = balance
	}
	return alloc
}
