package registry_test

import (
	"context"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/registry"
)

// TestChainStakesReadsTheRegistry stakes on the embedded chain and reads it back through the
// per-block cache.
func TestChainStakesReadsTheRegistry(t *testing.T) {
	ctx := context.Background()
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(2, chain.DefaultDevBalance)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	dep, err := contracts.Deploy(ctx, c, chain.DevKey(0), contracts.DeployConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	agent, _ := identity.GenerateKey(identity.Ed25519)
	wallet := chain.DevKey(1)
	abi := contracts.NewStakeRegistry()
	inst := abi.Instance(c, dep.Contracts.StakeRegistry)
	opts := bind.NewKeyedTransactor(wallet, big.NewInt(chain.EmbeddedChainID))
	id := identity.AgentID(agent.DID.String())
	if _, err := bind.Transact(inst, opts, abi.PackBind(id, []byte("proof"))); err != nil {
		t.Fatal(err)
	}
	reader := registry.NewCachedStakes(registry.NewChainStakes(c, dep.Contracts.StakeRegistry), c)
	addr := crypto.PubkeyToAddress(wallet.PublicKey)
	if v, err := reader.StakeOf(ctx, agent.DID.String(), addr); err != nil || v.Sign() != 0 {
		t.Fatalf("stake before staking = %v, %v", v, err)
	}
	opts.Value = big.NewInt(5e17)
	if _, err := bind.Transact(inst, opts, abi.PackStake(id, big.NewInt(5e17))); err != nil {
		t.Fatal(err)
	}
	// A new block: the cache reads through again (after its head check expires).
	fresh := registry.NewCachedStakes(registry.NewChainStakes(c, dep.Contracts.StakeRegistry), c)
	if v, err := fresh.StakeOf(ctx, agent.DID.String(), addr); err != nil || v.Cmp(big.NewInt(5e17)) != 0 {
		t.Errorf("stake after staking = %v, %v", v, err)
	}
	// The first reader still answers from its cache within the head's lifetime, unless told
	// to forget.
	if v, _ := reader.StakeOf(ctx, agent.DID.String(), addr); v.Sign() != 0 {
		t.Logf("the head check expired already: cache read through (%v)", v)
	}
	reader.Forget(agent.DID.String(), addr)
	if v, err := reader.StakeOf(ctx, agent.DID.String(), addr); err != nil || v.Cmp(big.NewInt(5e17)) != 0 {
		t.Errorf("stake after Forget = %v, %v", v, err)
	}
	// Status follows the record: bound, then revoked by the controller.
	onChain := registry.NewChainStakes(c, dep.Contracts.StakeRegistry)
	status := func() registry.AgentStatus {
		t.Helper()
		s, err := onChain.Status(ctx, agent.DID.String(), addr)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if s := status(); s != registry.StatusBound {
		t.Errorf("status after bind = %s, want bound", s)
	}
	opts.Value = nil
	if _, err := bind.Transact(inst, opts, abi.PackRevoke(id)); err != nil {
		t.Fatal(err)
	}
	if s := status(); s != registry.StatusRevoked {
		t.Errorf("status after revoke = %s, want revoked", s)
	}
	if s, err := onChain.Status(ctx, agent.DID.String(), crypto.PubkeyToAddress(chain.DevKey(0).PublicKey)); err != nil || s != registry.StatusNone {
		t.Errorf("status under another controller = %s, %v; want none", s, err)
	}
}
