package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/tools"
	"github.com/surety-ioa/surety/node"
	"github.com/surety-ioa/surety/testnet"
)

// devnetAccounts is how many dev accounts each devnet node holds.
const devnetAccounts = 10

// devnetNode is one node process of a devnet.
type devnetNode struct {
	i    int
	args []string // after the executable
	api  string
	dir  string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
}

func runDevnetCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "devnet", "[flags]", strings.TrimSpace(`
Start Anvil on 127.0.0.1:--port, fund the dev accounts, deploy the contracts, write the
deployment file to --data-dir/deployment.json, and run --nodes node processes against it:
node i serves its API on --listen's port + i and libp2p on --p2p-port + i, keeps its data in
--data-dir/node-i (its log in node.log there), anchors the audit log from a dev wallet of its
own, and bootstraps from the nodes started before it. Each node is a process of its own: kill
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
	if *nodes < 1 || *nodes > devnetAccounts {
		return usagef("--nodes must be between 1 and %d (one anchoring dev wallet each), got %d", devnetAccounts, *nodes)
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

	var running []*devnetNode
	defer func() { stopDevnetNodes(running, say) }()
	var bootstrap []string
	for i := range *nodes {
		// Each node anchors its audit log from a wallet of its own, counted down from the last
		// dev account (the first ones are the tour's parties), so anchors never race each
		// other for one wallet's nonces or tree sizes.
		anchor := crypto.PubkeyToAddress(chain.DevKey(devnetAccounts - 1 - i).PublicKey).Hex()
		n := &devnetNode{i: i, dir: filepath.Join(*dataDir, fmt.Sprintf("node-%d", i)), api: net.JoinHostPort(host, strconv.Itoa(apiPort+i))}
		p2pListen := fmt.Sprintf("/ip4/127.0.0.1/tcp/%d,/ip4/127.0.0.1/udp/%d/quic-v1", *p2pPort+i, *p2pPort+i)
		n.args = []string{"node", "--rpc-url", dn.RPC(), "--deployment", depPath, "--data-dir", n.dir, "--listen", n.api,
			"--dev-wallets", "--dev-accounts", strconv.Itoa(devnetAccounts), "--anchor-wallet", anchor, "--p2p-listen", p2pListen,
			"--log-epoch", logEpoch.String(), "--log-grace", logGrace.String(), "--sync-every", syncEvery.String(), "--log-level", *logLevel}
		if len(bootstrap) > 0 {
			n.args = append(n.args, "--bootstrap", strings.Join(bootstrap, ","))
		}
		if err := n.start(*surety); err != nil {
			return startError{err}
		}
		running = append(running, n)
		addrs, err := n.ready(ctx, 60*time.Second)
		if err != nil {
			return startError{fmt.Errorf("node %d: %w (see %s)", i, err, n.logPath())}
		}
		bootstrap = append(bootstrap, addrs[0])
		say("node %d: pid %d, http://%s, data %s, log %s", i, n.cmd.Process.Pid, n.api, n.dir, n.logPath())
	}
	fmt.Fprintf(e.stdout, "Devnet: anvil at %s, deployment in %s, %d node process(es):\n", dn.RPC(), depPath, len(running))
	for _, n := range running {
		fmt.Fprintf(e.stdout, "  node %d  pid %-7d http://%s  %s\n", n.i, n.cmd.Process.Pid, n.api, n.dir)
	}
	last := running[len(running)-1]
	fmt.Fprintf(e.stdout, "Stop one with: kill %d   (node %d; the others carry on)\n", last.cmd.Process.Pid, last.i)
	fmt.Fprintf(e.stdout, "Restart it with: %s %s\n", *surety, shellJoin(last.args))
	fmt.Fprintln(e.stdout, "Ctrl-C stops everything.")

	// Run until Ctrl-C or Anvil dies; a node that exits is reported, and the rest carry on.
	exited := make(chan *devnetNode, len(running))
	for _, n := range running {
		go func() {
			<-n.done
			exited <- n
		}()
	}
	alive := len(running)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-dn.Anvil.Exited():
			return errors.New("anvil exited")
		case n := <-exited:
			alive--
			say("node %d (pid %d) exited: %s; restart it with: %s %s", n.i, n.cmd.Process.Pid, n.cmd.ProcessState, *surety, shellJoin(n.args))
			if alive == 0 {
				say("every node has exited; Ctrl-C stops Anvil")
			}
		}
	}
}

func (n *devnetNode) logPath() string { return filepath.Join(n.dir, "node.log") }

// start starts the node process with its output appended to its log.
func (n *devnetNode) start(bin string) error {
	if err := os.MkdirAll(n.dir, 0o700); err != nil {
		return err
	}
	logf, err := os.OpenFile(n.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	n.cmd = exec.Command(bin, n.args...)
	n.cmd.Stdout, n.cmd.Stderr = logf, logf
	// Its own process group: a Ctrl-C in the terminal reaches the devnet, which stops the
	// nodes in order, not every process at once.
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := n.cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start node %d: %w", n.i, err)
	}
	n.done = make(chan struct{})
	go func() {
		_ = n.cmd.Wait()
		logf.Close()
		close(n.done)
	}()
	return nil
}

// ready waits until the node answers /v1/info, and returns its libp2p addresses.
func (n *devnetNode) ready(ctx context.Context, within time.Duration) ([]string, error) {
	deadline := time.Now().Add(within)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		if resp, err := client.Get("http://" + n.api + "/v1/info"); err == nil {
			var info struct {
				Peer struct {
					Addrs []string `json:"addrs"`
				} `json:"peer"`
			}
			err := json.NewDecoder(resp.Body).Decode(&info)
			resp.Body.Close()
			if err == nil && resp.StatusCode == http.StatusOK && len(info.Peer.Addrs) > 0 {
				return info.Peer.Addrs, nil
			}
		}
		select {
		case <-n.done:
			return nil, fmt.Errorf("exited at start: %s", n.cmd.ProcessState)
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("not ready after %s", within)
		}
	}
}

// stopDevnetNodes stops the nodes (SIGTERM, then SIGKILL after 15 s), last first.
func stopDevnetNodes(nodes []*devnetNode, say func(string, ...any)) {
	for i := len(nodes) - 1; i >= 0; i-- {
		n := nodes[i]
		select {
		case <-n.done:
			continue
		default:
		}
		_ = n.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-n.done:
		case <-time.After(15 * time.Second):
			_ = n.cmd.Process.Kill()
			<-n.done
		}
		say("node %d stopped", n.i)
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
