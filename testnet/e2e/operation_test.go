package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/testnet"
)

// cliRun is a `surety` command-line process a test runs against a network's nodes.
type cliRun struct {
	cmd            *exec.Cmd
	stdout, stderr lockedBuffer
	done           chan struct{}
}

// lockedBuffer is a bytes.Buffer a running process writes and the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// cli starts `surety args...` with HOME set to home; it is killed when the test ends.
func cli(t testing.TB, home string, args ...string) *cliRun {
	t.Helper()
	r := &cliRun{cmd: exec.Command(surety.Path(t), args...), done: make(chan struct{})}
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	r.cmd.Env = append(os.Environ(), "HOME="+home)
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = r.cmd.Wait(); close(r.done) }()
	t.Cleanup(func() { _ = r.cmd.Process.Kill(); <-r.done })
	return r
}

// wait returns the command's exit code, failing the test if it runs longer than d.
func (r *cliRun) wait(t testing.TB, d time.Duration) int {
	t.Helper()
	select {
	case <-r.done:
		return r.cmd.ProcessState.ExitCode()
	case <-time.After(d):
		t.Fatalf("surety %s still running after %s; stderr:\n%s", strings.Join(r.cmd.Args[1:], " "), d, r.stderr.String())
		return -1
	}
}

// TestOperationOutlivesANodeCrash: a node killed (SIGKILL) while it carries on a write for a
// client (202 Accepted, an operation) carries it on when it starts again, and the client that
// followed the operation gets its answer; the chain holds the write once.
func TestOperationOutlivesANodeCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Anvil and a node process")
	}
	t.Parallel() // mostly waits on blocks; a long wait, not through the gate (waiting)
	// Four confirmations of 3 s blocks: a stake takes longer than the CLI's 10 s wait.
	nw := startNetwork(t, 1, testnet.Config{BlockTime: 3 * time.Second}, func(int) []string { return []string{"--confirmations", "4"} })
	node, home := nw.Nodes[0], t.TempDir()
	base := node.URL()
	agentKey := filepath.Join(home, "agent.json")
	newDID := cli(t, home, "did", "new", "--out", agentKey)
	if newDID.wait(t, 30*time.Second) != 0 {
		t.Fatalf("did new: %s", newDID.stderr.String())
	}
	did := strings.TrimSpace(newDID.stdout.String())
	if r := cli(t, home, "did", "bind", "--key", agentKey, "--dev-account", "2", "--node", base); r.wait(t, 2*time.Minute) != 0 {
		t.Fatalf("did bind: %s", r.stderr.String())
	}
	wallet := crypto.PubkeyToAddress(chain.DevKey(2).PublicKey).Hex()
	r := cli(t, home, "stake", "add", "--key", agentKey, "--wallet", wallet, "--amount", "1ether", "--node", base)
	testutil.Eventually(t, "the stake to be carried on as an operation", time.Minute, func() bool {
		return strings.Contains(r.stderr.String(), "carries it on as operation")
	})
	logBefore := len(node.Log())
	if err := nw.Kill(0, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := nw.Restart(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	if code := r.wait(t, 2*time.Minute); code != 0 || !strings.Contains(r.stdout.String(), "staked     1 ETH") {
		t.Fatalf("the stake followed across the crash: exit %d\n%s%s", code, r.stdout.String(), r.stderr.String())
	}
	if after := node.Log()[logBefore:]; !strings.Contains(after, "carrying on an operation from before the restart") {
		t.Errorf("the restarted node did not say it carried the operation on:\n%s", testutil.Tail(after, 4000))
	}
	show := cli(t, home, "stake", "show", "--node", base, "--wallet", wallet, did)
	if code := show.wait(t, 30*time.Second); code != 0 || !strings.Contains(show.stdout.String(), "staked     1 ETH") {
		t.Errorf("after the crash the chain holds (exit %d):\n%s%s", code, show.stdout.String(), show.stderr.String())
	}
}
