package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/internal/anvil"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
)

// clefRules approves what the tests ask Clef to do, in place of its user.
const clefRules = `function ApproveListing() { return "Approve" }
function ApproveTx(r) { return "Approve" }
function ApproveSignData(r) { return "Approve" }
`

// startClef runs a real Clef (built by the Makefile) for key's account on chainID: its
// master seed made and its account password stored (clef init, setpw), and a rules file
// attested that approves each request, as its user would. It returns Clef's HTTP URL.
func startClef(t *testing.T, key string, chainID uint64) string {
	t.Helper()
	bin := testutil.Tool(t, "clef")
	dir := t.TempDir()
	config, keys := filepath.Join(dir, "config"), filepath.Join(dir, "keystore")
	k, err := crypto.HexToECDSA(key)
	if err != nil {
		t.Fatal(err)
	}
	acct, err := keystore.NewKeyStore(keys, keystore.LightScryptN, keystore.LightScryptP).ImportECDSA(k, "account password")
	if err != nil {
		t.Fatal(err)
	}
	rules := filepath.Join(dir, "rules.js")
	if err := os.WriteFile(rules, []byte(clefRules), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(clefRules))
	const master = "master password"
	// Its own 4byte file: Clef adds each method it is told to one (by default in the working
	// directory), and would know them next time without being told.
	base := []string{"--configdir", config, "--keystore", keys, "--suppress-bootwarn", "--nousb", "--lightkdf", "--4bytedb-custom", filepath.Join(dir, "4byte.json")}
	for _, step := range []struct {
		args  []string
		stdin string
	}{
		{[]string{"init"}, master + "\n" + master + "\n"},
		{[]string{"setpw", acct.Address.Hex()}, "account password\naccount password\n" + master + "\n"},
		{[]string{"attest", hex.EncodeToString(sum[:])}, master + "\n"},
	} {
		cmd := exec.Command(bin, append(append([]string(nil), base...), step.args...)...)
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(step.stdin)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("clef %s: %v\n%s", step.args[0], err, out)
		}
	}
	port := freePort(t)
	clef := exec.Command(bin, append(base, "--chainid", fmt.Sprint(chainID), "--http", "--http.addr", "127.0.0.1", "--http.port", fmt.Sprint(port), "--rules", rules)...)
	clef.Dir = dir
	clef.Stdin = strings.NewReader(master + "\n")
	log := &syncBuffer{}
	clef.Stdout, clef.Stderr = log, log
	if err := clef.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = clef.Process.Kill()
		_ = clef.Wait()
		if t.Failed() {
			t.Logf("clef's log:\n%s", testutil.Tail(log.String(), 4000))
		}
	})
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"account_version","params":[]}`))
		if err == nil {
			resp.Body.Close()
			return url
		}
		if time.Now().After(deadline) {
			t.Fatalf("clef did not answer on %s: %v\n%s", url, err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestRealClefSignsOwnWalletWrites: a wallet behind a real Clef (go-ethereum's, approving by
// an attested rules file) deploys the contracts, binds an agent (Clef signs the binding's
// EIP-712 statement and the bind), stakes and posts a bounty, through a node holding no
// wallet. Clef refuses calls it cannot decode unless run with --advanced, so each request
// names the method it calls; this test runs it without --advanced.
func TestRealClefSignsOwnWalletWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Clef, Anvil and a node")
	}
	waiting.Parallel(t) // mostly waits on processes
	key := chain.DevKey(8)
	from := crypto.PubkeyToAddress(key.PublicKey).Hex()
	a, err := anvil.Start(context.Background(), anvil.Config{Bin: testutil.Tool(t, "anvil")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	clef := startClef(t, hex.EncodeToString(crypto.FromECDSA(key)), 31337)
	signer := []string{"--signer", clef, "--from", from}
	dir := t.TempDir()
	dep := filepath.Join(dir, "deployment.json")
	run := func(args ...string) string {
		t.Helper()
		r := start(t, args...)
		if code := r.waitFor(t, time.Minute); code != exitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, code, r.stdout, r.stderr)
		}
		return r.stdout.String()
	}
	run(append([]string{"deploy", "--rpc-url", a.URL, "--out", dep}, signer...)...)
	node := start(t, "node", "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0", "--rpc-url", a.URL, "--deployment", dep,
		"--p2p-listen", "/ip4/127.0.0.1/tcp/0", "--log-level", "warn")
	base := node.apiURL(t)
	agentKey := filepath.Join(dir, "agent.json")
	did := strings.TrimSpace(runOK(t, "", "did", "new", "--out", agentKey))
	pinned := append([]string{"--node", base, "--deployment", dep}, signer...)
	if out := run(append([]string{"did", "bind", "--key", agentKey}, pinned...)...); !strings.Contains(out, "bound "+did+" to wallet "+from+" on chain") {
		t.Errorf("did bind behind Clef printed:\n%s", out)
	}
	if out := run(append([]string{"stake", "add", "--key", agentKey, "--amount", "1ether"}, pinned...)...); !strings.Contains(out, "staked     1 ETH") {
		t.Errorf("stake add behind Clef printed:\n%s", out)
	}
	arbiter := crypto.PubkeyToAddress(chain.DevKey(7).PublicKey).Hex()
	id := strings.TrimSpace(run(append([]string{"bounty", "post", "--amount", "0.1ether", "--arbiter", arbiter, "--spec", "audit", "--quiet"}, pinned...)...))
	if out := runOK(t, "", "bounty", "show", "--node", base, id); !strings.Contains(out, "poster  "+from) {
		t.Errorf("the bounty Clef's wallet posted:\n%s", out)
	}
}
