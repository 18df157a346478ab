package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/internal/testutil/apitest"
)

// TestDevnetRunsNodeProcesses: `surety devnet --nodes 2` runs each node as a process of its
// own (at 66f817e all ran in the devnet's process, so none could be killed alone). Killing
// one leaves the other answering; the command line the devnet prints restarts it; Ctrl-C
// stops every process.
func TestDevnetRunsNodeProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Anvil and two node processes")
	}
	waiting.Parallel(t)
	anvil := testutil.Tool(t, "anvil")
	bin := surety.Path(t)
	// Node i listens on api + i and p2p + i: one block of ports, so that no node's port is
	// another's (at 8ad4263 api + 1 could be the p2p port, and node 1 exited at start).
	base := freePorts(t, 5)
	api, p2p, rpc := base, base+2, base+4
	cmd := exec.Command(bin, "devnet", "--nodes", "2", "--port", strconv.Itoa(rpc), "--listen", fmt.Sprintf("127.0.0.1:%d", api),
		"--p2p-port", strconv.Itoa(p2p), "--data-dir", t.TempDir(), "--anvil", anvil, "--log-level", "warn")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
		}
	})

	// Read the devnet's summary: the nodes' PIDs and the restart command.
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	nodeLine := regexp.MustCompile(`^\s+node (\d+)\s+pid (\d+)\s+(http://\S+)`)
	var pids []int
	var bases []string
	var restart string
	deadline := time.After(90 * time.Second)
	for restart == "" || len(pids) < 2 {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("devnet ended early:\n%s", stderr)
			}
			if m := nodeLine.FindStringSubmatch(line); m != nil {
				pid, _ := strconv.Atoi(m[2])
				pids, bases = append(pids, pid), append(bases, m[3])
			}
			if r, ok := strings.CutPrefix(line, "Restart it with: "); ok {
				restart = r
			}
		case <-deadline:
			t.Fatalf("no devnet summary within 90 s:\n%s", stderr)
		}
	}
	if pids[0] == pids[1] || pids[0] == cmd.Process.Pid || pids[1] == cmd.Process.Pid {
		t.Fatalf("node PIDs %v, devnet %d: want a process per node", pids, cmd.Process.Pid)
	}

	// Kill node 1; node 0 carries on, and the devnet says so.
	if err := syscall.Kill(pids[1], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "the devnet reports node 1's exit", 10*time.Second, func() bool { return strings.Contains(stderr.String(), "node 1 (pid") })
	if resp, err := http.Get(bases[0] + "/healthz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("node 0 after node 1 died: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	// The printed command line restarts it, where it was.
	args := strings.Fields(restart)
	node1 := exec.Command(args[0], args[1:]...)
	node1Out, node1Err := &syncBuffer{}, &syncBuffer{}
	node1.Stdout, node1.Stderr = node1Out, node1Err
	if err := node1.Start(); err != nil {
		t.Fatal(err)
	}
	node1Done := make(chan struct{})
	go func() { _ = node1.Wait(); close(node1Done) }()
	t.Cleanup(func() { _ = node1.Process.Kill(); <-node1Done })
	testutil.Eventually(t, "the restarted node 1 to say it is ready", 30*time.Second, func() bool {
		select {
		case <-node1Done:
			t.Fatalf("the restarted node 1 exited: %s", node1Err)
		default:
		}
		return strings.Contains(node1Out.String(), "Surety node ready on "+bases[1])
	})
	info := apitest.GetInfo(t, bases[1])
	testutil.Eventually(t, "the restarted node rejoined node 0", 15*time.Second, func() bool {
		resp, err := http.Get(bases[0] + "/v1/peers")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return strings.Contains(string(body), info.Peer.ID)
	})
	_ = node1.Process.Signal(syscall.SIGTERM)
	<-node1Done

	// Ctrl-C stops the devnet and its node.
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		if waitErr != nil {
			t.Fatalf("devnet stopped with %v:\n%s", waitErr, stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("devnet still running 30 s after Ctrl-C:\n%s", stderr)
	}
	if err := syscall.Kill(pids[0], 0); err == nil {
		t.Errorf("node 0 (pid %d) outlived the devnet", pids[0])
	}
}
