package testnet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
)

// NetworkConfig says how to run a network: a devnet (Anvil with the contracts deployed) and
// node processes on it.
type NetworkConfig struct {
	// Chain starts the devnet the nodes run on.
	Chain Config
	// Bin is the surety executable; each node runs `Bin node ...`.
	Bin string
	// Nodes is how many node processes to run, 1 to DevAccounts.
	Nodes int
	// Dir holds the deployment file (deployment.json), each node's data dir (node-i, its log
	// node.log there) and its deny file (deny-i).
	Dir string
	// Host is the address the nodes' APIs listen on; "" means 127.0.0.1. libp2p listens on
	// 127.0.0.1.
	Host string
	// APIPort and P2PPort are node 0's API and libp2p ports; node i uses them + i. A zero
	// one is taken from one block of 2×Nodes consecutive free ports, so that no node's port
	// is another's.
	APIPort, P2PPort int
	// QUIC adds a QUIC listener (UDP) on each node's libp2p port beside TCP.
	QUIC bool
	// Flags, when set, returns the flags added to node i's command line (log epochs, log
	// level, ...).
	Flags func(i int) []string
	// ReadyWithin bounds each node's start; 0 means ReadyWithin.
	ReadyWithin time.Duration
	// Progress, when set, receives one line per step (the devnet's too).
	Progress func(format string, args ...any)
}

// Network is a devnet with node processes on it. Each node keeps its ports, data dir, anchor
// wallet and deny file across restarts, so a restarted node is where its peers remember it.
// Close stops every process; the Network owns the goroutines that wait on them.
type Network struct {
	// Devnet is the chain the nodes run on.
	Devnet *Devnet
	// DeploymentFile is the deployment the nodes read (--deployment).
	DeploymentFile string
	// Nodes are the node processes, node i at index i.
	Nodes []*Node

	cfg       NetworkConfig
	say       func(string, ...any)
	wg        sync.WaitGroup // the processes' wait goroutines
	closeOnce sync.Once
}

// Node is one node process of a Network, running or not.
type Node struct {
	// Index is the node's number: its ports are the network's base ports + Index.
	Index int
	// API is the address of its HTTP API, host:port.
	API string
	// DataDir is its --data-dir; LogFile, in it, gets its output (appended across restarts).
	DataDir, LogFile string
	// DenyFile is its --p2p-deny file, which Partition writes.
	DenyFile string

	mu     sync.Mutex
	args   []string // after the executable
	cmd    *exec.Cmd
	done   chan struct{} // closed when cmd has exited
	did    string
	peerID string
	addrs  []string
}

// StartNetwork starts the devnet, writes its deployment file, and starts the nodes one by
// one, each bootstrapped from the nodes before it, each waited for until it answers. On an
// error it stops what it started. When it chose the ports itself and a node found its port
// taken between the pick and its start (another process's listener), it starts over on a
// new block, up to three times.
func StartNetwork(ctx context.Context, cfg NetworkConfig) (*Network, error) {
	if cfg.Nodes < 1 || cfg.Nodes > DevAccounts {
		return nil, fmt.Errorf("testnet: %d nodes, want 1 to %d (one anchoring dev wallet each)", cfg.Nodes, DevAccounts)
	}
	if cfg.Bin == "" || cfg.Dir == "" {
		return nil, errors.New("testnet: NetworkConfig needs Bin and Dir")
	}
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	if cfg.ReadyWithin == 0 {
		cfg.ReadyWithin = ReadyWithin
	}
	pick := cfg.APIPort == 0 || cfg.P2PPort == 0
	for attempt := 1; ; attempt++ {
		try := cfg
		if pick {
			base, err := FreePorts(2 * cfg.Nodes)
			if err != nil {
				return nil, err
			}
			if try.APIPort == 0 {
				try.APIPort = base
			}
			if try.P2PPort == 0 {
				try.P2PPort = base + cfg.Nodes
			}
		}
		nw, err := startNetwork(ctx, try)
		if err == nil || !pick || attempt == 3 || !errors.Is(err, errPortTaken) {
			return nw, err
		}
		// Each try's nodes start on clean data dirs.
		for i := range cfg.Nodes {
			os.RemoveAll(filepath.Join(cfg.Dir, fmt.Sprintf("node-%d", i)))
		}
	}
}

// errPortTaken marks a node that exited at start because its API or libp2p port was taken.
var errPortTaken = errors.New("a port of the node was taken by another process")

