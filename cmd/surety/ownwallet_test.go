package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
)

// TestOwnWalletStakesOnAnvil: a user stakes from a wallet the node never holds. The keystore
// is made by Foundry's cast (an independent implementation of the format); the CLI unlocks it
// with $ETH_PASSWORD, binds and stakes with its own transactions to --rpc-url, shows each one
// (sent, mined, indexed), and prints the node's view; with no --rpc-url it sends through the
// node's JSON-RPC relay. The chain mines a block a second and
// the node waits a confirmation, so the CLI waits for the node's index, saying so. A raw key
// from the environment unbonds; wallet mistakes are one-line refusals that send nothing.
func TestOwnWalletStakesOnAnvil(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Anvil and a node")
	}
	t.Parallel() // mostly waits on blocks and processes; a long wait, not through the gate (waiting)
	a := deployOnSlowAnvil(t, time.Second)
	dir, depFile := t.TempDir(), a.DepFile
	node := start(t, "node", "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0", "--rpc-url", a.URL, "--deployment", depFile,
		"--confirmations", "1", "--p2p-listen", "/ip4/127.0.0.1/tcp/0", "--log-level", "warn")
	base := node.apiURL(t)

	// The user's wallet: Anvil's account 5, in a keystore cast writes.
	key := chain.DevKey(5)
	addr := crypto.PubkeyToAddress(key.PublicKey).Hex()
	ksDir := filepath.Join(dir, "keystores")
	cast := exec.Command(testutil.Tool(t, "cast"), "wallet", "import", "market", "--keystore-dir", ksDir,
		"--private-key", "0x"+hex.EncodeToString(crypto.FromECDSA(key)), "--unsafe-password", "s3cret")
	if out, err := cast.CombinedOutput(); err != nil {
		t.Fatalf("cast wallet import: %v\n%s", err, out)
	}
	keystoreFile := filepath.Join(ksDir, "market")
	agentKey := filepath.Join(dir, "agent.json")
	did := strings.TrimSpace(runOK(t, "", "did", "new", "--out", agentKey))

	type result struct {
		code           int
		stdout, stderr string
	}
	run := func(vars map[string]string, args ...string) result {
		t.Helper()
		r := startWithEnv(t, "", vars, append(args, "--node", base)...)
		code := r.wait(t)
		return result{code, r.stdout.String(), r.stderr.String()}
	}
	refused := func(want string, code int, vars map[string]string, args ...string) {
		t.Helper()
		r := startWithEnv(t, "", vars, append(args, "--node", base)...)
		got := r.wait(t)
		// Progress lines may come first; the error is one line, and the last.
		lines := strings.Split(strings.TrimSpace(r.stderr.String()), "\n")
		if got != code || !strings.Contains(lines[len(lines)-1], want) || strings.Count(r.stderr.String(), "surety ") != 1 {
			t.Errorf("%v: exit %d, want %d and one line saying %q:\n%s", args, got, code, want, r.stderr)
		}
	}
	pw := map[string]string{"ETH_PASSWORD": "s3cret"}
	refused("could not decrypt key with given password", exitUsage, map[string]string{"ETH_PASSWORD": "wrong"},
		"stake", "add", "--key", agentKey, "--keystore", keystoreFile, "--amount", "1ether", "--rpc-url", a.URL)
	refused("does not answer", exitUsage, pw, "stake", "add", "--key", agentKey, "--keystore", keystoreFile, "--amount", "1ether", "--rpc-url", "http://127.0.0.1:1")
	refused("name one wallet", exitUsage, pw, "stake", "add", "--key", agentKey, "--keystore", keystoreFile, "--dev-account", "1", "--amount", "1ether", "--rpc-url", a.URL)
	refused("password", exitUsage, nil, "stake", "add", "--key", agentKey, "--keystore", keystoreFile, "--amount", "1ether", "--rpc-url", a.URL)

	r := run(pw, "stake", "add", "--key", agentKey, "--keystore", keystoreFile, "--amount", "1ether", "--rpc-url", a.URL)
	if r.code != exitOK {
		t.Fatalf("stake add from the keystore: exit %d\n%s", r.code, r.stderr)
	}
	if out := r.stdout; !strings.Contains(out, did+" under wallet "+addr+": bound") || !strings.Contains(out, "staked     1 ETH") {
		t.Errorf("stake add printed:\n%s", out)
	}
	steps := r.stderr
	if strings.Count(steps, ": sent 0x") != 2 || strings.Count(steps, ": mined 0x") != 2 || !strings.Contains(steps, "indexed by the node") {
		t.Errorf("stake add showed (want the bind and the stake, each sent and mined, then indexed):\n%s", steps)
	}

	// A raw key from the environment, as in CI, unbonds part of it, sent through the node's
	// JSON-RPC relay (no --rpc-url); the node read it all from the chain.
	r = run(map[string]string{"ETH_PRIVATE_KEY": hex.EncodeToString(crypto.FromECDSA(key))},
		"stake", "unbond", "--key", agentKey, "--amount", "0.25ether")
	if r.code != exitOK || !strings.Contains(r.stdout, "staked     0.75 ETH") || !strings.Contains(r.stdout, "unbonding  0.25 ETH") {
		t.Fatalf("stake unbond from $ETH_PRIVATE_KEY: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if out := runOK(t, "", "stake", "show", "--node", base, "--wallet", addr, did); !strings.Contains(out, "staked     0.75 ETH") {
		t.Errorf("stake show printed:\n%s", out)
	}
	// A bounty settled from wallets the node never holds: a market (a raw key from the
	// environment) posts through the relay, the agent's keystore wallet claims (locking
	// stake) and submits, and the market accepts; the node's index follows each step.
	market := map[string]string{"ETH_PRIVATE_KEY": hex.EncodeToString(crypto.FromECDSA(chain.DevKey(6)))}
	arbiter := crypto.PubkeyToAddress(chain.DevKey(7).PublicKey).Hex()
	r = run(market, "bounty", "post", "--amount", "0.1ether", "--arbiter", arbiter, "--min-stake", "0.5ether", "--spec", "audit the vault", "--quiet")
	id := strings.TrimSpace(r.stdout)
	if r.code != exitOK || id == "" || !strings.Contains(r.stderr, "indexed by the node") {
		t.Fatalf("bounty post from the market's own wallet: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, step := range []struct {
		vars map[string]string
		args []string
		want string
	}{
		{pw, []string{"bounty", "claim", "--keystore", keystoreFile, "--key", agentKey, id}, "bounty " + id + ": assigned"},
		{pw, []string{"bounty", "submit", "--keystore", keystoreFile, "--result", "no findings", id}, "bounty " + id + ": submitted"},
		{market, []string{"bounty", "accept", id}, "bounty " + id + ": accepted"},
	} {
		r = run(step.vars, append(step.args, "--rpc-url", a.URL)...)
		if r.code != exitOK || !strings.Contains(r.stdout, step.want) {
			t.Fatalf("%v: exit %d, want %q:\n%s%s", step.args, r.code, step.want, r.stdout, r.stderr)
		}
	}
	if out := runOK(t, "", "bounty", "show", "--node", base, id); !strings.Contains(out, "audit the vault") || !strings.Contains(out, "worker  "+addr) {
		t.Errorf("bounty show after the own-wallet tour:\n%s", out)
	}
	// A claim that squats on a bounty without a minimum stake: the agent's wallet claims and
	// does nothing; the market's unclaim (through the node's relay) is refused while the claim
	// window runs, then takes the bounty back, open again, and the market cancels it.
	r = run(market, "bounty", "post", "--amount", "0.1ether", "--arbiter", arbiter, "--quiet")
	squatted := strings.TrimSpace(r.stdout)
	if r.code != exitOK || squatted == "" {
		t.Fatalf("bounty post without a minimum stake: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = run(pw, "bounty", "claim", "--keystore", keystoreFile, "--key", agentKey, squatted); r.code != exitOK {
		t.Fatalf("claim: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	refused("its worker has until", exitFailure, market, "bounty", "unclaim", squatted)
	if err := a.IncreaseTime(context.Background(), escrow.ClaimWindow+time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct{ action, want string }{{"unclaim", ": open"}, {"cancel", ": cancelled"}} {
		if r = run(market, "bounty", step.action, squatted); r.code != exitOK || !strings.Contains(r.stdout, "bounty "+squatted+step.want) {
			t.Fatalf("%s after the claim window: exit %d\n%s%s", step.action, r.code, r.stdout, r.stderr)
		}
	}

	// A wallet behind Clef (a stand-in speaking its API): the binding is typed data Clef
	// signs, the bind and the stake are transactions it signs; a declined request sends
	// nothing, and a stake from a bound wallet does not ask for the binding again.
	clef := testutil.StartClef(t, chain.DevKey(8))
	clefAgent := filepath.Join(dir, "clef-agent.json")
	clefDID := strings.TrimSpace(runOK(t, "", "did", "new", "--out", clefAgent))
	signer := []string{"--signer", clef.URL, "--from", clef.Address().Hex()}
	clef.Refuse.Store(true)
	refused("denied", exitFailure, nil, append([]string{"did", "bind", "--key", clefAgent}, signer...)...)
	clef.Refuse.Store(false)
	if n := clef.SignedTxs.Load(); n != 0 {
		t.Errorf("a declined bind had %d transactions signed", n)
	}
	r = run(nil, append([]string{"did", "bind", "--key", clefAgent}, signer...)...)
	if r.code != exitOK || !strings.Contains(r.stdout, "bound "+clefDID+" to wallet "+clef.Address().Hex()+" on chain") {
		t.Fatalf("did bind behind Clef: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(nil, append([]string{"stake", "add", "--key", clefAgent, "--amount", "1ether"}, signer...)...)
	if r.code != exitOK || !strings.Contains(r.stdout, "staked     1 ETH") {
		t.Fatalf("stake add behind Clef: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if typed, txs := clef.SignedTyped.Load(), clef.SignedTxs.Load(); typed != 1 || txs != 2 {
		t.Errorf("Clef signed %d bindings and %d transactions; want the one binding, the bind and the stake", typed, txs)
	}
	// Clef deploys too: four contract creations (the escrow makes its registry, the hook its
	// pool), JobEscrow's two settings (the hook allowed, the fee) and the three ERC-8004
	// registries: 9 transactions after the bind and the stake.
	depOut := filepath.Join(dir, "clef-deployment.json")
	deploy := startWithEnv(t, "", nil, append([]string{"deploy", "--rpc-url", a.URL, "--out", depOut}, signer...)...)
	if code := deploy.wait(t); code != exitOK || clef.SignedTxs.Load() != 11 {
		t.Fatalf("deploy behind Clef: exit %d, %d transactions signed in all (want 11)\n%s", code, clef.SignedTxs.Load(), deploy.stderr.String())
	}
	raw, err := os.ReadFile(depOut)
	if err != nil {
		t.Fatal(err)
	}
	dep, err := contracts.ParseDeployment(raw)
	if err != nil {
		t.Fatal(err)
	}
	if code, err := a.Client.CodeAt(context.Background(), dep.Contracts.BountyEscrow, nil); err != nil || len(code) == 0 || dep.Deployer != clef.Address() {
		t.Errorf("Clef's deployment: escrow code %d bytes (%v), deployer %s", len(code), err, dep.Deployer.Hex())
	}

	// A pinned deployment: the node must name the same contracts, else nothing is sent (a
	// node naming contracts of its own would have the wallet pay into them).
	refused("another deployment", exitFailure, pw, "stake", "add", "--key", agentKey, "--keystore", keystoreFile, "--amount", "1ether", "--deployment", depOut)
	refused("another deployment", exitFailure, nil, append([]string{"did", "bind", "--key", clefAgent, "--deployment", depOut}, signer...)...)
	pinned := map[string]string{"ETH_PASSWORD": "s3cret", "SURETY_DEPLOYMENT": a.DepFile}
	r = run(pinned, "stake", "add", "--key", agentKey, "--keystore", keystoreFile, "--amount", "0.5ether")
	if r.code != exitOK || !strings.Contains(r.stdout, "staked     1.25 ETH") {
		t.Fatalf("stake add with the node's own deployment pinned: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// Fees as Foundry names them: the tip and the fee cap offered are the user's.
	r = run(pinned, "stake", "add", "--key", agentKey, "--keystore", keystoreFile, "--amount", "0.25ether", "--priority-gas-price", "3gwei", "--gas-price", "50gwei")
	sent := regexp.MustCompile(`sent (0x[0-9a-f]{64})`).FindStringSubmatch(r.stderr)
	if r.code != exitOK || sent == nil {
		t.Fatalf("stake add with named fees: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if tx, _, err := a.Client.TransactionByHash(context.Background(), common.HexToHash(sent[1])); err != nil || tx.GasTipCap().Cmp(big.NewInt(3e9)) != 0 || tx.GasFeeCap().Cmp(big.NewInt(50e9)) != 0 {
		t.Errorf("the stake offered tip %v and fee cap %v (%v), want 3 and 50 gwei", tx.GasTipCap(), tx.GasFeeCap(), err)
	}

	// The node holds no wallet of the user's: it cannot act from it.
	refused("holds no such wallet", exitFailure, nil, "stake", "add", "--key", agentKey, "--wallet", addr, "--amount", "1ether")
	if entries, err := os.ReadDir(filepath.Join(dir, "data", "wallets")); err == nil && len(entries) > 0 {
		t.Errorf("the node keeps %d wallets; it was given none", len(entries))
	}
}

// TestOwnWalletWritesReadAlikeOnEveryNode: writes an own wallet sends through one node's relay
// (a stake, then a bounty post) are read the same by another node process on the same chain:
// neither node holds anything of them but what both index from the chain. The task text is
// not chain state: the chain holds its hash, and the CLI hands the text to the node it used
// (any node takes it from anyone, checked against the hash), so it is left out here.
func TestOwnWalletWritesReadAlikeOnEveryNode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Anvil and two node processes")
	}
	waiting.Parallel(t) // mostly waits on processes
	nw := startNetwork(t, 2, "--log-epoch", "1h", "--log-grace", "15m", "--sync-every", "1s", "--score-step", "1h", "--log-level", "warn")
	a, b := nw.Nodes[0].URL(), nw.Nodes[1].URL()
	dir := t.TempDir()
	agentKey := filepath.Join(dir, "agent.json")
	did := strings.TrimSpace(runOK(t, "", "did", "new", "--out", agentKey))
	key := chain.DevKey(4)
	wallet := map[string]string{"ETH_PRIVATE_KEY": hex.EncodeToString(crypto.FromECDSA(key)), "SURETY_DEPLOYMENT": nw.DeploymentFile}
	send := func(args ...string) string {
		t.Helper()
		r := startWithEnv(t, "", wallet, append(args, "--node", a)...)
		if code := r.waitFor(t, time.Minute); code != exitOK {
			t.Fatalf("%v through node 0: exit %d\n%s%s", args, code, r.stdout, r.stderr)
		}
		return r.stdout.String()
	}
	send("stake", "add", "--key", agentKey, "--amount", "1ether")
	id := strings.TrimSpace(send("bounty", "post", "--amount", "0.1ether", "--arbiter", crypto.PubkeyToAddress(chain.DevKey(7).PublicKey).Hex(), "--spec", "audit", "--quiet"))
	addr := crypto.PubkeyToAddress(key.PublicKey).Hex()
	views := func(base string) string {
		stakeOut := startWithEnv(t, "", nil, "stake", "show", "--json", "--node", base, "--wallet", addr, did)
		bountyOut := startWithEnv(t, "", nil, "bounty", "show", "--json", "--node", base, id)
		if stakeOut.wait(t) != exitOK || bountyOut.wait(t) != exitOK {
			return ""
		}
		var bounty map[string]any
		if err := json.Unmarshal([]byte(bountyOut.stdout.String()), &bounty); err != nil {
			t.Fatalf("bounty show --json: %v", err)
		}
		delete(bounty, "spec")
		chainView, _ := json.Marshal(bounty)
		return stakeOut.stdout.String() + string(chainView)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		onA, onB := views(a), views(b)
		if onA != "" && onA == onB && strings.Contains(onA, `"staked"`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the nodes read the own wallet's writes differently:\nnode 0: %s\nnode 1: %s", onA, onB)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
