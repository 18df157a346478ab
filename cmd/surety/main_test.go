package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/anvil"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/internal/testutil/apitest"
	"github.com/surety-ioa/surety/testnet"
)

// syncBuffer is a bytes.Buffer safe to write from a running command and read from the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// running is a command started in-process.
type running struct {
	stdout, stderr *syncBuffer
	cancel         context.CancelFunc
	code           chan int
}

func start(t testing.TB, args ...string) *running {
	t.Helper()
	return startWithInput(t, "", args...)
}

// startWithInput runs a command with stdin as its standard input.
func startWithInput(t testing.TB, stdin string, args ...string) *running {
	t.Helper()
	return startWithEnv(t, stdin, nil, args...)
}

// startWithEnv runs a command with stdin and the environment variables vars (no others).
func startWithEnv(t testing.TB, stdin string, vars map[string]string, args ...string) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{stdout: &syncBuffer{}, stderr: &syncBuffer{}, cancel: cancel, code: make(chan int, 1)}
	e := &env{stdin: strings.NewReader(stdin), stdout: r.stdout, stderr: r.stderr, getenv: func(k string) string { return vars[k] }}
	go func() { r.code <- run(ctx, e, args) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.code:
		case <-time.After(15 * time.Second):
			t.Error("command did not stop after its context ended")
		}
		if t.Failed() {
			t.Logf("surety %s: stderr:\n%s", strings.Join(args, " "), testutil.Tail(r.stderr.String(), 8000))
		}
	})
	return r
}

// wait returns the exit code once the command ends by itself.
func (r *running) wait(t testing.TB) int {
	t.Helper()
	return r.waitFor(t, 30*time.Second)
}

// waitFor is wait for a command that may take up to d (one on a slow chain).
func (r *running) waitFor(t testing.TB, d time.Duration) int {
	t.Helper()
	select {
	case code := <-r.code:
		r.code <- code // let Cleanup see it too
		return code
	case <-time.After(d):
		t.Fatalf("command still running after %s; stderr:\n%s", d, r.stderr)
		return -1
	}
}

var readyRE = regexp.MustCompile(`ready on (http://127\.0\.0\.1:\d+)`)

// apiURL waits for the node's ready line and returns its base URL. A node is ready in
// under a second on a quiet machine; a loaded CI run (two on 2 cores) took past 30 s, so the
// wait allows 3 minutes and ends as soon as the line is there.
func (r *running) apiURL(t testing.TB) string {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		if m := readyRE.FindStringSubmatch(r.stdout.String()); m != nil {
			return m[1]
		}
		select {
		case code := <-r.code:
			r.code <- code
			t.Fatalf("node exited with %d before it was ready; stderr:\n%s", code, r.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("node not ready in time; stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	return ""
}

// freePort is a port free on 127.0.0.1 now, below the kernel's ephemeral range (testnet.FreePorts),
// so no outgoing connection is handed it before the process under test listens on it.
func freePort(t testing.TB) int {
	t.Helper()
	return freePorts(t, 1)
}

// freePorts is the first of n consecutive ports free on 127.0.0.1 now: for a command that
// numbers its ports from a base (surety devnet: node i on base + i), where separate freePort
// calls can return neighbours and node 1's port lands on another's.
func freePorts(t testing.TB, n int) int {
	t.Helper()
	base, err := testnet.FreePorts(n)
	if err != nil {
		t.Fatal(err)
	}
	return base
}

// startNetwork runs n node processes of the surety binary on a fresh Anvil (testnet), each
// with flags; they stop when the test ends.
func startNetwork(t testing.TB, n int, flags ...string) *testnet.Network {
	t.Helper()
	nw, err := testnet.StartNetwork(t.Context(), testnet.NetworkConfig{
		Chain: testnet.Config{AnvilBin: testutil.Tool(t, "anvil")},
		Bin:   surety.Path(t), Nodes: n, Dir: t.TempDir(),
		Flags: func(int) []string { return flags },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, n := range nw.Nodes {
			if t.Failed() {
				t.Logf("node %d's log:\n%s", n.Index, testutil.Tail(n.Log(), 8000))
			}
			_ = nw.Kill(n.Index, syscall.SIGKILL)
		}
		nw.Close()
	})
	return nw
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"node", "-h"}, {"help", "node"}, {"mcp", "--help"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := start(t, args...)
			if code := r.wait(t); code != exitOK {
				t.Fatalf("exit %d, stderr %q", code, r.stderr)
			}
			if !strings.Contains(r.stdout.String(), "Usage: surety") {
				t.Errorf("no usage in stdout:\n%s", r.stdout)
			}
		})
	}
	r := start(t, "help")
	r.wait(t)
	for name := range commands {
		if !strings.Contains(r.stdout.String(), "  "+name+" ") {
			t.Errorf("help does not list %q", name)
		}
	}
}

