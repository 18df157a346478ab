package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/tools"
	"github.com/surety-ioa/surety/node"
	"github.com/surety-ioa/surety/testnet"
)

func runDevnetCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "devnet", "[flags]", strings.TrimSpace(`
Start Anvil on 127.0.0.1:--port, fund the dev accounts, deploy the contracts, write the
deployment file to --data-dir/deployment.json, and run --nodes node processes against it:
node i serves its API on --listen's port + i and libp2p on --p2p-port + i, keeps its data in
--data-dir/node-i (its log in node.log there), anchors the audit log from a dev wallet of its
own, refuses the peers listed in --data-dir/deny-i (reread when it changes), and bootstraps
from the nodes started before it. Each node is a process of its own: kill
one to see the others carry on, restart it with the command line printed, and it catches up
on what it missed. Ctrl-C stops every node and Anvil.`))
	port := fs.Int("port", 8545, "Anvil's RPC port on 127.0.0.1")
	dataDir := fs.String("data-dir", ".devnet", "directory for the deployment file and the nodes' data")
	listen := fs.String("listen", node.DefaultListen, "address of the first node's HTTP API")
	p2pPort := fs.Int("p2p-port", 4101, "libp2p port (TCP and QUIC) of the first node on 127.0.0.1; node i uses this + i")
	anvilBin := fs.String("anvil", "", "anvil executable (default: .tools/ in this checkout, then PATH)")
	nodes := fs.Int("nodes", 1, "how many node processes to run")
	logEpoch := fs.Duration("log-epoch", node.DefaultLogEpoch, "the nodes' audit log epoch (whole seconds; shorten it to see anchors on a devnet)")
	logGrace := fs.Duration("log-grace", node.DefaultLogGrace, "how long after its end an epoch of the audit log closes")
	syncEvery := fs.Duration("sync-every", node.DefaultSyncEvery, "how often each node pulls what it missed from its peers")
	logLevel := fs.String("log-level", "info", "the nodes' log level: debug, info, warn or error")
	surety := fs.String("surety", "", "the surety executable the nodes run (default: this one)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if *port < 1 || *port > 65535 {
		return usagef("--port must be between 1 and 65535, got %d", *port)
	}
	if *nodes < 1 || *nodes > testnet.DevAccounts {
		return usagef("--nodes must be between 1 and %d (one anchoring dev wallet each), got %d", testnet.DevAccounts, *nodes)
	}
	if *p2pPort < 1 || *p2pPort+*nodes > 65535 {
		return usagef("--p2p-port must leave room for %d ports below 65536, got %d", *nodes, *p2pPort)
	}
	host, portText, err := net.SplitHostPort(*listen)
	if err != nil {
		return usagef("--listen %q: %v", *listen, err)
	}
	apiPort, err := strconv.Atoi(portText)
	if err != nil {
		return usagef("--listen %q: the port must be a number", *listen)
	}
	if *surety == "" {
		if *surety, err = os.Executable(); err != nil {
			return startError{fmt.Errorf("find this executable: %w", err)}
		}
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
	flags := []string{"--log-epoch", logEpoch.String(), "--log-grace", logGrace.String(), "--sync-every", syncEvery.String(), "--log-level", *logLevel}
	nw, err := testnet.StartNetwork(ctx, testnet.NetworkConfig{
		Chain: testnet.Config{AnvilBin: *anvilBin, Port: *port, Progress: say,
			Deploy: contracts.DeployConfig{FeeBps: contracts.DefaultFeeBps}},
		Bin: *surety, Nodes: *nodes, Dir: *dataDir, Host: host, APIPort: apiPort, P2PPort: *p2pPort, QUIC: true,
		Flags: func(int) []string { return flags }, Progress: say,
	})
	if err != nil {
		return startError{err}
	}
	// The watchers below end when their node exits, as every node has once the network closed.
	var watchers sync.WaitGroup
	defer func() {
		nw.Close()
		watchers.Wait()
	}()
	fmt.Fprintf(e.stdout, "Devnet: anvil at %s, deployment in %s, %d node process(es):\n", nw.Devnet.RPC(), nw.DeploymentFile, len(nw.Nodes))
	for _, n := range nw.Nodes {
		fmt.Fprintf(e.stdout, "  node %d  pid %-7d %s  %s\n", n.Index, n.PID(), n.URL(), n.DataDir)
	}
	last := nw.Nodes[len(nw.Nodes)-1]
	fmt.Fprintf(e.stdout, "Stop one with: kill %d   (node %d; the others carry on)\n", last.PID(), last.Index)
	fmt.Fprintf(e.stdout, "Restart it with: %s %s\n", *surety, shellJoin(last.Args()))
	fmt.Fprintln(e.stdout, "Ctrl-C stops everything.")

	// Run until Ctrl-C or Anvil dies; a node that exits is reported, and the rest carry on.
	exited := make(chan *testnet.Node, len(nw.Nodes))
	for _, n := range nw.Nodes {
		watchers.Add(1)
		go func() {
			defer watchers.Done()
			<-n.Done()
			exited <- n
		}()
	}
	alive := len(nw.Nodes)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-nw.Devnet.Anvil.Exited():
			return errors.New("anvil exited")
		case n := <-exited:
			alive--
			say("node %d (pid %d) exited: %s; restart it with: %s %s", n.Index, n.PID(), n.ProcessState(), *surety, shellJoin(n.Args()))
			if alive == 0 {
				say("every node has exited; Ctrl-C stops Anvil")
			}
		}
	}
}

// shellJoin quotes args for a POSIX shell where needed.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:,=@") == "" {
			out[i] = a
		} else {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}
