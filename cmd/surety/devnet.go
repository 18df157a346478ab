package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/tools"
	"github.com/surety-ioa/surety/testnet"
)

func runDevnetCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "devnet", "[flags]", strings.TrimSpace(`
Start Anvil on 127.0.0.1:--port, fund the dev accounts, deploy the contracts, write the
deployment file to --data-dir/deployment.json, and run a node against it on --listen.
Ctrl-C stops the node and Anvil.`))
	port := fs.Int("port", 8545, "Anvil's RPC port on 127.0.0.1")
	dataDir := fs.String("data-dir", ".devnet", "directory for the deployment file and the node's data")
	listen := fs.String("listen", defaultListen, "address of the node's HTTP API")
	anvilBin := fs.String("anvil", "", "anvil executable (default: .tools/ in this checkout, then PATH)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	if err := fs.parse(args); err != nil {
		return err
	}
	if *port < 1 || *port > 65535 {
		return usagef("--port must be between 1 and 65535, got %d", *port)
	}
	logger, err := newLogger(e.stderr, *logLevel, "text")
	if err != nil {
		return err
	}
	if *anvilBin == "" {
		if *anvilBin, err = tools.Find("anvil"); err != nil {
			return startError{err}
		}
	}
	if err := os.MkdirAll(*dataDir, 0o700); err != nil {
		return startError{err}
	}
	say := func(format string, args ...any) { fmt.Fprintf(e.stderr, "devnet: "+format+"\n", args...) }
	dn, err := testnet.Start(ctx, testnet.Config{
		AnvilBin: *anvilBin, Port: *port, Progress: say,
		Deploy: contracts.DeployConfig{FeeBps: contracts.DefaultFeeBps},
	})
	if err != nil {
		return startError{err}
	}
	defer func() {
		dn.Stop()
		say("anvil stopped")
	}()
	depPath := filepath.Join(*dataDir, "deployment.json")
	if err := writeDeployment(depPath, dn.Deployment); err != nil {
		return err
	}
	say("wrote %s", depPath)

	// The node stops on Ctrl-C, and also when Anvil dies under it.
	nctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-dn.Anvil.Exited():
			cancel(errors.New("anvil exited"))
		case <-nctx.Done():
		}
	}()
	n, err := startNode(nctx, e, nodeConfig{
		DataDir: filepath.Join(*dataDir, "node"), Listen: *listen, RPC: dn.RPC(),
		Deployment: dn.Deployment, DevAccounts: 10, DevWallets: true, RPCTimeout: defaultRPCTimeout, Logger: logger,
	}, e.stdout)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "Devnet: anvil at %s, deployment in %s. Ctrl-C stops everything.\n", dn.RPC(), depPath)
	if err := n.run(nctx); err != nil {
		return err
	}
	if cause := context.Cause(nctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return nil
}
