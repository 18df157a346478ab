package e2e

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/registry"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/testnet"
)

// tsClientDir is the TypeScript client package, from this package's directory.
const tsClientDir = "../../clients/ts"

// tsClient finds node and the TypeScript client's installed packages and compiles the
// client (tsc), or skips the test when either is missing outside CI.
func tsClient(t *testing.T) (nodeBin string) {
	t.Helper()
	nodeBin, err := exec.LookPath("node")
	tsc := filepath.Join(tsClientDir, "node_modules", ".bin", "tsc")
	if err == nil {
		_, err = os.Stat(tsc)
	}
	if err != nil {
		if testutil.InCI() {
			t.Fatalf("the TypeScript client needs node and its packages (make test-ts installs them): %v", err)
		}
		t.Skipf("skipping: the TypeScript client needs node and its packages (cd clients/ts && npm ci): %v", err)
	}
	tscOnce.Do(func() {
		cmd := exec.Command(nodeBin, "node_modules/typescript/bin/tsc", "-p", ".")
		cmd.Dir = tsClientDir
		if out, err := cmd.CombinedOutput(); err != nil {
			tscErr = fmt.Errorf("tsc: %v\n%s", err, out)
		}
	})
	if tscErr != nil {
		t.Fatal(tscErr)
	}
	return nodeBin
}

// The client is compiled once per run of the package.
var (
	tscOnce sync.Once
	tscErr  error
)

