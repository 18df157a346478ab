package e2e

import (
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/testnet"
)

// The surety binary every test's nodes run: built once for the package, on first use (a
// -short run builds nothing), and removed by TestMain.
var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// suretyBinary builds ./cmd/surety (once) and returns its path. GOFLAGS from the
// environment carries the build tags (make test's sqlite_fts5).
func suretyBinary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "surety-e2e-"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "surety")
		if out, err := exec.Command("go", "build", "-o", binPath, "../../cmd/surety").CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// tail is the last n bytes of s: enough of a failed node's log to see why.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// getInfo is a node's GET /v1/info.
func getInfo(t testing.TB, base string) wire.Info {
	t.Helper()
	resp, err := http.Get(base + "/v1/info")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/info: %s", resp.Status)
	}
	var info wire.Info
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		t.Fatal(err)
	}
	return info
}

// bindingJSON is k's binding to wallet on the registry, as POST /v1/bindings takes it.
func bindingJSON(t testing.TB, k *identity.Key, wallet *ecdsa.PrivateKey, chainID uint64, registry common.Address) []byte {
	t.Helper()
	b, err := identity.SignBinding(identity.BindingStatement{DID: k.DID.String(), Wallet: crypto.PubkeyToAddress(wallet.PublicKey), ChainID: chainID,
		Registry: registry, IssuedAt: time.Now().Unix(), Nonce: identity.NewNonce()}, k, wallet)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(b)
	return raw
}

// startNetwork runs n node processes of the surety binary on a fresh Anvil, deployed with
// chain's Deploy (chain.AnvilBin is filled in), node i with flags(i); they stop when the test
// ends, their logs shown if it failed.
func startNetwork(t testing.TB, n int, chain testnet.Config, flags func(i int) []string) *testnet.Network {
	t.Helper()
	chain.AnvilBin = testutil.Tool(t, "anvil")
	nw, err := testnet.StartNetwork(t.Context(), testnet.NetworkConfig{Chain: chain, Bin: suretyBinary(t), Nodes: n, Dir: t.TempDir(), Flags: flags})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, n := range nw.Nodes {
			if t.Failed() {
				t.Logf("node %d's log:\n%s", n.Index, tail(n.Log(), 8000))
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