func startNetwork(ctx context.Context, cfg NetworkConfig) (*Network, error) {
	say := cfg.Progress
	if say == nil {
		say = func(string, ...any) {}
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("testnet: %w", err)
	}
	dn, err := Start(ctx, cfg.Chain)
	if err != nil {
		return nil, err
	}
	nw := &Network{Devnet: dn, DeploymentFile: filepath.Join(cfg.Dir, "deployment.json"), cfg: cfg, say: say}
	if err := WriteDeployment(nw.DeploymentFile, dn.Deployment); err != nil {
		nw.Close()
		return nil, err
	}
	say("wrote %s", nw.DeploymentFile)
	var boot []string
	for i := range cfg.Nodes {
		n := nw.newNode(i, boot)
		nw.Nodes = append(nw.Nodes, n)
		if err := nw.start(ctx, n); err != nil {
			nw.Close()
			return nil, fmt.Errorf("node %d: %w (see %s)", i, err, n.LogFile)
		}
		boot = append(boot, n.Addrs()[0])
		say("node %d: pid %d, %s, data %s, log %s", i, n.PID(), n.URL(), n.DataDir, n.LogFile)
	}
	return nw, nil
}

// newNode lays out node i: its ports, directories, anchor wallet and command line.
func (nw *Network) newNode(i int, boot []string) *Node {
	cfg := nw.cfg
	n := &Node{
		Index:    i,
		API:      net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.APIPort+i)),
		DataDir:  filepath.Join(cfg.Dir, fmt.Sprintf("node-%d", i)),
		DenyFile: filepath.Join(cfg.Dir, fmt.Sprintf("deny-%d", i)),
	}
	n.LogFile = filepath.Join(n.DataDir, "node.log")
	// Each node anchors its audit log from a wallet of its own, counted down from the last
	// dev account (the first ones are the tour's and the tests' parties), so anchors never
	// race each other for one wallet's nonces or tree sizes.
	anchor := crypto.PubkeyToAddress(chain.DevKey(DevAccounts - 1 - i).PublicKey).Hex()
	p2pPort := cfg.P2PPort + i
	listen := fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", p2pPort)
	if cfg.QUIC {
		listen += fmt.Sprintf(",/ip4/127.0.0.1/udp/%d/quic-v1", p2pPort)
	}
	n.args = []string{"node", "--rpc-url", nw.Devnet.RPC(), "--deployment", nw.DeploymentFile, "--data-dir", n.DataDir,
		"--listen", n.API, "--dev-wallets", "--dev-accounts", strconv.Itoa(DevAccounts), "--anchor-wallet", anchor,
		"--p2p-listen", listen, "--p2p-deny", n.DenyFile}
	if cfg.Flags != nil {
		n.args = append(n.args, cfg.Flags(i)...)
	}
	if len(boot) > 0 {
		n.args = append(n.args, "--bootstrap", strings.Join(boot, ","))
	}
	return n
}

// start starts n's process, its output appended to its log, and waits until it answers.
func (nw *Network) start(ctx context.Context, n *Node) error {
	n.mu.Lock()
	if n.runningLocked() {
		n.mu.Unlock()
		return fmt.Errorf("testnet: node %d is running", n.Index)
	}
	if err := os.MkdirAll(n.DataDir, 0o700); err != nil {
		n.mu.Unlock()
		return err
	}
	logf, err := os.OpenFile(n.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		n.mu.Unlock()
		return err
	}
	var from int64
	if st, err := logf.Stat(); err == nil {
		from = st.Size()
	}
	cmd := exec.Command(nw.cfg.Bin, n.args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group: a Ctrl-C in the terminal reaches the devnet, which stops the
	// nodes in order, not every process at once.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		n.mu.Unlock()
		logf.Close()
		return fmt.Errorf("start node %d: %w", n.Index, err)
	}
	done := make(chan struct{})
	n.cmd, n.done = cmd, done
	n.mu.Unlock()
	nw.wg.Add(1)
	go func() {
		defer nw.wg.Done()
		_ = cmd.Wait()
		logf.Close()
		close(done)
	}()
	return n.waitReady(ctx, cmd, done, from, nw.cfg.ReadyWithin)
}

