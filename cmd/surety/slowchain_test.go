package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/internal/chain"
)

// TestTwelveSecondBlocks is the chain the first wave failed on: Anvil mining every 12 s, the
// node waiting 2 confirmations. A bind and a stake from a wallet the node holds (each a
// transaction and two confirmations: 30 s or more) answer instead of timing out at 30 s, the
// stake as an operation the CLI follows (202, then sent, mined, k/2 confirmations), and,
// meanwhile, a bounty posted from the user's own wallet shows each step, confirmations
// counted, without ever calling the node unreachable.
func TestTwelveSecondBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("waits on 12 s blocks")
	}
	t.Parallel() // mostly waits on blocks; a long wait, not through the gate (waiting)
	a := deployOnSlowAnvil(t, 12*time.Second)
	dir, depFile := t.TempDir(), a.DepFile
	node := start(t, "node", "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0", "--rpc-url", a.URL, "--deployment", depFile,
		"--dev-wallets", "--dev-accounts", "3", "--confirmations", "2", "--p2p-listen", "/ip4/127.0.0.1/tcp/0", "--log-level", "warn")
	base := node.apiURL(t)
	agentKey := filepath.Join(dir, "agent.json")
	runOK(t, "", "did", "new", "--out", agentKey)
	wallet := crypto.PubkeyToAddress(chain.DevKey(2).PublicKey).Hex()

	// slow starts a command; the function it returns waits for it to succeed and returns its
	// output and its steps (stderr).
	slow := func(args ...string) func() (string, string) {
		t.Helper()
		began := time.Now()
		r := start(t, append(args, "--node", base)...)
		return func() (string, string) {
			t.Helper()
			code := r.waitFor(t, 4*time.Minute)
			if code != exitOK {
				t.Fatalf("%v: exit %d after %s\n%s%s", args, code, time.Since(began).Round(time.Second), r.stdout, r.stderr)
			}
			for _, bad := range []string{"cannot reach", "not mined", "(504)", "did not answer"} {
				if strings.Contains(r.stderr.String(), bad) {
					t.Errorf("%v said %q:\n%s", args, bad, r.stderr)
				}
			}
			return r.stdout.String(), r.stderr.String()
		}
	}
	// The user's own wallet (dev account 1, which nothing else here uses) posts a bounty
	// while the node's wallet binds and stakes: their blocks go by once, not one after the
	// other.
	post := slow("bounty", "post", "--dev-account", "1", "--amount", "0.1ether", "--arbiter", crypto.PubkeyToAddress(chain.DevKey(3).PublicKey).Hex(), "--quiet")
	// The node's wallet: it sends the bind (and waits for its confirmations), then the stake.
	slow("did", "bind", "--key", agentKey, "--dev-account", "2")()
	out, steps := slow("stake", "add", "--key", agentKey, "--wallet", wallet, "--amount", "1ether")()
	if !strings.Contains(out, "staked     1 ETH") {
		t.Errorf("stake add on 12 s blocks printed:\n%s", out)
	}
	// Not done within 10 s: the node answered 202 and the CLI followed the operation. Whether
	// the CLI's first look finds it still sent or already mined depends on where the send fell
	// between two 12 s blocks (a busy machine starts the CLI late): either is shown, then the
	// confirmations (each state's line: TestPrintOperation).
	if !strings.Contains(steps, "stake add: sent 0x") && !strings.Contains(steps, "stake add: mined 0x") {
		t.Errorf("stake add on 12 s blocks showed neither the sent nor the mined transaction:\n%s", steps)
	}
	for _, want := range []string{"carries it on as operation", "/2 confirmations"} {
		if !strings.Contains(steps, want) {
			t.Errorf("stake add on 12 s blocks did not show %q:\n%s", want, steps)
		}
	}
	// The user's own wallet: every step shown.
	_, steps = post()
	for _, want := range []string{"post: sent 0x", "post: mined 0x", "has 0/2 confirmations", "has 1/2 confirmations", "indexed by the node"} {
		if !strings.Contains(steps, want) {
			t.Errorf("bounty post on 12 s blocks did not show %q:\n%s", want, steps)
		}
	}
}
