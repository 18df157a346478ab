package contracts_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
)

// castCLI runs Foundry's cast against one Anvil: an ERC-8183 client that knows nothing of
// Surety but the standard's function signatures.
type castCLI struct {
	t        *testing.T
	bin, url string
}

func (c castCLI) run(args ...string) string {
	c.t.Helper()
	// Options before the positional arguments: `cast send --create CODE SIG ARGS...` takes
	// everything after the signature as constructor arguments.
	args = append([]string{args[0], "--rpc-url", c.url}, args[1:]...)
	out, err := exec.Command(c.bin, args...).CombinedOutput()
	if err != nil {
		c.t.Fatalf("cast %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// send signs with dev account `from` and returns the receipt's JSON, failing on a revert.
func (c castCLI) send(from int, args ...string) map[string]any {
	c.t.Helper()
	out := c.run(append([]string{"send", "--json", "--private-key", devKeyHex(from)}, args...)...)
	var r map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		c.t.Fatalf("cast send %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	if r["status"] != "0x1" {
		c.t.Fatalf("cast send %s failed: %s", strings.Join(args, " "), out)
	}
	return r
}

// call returns the first field of cast call's answer (cast prints "19500000 [1.95e7]").
func (c castCLI) call(to, sig string, args ...string) string {
	c.t.Helper()
	out := c.run(append([]string{"call", to, sig}, args...)...)
	if f := strings.Fields(out); len(f) > 0 {
		return f[0]
	}
	return out
}

// artifactBytecode reads a contract's creation bytecode from contracts/artifacts.
func artifactBytecode(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("artifacts", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Bytecode string `json:"bytecode"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatal(err)
	}
	return a.Bytecode
}

func devAddr(i int) string { return crypto.PubkeyToAddress(chain.DevKey(i).PublicKey).Hex() }

func devKeyHex(i int) string { return "0x" + hex.EncodeToString(crypto.FromECDSA(chain.DevKey(i))) }

// deploy creates contract `name` from its committed artifact with cast, from dev account
// `from`, and returns its address.
func (c castCLI) deploy(from int, name string, ctor ...string) string {
	c.t.Helper()
	r := c.send(from, append([]string{"--create", artifactBytecode(c.t, name)}, ctor...)...)
	addr, _ := r["contractAddress"].(string)
	if addr == "" {
		c.t.Fatalf("deploy %s: no contract address", name)
	}
	return addr
}

// TestJobEscrowWithCastAlone is issue 29's first acceptance: an ERC-8183 job created, funded,
// submitted and completed against Surety's contract with cast alone. cast deploys DevToken and
// JobEscrow from the committed artifacts (`cast send --create`), the owner sets a 2.5%
// platform fee and a 1% evaluator fee, and the client, the provider and the evaluator walk
// createJob → setBudget → fund → submit → complete with `cast send`, each step's status read
// back with `cast call getJob`, and every balance checked to the wei with `cast call balanceOf`.
func TestJobEscrowWithCastAlone(t *testing.T) {
	a := testutil.Anvil(t)
	c := castCLI{t: t, bin: testutil.Tool(t, "cast"), url: a.URL}
	const deployer, client, provider, evaluator, treasury = 0, 1, 2, 3, 4

	token := c.deploy(deployer, "DevToken", "constructor(string,string)", "USD Coin", "USDC")
	escrow := c.deploy(deployer, "JobEscrow", "constructor(address,address)", devAddr(deployer), devAddr(treasury))
	c.send(deployer, escrow, "setPlatformFee(uint256,address)", "250", devAddr(treasury))
	c.send(deployer, escrow, "setEvaluatorFee(uint256)", "100")
	c.send(client, token, "mint(address,uint256)", devAddr(client), "1000000000")

	const getJob = "getJob(uint256)((uint256,address,address,address,string,uint256,uint256,uint8,address,address,uint256,uint256))"
	status := func(id string) string {
		t.Helper()
		// cast prints the tuple: (id, client, provider, evaluator, "description", budget, expiredAt, status, ...)
		out := c.run("call", escrow, getJob, id)
		fields := strings.Split(strings.Trim(out, "()"), ", ")
		if len(fields) < 8 {
			t.Fatalf("getJob(%s) = %s", id, out)
		}
		return strings.Fields(fields[7])[0]
	}
	balance := func(who int) *big.Int {
		t.Helper()
		v, ok := new(big.Int).SetString(c.call(token, "balanceOf(address)(uint256)", devAddr(who)), 10)
		if !ok {
			t.Fatalf("balanceOf %d", who)
		}
		return v
	}

	now, ok := new(big.Int).SetString(c.run("block", "latest", "--field", "timestamp"), 10)
	if !ok {
		t.Fatal("block timestamp")
	}
	expiredAt := new(big.Int).Add(now, big.NewInt(3600)).String()
	c.send(client, escrow, "createJob(address,address,uint256,string,address,uint256)",
		devAddr(provider), devAddr(evaluator), expiredAt, "Generate a beautiful landscape wallpaper image", "0x0000000000000000000000000000000000000000", "0")
	id := c.call(escrow, "jobCounter()(uint256)")
	if id != "1" {
		t.Fatalf("jobCounter = %s, want 1", id)
	}
	if s := status(id); s != "0" {
		t.Fatalf("after createJob: status %s, want 0 (Open)", s)
	}

	const budget = "20000000" // 20 USDC
	c.send(provider, escrow, "setBudget(uint256,address,uint256,bytes)", id, token, budget, "0x")
	if got := c.run("call", escrow, getJob, id); !strings.Contains(got, ", "+budget+" [2e7], ") || !strings.Contains(strings.ToLower(got), strings.ToLower(token)) {
		t.Fatalf("after setBudget: getJob = %s, want budget %s in token %s", got, budget, token)
	}
	c.send(client, token, "approve(address,uint256)", escrow, budget)
	c.send(client, escrow, "fund(uint256,uint256,bytes)", id, budget, "0x")
	if s := status(id); s != "1" {
		t.Fatalf("after fund: status %s, want 1 (Funded)", s)
	}
	if got := c.call(token, "balanceOf(address)(uint256)", escrow); got != budget {
		t.Fatalf("escrow holds %s, want %s", got, budget)
	}
	c.send(provider, escrow, "submit(uint256,bytes32,bytes)", id, "0x"+strings.Repeat("ab", 32), "0x")
	if s := status(id); s != "2" {
		t.Fatalf("after submit: status %s, want 2 (Submitted)", s)
	}
	clientBefore := balance(client)
	c.send(evaluator, escrow, "complete(uint256,bytes32,bytes)", id, "0x"+strings.Repeat("00", 32), "0x")
	if s := status(id); s != "3" {
		t.Fatalf("after complete: status %s, want 3 (Completed)", s)
	}

	// 20,000,000 at 2.5% and 1%: 500,000 to the treasury, 200,000 to the evaluator, the rest
	// (19,300,000) to the provider; the escrow keeps nothing and the client is not refunded.
	for _, want := range []struct {
		who  int
		name string
		wei  int64
	}{{treasury, "treasury", 500_000}, {evaluator, "evaluator", 200_000}, {provider, "provider", 19_300_000}} {
		if got := balance(want.who); got.Cmp(big.NewInt(want.wei)) != 0 {
			t.Errorf("%s holds %s, want %d", want.name, got, want.wei)
		}
	}
	if got := c.call(token, "balanceOf(address)(uint256)", escrow); got != "0" {
		t.Errorf("escrow holds %s after complete, want 0", got)
	}
	if got := balance(client); got.Cmp(clientBefore) != 0 {
		t.Errorf("client's balance moved on complete: %s -> %s", clientBefore, got)
	}
}

// TestJobEscrowWithViem is the independent-implementation check: viem, with an ABI written by
// hand from the ERC's text (clients/ts/interop/erc8183-viem.mjs), drives one job through
// createJob → setBudget → fund → submit → complete against JobEscrow on Anvil, decoding every
// status with getJob and every event with its own ABI.
func TestJobEscrowWithViem(t *testing.T) {
	nodeJS, script := testutil.NodeScript(t, "erc8183-viem.mjs", "viem")
	a := testutil.Anvil(t)
	c := castCLI{t: t, bin: testutil.Tool(t, "cast"), url: a.URL}
	const deployer, client, provider, evaluator = 0, 1, 2, 3
	token := c.deploy(deployer, "DevToken", "constructor(string,string)", "USD Coin", "USDC")
	escrow := c.deploy(deployer, "JobEscrow", "constructor(address,address)", devAddr(deployer), devAddr(deployer))
	c.send(client, token, "mint(address,uint256)", devAddr(client), "1000000000")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeJS, script)
	cmd.Env = append(os.Environ(), "RPC="+a.URL, "ESCROW="+escrow, "TOKEN="+token,
		"CLIENT_KEY="+devKeyHex(client), "PROVIDER_KEY="+devKeyHex(provider), "EVALUATOR_KEY="+devKeyHex(evaluator))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("erc8183-viem.mjs: %v\n%s", err, stderr.String())
	}
	var got struct {
		JobID, Description, Client, Budget, PaymentToken, ProviderBalance string
		Statuses                                                          []int
		Events                                                            []string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("erc8183-viem.mjs printed %s: %v", out, err)
	}
	want := []int{0, 0, 1, 2, 3} // created, budget set, funded, submitted, completed
	if fmt.Sprint(got.Statuses) != fmt.Sprint(want) {
		t.Errorf("statuses %v, want %v", got.Statuses, want)
	}
	wantEvents := []string{"JobCreated", "BudgetSet", "JobFunded", "JobSubmitted", "JobCompleted", "PaymentReleased"}
	if fmt.Sprint(got.Events) != fmt.Sprint(wantEvents) {
		t.Errorf("events %v, want %v", got.Events, wantEvents)
	}
	if got.JobID != "1" || got.Description != "Generate a beautiful landscape wallpaper image" || !strings.EqualFold(got.Client, devAddr(client)) ||
		got.Budget != "20000000" || !strings.EqualFold(got.PaymentToken, token) || got.ProviderBalance != "20000000" {
		t.Errorf("viem read %+v", got)
	}
	if bal := c.call(token, "balanceOf(address)(uint256)", devAddr(provider)); bal != "20000000" {
		t.Errorf("cast reads the provider's balance as %s, want 20000000", bal)
	}
}