// TestBadInputIsOneLine checks that every mistake at start exits 2 with a single line that
// names the problem, and no stack trace.
func TestBadInputIsOneLine(t *testing.T) {
	dir := t.TempDir()
	badDep := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(badDep, []byte(`{"chainId": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, ""},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"unknown flag", []string{"node", "--frob"}, "flag provided but not defined: -frob"},
		{"stray argument", []string{"node", "extra"}, `unexpected argument "extra"`},
		{"unreachable rpc", []string{"node", "--data-dir", data, "--rpc", "http://127.0.0.1:1"}, "cannot reach RPC http://127.0.0.1:1"},
		{"rpc not a url", []string{"node", "--data-dir", data, "--rpc", "anvil"}, `rpc "anvil" is not a URL`},
		{"public url not a url", []string{"node", "--data-dir", data, "--public-url", "node.example"}, `--public-url "node.example" is not a base URL`},
		{"cors origin with a path", []string{"node", "--data-dir", data, "--cors-origin", "https://app.example/x"}, `--cors-origin: CORS origin "https://app.example/x": want * or scheme://host[:port]`},
		{"deployment without rpc", []string{"node", "--deployment", badDep}, "--deployment needs --rpc"},
		{"missing deployment file", []string{"node", "--rpc", "http://127.0.0.1:1", "--deployment", filepath.Join(dir, "nope.json")}, "no such file"},
		{"bad deployment file", []string{"node", "--rpc", "http://127.0.0.1:1", "--deployment", badDep}, "contracts.StakeRegistry is missing"},
		{"bad log level", []string{"node", "--log-level", "loud"}, `--log-level "loud"`},
		{"bad listen address", []string{"node", "--data-dir", data, "--listen", "nonsense"}, "listen on nonsense"},
		{"deploy without rpc", []string{"deploy", "--dev-key", "0"}, "--rpc-url is required"},
		{"deploy without key", []string{"deploy", "--rpc", "http://127.0.0.1:1"}, "name your wallet: --keystore FILE"},
		{"devnet bad port", []string{"devnet", "--port", "70000"}, "--port must be between"},
		{"mcp wallet without key", []string{"mcp", "--wallet", "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"}, "--wallet acts for the DID of --key"},
		{"mcp bad wallet", []string{"mcp", "--key", "agent.key", "--wallet", "nope"}, `--wallet "nope" is not an address`},
		{"mcp bad node", []string{"mcp", "--node", "localhost"}, `--node "localhost" is not a URL`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := start(t, tt.args...)
			if code := r.wait(t); code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitUsage, r.stderr)
			}
			stderr := r.stderr.String()
			if tt.want == "" {
				return // bare `surety` prints the help
			}
			if strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr is not one line:\n%s", stderr)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr = %q, want it to contain %q", stderr, tt.want)
			}
		})
	}
}

