package e2e

import (
	"os"
	"syscall"
	"testing"

	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/testnet"
)

// surety is the binary every test's nodes run: built once for the package, on first use (a
// -short run builds nothing), and removed by TestMain.
var surety = testutil.Binary{Package: "github.com/surety-ioa/surety/cmd/surety"}

func TestMain(m *testing.M) {
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