// waitReady waits until this run of the node (its log from byte from on) says it is ready
// on n.API and it answers /v1/info with its libp2p addresses. The ready line comes first:
// parallel tests restart nodes on ports they took before, so whoever answers on n.API may
// be another test's node.
func (n *Node) waitReady(ctx context.Context, cmd *exec.Cmd, done <-chan struct{}, from int64, within time.Duration) error {
	deadline := time.Now().Add(within)
	ready := []byte("Surety node ready on " + n.URL())
	client := &http.Client{Timeout: infoTimeout}
	for {
		if b, err := os.ReadFile(n.LogFile); err == nil && int64(len(b)) >= from && bytes.Contains(b[from:], ready) {
			if in, err := getInfo(ctx, client, n.URL()); err == nil && in.Peer != nil && len(in.Peer.Addrs) > 0 {
				// The other nodes are bootstrapped from this peer id: it must be the node's.
				if err := in.checkPeer(); err != nil {
					return err
				}
				n.mu.Lock()
				n.did, n.peerID, n.addrs = in.NodeDID, in.Peer.ID, in.Peer.Addrs
				n.mu.Unlock()
				return nil
			}
		}
		select {
		case <-done:
			if b, err := os.ReadFile(n.LogFile); err == nil && int64(len(b)) >= from && bytes.Contains(b[from:], []byte("address already in use")) {
				return fmt.Errorf("exited at start: %s: %w", cmd.ProcessState, errPortTaken)
			}
			return fmt.Errorf("exited at start: %s", cmd.ProcessState)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pollEvery):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %s", within)
		}
	}
}

// info is what a Network reads of a node's GET /v1/info (api/wire.Info).
type info struct {
	NodeDID string `json:"nodeDid"`
	Peer    *struct {
		ID      string   `json:"id"`
		Addrs   []string `json:"addrs"`
		Binding string   `json:"binding"`
	} `json:"peer"`
}

// checkPeer verifies the node's peer binding: its DID signed (surety-peer+jws) that the
// peer id it answers is its own.
func (in *info) checkPeer() error {
	if in.Peer == nil {
		return errors.New("the node answers no peer")
	}
	if _, err := identity.VerifyPeerBinding([]byte(in.Peer.Binding), in.NodeDID, in.Peer.ID); err != nil {
		return fmt.Errorf("the node's peer binding does not verify: %w", err)
	}
	return nil
}

func getInfo(ctx context.Context, client *http.Client, base string) (*info, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/info", nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /v1/info: %s", resp.Status)
	}
	var in info
	if err := json.NewDecoder(resp.Body).Decode(&in); err != nil {
		return nil, err
	}
	return &in, nil
}

// Restart starts node i again, with the command line it last ran (see SetFlag), and waits
// until it answers. It fails if the node is running.
func (nw *Network) Restart(ctx context.Context, i int) error {
	n := nw.Nodes[i]
	if err := nw.start(ctx, n); err != nil {
		return fmt.Errorf("node %d: %w (see %s)", i, err, n.LogFile)
	}
	return nil
}

// Kill sends sig to node i (SIGKILL for a crash, SIGTERM for a clean stop) and waits until
// it has exited, killing it after StopWithin. A node that is not running is left as it is.
func (nw *Network) Kill(i int, sig os.Signal) error {
	return nw.Nodes[i].stop(sig)
}

func (n *Node) stop(sig os.Signal) error {
	n.mu.Lock()
	cmd, done := n.cmd, n.done
	n.mu.Unlock()
	if cmd == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	default:
	}
	if err := cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("testnet: signal node %d: %w", n.Index, err)
	}
	select {
	case <-done:
	case <-time.After(StopWithin):
		_ = cmd.Process.Kill()
		<-done
	}
	return nil
}

// Partition cuts the network between sides, given as node indexes: each node refuses the
// peers of the sides it is not on (through its deny file, which it rereads). With no sides
// it heals the network.
func (nw *Network) Partition(sides ...[]int) error {
	for _, n := range nw.Nodes {
		var deny []string
		for _, side := range sides {
			if slices.Contains(side, n.Index) {
				continue
			}
			for _, o := range side {
				deny = append(deny, nw.Nodes[o].PeerID())
			}
		}
		if err := n.Deny(deny...); err != nil {
			return err
		}
	}
	return nil
}

// Deny replaces the peers n refuses to connect to (none heals it).
func (n *Node) Deny(peerIDs ...string) error {
	tmp := n.DenyFile + ".new"
	if err := os.WriteFile(tmp, []byte(strings.Join(peerIDs, "\n")), 0o600); err != nil {
		return fmt.Errorf("testnet: %w", err)
	}
	if err := os.Rename(tmp, n.DenyFile); err != nil {
		return fmt.Errorf("testnet: %w", err)
	}
	return nil
}

