package e2e

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/testnet"
)

// The dev accounts the Python agents hold are past testnet.DevAccounts, so no node holds
// them and every transaction is signed by the Python client itself: a poster and a worker
// for each way to the chain, and the bounties' arbiter.
const (
	pythonArbiter  = testnet.DevAccounts
	pythonAccounts = 5 // the arbiter and two pairs
)

// pythonInterpreter is the interpreter the Python client's example runs on, with `cryptography`
// importable. Without them the test is skipped, saying why; in CI (CI set), where both are
// installed, it fails instead, as a missing Anvil does.
func pythonInterpreter(t *testing.T) string {
	t.Helper()
	missing := t.Skipf
	if os.Getenv("CI") != "" {
		missing = t.Fatalf
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		missing("python3 is not installed: the Python client's money path needs it")
	}
	if out, err := exec.Command(py, "-c", "import cryptography.hazmat.primitives.asymmetric.ed25519").CombinedOutput(); err != nil {
		missing("python3 has no `cryptography` package (the Python client's one dependency): %s", out)
	}
	return py
}

// TestPythonClientMoneyPath is the acceptance of issue 27's Python half: two agents written
// with only clients/python (examples/money_path.py) do the marketplace day's money path
// against a node process on Anvil, signing every transaction with wallets they hold and
// sending it through the node's JSON-RPC relay: bind, stake, register a card, post / claim /
// submit / accept, audit, read the worker's reputation and check its proof. The chain is
// then asked directly, here in Go, what the Python agents did.
func TestPythonClientMoneyPath(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Anvil, a node process and python3")
	}
	waiting.Parallel(t) // waits on its node process
	py := pythonInterpreter(t)
	nw := startNetwork(t, 1, testnet.Config{DevAccounts: testnet.DevAccounts + pythonAccounts}, func(int) []string {
		return []string{"--log-epoch", "1s", "--log-grace", "3s", "--log-level", "warn"}
	})
	script, err := filepath.Abs("../../clients/python/examples/money_path.py")
	if err != nil {
		t.Fatal(err)
	}
	for i, way := range []struct{ name, rpcURL string }{
		{"through the node's relay", ""},
		{"to the chain's RPC URL", nw.Devnet.RPC()},
	} {
		t.Run(way.name, func(t *testing.T) {
			poster, worker := pythonArbiter+1+2*i, pythonArbiter+2+2*i
			runPythonMoneyPath(t, nw, py, script, poster, worker, way.rpcURL)
		})
	}
}

// runPythonMoneyPath runs money_path.py with dev accounts poster and worker as the agents'
// wallets (sending to rpcURL, or through the node's relay when it is empty), then checks on
// the node and the chain what it says it did.
func runPythonMoneyPath(t *testing.T, nw *testnet.Network, py, script string, poster, worker int, rpcURL string) {
	key := func(i int) string { return hex.EncodeToString(crypto.FromECDSA(chain.DevKey(i))) }
	cmd := exec.CommandContext(t.Context(), py, script)
	cmd.Env = append(os.Environ(),
		"SURETY_NODE_URL="+nw.Nodes[0].URL(),
		"SURETY_POSTER_KEY="+key(poster),
		"SURETY_WORKER_KEY="+key(worker),
		"SURETY_ARBITER="+crypto.PubkeyToAddress(chain.DevKey(pythonArbiter).PublicKey).Hex(),
		"SURETY_RPC_URL="+rpcURL,
		"PYTHONDONTWRITEBYTECODE=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("money_path.py: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	t.Logf("money_path.py:\n%s", stdout.String())
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var res struct {
		OK     bool    `json:"ok"`
		Bounty uint64  `json:"bounty"`
		Worker string  `json:"worker"`
		Payout string  `json:"payout"`
		Score  float64 `json:"score"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil || !res.OK {
		t.Fatalf("the last line is not the script's result: %q (%v)", lines[len(lines)-1], err)
	}
	// The chain's word, not the script's: the bounty is accepted and paid to the worker's
	// wallet, which the Python client held and signed for.
	base := nw.Nodes[0].URL()
	var b struct {
		Status string `json:"status"`
		Worker string `json:"worker"`
		Payout string `json:"payout"`
	}
	if !getJSON(base+"/v1/bounties/"+pyJSONNumber(res.Bounty), &b) {
		t.Fatalf("GET bounty %d failed", res.Bounty)
	}
	wantWorker := crypto.PubkeyToAddress(chain.DevKey(worker).PublicKey)
	if b.Status != "accepted" || !strings.EqualFold(b.Worker, wantWorker.Hex()) || b.Payout != res.Payout {
		t.Errorf("bounty %d = %+v, want accepted, paid %s to %s", res.Bounty, b, res.Payout, wantWorker)
	}
	client := dialChain(t, nw)
	for _, i := range []int{poster, worker} {
		n, err := client.NonceAt(t.Context(), crypto.PubkeyToAddress(chain.DevKey(i).PublicKey), nil)
		if err != nil {
			t.Fatal(err)
		}
		if n < 3 { // bind, stake, and post / claim+submit / accept
			t.Errorf("dev account %d sent %d transactions, want the Python agent's own (at least 3)", i, n)
		}
	}
	if res.Score <= 0 {
		t.Errorf("the worker's score is %v", res.Score)
	}
}

func pyJSONNumber(n uint64) string { b, _ := json.Marshal(n); return string(b) }
