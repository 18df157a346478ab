package testnet_test

import (
	"context"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/testnet"
)

func TestStartDeploysOnAnvil(t *testing.T) {
	ctx := context.Background()
	var steps []string
	dn, err := testnet.Start(ctx, testnet.Config{
		AnvilBin:    testutil.Tool(t, "anvil"),
		DevAccounts: 3,
		Progress:    func(format string, _ ...any) { steps = append(steps, format) },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer dn.Stop()
	if len(steps) < 3 {
		t.Errorf("progress lines = %q, want anvil, funding and deploy steps", steps)
	}

	c, err := ethclient.DialContext(ctx, dn.RPC())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := dn.Deployment.Check(ctx, c); err != nil {
		t.Fatalf("deployment does not match the devnet: %v", err)
	}
	if dn.Deployment.ChainID != 31337 {
		t.Errorf("chain id = %d, want anvil's 31337", dn.Deployment.ChainID)
	}
	if want := crypto.PubkeyToAddress(chain.DevKey(0).PublicKey); dn.Deployment.Deployer != want {
		t.Errorf("deployer = %s, want dev account 0 %s", dn.Deployment.Deployer, want)
	}
	bal, err := c.BalanceAt(ctx, crypto.PubkeyToAddress(chain.DevKey(2).PublicKey), nil)
	if err != nil {
		t.Fatal(err)
	}
	if bal.Cmp(chain.DefaultDevBalance) != 0 {
		t.Errorf("dev account 2 holds %s, want %s", bal, chain.DefaultDevBalance)
	}

	dn.Stop()
	<-dn.Anvil.Exited()
}
