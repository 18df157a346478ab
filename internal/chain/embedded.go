package chain

import (
	"context"
	"crypto/ecdsa"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha512"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/math"
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

// DevKey returns the i-th dev account key: the account Anvil (and Hardhat) fund from their
// public test mnemonic, "test test ... junk", at m/44'/60'/0'/0/i, so that Surety, cast and
// a plain anvil agree on every dev key. They are the same on every machine, fund nothing of
// value, and must never hold real money.
func DevKey(i int) *ecdsa.PrivateKey {
	if i < 0 || i >= 1<<31 {
		panic(fmt.Sprintf("dev key %d: out of range", i))
	}
	if k, ok := devKeys.Load(i); ok {
		return k.(*ecdsa.PrivateKey)
	}
	key, err := deriveBIP32(devSeed(), 44|hardened, 60|hardened, 0|hardened, 0, uint32(i))
	if err != nil {
		// Derivation fails with probability below 2^-127 per step, and the inputs are fixed.
		panic(fmt.Sprintf("dev key %d: %v", i, err))
	}
	k, _ := devKeys.LoadOrStore(i, key)
	return k.(*ecdsa.PrivateKey)
}

// DevMnemonic is the public test mnemonic Anvil and Hardhat fund their dev accounts from.
const DevMnemonic = "test test test test test test test test test test test junk"

var (
	devKeys sync.Map // int -> *ecdsa.PrivateKey, derived once each
	devSeed = sync.OnceValue(func() []byte {
		// BIP-39: the seed is PBKDF2-HMAC-SHA512 of the mnemonic, salted "mnemonic" (no
		// passphrase), 2048 rounds, 64 bytes.
		seed, err := pbkdf2.Key(sha512.New, DevMnemonic, []byte("mnemonic"), 2048, 64)
		if err != nil {
			panic(err)
		}
		return seed
	})
)

// hardened marks a hardened BIP-32 child index.
const hardened = 1 << 31

// deriveBIP32 derives the private key at path from a BIP-32 seed.
func deriveBIP32(seed []byte, path ...uint32) (*ecdsa.PrivateKey, error) {
	n := crypto.S256().Params().N
	mac := hmac.New(sha512.New, []byte("Bitcoin seed"))
	mac.Write(seed)
	sum := mac.Sum(nil)
	k, chainCode := new(big.Int).SetBytes(sum[:32]), sum[32:]
	if k.Sign() == 0 || k.Cmp(n) >= 0 {
		return nil, errors.New("bip32: invalid master key")
	}
	for _, idx := range path {
		var data []byte
		if idx&hardened != 0 {
			data = append([]byte{0}, math.PaddedBigBytes(k, 32)...)
		} else {
			priv, err := crypto.ToECDSA(math.PaddedBigBytes(k, 32))
			if err != nil {
				return nil, err
			}
			data = crypto.CompressPubkey(&priv.PublicKey)
		}
		data = binary.BigEndian.AppendUint32(data, idx)
		mac := hmac.New(sha512.New, chainCode)
		mac.Write(data)
		sum := mac.Sum(nil)
		il := new(big.Int).SetBytes(sum[:32])
		if il.Cmp(n) >= 0 {
			return nil, errors.New("bip32: invalid child key")
		}
		k = il.Add(il, k)
		k.Mod(k, n)
		if k.Sign() == 0 {
			return nil, errors.New("bip32: invalid child key")
		}
		chainCode = sum[32:]
	}
	return crypto.ToECDSA(math.PaddedBigBytes(k, 32))
}

// DevAlloc funds the first n dev accounts with balance each.
func DevAlloc(n int, balance *big.Int) map[common.Address]*big.Int {
	alloc := make(map[common.Address]*big.Int, n)
	for i := range n {
		alloc[crypto.PubkeyToAddress(DevKey(i).PublicKey)] = balance
	}
	return alloc
}