func TestNodeEmbedded(t *testing.T) {
	waiting.Parallel(t) // a node (or devnet) of its own
	data := t.TempDir()
	r := start(t, "node", "--data-dir", data, "--listen", "127.0.0.1:0", "--dev-accounts", "3")
	base := r.apiURL(t)
	info := apitest.GetInfo(t, base)
	if info.Chain.ID != 1337 || info.Chain.Kind != "embedded" || info.Chain.BlockNumber < 1 {
		t.Errorf("chain = %+v, want embedded chain 1337 past block 0", info.Chain)
	}
	for _, name := range []string{"StakeRegistry", "BountyEscrow", "RootAnchor"} {
		if addr := info.Contracts[name]; !common.IsHexAddress(addr) {
			t.Errorf("contracts = %v, want %s deployed", info.Contracts, name)
		}
	}
	if n := strings.Count(r.stdout.String(), " key 0x"); n != 3 {
		t.Errorf("printed %d dev keys, want 3:\n%s", n, r.stdout)
	}

	// A second node cannot share the data dir.
	second := start(t, "node", "--data-dir", data, "--listen", "127.0.0.1:0")
	if code := second.wait(t); code != exitUsage || !strings.Contains(second.stderr.String(), "in use") {
		t.Errorf("second node: exit %d, stderr %q", code, second.stderr)
	}

	// An event stream left open does not hold the shutdown (at 66f817e one open stream made
	// Ctrl-C wait out the grace period and exit 1): it ends, and the node exits 0.
	bc := &apitest.Client{T: t, Base: base, Info: info}
	market := bc.NewParty(1)
	code, out := bc.Request("POST", "/v1/bounties", bc.Envelope(market, 0, map[string]any{"wallet": market.Wallet, "amount": "1000",
		"arbiter": bystander, "deadline": time.Now().Add(time.Hour).Unix(), "reviewWindow": 600}), nil)
	if code != http.StatusCreated {
		t.Fatalf("post: %d %s", code, out)
	}
	stream, err := http.Get(fmt.Sprintf("%s/v1/bounties/%d/events", base, apitest.DecodeResult(t, out).Bounty.ID))
	if err != nil || stream.StatusCode != http.StatusOK {
		t.Fatalf("open the event stream: %v %v", stream, err)
	}
	defer stream.Body.Close()
	ended := make(chan error, 1)
	go func() { _, err := io.Copy(io.Discard, stream.Body); ended <- err }()

	r.cancel()
	if code := r.wait(t); code != exitOK {
		t.Fatalf("node exited %d after shutdown with an event stream open; stderr:\n%s", code, r.stderr)
	}
	if !strings.Contains(r.stderr.String(), "node stopped") {
		t.Errorf("no shutdown log:\n%s", r.stderr)
	}
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Error("the event stream is still open after the node stopped")
	}

	// A restart gets a fresh embedded chain and a fresh state key.
	again := start(t, "node", "--data-dir", data, "--listen", "127.0.0.1:0", "--dev-accounts", "1", "--min-stake", "0.5eth")
	info2 := apitest.GetInfo(t, again.apiURL(t))
	if info2.Chain.StateKey == info.Chain.StateKey || info2.Chain.Genesis == info.Chain.Genesis {
		t.Errorf("restarted embedded chain kept state key %s / genesis %s", info.Chain.StateKey, info.Chain.Genesis)
	}
	// The embedded chain's deployment takes --min-stake (default 0.1 ETH) and the node reads it
	// back from the registry.
	if info.Chain.MinStake != "100000000000000000" || info2.Chain.MinStake != "500000000000000000" {
		t.Errorf("minStake %q, then %q with --min-stake 0.5eth; want 10^17 and 5·10^17", info.Chain.MinStake, info2.Chain.MinStake)
	}
}

