package main

import (
	"context"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/txn"
)

// TestJobCLIOnAnvil walks ERC-8183 jobs with `surety job` from dev wallets of their own on
// Anvil, the node following the chain: one created, budgeted, funded, submitted and
// completed; one rejected by its evaluator; and the wrong moves refused in one line each.
func TestJobCLIOnAnvil(t *testing.T) {
	waiting.Parallel(t) // waits on the node's index, transaction after transaction
	devnet := deployOnAnvil(t, contracts.DeployConfig{})
	ctx := context.Background()
	token, err := contracts.DeployDevToken(ctx, devnet.Client, chain.DevKey(0), "Dev", "DEV")
	if err != nil {
		t.Fatal(err)
	}
	mint, err := txn.NewSender(ctx, devnet.Client, txn.NewKeySigner(chain.DevKey(1)), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	wallet := func(i int) string { return crypto.PubkeyToAddress(chain.DevKey(i).PublicKey).Hex() }
	if _, err := mint.Send(ctx, txn.Call{To: token, Data: contracts.NewDevToken().PackMint(common.HexToAddress(wallet(1)), new(big.Int).Mul(big.NewInt(1e18), big.NewInt(10)))}); err != nil {
		t.Fatal(err)
	}
	node := start(t, "node", "--data-dir", t.TempDir(), "--listen", "127.0.0.1:0", "--rpc", devnet.URL, "--deployment", devnet.DepFile)
	base := node.apiURL(t)
	as := func(i int, args ...string) []string {
		return append(args, "--node", base, "--rpc-url", devnet.URL, "--dev-account", string(rune('0'+i)))
	}

	id := strings.TrimSpace(runOK(t, "", as(1, "job", "create", "--evaluator", wallet(3), "--provider", wallet(2), "--description", "summarize the paper", "--quiet")...))
	if id == "" || strings.ContainsAny(id, " \n") {
		t.Fatalf("create --quiet printed %q", id)
	}
	out := runOK(t, "", as(1, "job", "budget", id, "--token", token.Hex(), "--amount", "1.5ether")...)
	if !strings.Contains(out, "job "+id+": open") || !strings.Contains(out, "budget    1.5 of token "+token.Hex()) {
		t.Errorf("budget printed:\n%s", out)
	}
	if out := runOK(t, "", as(1, "job", "fund", id)...); !strings.Contains(out, "job "+id+": funded") {
		t.Errorf("fund printed:\n%s", out)
	}
	// The client cannot submit: only the provider, said in one line.
	r := start(t, as(1, "job", "submit", id, "--deliverable", "mine")...)
	if code := r.wait(t); code != exitFailure || !strings.Contains(r.stderr.String(), "job "+id+": this wallet is not the party that call needs") {
		t.Errorf("submit by the client: exit %d\n%s", code, r.stderr)
	}
	runOK(t, "", as(2, "job", "submit", id, "--deliverable", "the summary")...)
	out = runOK(t, "", as(3, "job", "complete", id, "--reason", "good")...)
	if !strings.Contains(out, "job "+id+": completed") || !strings.Contains(out, "paid      provider 1.5, client 0") || !strings.Contains(out, "PaymentReleased") {
		t.Errorf("complete printed:\n%s", out)
	}
	r = start(t, as(1, "job", "refund", id)...)
	if code := r.wait(t); code != exitFailure || !strings.Contains(r.stderr.String(), "job "+id+" is already completed") {
		t.Errorf("refund of a completed job: exit %d\n%s", code, r.stderr)
	}

	// A second job, funded and rejected by its evaluator: the escrow goes back.
	two := strings.TrimSpace(runOK(t, "", as(1, "job", "create", "--evaluator", wallet(3), "--provider", wallet(2), "--quiet")...))
	runOK(t, "", as(1, "job", "budget", two, "--token", token.Hex(), "--amount", "1ether")...)
	runOK(t, "", as(1, "job", "fund", two)...)
	var res jobResult
	if err := json.Unmarshal([]byte(runOK(t, "", as(3, "job", "reject", two, "--reason", "late", "--json")...)), &res); err != nil {
		t.Fatal(err)
	}
	if res.Job == nil || res.Job.Status != wire.JobRejected || res.Job.Refund != "1000000000000000000" || res.TxHash == "" {
		t.Errorf("reject --json: %+v", res)
	}

	// Through the node's JSON-RPC relay (no --rpc-url): it relays calls to JobEscrow.
	viaNode := func(i int, args ...string) []string {
		return append(args, "--node", base, "--dev-account", string(rune('0'+i)))
	}
	three := strings.TrimSpace(runOK(t, "", viaNode(1, "job", "create", "--evaluator", wallet(3), "--quiet")...))
	if out := runOK(t, "", viaNode(1, "job", "reject", three)...); !strings.Contains(out, "job "+three+": rejected") {
		t.Errorf("reject of an open job through the relay:\n%s", out)
	}

	if out := runOK(t, "", "job", "list", "--node", base, "--status", "completed"); !strings.Contains(out, id+" ") || strings.Contains(out, two+" ") {
		t.Errorf("list --status completed:\n%s", out)
	}
	var list wire.JobList
	if err := json.Unmarshal([]byte(runOK(t, "", "job", "list", "--node", base, "--provider", wallet(2), "--json")), &list); err != nil || len(list.Jobs) != 2 {
		t.Errorf("list --provider --json: %v %+v", err, list)
	}
	var shown wire.Job
	if err := json.Unmarshal([]byte(runOK(t, "", "job", "show", id, "--node", base, "--json")), &shown); err != nil || shown.Description != "summarize the paper" || len(shown.History) != 6 {
		t.Errorf("show --json: %v %+v", err, shown)
	}
	r = start(t, "job", "show", "99", "--node", base)
	if code := r.wait(t); code != exitFailure || !strings.Contains(r.stderr.String(), "job 99 does not exist") {
		t.Errorf("show 99: exit %d\n%s", code, r.stderr)
	}
}

// TestSuretyJobCLIOnAnvil plays Surety's extras with `surety job` on Anvil: three workers
// compete on one job and the client splits its budget between two; a dispute the arbiter
// splits; and a three-part milestone job, each part approved and paid on its own.
func TestSuretyJobCLIOnAnvil(t *testing.T) {
	waiting.Parallel(t) // waits on the node's index, transaction after transaction
	devnet := deployOnAnvil(t, contracts.DeployConfig{})
	ctx := context.Background()
	token, err := contracts.DeployDevToken(ctx, devnet.Client, chain.DevKey(0), "Dev", "DEV")
	if err != nil {
		t.Fatal(err)
	}
	wallet := func(i int) string { return crypto.PubkeyToAddress(chain.DevKey(i).PublicKey).Hex() }
	mint, err := txn.NewSender(ctx, devnet.Client, txn.NewKeySigner(chain.DevKey(1)), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mint.Send(ctx, txn.Call{To: token, Data: contracts.NewDevToken().PackMint(common.HexToAddress(wallet(1)), new(big.Int).Mul(big.NewInt(1e18), big.NewInt(100)))}); err != nil {
		t.Fatal(err)
	}
	node := start(t, "node", "--data-dir", t.TempDir(), "--listen", "127.0.0.1:0", "--rpc", devnet.URL, "--deployment", devnet.DepFile)
	base := node.apiURL(t)
	as := func(i int, args ...string) []string {
		return append(args, "--node", base, "--rpc-url", devnet.URL, "--dev-account", string(rune('0'+i)))
	}
	balance := func(i int) string {
		tok := contracts.NewDevToken()
		b, err := bind.Call(tok.Instance(devnet.Client, token), nil, tok.PackBalanceOf(common.HexToAddress(wallet(i))), tok.UnpackBalanceOf)
		if err != nil {
			t.Fatal(err)
		}
		return b.String()
	}

	// Three workers compete; the client picks two, 70/30.
	id := strings.TrimSpace(runOK(t, "", as(1, "job", "create", "--surety", "--description", "find the bug", "--quiet")...))
	runOK(t, "", as(1, "job", "budget", id, "--token", token.Hex(), "--amount", "10ether", "--arbiter", wallet(2), "--workers", "3", "--max-winners", "2")...)
	runOK(t, "", as(1, "job", "fund", id)...)
	for _, w := range []int{3, 4, 5} {
		runOK(t, "", as(w, "job", "join", id)...)
		runOK(t, "", as(w, "job", "submit", id, "--deliverable", "patch from "+wallet(w))...)
	}
	out := runOK(t, "", as(1, "job", "pick", id, "--winner", wallet(3)+":7000", "--winner", wallet(5)+":3000")...)
	if !strings.Contains(out, "job "+id+": completed") || !strings.Contains(out, "settled   approved: workers 10") ||
		!strings.Contains(out, "awarded 7 (7000 bps)") || !strings.Contains(out, "awarded 3 (3000 bps)") {
		t.Errorf("pick printed:\n%s", out)
	}
	if balance(3) != "7000000000000000000" || balance(5) != "3000000000000000000" || balance(4) != "0" {
		t.Errorf("balances after the pick: %s, %s, %s; want 7, 3 and nothing for the loser", balance(3), balance(5), balance(4))
	}
	// A pick whose shares do not add up is refused before anything is sent.
	r := start(t, as(1, "job", "pick", id, "--winner", wallet(3)+":5000")...)
	if code := r.wait(t); code != exitFailure || !strings.Contains(r.stderr.String(), "already settled") {
		t.Errorf("pick of a settled job: exit %d\n%s", code, r.stderr)
	}
	if out := runOK(t, "", "job", "list", "--node", base, "--provider", wallet(4)); !strings.Contains(out, id+" ") {
		t.Errorf("the loser's jobs:\n%s", out)
	}

	// A dispute: the client rejects, the arbiter gives the worker 40%.
	two := strings.TrimSpace(runOK(t, "", as(1, "job", "create", "--surety", "--quiet")...))
	runOK(t, "", as(1, "job", "budget", two, "--token", token.Hex(), "--amount", "5ether", "--arbiter", wallet(2))...)
	runOK(t, "", as(1, "job", "fund", two)...)
	runOK(t, "", as(6, "job", "join", two)...)
	runOK(t, "", as(6, "job", "submit", two, "--deliverable", "done")...)
	if out := runOK(t, "", as(1, "job", "reject", two, "--reason", "incomplete")...); !strings.Contains(out, "disputed  by "+wallet(1)) {
		t.Errorf("reject of a Surety job printed:\n%s", out)
	}
	r = start(t, as(1, "job", "resolve", two, "--winner", wallet(6)+":4000")...)
	if code := r.wait(t); code != exitFailure || !strings.Contains(r.stderr.String(), "only the job's arbiter may do this") {
		t.Errorf("resolve by the client: exit %d\n%s", code, r.stderr)
	}
	if out := runOK(t, "", as(2, "job", "resolve", two, "--winner", wallet(6)+":4000")...); !strings.Contains(out, "settled   resolved: workers 2, client 3") {
		t.Errorf("resolve printed:\n%s", out)
	}

	// Milestones: three parts for worker 7, each approved and paid on its own.
	var parts wire.JobList
	if err := json.Unmarshal([]byte(runOK(t, "", as(1, "job", "milestones", "--parts", "1ether,2ether,3ether", "--token", token.Hex(), "--arbiter", wallet(2),
		"--worker", wallet(7), "--fund", "--description", "the report", "--json")...)), &parts); err != nil || len(parts.Jobs) != 3 {
		t.Fatalf("milestones --json: %v %+v", err, parts)
	}
	for i, p := range parts.Jobs {
		pid := strconv.FormatUint(p.ID, 10)
		if p.Status != wire.JobFunded || p.Surety == nil || len(p.Surety.Parts) != 3 {
			t.Errorf("part %d: %+v", i+1, p)
		}
		runOK(t, "", as(7, "job", "join", pid)...)
		runOK(t, "", as(7, "job", "submit", pid, "--deliverable", "chapter "+pid)...)
		out := runOK(t, "", as(1, "job", "approve", pid)...)
		if !strings.Contains(out, "job "+pid+": completed") || !strings.Contains(out, "parts     [") {
			t.Errorf("approve of part %d printed:\n%s", i+1, out)
		}
	}
	if balance(7) != "6000000000000000000" {
		t.Errorf("the milestones' worker holds %s, want 6 tokens", balance(7))
	}

	// The stake gate: a join locks the worker's agent stake; the arbiter's ruling slashes it.
	dir := t.TempDir()
	agentKey := filepath.Join(dir, "worker.json")
	did := strings.TrimSpace(runOK(t, "", "did", "new", "--out", agentKey))
	runOK(t, "", as(8, "did", "bind", "--key", agentKey)...)
	runOK(t, "", as(8, "stake", "add", "--key", agentKey, "--amount", "1ether")...)
	staked := func() wire.Holding {
		var h wire.Holding
		if err := json.Unmarshal([]byte(runOK(t, "", "stake", "show", did, "--wallet", wallet(8), "--node", base, "--json")), &h); err != nil {
			t.Fatal(err)
		}
		return h
	}
	gated := strings.TrimSpace(runOK(t, "", as(1, "job", "create", "--surety", "--quiet")...))
	runOK(t, "", as(1, "job", "budget", gated, "--token", token.Hex(), "--amount", "1ether", "--arbiter", wallet(2), "--min-stake", "0.5ether")...)
	runOK(t, "", as(1, "job", "fund", gated)...)
	r = start(t, as(9, "job", "join", gated)...) // no agent: refused before sending
	if code := r.wait(t); code != exitFailure || !strings.Contains(r.stderr.String(), "name the agent whose stake it locks") {
		t.Errorf("join without an agent: exit %d\n%s", code, r.stderr)
	}
	r = start(t, as(9, "job", "join", gated, "--agent", did)...) // another wallet's agent: no stake under it
	if code := r.wait(t); code != exitFailure || !strings.Contains(r.stderr.String(), "no stake to lock") {
		t.Errorf("join with an agent staked under another wallet: exit %d\n%s", code, r.stderr)
	}
	runOK(t, "", as(8, "job", "join", gated, "--key", agentKey)...)
	if h := staked(); h.Locked != "500000000000000000" {
		t.Errorf("after the join the agent's stake = %+v, want 0.5 locked", h)
	}
	runOK(t, "", as(8, "job", "submit", gated, "--deliverable", "audit")...)
	runOK(t, "", as(1, "job", "reject", gated)...)
	out = runOK(t, "", as(2, "job", "resolve", gated, "--slash", "0.25ether")...)
	if !strings.Contains(out, "settled   resolved: workers 0, client 1, slash 0.25") {
		t.Errorf("resolve with a slash printed:\n%s", out)
	}
	if h := staked(); h.Staked != "750000000000000000" || h.Locked != "0" {
		t.Errorf("after the ruling the agent's stake = %+v, want 0.75 staked, nothing locked", h)
	}

	// The same competition from surety bounty: compete opens and funds it in one command,
	// workers join there, the client picks there; the losers get nothing.
	before := map[int]*big.Int{}
	for _, w := range []int{3, 4} {
		before[w], _ = new(big.Int).SetString(balance(w), 10)
	}
	comp := strings.TrimSpace(runOK(t, "", as(1, "bounty", "compete", "--token", token.Hex(), "--amount", "2ether", "--arbiter", wallet(2),
		"--workers", "2", "--description", "fix the flaky test", "--quiet")...))
	for _, w := range []int{3, 4} {
		runOK(t, "", as(w, "bounty", "join", comp)...)
		runOK(t, "", as(w, "job", "submit", comp, "--deliverable", "fix from "+wallet(w))...)
	}
	if out := runOK(t, "", as(1, "bounty", "pick", comp, "--winner", wallet(4)+":10000")...); !strings.Contains(out, "job "+comp+": completed") {
		t.Errorf("bounty pick printed:\n%s", out)
	}
	for w, want := range map[int]string{3: "0", 4: "2000000000000000000"} {
		after, _ := new(big.Int).SetString(balance(w), 10)
		if got := new(big.Int).Sub(after, before[w]); got.String() != want {
			t.Errorf("wallet %d received %s from the competition, want %s", w, got, want)
		}
	}
	r = start(t, as(1, "bounty", "compete", "--token", token.Hex(), "--amount", "2ether", "--arbiter", wallet(2))...)
	if code := r.wait(t); code != exitUsage || !strings.Contains(r.stderr.String(), "a competition takes 2 to 20 workers") {
		t.Errorf("compete with one worker: exit %d\n%s", code, r.stderr)
	}
}

// TestREADMEJobsRunAsWritten pastes the README's ERC-8183 section's blocks into bash against Anvil and a
// node following it, as `make devnet` would run them. What changes: the chain's and the node's
// URLs (free ports, not 8545 and 7746), and the DevToken artifact's path (the script runs in
// a directory of its own, not the checkout).
func TestREADMEJobsRunAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Anvil, a node and some forty transactions")
	}
	waiting.Parallel(t) // waits on the node's index, transaction after transaction
	devnet := deployOnAnvil(t, contracts.DeployConfig{})
	node := start(t, "node", "--data-dir", t.TempDir(), "--listen", "127.0.0.1:0", "--rpc", devnet.URL, "--deployment", devnet.DepFile)
	base := node.apiURL(t)
	artifact, err := filepath.Abs(filepath.Join("..", "..", "contracts", "artifacts", "DevToken.json"))
	if err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	rewrote := 0
	for _, l := range readmeBlocks(t, "## ERC-8183 jobs", "## ") { // to the next section, wherever it goes
		run := l
		if strings.HasPrefix(l, "export ETH_RPC_URL=") {
			run = "export ETH_RPC_URL=" + devnet.URL + " SURETY_NODE=" + base
		}
		run = strings.ReplaceAll(run, "contracts/artifacts/DevToken.json", artifact)
		if run != l {
			rewrote++
		}
		script.WriteString("echo '+ " + strings.ReplaceAll(l, "'", `'"'"'`) + "'\n" + run + "\n")
	}
	if rewrote != 2 {
		t.Fatalf("rewrote %d lines of the README's jobs block, want 2 (the URLs, the artifact)", rewrote)
	}
	out := runScript(t, script.String(), "PATH="+filepath.Dir(testutil.Tool(t, "cast"))+":"+os.Getenv("PATH"))
	for _, want := range []string{": completed", "settled   approved: workers 10", "awarded 7 (7000 bps)", `"outcome": "approved"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the README's jobs block does not show %q:\n%s", want, out)
		}
	}
}
