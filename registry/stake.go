package registry

import (
	"context"
	"fmt"
	"math/big"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/identity"
)

// StakeReader reads an agent's stake. StakeOf returns zero (not an error) for an agent that
// never staked; an error means the chain could not be read.
type StakeReader interface {
	StakeOf(ctx context.Context, did string, controller common.Address) (*big.Int, error)
}

// ChainStakes reads stake from the StakeRegistry contract.
type ChainStakes struct {
	registry *bind.BoundContract
	abi      *contracts.StakeRegistry
}

var _ StakeReader = (*ChainStakes)(nil)

// NewChainStakes reads from the StakeRegistry at addr.
func NewChainStakes(backend bind.ContractBackend, addr common.Address) *ChainStakes {
	abi := contracts.NewStakeRegistry()
	return &ChainStakes{registry: abi.Instance(backend, addr), abi: abi}
}

// StakeOf is the stake of keccak256(did) under controller.
func (s *ChainStakes) StakeOf(ctx context.Context, did string, controller common.Address) (*big.Int, error) {
	v, err := bind.Call(s.registry, &bind.CallOpts{Context: ctx}, s.abi.PackStakeOf(identity.AgentID(did), controller), s.abi.UnpackStakeOf)
	if err != nil {
		return nil, fmt.Errorf("read stake of %s: %w", did, err)
	}
	return v, nil
}

// BlockReader says which block the chain is at.
type BlockReader interface {
	BlockNumber(ctx context.Context) (uint64, error)
}

// CachedStakes caches another StakeReader per block: within one block every read of the same
// agent costs one chain call.
type CachedStakes struct {
	next   StakeReader
	blocks BlockReader

	mu      sync.Mutex
	block   uint64
	checked time.Time // when block was last read from the chain
	cache   map[string]*big.Int
}

// headTTL is how long a read head stays current: blocks come seconds apart, and asking for the
// head on every read would cost as much as the read.
const headTTL = 250 * time.Millisecond

var (
	_ StakeReader    = (*CachedStakes)(nil)
	_ stakeForgetter = (*CachedStakes)(nil)
)

// NewCachedStakes caches next, keyed by the block blocks reports.
func NewCachedStakes(next StakeReader, blocks BlockReader) *CachedStakes {
	return &CachedStakes{next: next, blocks: blocks, cache: map[string]*big.Int{}}
}

// Forget drops what the cache holds for did under controller and has the head read again,
// so that the next read is the chain's current figure (after a transaction that changed it).
func (c *CachedStakes) Forget(did string, controller common.Address) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.cache, did+"|"+controller.Hex())
	c.checked = time.Time{}
}

// StakeOf answers from the cache for the current block, or reads through.
func (c *CachedStakes) StakeOf(ctx context.Context, did string, controller common.Address) (*big.Int, error) {
	c.mu.Lock()
	stale := time.Since(c.checked) > headTTL
	head := c.block
	c.mu.Unlock()
	if stale {
		h, err := c.blocks.BlockNumber(ctx)
		if err != nil {
			return nil, err
		}
		head = h
	}
	key := did + "|" + controller.Hex()
	c.mu.Lock()
	if stale {
		c.checked = time.Now()
	}
	if head != c.block {
		c.block, c.cache = head, map[string]*big.Int{}
	}
	v, ok := c.cache[key]
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := c.next.StakeOf(ctx, did, controller)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if head == c.block && len(c.cache) < 1<<16 {
		c.cache[key] = v
	}
	c.mu.Unlock()
	return v, nil
}
