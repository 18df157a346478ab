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
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/identity"
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