func TestNodeOnAnvil(t *testing.T) {
	waiting.Parallel(t) // a node (or devnet) of its own
	a := testutil.Anvil(t)
	dir := t.TempDir()
	depFile := filepath.Join(dir, "deployment.json")

	d := start(t, "deploy", "--rpc", a.URL, "--dev-key", "0", "--out", depFile, "--min-stake", "2eth")
	if code := d.wait(t); code != exitOK {
		t.Fatalf("deploy exit %d: %s", code, d.stderr)
	}
	if !strings.Contains(d.stderr.String(), "RootAnchor at 0x") {
		t.Errorf("deploy shows no progress:\n%s", d.stderr)
	}

	r := start(t, "node", "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0", "--rpc", a.URL, "--deployment", depFile)
	info := apitest.GetInfo(t, r.apiURL(t))
	if info.Chain.ID != 31337 || info.Chain.Kind != "rpc" {
		t.Errorf("chain = %+v, want anvil (31337, rpc)", info.Chain)
	}
	// The minimum stake is the deployment's, read from the chain by every node.
	if info.Chain.MinStake != "2000000000000000000" {
		t.Errorf("minStake = %q, want the deployment's 2 ETH", info.Chain.MinStake)
	}
	dep, err := readDeployment(depFile)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Contracts["RootAnchor"]; got != dep.Contracts.RootAnchor.Hex() {
		t.Errorf("RootAnchor = %s, deployment file says %s", got, dep.Contracts.RootAnchor.Hex())
	}

	// A node without the deployment, or with one for another chain, refuses to start.
	other := *dep
	other.ChainID = 1
	otherFile := filepath.Join(dir, "other.json")
	if err := writeDeployment(otherFile, &other); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no deployment", []string{"--rpc", a.URL}, "needs --deployment FILE"},
		{"other chain", []string{"--rpc", a.URL, "--deployment", otherFile}, "deployment is for another chain"},
		{"a node-local minimum stake", []string{"--rpc", a.URL, "--deployment", depFile, "--min-stake", "1eth"}, "the deployment's StakeRegistry fixes it"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"node", "--data-dir", t.TempDir(), "--listen", "127.0.0.1:0"}, tt.args...)
			bad := start(t, args...)
			if code := bad.wait(t); code != exitUsage || !strings.Contains(bad.stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, bad.stderr, exitUsage, tt.want)
			}
		})
	}
}

// TestBinaryStopsOnSIGTERM builds the real binary and checks a graceful stop on SIGTERM.
func TestBinaryStopsOnSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	waiting.Parallel(t) // a node (or devnet) of its own
	bin := surety.Path(t)
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	cmd := exec.Command(bin, "node", "--data-dir", t.TempDir(), "--listen", "127.0.0.1:0", "--dev-accounts", "1")
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	r := &running{stdout: stdout, stderr: stderr, code: make(chan int, 1)}
	go func() {
		err := <-done
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		r.code <- code
	}()
	base := r.apiURL(t)
	if info := apitest.GetInfo(t, base); info.Chain.ID != 1337 {
		t.Fatalf("info = %+v", info)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := r.wait(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr.String(), "node stopped") {
		t.Errorf("no shutdown log after SIGTERM:\n%s", stderr)
	}
}

// anvilDeployment is a real Anvil with Surety's contracts deployed on it, written to a file
// a node's --deployment flag reads.
type anvilDeployment struct {
	*anvil.Anvil
	Client  *ethclient.Client
	Dep     *contracts.Deployment
	DepFile string
}

// deployOnAnvil starts Anvil, deploys the contracts with cfg from dev account 0, and writes
// the deployment into a temporary directory. The client closes when the test ends.
func deployOnAnvil(t testing.TB, cfg contracts.DeployConfig) *anvilDeployment {
	t.Helper()
	return deployOn(t, testutil.Anvil(t), cfg)
}

// deployOnSlowAnvil is deployOnAnvil on an Anvil that mines a block every blockTime (its
// own funded dev accounts, Anvil's test accounts, pay) once the contracts are deployed, with a
// block per transaction (testnet.SetUpQuickly).
func deployOnSlowAnvil(t testing.TB, blockTime time.Duration) *anvilDeployment {
	t.Helper()
	a, err := anvil.Start(context.Background(), anvil.Config{Bin: testutil.Tool(t, "anvil"), BlockTime: blockTime})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	var d *anvilDeployment
	if err := testnet.SetUpQuickly(t.Context(), a, blockTime, func() error { d = deployOn(t, a, contracts.DeployConfig{}); return nil }); err != nil {
		t.Fatal(err)
	}
	return d
}

func deployOn(t testing.TB, a *anvil.Anvil, cfg contracts.DeployConfig) *anvilDeployment {
	t.Helper()
	client, err := ethclient.Dial(a.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	dep, err := contracts.Deploy(context.Background(), client, chain.DevKey(0), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	depFile := filepath.Join(t.TempDir(), "deployment.json")
	if err := writeDeployment(depFile, dep); err != nil {
		t.Fatal(err)
	}
	return &anvilDeployment{Anvil: a, Client: client, Dep: dep, DepFile: depFile}
}
