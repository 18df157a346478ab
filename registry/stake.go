package registry

import (
	"context"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
)

// StakeReader reads an agent's stake as the chain's index counts it (package stake): zero
// (not an error) for an agent that never staked, or whose binding or DID does not count; an
// error means the index could not be read.
type StakeReader interface {
	StakeOf(ctx context.Context, did string, controller common.Address) (*big.Int, error)
}
