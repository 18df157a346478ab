package e2e

import (
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/testnet"
)

// surety is the binary every test's nodes run: built once for the package, on first use (a
// -short run builds nothing), and removed by TestMain.
var surety = testutil.Binary{Package: "github.com/surety-ioa/surety/cmd/surety"}

// waiting lets 5 of this package's parallel tests run at once, besides its three longest
// waits (TestChurn, TestPartitionHeals and TestOperationOutlivesANodeCrash, on 3 s blocks),
// which start at once: their node processes mostly wait, on gossip, sync rounds, log epochs
// and the churn's pauses, so more of them than the 2 cores of CI fit side by side.
var waiting = testutil.NewGate(5)

func TestMain(m *testing.M) {
	testutil.WaitingParallel()
	code := m.Run()
	surety.Remove()
	os.Exit(code)
}

// startNetwork runs n node processes of the surety binary on a fresh Anvil, deployed with
// chain's Deploy (chain.AnvilBin is filled in), node i with flags(i); they stop when the test
// ends, their logs shown if it failed.
func startNetwork(t testing.TB, n int, chain testnet.Config, flags func(i int) []string) *testnet.Network {
	t.Helper()
	chain.AnvilBin = testutil.Tool(t, "anvil")
	nw, err := testnet.StartNetwork(t.Context(), testnet.NetworkConfig{Chain: chain, Bin: surety.Path(t), Nodes: n, Dir: t.TempDir(), Flags: flags})
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

// dialChain is a client of nw's chain, closed when the test ends.
func dialChain(t testing.TB, nw *testnet.Network) *ethclient.Client {
	t.Helper()
	client, err := ethclient.Dial(nw.Devnet.RPC())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	return client
}

// TestNetworkSaysWhenAPortIsTaken: a node whose port another process holds exits at start;
// the network says its port was taken (which StartNetwork, when it picked the ports, answers
// by starting over on a new block) rather than only that it exited.
func TestNetworkSaysWhenAPortIsTaken(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Anvil and a node")
	}
	waiting.Parallel(t) // a node (or devnet) of its own
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	p2p, err := testnet.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	nw, err := testnet.StartNetwork(t.Context(), testnet.NetworkConfig{
		Chain: testnet.Config{AnvilBin: testutil.Tool(t, "anvil")}, Bin: surety.Path(t), Nodes: 1, Dir: t.TempDir(),
		APIPort: l.Addr().(*net.TCPAddr).Port, P2PPort: p2p,
	})
	if err == nil {
		nw.Close()
		t.Fatal("a node started on a port another process holds")
	}
	if !strings.Contains(err.Error(), "taken by another process") {
		t.Fatalf("error %q does not say the port was taken", err)
	}
}
