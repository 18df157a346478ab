package main

import (
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

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
