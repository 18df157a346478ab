package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/tools"
	"github.com/surety-ioa/surety/testnet"
)

// devnetAccounts is how many dev accounts each devnet node holds.
const devnetAccounts = 10

func runDevnetCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "devnet", "[flags]", strings.TrimSpace(`
Start Anvil on 127.0.0.1:--port, fund the dev accounts, deploy the contracts, write the
deployment file to --data-dir/deployment.json, and run a node against it on --listen.
Ctrl-C stops the node and Anvil.`))
	port := fs.Int("port", 8545, "Anvil's RPC port on 127.0.0.1")
	dataDir := fs.String("data-dir", ".devnet", "directory for the deployment file and the node's data")
	listen := fs.String("listen", defaultListen, "address of the node's HTTP API")
	anvilBin := fs.String("anvil", "", "anvil executable (default: .tools/ in this checkout, then PATH)")
	nodes := fs.Int("nodes", 1, "how many nodes to run; node i serves its API on --listen's port + i, all bootstrapped to node 0")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	if err := fs.parse(args); err != nil {
		return err
	}
	if *port < 1 || *port > 65535 {
		return usagef("--port must be between 1 and 65535, got %d", *port)
	}
	if *nodes < 1 || *nodes > 50 {
		return usagef("--nodes must be between 1 and 50, got %d", *nodes)
	}
	host, portText, err := net.SplitHostPort(*listen)
	if err != nil {
		return usagef("--listen %q: %v", *listen, err)
	}
	apiPort, err := strconv.Atoi(portText)
	if err != nil {
		return usagef("--listen %q: the port must be a number", *listen)
	}
	var logger *slog.Logger
	logger, err = newLogger(e.stderr, *logLevel, "text")
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
	var running []*node
	defer func() {
		for _, n := range running {
			n.close()
		}
	}()
	var bootstrap []string
	for i := range *nodes {
		// Each node anchors its audit log from a wallet of its own, counted down from the last
		// dev account (the first ones are the tour's parties), so anchors never race each
		// other for one wallet's nonces or tree sizes.
		anchor := ""
		if i < devnetAccounts {
			anchor = crypto.PubkeyToAddress(chain.DevKey(devnetAccounts - 1 - i).PublicKey).Hex()
		}
		n, err := startNode(nctx, e, nodeConfig{
			DataDir: filepath.Join(*dataDir, fmt.Sprintf("node-%d", i)), Listen: net.JoinHostPort(host, strconv.Itoa(apiPort+i)), RPC: dn.RPC(),
			Deployment: dn.Deployment, DevAccounts: devnetAccounts, DevWallets: true, AnchorWallet: anchor, RPCTimeout: defaultRPCTimeout, Logger: logger.With("node", i),
			P2PListen: []string{"/ip4/127.0.0.1/tcp/0", "/ip4/127.0.0.1/udp/0/quic-v1"}, Bootstrap: bootstrap,
		}, e.stdout)
		if err != nil {
			return err
		}
		running = append(running, n)
		if i == 0 {
			bootstrap = n.p2p.Addrs()[:1]
		}
	}
	fmt.Fprintf(e.stdout, "Devnet: anvil at %s, deployment in %s, %d node(s) from http://%s. Ctrl-C stops everything.\n",
		dn.RPC(), depPath, *nodes, net.JoinHostPort(host, strconv.Itoa(apiPort)))
	errs := make(chan error, len(running))
	for _, n := range running {
		go func() { errs <- n.run(nctx) }()
	}
	var first error
	for range running {
		if err := <-errs; err != nil && first == nil {
			first = err
			cancel(err)
		}
	}
	running = nil // each run closed its node
	if first != nil {
		return first
	}
	if cause := context.Cause(nctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return nil
}