// TestTypeScriptAgentsMoneyPath is the acceptance's money path for a TypeScript agent: two
// agents written against clients/ts alone (examples/money-path) make their DIDs, register
// them, bind wallets they hold (their own transactions, through the node's relay), stake,
// register cards, post / claim / submit / accept a bounty, file an audit, read the
// reputation and check the audit's inclusion proof against the node's signed head and the
// root anchored on chain; viem reads the head's Anchored event through the node's relay
// (eth_getLogs) as Anvil holds it, and the client reads the node's scores of the anchored head
// and the worker's history. The Go side only starts the network and reads the outcome back.
func TestTypeScriptAgentsMoneyPath(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Anvil, a node process and node")
	}
	waiting.Parallel(t) // waits on its node process
	nodeBin := tsClient(t)
	nw := startNetwork(t, 1, testnet.Config{}, func(int) []string {
		return []string{"--log-epoch", "2s", "--log-grace", "3s", "--log-level", "warn"}
	})
	base := nw.Nodes[0].URL()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, "dist/examples/money-path/main.js")
	cmd.Dir = tsClientDir
	cmd.Env = append(os.Environ(),
		"SURETY_NODE="+base,
		"SURETY_RPC="+nw.Devnet.RPC(),
		"SURETY_FUNDER_KEY=0x"+hex.EncodeToString(crypto.FromECDSA(chain.DevKey(1))),
		"SURETY_KEY_DIR="+t.TempDir(),
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("money path:\n%s", stdout.String())
	if err != nil {
		t.Fatalf("the TypeScript money path failed: %v\n%s", err, testutil.Tail(stderr.String(), 4000))
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var got struct {
		OK       bool    `json:"ok"`
		Bounty   string  `json:"bounty"`
		Worker   string  `json:"worker"`
		Poster   string  `json:"poster"`
		Score    float64 `json:"score"`
		Leaf     string  `json:"leaf"`
		LogSize  int     `json:"logSize"`
		Anchored string  `json:"anchored"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil || !got.OK {
		t.Fatalf("no summary line (%v): %q", err, lines[len(lines)-1])
	}

	// What the agents did is what the node holds: the bounty accepted and paid to the
	// worker's wallet, the audit logged, the worker's score moved.
	var b struct {
		Status string `json:"status"`
		Poster string `json:"poster"`
		Worker string `json:"worker"`
		Payout string `json:"payout"`
	}
	mustGetJSON(t, base+"/v1/bounties/"+got.Bounty, &b)
	if b.Status != "accepted" || b.Payout == "0" || b.Payout == "" {
		t.Fatalf("bounty %s at the node: %+v, want accepted and paid", got.Bounty, b)
	}
	var rep struct {
		Score  float64 `json:"score"`
		Audits int     `json:"audits"`
	}
	mustGetJSON(t, base+"/v1/reputation/"+got.Worker, &rep)
	if rep.Audits < 1 || rep.Score <= 0.5 {
		t.Fatalf("the worker's reputation at the node: %+v, want the audit counted", rep)
	}
	var agent struct {
		Wallet string `json:"wallet"`
		Staked bool   `json:"staked"`
	}
	mustGetJSON(t, base+"/v1/agents/"+got.Worker, &agent)
	if !agent.Staked || !strings.EqualFold(agent.Wallet, b.Worker) {
		t.Fatalf("the worker's card: %+v; the bounty's worker %s", agent, b.Worker)
	}
	var registered struct {
		Signatures []json.RawMessage `json:"signatures"`
	}
	mustGetJSON(t, base+"/v1/agents/"+got.Worker+"/agent-card.json?form=registered", &registered)
	if len(registered.Signatures) != 1 {
		t.Fatalf("the worker's registered A2A card carries %d signatures, want its own one", len(registered.Signatures))
	}
	if !strings.HasPrefix(got.Anchored, "anchored by ") {
		t.Errorf("the inclusion proof was not checked against an anchored root: %s", got.Anchored)
	}
}

func mustGetJSON(t *testing.T, url string, out any) {
	t.Helper()
	if !getJSON(url, out) {
		t.Fatalf("GET %s: no 200 JSON answer", url)
	}
}

// TestTypeScriptFixturesCurrent regenerates the Go-made fixtures the TypeScript client's
// tests sign against (clients/ts/testdata-gen) and fails when the committed file differs:
// a change to how Go signs an object must reach the client's tests.
func TestTypeScriptFixturesCurrent(t *testing.T) {
	waiting.Parallel(t) // a node (or devnet) of its own
	out := filepath.Join(t.TempDir(), "go.json")
	cmd := exec.CommandContext(t.Context(), "go", "run", "./clients/ts/testdata-gen/main.go", "-out", out)
	cmd.Dir = "../.."
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run testdata-gen: %v\n%s", err, b)
	}
	fresh, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(filepath.Join(tsClientDir, "test/fixtures/go.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fresh, committed) {
		t.Fatalf("clients/ts/test/fixtures/go.json is stale: run go run ./clients/ts/testdata-gen/main.go")
	}
}

// TestTypeScriptSignsWhatGoVerifies has the TypeScript client sign an envelope, a card, an
// A2A card, an audit and a wallet binding with fresh keys of both types (clients/ts/interop/
// ts-client-sign.mjs) and checks each with the node's own code: identity's verifier (with the
// audience and chain), registry.Parse (both card forms), reputation.ParseAudit, identity.ParseBinding, and the
// key file with identity.ParseKeyFile.
func TestTypeScriptSignsWhatGoVerifies(t *testing.T) {
	waiting.Parallel(t) // waits on node
	nodeBin := tsClient(t)
	nodeKey, err := identity.GenerateKey(identity.Ed25519)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), nodeBin, "interop/ts-client-sign.mjs", nodeKey.DID.String())
	cmd.Dir = tsClientDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ts-client-sign.mjs: %v\n%s", err, stderr.String())
	}
	var got struct {
		Objects []struct {
			Type, DID, KeyFile, Envelope, Card, A2A, Audit, Binding, Wallet string
		}
	}
	if err := json.Unmarshal(out, &got); err != nil || len(got.Objects) != 2 {
		t.Fatalf("%v: %s", err, out)
	}
	v := identity.NewVerifier(identity.VerifierConfig{Started: time.Now().Add(-time.Minute)})
	for _, o := range got.Objects {
		t.Run(o.Type, func(t *testing.T) {
			k, err := identity.ParseKeyFile([]byte(o.KeyFile))
			if err != nil || k.DID.String() != o.DID {
				t.Fatalf("key file: %v (%v)", err, k)
			}
			env, err := v.Verify(t.Context(), []byte(o.Envelope))
			if err != nil {
				t.Fatalf("envelope: %v", err)
			}
			if err := env.Envelope.CheckAudience(nodeKey.DID.String(), 31337); err != nil || env.Envelope.Sender != o.DID {
				t.Fatalf("envelope: %v, sender %s", err, env.Envelope.Sender)
			}
			card, err := registry.Parse([]byte(o.Card), time.Now())
			if err != nil || card.DID != o.DID || card.Wallet.Hex() != o.Wallet {
				t.Fatalf("card: %v (%+v)", err, card)
			}
			a2aCard, err := registry.Parse([]byte(o.A2A), time.Now())
			if err != nil || a2aCard.DID != o.DID || a2aCard.Seq != 3 || len(a2aCard.Capabilities) != 2 {
				t.Fatalf("A2A card: %v (%+v)", err, a2aCard)
			}
			ae, err := v.Verify(t.Context(), []byte(o.Audit))
			if err != nil {
				t.Fatalf("audit envelope: %v", err)
			}
			a, err := reputation.ParseAudit(&ae.Envelope)
			if err != nil || a.Auditor != o.DID || a.Score != 0.25 || a.Bounty == nil || a.Bounty.ID != 9 {
				t.Fatalf("audit: %v (%+v)", err, a)
			}
			b, err := identity.ParseBinding([]byte(o.Binding))
			if err != nil || b.Statement.DID != o.DID || b.Statement.Wallet.Hex() != o.Wallet {
				t.Fatalf("binding: %v (%+v)", err, b)
			}
			// And the Go side refuses a TypeScript-signed envelope with one byte changed.
			tampered := []byte(o.Envelope)
			tampered[len(tampered)/2] ^= 1
			if _, err := v.Verify(t.Context(), tampered); err == nil {
				t.Fatal("a tampered envelope verified")
			}
		})
	}
}