// Wait polls ok until it holds, for up to within; the error says what was waited for.
func (nw *Network) Wait(ctx context.Context, within time.Duration, what string, ok func() bool) error {
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			return fmt.Errorf("testnet: no %s after %s", what, within)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pollEvery):
		}
	}
	return nil
}

// Close stops the nodes, last first (SIGTERM, then SIGKILL after StopWithin), waits for
// their processes, and stops Anvil. It is safe to call more than once.
func (nw *Network) Close() {
	nw.closeOnce.Do(func() {
		for i := len(nw.Nodes) - 1; i >= 0; i-- {
			n := nw.Nodes[i]
			if !n.Running() {
				continue
			}
			_ = n.stop(syscall.SIGTERM)
			nw.say("node %d stopped", i)
		}
		nw.wg.Wait()
		nw.Devnet.Stop()
		nw.say("anvil stopped")
	})
}

// URL is the base URL of n's API.
func (n *Node) URL() string { return "http://" + n.API }

// Args is n's command line after the executable.
func (n *Node) Args() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.args)
}

// Flag is the value of n's flag --name ("" when it has none).
func (n *Node) Flag(name string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if i := slices.Index(n.args, "--"+name); i >= 0 && i+1 < len(n.args) {
		return n.args[i+1]
	}
	return ""
}

// SetFlag sets n's flag --name to value for its next start.
func (n *Node) SetFlag(name, value string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if i := slices.Index(n.args, "--"+name); i >= 0 && i+1 < len(n.args) {
		n.args[i+1] = value
		return
	}
	n.args = append(n.args, "--"+name, value)
}

// PID is the process id of n's current (or last) process; 0 before it started.
func (n *Node) PID() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil || n.cmd.Process == nil {
		return 0
	}
	return n.cmd.Process.Pid
}

// Done is closed when n's current process has exited.
func (n *Node) Done() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.done
}

// ProcessState is how n's last process ended; nil while it runs.
func (n *Node) ProcessState() *os.ProcessState {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil || n.runningLocked() {
		return nil
	}
	return n.cmd.ProcessState
}

// Running says whether n's process is running.
func (n *Node) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.runningLocked()
}

func (n *Node) runningLocked() bool {
	if n.done == nil {
		return false
	}
	select {
	case <-n.done:
		return false
	default:
		return true
	}
}

// DID is n's node DID, PeerID its libp2p peer id and Addrs its libp2p addresses, as it
// last answered when it started.
func (n *Node) DID() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.did
}

// PeerID is n's libp2p peer id (see DID).
func (n *Node) PeerID() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.peerID
}

// Addrs are n's libp2p addresses (see DID).
func (n *Node) Addrs() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.addrs)
}

// Log is n's log so far, every run of it.
func (n *Node) Log() string {
	b, _ := os.ReadFile(n.LogFile)
	return string(b)
}

// WriteDeployment writes d to path (through a temporary file, so a reader never sees half).
func WriteDeployment(path string, d *contracts.Deployment) error {
	b, err := d.Marshal()
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("write deployment: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write deployment: %w", err)
	}
	return nil
}

// FreePorts returns the first of n consecutive ports free on 127.0.0.1 now, for TCP and UDP
// (QUIC): for networks that number their ports from a base (node i on base + i), where
// separate picks can return neighbours and one node's port lands on another's. The block
// lies below the kernel's ephemeral range, so no outgoing connection or ":0" listener of
// another process can be handed one of its ports before the node takes it.
func FreePorts(n int) (int, error) {
	lo, hi := 10000, ephemeralLow()
	if hi-lo < n {
		lo, hi = 1024, 65536
	}
	for range 200 {
		base := lo + rand.IntN(hi-lo-n+1)
		if portsFree(base, n) {
			return base, nil
		}
	}
	return 0, fmt.Errorf("testnet: no %d consecutive free ports on 127.0.0.1", n)
}

// ephemeralLow is the first port of the kernel's ephemeral range (32768 where it cannot be
// read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 32768
	}
	p, err := strconv.Atoi(f[0])
	if err != nil || p < 1024 || p > 65535 {
		return 32768
	}
	return p
}

// portsFree says whether ports base to base+n-1 can each be listened on, TCP and UDP.
func portsFree(base, n int) bool {
	var held []io.Closer
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for p := base; p < base+n; p++ {
		addr := fmt.Sprintf("127.0.0.1:%d", p)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return false
		}
		held = append(held, l)
		u, err := net.ListenPacket("udp", addr)
		if err != nil {
			return false
		}
		held = append(held, u)
	}
	return true
}
