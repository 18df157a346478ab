package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil/apitest"
)

// TestStakeCLI stakes through an embedded node as the README tour does: did bind records the
// binding on chain, the card then counts as staked, and refusals say why in one line.
func TestStakeCLI(t *testing.T) {
	waiting.Parallel(t) // a node (or devnet) of its own
	dir := t.TempDir()
	node := start(t, "node", "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0", "--dev-accounts", "3")
	base := node.apiURL(t)
	wallet := func(i int) string { return crypto.PubkeyToAddress(chain.DevKey(i).PublicKey).Hex() }
	key := filepath.Join(dir, "agent.json")
	did := strings.TrimSpace(runOK(t, "", "did", "new", "--out", key))
	runOK(t, "", "did", "bind", "--node", base, "--key", key, "--dev-wallet", "2")

	refused := func(want string, args ...string) {
		t.Helper()
		r := start(t, append(args, "--node", base)...)
		if code := r.wait(t); code != exitFailure || !strings.Contains(r.stderr.String(), want) || strings.Count(r.stderr.String(), "\n") > 2 {
			t.Errorf("%v: exit %d, want a refusal saying %q:\n%s", args, code, want, r.stderr)
		}
	}
	refused("not bound", "stake", "add", "--key", key, "--wallet", wallet(1), "--amount", "1eth")
	refused("has 0 staked", "stake", "unbond", "--key", key, "--wallet", wallet(2), "--amount", "1eth")

	out := runOK(t, "", "stake", "add", "--node", base, "--key", key, "--wallet", wallet(2), "--amount", "2eth")
	if !strings.Contains(out, did+" under wallet "+wallet(2)+": bound") || !strings.Contains(out, "staked     2 ETH") {
		t.Fatalf("stake add printed:\n%s", out)
	}
	runOK(t, "", "stake", "add", "--node", base, "--key", key, "--wallet", wallet(2), "--amount", "0.5eth")
	if out := runOK(t, "", "stake", "show", "--node", base, "--wallet", wallet(2), did); !strings.Contains(out, "staked     2.5 ETH") {
		t.Errorf("stake show printed:\n%s", out)
	}

	// The stake weighs the card the agent registers next.
	runOK(t, "", "agent", "register", "--node", base, "--key", key, "--name", "Auditor", "--capability", "audit", "--wallet", wallet(2))
	if out := runOK(t, "", "agent", "search", "--node", base, "--capability", "audit", "--json"); !strings.Contains(out, `"stake": "2500000000000000000"`) {
		t.Errorf("search does not show the stake:\n%s", out)
	}

	refused("less than the", "stake", "unbond", "--key", key, "--wallet", wallet(2), "--amount", "3eth")
	out = runOK(t, "", "stake", "unbond", "--node", base, "--key", key, "--wallet", wallet(2), "--amount", "1eth")
	if !strings.Contains(out, "staked     1.5 ETH") || !strings.Contains(out, "unbonding  1 ETH, withdrawable from") {
		t.Errorf("unbond printed:\n%s", out)
	}
	// The card here counts the stake that is left at once.
	if out := runOK(t, "", "agent", "search", "--node", base, "--capability", "audit", "--json"); !strings.Contains(out, `"stake": "1500000000000000000"`) {
		t.Errorf("search after unbonding:\n%s", out)
	}
	refused("unlocks at", "stake", "withdraw", "--key", key, "--wallet", wallet(2))

	// A signature for one stake operation cannot be spent on another, nor an escrow
	// withdrawal's on the stake's: refused with a 400 problem, nothing sent.
	k, err := readKeyFile(key)
	if err != nil {
		t.Fatal(err)
	}
	info := apitest.GetInfo(t, base)
	for _, tt := range []struct {
		path string
		body any
	}{
		{"/v1/stake/unbond", api.StakeBody{Op: "stake", Wallet: common.HexToAddress(wallet(2)), Amount: "1"}},
		{"/v1/stake/withdraw", api.WithdrawBody{Wallet: common.HexToAddress(wallet(2))}},
	} {
		env, err := signForNode(k, info, 0, tt.body)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Post(base+tt.path, "application/jose", strings.NewReader(env))
		if err != nil {
			t.Fatal(err)
		}
		var p api.Problem
		_ = json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(p.Detail, "body.op must be") {
			t.Errorf("%s with another operation's body: %d %+v", tt.path, resp.StatusCode, p)
		}
	}
	if out := runOK(t, "", "stake", "show", "--node", base, "--wallet", wallet(2), did); !strings.Contains(out, "staked     1.5 ETH") {
		t.Errorf("after the refusals:\n%s", out)
	}
}
