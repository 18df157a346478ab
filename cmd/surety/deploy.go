package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/node"
	"github.com/surety-ioa/surety/testnet"
)

func runDeployCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "deploy", "--rpc-url URL (--keystore FILE | --private-key KEY | --signer URL --from ADDR | --dev-account N) [--out FILE]", strings.TrimSpace(`
Deploy every Surety contract to the chain at --rpc-url, sent from your wallet (a keystore, a
raw key, Clef, or on a dev chain one of Anvil's test accounts), and write the deployment file
that 'surety node --deployment' reads.`))
	rpcURL := fs.rpcURL("JSON-RPC URL of the chain")
	wallet := fs.walletFlags().withOldSpellings(fs, "key-file", "dev-key")
	outPath := fs.String("out", "deployment.json", "where to write the deployment file")
	asJSON := fs.Bool("json", false, "print the deployment (as written to --out) instead of its path")
	timeout := fs.Duration("rpc-timeout", node.DefaultRPCTimeout, "how long to wait for the chain to answer at start")
	var cfg contracts.DeployConfig
	owner := fs.String("owner", "", "owner of the contracts (default: the deployer)")
	treasury := fs.String("treasury", "", "receiver of escrow fees (default: the owner)")
	stakeToken := fs.String("stake-token", "", "ERC-20 that agents stake (default: ETH)")
	fee := fs.Uint("fee-bps", contracts.DefaultFeeBps, "escrow fee on worker payouts, in basis points (at most 1000)")
	unbond := fs.Duration("unbond-delay", contracts.DefaultUnbondDelay*time.Second, "time between an unbonding request and the withdrawal")
	minStake := fs.String("min-stake", "0.1ether", "stake below which an agent ranks and pre-trusts as unstaked, fixed in the registry for every node")
	if err := fs.parse(args); err != nil {
		return err
	}
	var err error
	if cfg.MinStake, err = parseAmount(*minStake); err != nil {
		return usagef("--min-stake: %v", err)
	}
	if *rpcURL == "" {
		return usagef("--rpc-url is required")
	}
	for _, a := range []struct {
		flag string
		val  string
		dst  *common.Address
	}{{"--owner", *owner, &cfg.Owner}, {"--treasury", *treasury, &cfg.Treasury}, {"--stake-token", *stakeToken, &cfg.StakeToken}} {
		if a.val == "" {
			continue
		}
		if !common.IsHexAddress(a.val) {
			return usagef("%s %q is not an address", a.flag, a.val)
		}
		*a.dst = common.HexToAddress(a.val)
	}
	if *fee > 1000 {
		return usagef("--fee-bps must be at most 1000, got %d", *fee)
	}
	cfg.FeeBps = uint16(*fee)
	if *unbond < time.Second {
		return usagef("--unbond-delay must be at least 1s, got %s", *unbond)
	}
	cfg.UnbondDelay = uint64(*unbond / time.Second)
	w, err := wallet.open()
	if err != nil {
		return err
	}
	c, err := chain.Dial(ctx, *rpcURL, *timeout)
	if err != nil {
		return startError{err}
	}
	defer c.Close()
	id, err := c.ChainID(ctx)
	if err != nil {
		return startError{fmt.Errorf("--rpc-url %s: chain id: %w", *rpcURL, err)}
	}
	if err := w.checkNode(api.Info{Chain: api.InfoChain{ID: id.Uint64(), Kind: "rpc"}}, *rpcURL); err != nil {
		return err
	}
	from := &bind.TransactOpts{From: w.signer.Address(), Signer: func(_ common.Address, tx *types.Transaction) (*types.Transaction, error) {
		return w.signer.SignTx(ctx, tx, id)
	}}
	fmt.Fprintf(e.stderr, "deploying from %s to %s\n", from.From, *rpcURL)
	dep, err := contracts.DeployFrom(ctx, c, from, cfg, func(name string, addr common.Address) {
		fmt.Fprintf(e.stderr, "  %s at %s\n", name, addr)
	})
	if err != nil {
		return err
	}
	if err := writeDeployment(*outPath, dep); err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e, dep)
	}
	fmt.Fprintf(e.stdout, "%s\n", *outPath)
	return nil
}

// writeDeployment writes d to path atomically (testnet.WriteDeployment).
var writeDeployment = testnet.WriteDeployment
