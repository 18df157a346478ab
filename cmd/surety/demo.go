package main

import (
	"context"
	"errors"
	"strings"

	"github.com/surety-ioa/surety/demo"
)

func runDemoCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "demo", "[--rpc-url URL --deployment FILE] [--keep [--listen ADDR]]", strings.TrimSpace(`
Play a marketplace day on a node of its own, printing the story as it happens: a marketplace
and five agents get DIDs and wallets, bind and stake; agents register cards; the marketplace
finds candidates by capability and reputation and posts three bounties; agents talk in a
group thread; one bounty is accepted, one disputed and resolved by the arbiter, one refunded
after its deadline; audits move reputation; the auditor checks an inclusion proof against the
root anchored on chain; wallets withdraw, and the final balances are read from the chain.

By default it runs on an embedded chain; --rpc-url URL --deployment FILE plays it on a dev chain
such as Anvil (it uses the public dev accounts 1-7 and moves the chain's clock forward).

With --keep the node keeps serving once the day is over: the demo prints the explorer's URL
(explorer: http://…/explorer/), where the day's agents, audits and bounties can be browsed,
and runs until Ctrl-C.`))
	rpcURL := fs.rpcURL("JSON-RPC URL of a dev chain (default: an embedded chain)")
	deployment := fs.String("deployment", "", "deployment file for the --rpc-url chain")
	dataDir := fs.String("data-dir", "", "the demo node's data directory (default: a temporary one, removed at the end)")
	keep := fs.Bool("keep", false, "after the day, keep the node serving (and print the explorer's URL) until Ctrl-C")
	listen := fs.String("listen", "", "the demo node's API address (default: 127.0.0.1 on a free port)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if (*rpcURL == "") != (*deployment == "") {
		return usagef("--rpc-url and --deployment go together")
	}
	logger, err := newLogger(e.stderr, "error", "text")
	if err != nil {
		return err
	}
	cfg := demo.Config{Out: e.stdout, RPC: *rpcURL, DataDir: *dataDir, Logger: logger, Listen: *listen, Keep: *keep}
	if *deployment != "" {
		if cfg.Deployment, err = readDeployment(*deployment); err != nil {
			return startError{err}
		}
	}
	err = demo.Run(ctx, cfg)
	var se *demo.StartError
	if errors.As(err, &se) {
		return startError{se.Err}
	}
	return err
}
