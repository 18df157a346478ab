package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/internal/chain"
)

// nodeProcess is a real `surety node` process.
type nodeProcess struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan struct{}
}

func startProcess(t testing.TB, bin string, args ...string) *nodeProcess {
	t.Helper()
	p := &nodeProcess{cmd: exec.Command(bin, args...), stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
			if t.Failed() { // it ended before the test did: say how
				t.Logf("surety %s exited (%v): stderr:\n%s", strings.Join(args, " "), p.cmd.ProcessState, tail(p.stderr.String(), 8000))
			}
		default:
		}
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

func waitHealthy(t testing.TB, base string, p *nodeProcess) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		// Its own ready line first: parallel tests restart nodes on ports they took before,
		// so whoever answers on base may be another test's node.
		if !strings.Contains(p.stdout.String(), "Surety node ready on "+base) {
			select {
			case <-p.done:
				t.Fatalf("node exited: %s", p.stderr)
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-p.done:
			t.Fatalf("node exited: %s", p.stderr)
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("node not healthy: %s", p.stderr)
}

// TestCrashDuringSettlement kills a real node (SIGKILL) while it is posting bounties,
// restarts it, retries every request with its Idempotency-Key, and checks that the index
// matches the chain exactly and that no request made a second transaction.
func TestCrashDuringSettlement(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs Anvil")
	}
	devnet := deployOnAnvil(t, contracts.DeployConfig{FeeBps: 100})
	ctx, client, dep := context.Background(), devnet.Client, devnet.Dep
	dir := t.TempDir()
	bin := suretyBinary(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	base := "http://" + addr
	args := []string{"node", "--data-dir", filepath.Join(dir, "data"), "--listen", addr, "--rpc", devnet.URL, "--deployment", devnet.DepFile,
		"--dev-wallets", "--dev-accounts", "4", "--log-level", "warn"}
	p := startProcess(t, bin, args...)
	waitHealthy(t, base, p)

	bc := &bountyClient{t: t, base: base, info: getInfo(t, base)}
	markets := []*party{bc.newParty(1), bc.newParty(2)}
	head, _ := client.HeaderByNumber(ctx, nil)

	// 40 posts, each with its own Idempotency-Key and body.
	type request struct {
		key  string
		by   *party
		body map[string]any
		env  []byte
		done bool
	}
	var reqs []*request
	for i := range 40 {
		m := markets[i%2]
		body := map[string]any{"wallet": m.wallet, "amount": fmt.Sprint(1e15 + i), "arbiter": markets[(i+1)%2].wallet,
			"deadline": head.Time + 7200, "reviewWindow": 600}
		reqs = append(reqs, &request{key: fmt.Sprintf("post-%d", i), by: m, body: body, env: bc.envelope(m, 0, body)})
	}
	send := func(r *request, timeout time.Duration) (int, []byte, error) {
		cl := &http.Client{Timeout: timeout}
		req, _ := http.NewRequest("POST", base+"/v1/bounties", bytes.NewReader(r.env))
		req.Header.Set("Idempotency-Key", r.key)
		resp, err := cl.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b, nil
	}

	// Fire them four at a time and kill the node as soon as the first answers come back.
	var wg sync.WaitGroup
	var mu sync.Mutex
	answered := 0
	queue := make(chan *request)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range queue {
				code, _, err := send(r, 10*time.Second)
				if err == nil && code < 300 {
					mu.Lock()
					r.done = true
					answered++
					mu.Unlock()
				}
			}
		}()
	}
	killed := make(chan struct{})
	go func() {
		for {
			mu.Lock()
			n := answered
			mu.Unlock()
			if n >= 5 {
				_ = p.cmd.Process.Signal(syscall.SIGKILL)
				close(killed)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	for _, r := range reqs {
		select {
		case queue <- r:
		case <-killed:
		}
	}
	close(queue)
	wg.Wait()
	<-killed
	<-p.done
	t.Logf("killed the node after %d of %d posts were answered", answered, len(reqs))

	// Restart on the same data dir and retry everything, as clients would.
	p2 := startProcess(t, bin, args...)
	waitHealthy(t, base, p2)
	for _, r := range reqs {
		for attempt := 0; ; attempt++ {
			code, body, err := send(r, 30*time.Second)
			if err != nil {
				t.Fatalf("%s: %v", r.key, err)
			}
			if code < 300 {
				break
			}
			// Never reached the node before the crash: nothing was stored or sent, so the
			// client signs the same request afresh (same key) and sends it again.
			if strings.Contains(string(body), "issued-before-start") && attempt == 0 {
				r.env = bc.envelope(r.by, 0, r.body)
				continue
			}
			t.Fatalf("%s after restart: %d %s", r.key, code, body)
		}
	}

	// Exactly one bounty per request on chain, and the index agrees with the chain.
	if posted := postedOnChain(t, client, dep.Contracts.BountyEscrow); posted != len(reqs) {
		t.Fatalf("the chain has %d bounties for %d requests: a retry sent a second transaction or a request was lost", posted, len(reqs))
	}
	code, body, err := func() (int, []byte, error) {
		resp, err := http.Get(base + "/v1/bounties?limit=1000")
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b, nil
	}()
	if err != nil || code != http.StatusOK {
		t.Fatalf("list: %d %v", code, err)
	}
	var list struct {
		Bounties []escrow.Bounty `json:"bounties"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Bounties) != len(reqs) {
		t.Fatalf("the index holds %d bounties, the chain %d", len(list.Bounties), len(reqs))
	}
	escrowABI := contracts.NewBountyEscrow()
	inst := escrowABI.Instance(client, dep.Contracts.BountyEscrow)
	amounts := map[string]bool{}
	for _, b := range list.Bounties {
		onChain, err := bind.Call(inst, nil, escrowABI.PackBountyOf(new(big.Int).SetUint64(b.ID)), escrowABI.UnpackBountyOf)
		if err != nil {
			t.Fatal(err)
		}
		if onChain.Status != 0 || b.Status != escrow.StatusOpen {
			t.Errorf("bounty %d: index %s, chain status %d", b.ID, b.Status, onChain.Status)
		}
		amounts[b.Amount] = true
	}
	if len(amounts) != len(reqs) {
		t.Errorf("%d distinct amounts for %d requests: some request was posted twice", len(amounts), len(reqs))
	}
}

// TestOperationOutlivesANodeCrash: a node killed (SIGKILL) while it carries on a write for a
// client (202 Accepted, an operation) carries it on when it starts again, and the client that
// followed the operation gets its answer; the chain holds the write once.
func TestOperationOutlivesANodeCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Anvil and two node processes")
	}
	t.Parallel() // mostly waits on blocks
	a := deployOnSlowAnvil(t, 3*time.Second)
	bin, dir := suretyBinary(t), t.TempDir()
	port := freePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	// Four confirmations of 3 s blocks: a stake takes longer than the CLI's 10 s wait.
	args := []string{"node", "--data-dir", filepath.Join(dir, "data"), "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--rpc-url", a.URL,
		"--deployment", a.DepFile, "--dev-wallets", "--dev-accounts", "3", "--confirmations", "4", "--p2p-listen", "/ip4/127.0.0.1/tcp/0"}
	p := startProcess(t, bin, args...)
	waitHealthy(t, base, p)
	agentKey := filepath.Join(dir, "agent.json")
	did := strings.TrimSpace(runOK(t, "", "did", "new", "--out", agentKey))
	if r := start(t, "did", "bind", "--key", agentKey, "--dev-account", "2", "--node", base); r.waitFor(t, 2*time.Minute) != exitOK {
		t.Fatalf("did bind: %s", r.stderr)
	}
	wallet := crypto.PubkeyToAddress(chain.DevKey(2).PublicKey).Hex()
	r := start(t, "stake", "add", "--key", agentKey, "--wallet", wallet, "--amount", "1ether", "--node", base)
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(r.stderr.String(), "carries it on as operation") {
		if time.Now().After(deadline) {
			t.Fatalf("the stake was not carried on as an operation:\n%s\nthe node:\n%s", r.stderr, tail(p.stderr.String(), 4000))
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	p2 := startProcess(t, bin, args...)
	waitHealthy(t, base, p2)
	if code := r.waitFor(t, 2*time.Minute); code != exitOK || !strings.Contains(r.stdout.String(), "staked     1 ETH") {
		t.Fatalf("the stake followed across the crash: exit %d\n%s%s", code, r.stdout, r.stderr)
	}
	if !strings.Contains(p2.stderr.String(), "carrying on an operation from before the restart") {
		t.Errorf("the restarted node did not say it carried the operation on:\n%s", p2.stderr)
	}
	if out := runOK(t, "", "stake", "show", "--node", base, "--wallet", wallet, did); !strings.Contains(out, "staked     1 ETH") {
		t.Errorf("after the crash the chain holds:\n%s", out)
	}
}
