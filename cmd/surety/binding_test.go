package main

import (
	"context"
	"encoding/json"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
)

// TestBindingIsRecordedOnChain signs a wallet binding with both keys, records it with
// StakeRegistry.bind from the wallet, and checks that what the chain's Bound event carries
// verifies, so any node reading the chain can check it.
func TestBindingIsRecordedOnChain(t *testing.T) {
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
	agent, err := identity.GenerateKey(identity.Ed25519)
	if err != nil {
		t.Fatal(err)
	}
	wallet := chain.DevKey(1)
	b, err := identity.SignBinding(identity.BindingStatement{
		DID: agent.DID.String(), Wallet: crypto.PubkeyToAddress(wallet.PublicKey), ChainID: chain.EmbeddedChainID,
		Registry: dep.Contracts.StakeRegistry, IssuedAt: time.Now().Unix(), Nonce: identity.NewNonce(),
	}, agent, wallet)
	if err != nil {
		t.Fatal(err)
	}
	proof, _ := json.Marshal(b)

	registry := contracts.NewStakeRegistry()
	inst := registry.Instance(c, dep.Contracts.StakeRegistry)
	tx, err := bind.Transact(inst, bind.NewKeyedTransactor(wallet, big.NewInt(chain.EmbeddedChainID)), registry.PackBind(identity.AgentID(agent.DID.String()), proof))
	if err != nil {
		t.Fatal(err)
	}
	receipt, err := chain.WaitMined(ctx, c, tx.Hash())
	if err != nil || receipt.Status != 1 {
		t.Fatalf("bind: %v %+v", err, receipt)
	}
	ev, err := registry.UnpackBoundEvent(receipt.Logs[0])
	if err != nil {
		t.Fatal(err)
	}
	if ev.AgentId != identity.AgentID(agent.DID.String()) || ev.Controller != b.Statement.Wallet {
		t.Errorf("Bound event = %+v", ev)
	}
	got, err := identity.ParseBinding(ev.Proof)
	if err != nil {
		t.Fatalf("the recorded proof does not verify: %v", err)
	}
	if got.Statement.DID != agent.DID.String() {
		t.Errorf("recorded binding names %s", got.Statement.DID)
	}
}
