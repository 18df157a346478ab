package stake

import (
	"errors"
	"fmt"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/identity"
)

// MaxProof bounds the proof bytes a node parses from a Bound or Rotated event. A binding
// (statement, compact JWS, wallet signature) is well under 2 KiB.
const MaxProof = 8 << 10

// ErrProof wraps every reason CheckProof refuses a record's proof.
var ErrProof = errors.New("stake: the record's proof does not verify")

// CheckProof is the rule every node applies to the proof of a Bound or Rotated record: the
// proof must be a wallet binding (identity.Binding) whose two signatures verify (the agent
// key's JWS and the wallet's EIP-712 signature), whose DID hashes to agentID, whose wallet is
// the record's controller, and which names this chain and this registry. It returns the
// binding, or an error wrapping ErrProof that says what failed.
func CheckProof(proof []byte, agentID common.Hash, controller common.Address, chainID uint64, registry common.Address) (*identity.Binding, error) {
	if len(proof) == 0 {
		return nil, fmt.Errorf("%w: empty", ErrProof)
	}
	if len(proof) > MaxProof {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrProof, len(proof), MaxProof)
	}
	b, err := identity.ParseBinding(proof)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProof, err)
	}
	st := b.Statement
	switch {
	case identity.AgentID(st.DID) != agentID:
		return nil, fmt.Errorf("%w: it binds %s, whose id is not %s", ErrProof, st.DID, agentID.Hex())
	case st.Wallet != controller:
		return nil, fmt.Errorf("%w: it binds wallet %s, not the controller %s", ErrProof, st.Wallet.Hex(), controller.Hex())
	case st.ChainID != chainID || st.Registry != registry:
		return nil, fmt.Errorf("%w: it names chain %d registry %s, not chain %d registry %s", ErrProof, st.ChainID, st.Registry.Hex(), chainID, registry.Hex())
	}
	return b, nil
}
