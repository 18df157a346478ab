package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/internal/chain"
)

// TestBountyCLI plays a bounty with the CLI against an embedded node, as the README tour does.
func TestBountyCLI(t *testing.T) {
	waiting.Parallel(t) // a node (or devnet) of its own
	dir := t.TempDir()
	node := start(t, "node", "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0", "--dev-accounts", "4")
	base := node.apiURL(t)
	wallet := func(i int) string { return crypto.PubkeyToAddress(chain.DevKey(i).PublicKey).Hex() }
	marketKey, workerKey := filepath.Join(dir, "market.json"), filepath.Join(dir, "worker.json")
	runOK(t, "", "did", "new", "--out", marketKey)
	runOK(t, "", "did", "new", "--out", workerKey)
	if out := runOK(t, "", "did", "bind", "--node", base, "--key", marketKey, "--dev-wallet", "1"); !strings.Contains(out, "bound did:key:") {
		t.Fatalf("bind: %s", out)
	}
	runOK(t, "", "did", "bind", "--node", base, "--key", workerKey, "--dev-wallet", "2")

	out := runOK(t, "", "bounty", "post", "--node", base, "--key", marketKey, "--wallet", wallet(1),
		"--amount", "1.5eth", "--arbiter", wallet(3), "--deadline", "2h", "--spec", "summarize the paper", "--salt", "paper-1")
	m := regexp.MustCompile(`bounty (\d+): open`).FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "amount  1.5 ETH") {
		t.Fatalf("post printed:\n%s", out)
	}
	id := m[1]
	// The same salt again (a re-run after a crash, say): refused, nothing posted twice.
	again := start(t, "bounty", "post", "--node", base, "--key", marketKey, "--wallet", wallet(1),
		"--amount", "1.5eth", "--arbiter", wallet(3), "--spec", "summarize the paper", "--salt", "paper-1")
	if code := again.wait(t); code != exitFailure || !strings.Contains(again.stderr.String(), "already posted bounty "+id) {
		t.Errorf("a second post with the same salt: exit %d\n%s", code, again.stderr)
	}
	other := strings.TrimSpace(runOK(t, "", "bounty", "post", "--node", base, "--key", marketKey, "--wallet", wallet(1),
		"--amount", "1wei", "--arbiter", wallet(3), "--quiet"))
	if _, err := strconv.ParseUint(other, 10, 64); err != nil || other == id {
		t.Errorf("post --quiet printed %q, want another bounty's id alone", other)
	}
	runOK(t, "", "bounty", "claim", id, "--node", base, "--key", workerKey, "--wallet", wallet(2))
	// The poster cannot send a fresh claim away: it holds for the claim window.
	r := start(t, "bounty", "unclaim", id, "--node", base, "--key", marketKey, "--wallet", wallet(1))
	if code := r.wait(t); code != exitFailure || !strings.Contains(r.stderr.String(), "bounty "+id+": its worker has until") {
		t.Errorf("unclaim of a fresh claim: exit %d\n%s", code, r.stderr)
	}
	runOK(t, "", "bounty", "submit", id, "--node", base, "--key", workerKey, "--wallet", wallet(2), "--result", "the summary")
	out = runOK(t, "", "bounty", "accept", id, "--node", base, "--key", marketKey, "--wallet", wallet(1))
	if !strings.Contains(out, "bounty "+id+": accepted") || !strings.Contains(out, "paid    worker 1.4925, poster 0, fee 0.0075 (ETH)") {
		t.Errorf("accept printed:\n%s", out)
	}
	if out := runOK(t, "", "bounty", "list", "--node", base, "--status", "accepted"); !strings.Contains(out, id) || !strings.Contains(out, "accepted   1.5 ETH") ||
		!strings.Contains(out, "arbiter "+wallet(3)) || !strings.Contains(out, "task: summarize the paper") {
		t.Errorf("list printed:\n%s", out)
	}
	if out := runOK(t, "", "bounty", "list", "--node", base, "--q", "PAPER"); !strings.Contains(out, id) || strings.Contains(out, other) {
		t.Errorf("list --q PAPER printed:\n%s\nwant bounty %s (its task says paper) and not %s (no task)", out, id, other)
	}
	if out := runOK(t, "", "bounty", "show", id, "--node", base); !strings.Contains(out, "Accepted") || !strings.Contains(out, "Claimed") ||
		!strings.Contains(out, "task (matches specHash") || !strings.Contains(out, "    summarize the paper") || !strings.Contains(out, "min stake none") {
		t.Errorf("show printed:\n%s", out)
	}
	// A wrong move is refused with one line that says why, and exit 1.
	r = start(t, "bounty", "cancel", id, "--node", base, "--key", marketKey, "--wallet", wallet(1))
	if code := r.wait(t); code != exitFailure || !strings.Contains(r.stderr.String(), "bounty "+id+" is already accepted") {
		t.Errorf("cancel after accept: exit %d\n%s", code, r.stderr)
	}
}

func TestParseAmount(t *testing.T) {
	tests := map[string]string{"1.5eth": "1500000000000000000", "20gwei": "20000000000", "1000": "1000", "7wei": "7", "0.000000000000000001eth": "1"}
	for in, want := range tests {
		got, err := parseAmount(in)
		if err != nil || got.String() != want {
			t.Errorf("parseAmount(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1", "1.5", "abc", "0.5wei"} {
		if _, err := parseAmount(bad); err == nil {
			t.Errorf("parseAmount(%q) accepted", bad)
		}
	}
}

// TestHeldWalletsAreLoaded makes a wallet in the node's keystore, and checks that the node
// acts from it after a restart (here: a refusal that proves the node holds it).
func TestHeldWalletsAreLoaded(t *testing.T) {
	waiting.Parallel(t) // a node (or devnet) of its own
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	addr := strings.TrimSpace(runOK(t, "", "wallet", "new", "--data-dir", data, "--light-kdf"))
	if !strings.HasPrefix(addr, "0x") || len(addr) != 42 {
		t.Fatalf("wallet new printed %q", addr)
	}
	if out := runOK(t, "", "wallet", "list", "--data-dir", data); strings.TrimSpace(out) != addr {
		t.Errorf("wallet list = %q, want %s", out, addr)
	}
	node := start(t, "node", "--data-dir", data, "--listen", "127.0.0.1:0", "--dev-accounts", "2")
	base := node.apiURL(t)
	keyFile := filepath.Join(dir, "agent.json")
	runOK(t, "", "did", "new", "--out", keyFile)
	// Posting from it with an unbound DID is refused as "not bound": the node checks
	// bindings only for wallets it holds (an unknown wallet is refused as unknown).
	r := start(t, "bounty", "post", "--node", base, "--key", keyFile, "--wallet", addr, "--amount", "1eth", "--arbiter", addr)
	code := r.wait(t)
	if code != exitFailure || !strings.Contains(r.stderr.String(), "not bound") {
		t.Fatalf("post before binding: exit %d %s", code, r.stderr)
	}
}
