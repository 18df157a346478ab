package testnet

import (
	"context"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/anvil"
	"github.com/surety-ioa/surety/internal/chain"
)

// Config says how to start a devnet.
type Config struct {
	// AnvilBin is the anvil executable.
	AnvilBin string
	// Port for Anvil's RPC on 127.0.0.1; 0 picks a free one.
	Port int
	// ChainID; 0 keeps Anvil's 31337.
	ChainID uint64
	// BlockTime, when set, mines a block every BlockTime (Anvil's --block-time) instead of one
	// per transaction: for tests of what happens while a transaction waits for its blocks.
	BlockTime time.Duration
	// DevAccounts is how many of chain.DevKey's accounts to fund; 0 means 10.
	DevAccounts int
	// DevBalance is each dev account's balance; nil means chain.DefaultDevBalance.
	DevBalance *big.Int
	// Deploy sets the contracts' parameters (see contracts.DeployConfig); the deployer is
	// dev account 0.
	Deploy contracts.DeployConfig
	// Progress, when set, receives one line per step.
	Progress func(format string, args ...any)
}

// Devnet is a running Anvil with Surety's contracts on it.
type Devnet struct {
	Anvil      *anvil.Anvil
	Deployment *contracts.Deployment
}

// RPC is the devnet's JSON-RPC URL.
func (d *Devnet) RPC() string { return d.Anvil.URL }

// Start launches Anvil, funds the dev accounts, and deploys the contracts from dev account 0.
func Start(ctx context.Context, cfg Config) (*Devnet, error) {
	if cfg.DevAccounts == 0 {
		cfg.DevAccounts = 10
	}
	if cfg.DevBalance == nil {
		cfg.DevBalance = chain.DefaultDevBalance
	}
	say := cfg.Progress
	if say == nil {
		say = func(string, ...any) {}
	}
	a, err := anvil.Start(ctx, anvil.Config{Bin: cfg.AnvilBin, Port: cfg.Port, ChainID: cfg.ChainID, BlockTime: cfg.BlockTime})
	if err != nil {
		return nil, err
	}
	say("anvil listening on %s", a.URL)
	d := &Devnet{Anvil: a}
	if err := SetUpQuickly(ctx, a, cfg.BlockTime, func() error { return d.setUp(ctx, cfg, say) }); err != nil {
		a.Stop()
		return nil, err
	}
	return d, nil
}

func (d *Devnet) setUp(ctx context.Context, cfg Config, say func(string, ...any)) error {
	for addr, bal := range chain.DevAlloc(cfg.DevAccounts, cfg.DevBalance) {
		if err := d.Anvil.SetBalance(ctx, addr, bal); err != nil {
			return err
		}
	}
	say("funded %d dev accounts", cfg.DevAccounts)
	client, err := ethclient.DialContext(ctx, d.Anvil.URL)
	if err != nil {
		return fmt.Errorf("testnet: %w", err)
	}
	defer client.Close()
	dep, err := contracts.Deploy(ctx, client, chain.DevKey(0), cfg.Deploy, func(name string, addr common.Address) {
		say("deployed %s at %s", name, addr)
	})
	if err != nil {
		return fmt.Errorf("testnet: %w", err)
	}
	d.Deployment = dep
	return nil
}

// SetUpQuickly runs setUp (funding, deploying: one transaction after another) on Anvil a,
// started to mine a block every blockTime, with a block per transaction instead, then goes
// back to a block every blockTime: the chain is as slow as asked for once the test begins,
// but its setup does not wait a block time for each of its transactions (the 12 s chain's
// deployment took a minute and a half). A blockTime of 0 (automine already) or not a whole
// number of seconds (evm_setIntervalMining takes seconds) runs setUp as it is.
func SetUpQuickly(ctx context.Context, a *anvil.Anvil, blockTime time.Duration, setUp func() error) error {
	if blockTime <= 0 || blockTime%time.Second != 0 {
		return setUp()
	}
	c, err := rpc.DialContext(ctx, a.URL)
	if err != nil {
		return fmt.Errorf("testnet: %w", err)
	}
	defer c.Close()
	if err := c.CallContext(ctx, nil, "evm_setAutomine", true); err != nil {
		return fmt.Errorf("testnet: automine for the setup: %w", err)
	}
	if err := setUp(); err != nil {
		return err
	}
	if err := c.CallContext(ctx, nil, "evm_setIntervalMining", uint64(blockTime/time.Second)); err != nil {
		return fmt.Errorf("testnet: back to a block every %s: %w", blockTime, err)
	}
	return nil
}

// Stop ends Anvil.
func (d *Devnet) Stop() { d.Anvil.Stop() }
