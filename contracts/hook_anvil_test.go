package contracts_test

import (
	"context"
	"fmt"
	"math/big"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
)

// castJobs drives Surety's ERC-8183 jobs on a real Anvil with Foundry's cast alone: Go only
// deploys (contracts.Deploy and a DevToken) and reads the addresses; every job transaction
// and every balance read is a cast command, so these tests hold the contracts to their ABI,
// not to our bindings.
type castJobs struct {
	t     *testing.T
	cast  string
	rpc   string
	dep   *contracts.Deployment
	token common.Address
	pool  common.Address
}

// The plan tuple as cast spells it (ISuretyHook.Plan).
const planType = "f((address,uint32,uint32,uint16,uint16,uint128,address,uint256))"

func newCastJobs(t *testing.T) *castJobs {
	t.Helper()
	a := testutil.Anvil(t)
	ctx := context.Background()
	c, err := chain.Dial(ctx, a.URL, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	dep, err := contracts.Deploy(ctx, c, chain.DevKey(0), contracts.DeployConfig{FeeBps: 100}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := contracts.DeployDevToken(ctx, c, chain.DevKey(0), "Job", "JOB")
	if err != nil {
		t.Fatal(err)
	}
	j := &castJobs{t: t, cast: testutil.Tool(t, "cast"), rpc: a.URL, dep: dep, token: tok}
	j.pool = common.HexToAddress(j.call(dep.Contracts.SuretyHook, "pool()(address)"))
	return j
}

func keyHex(i int) string { return fmt.Sprintf("0x%x", crypto.FromECDSA(chain.DevKey(i))) }

func who(i int) common.Address { return crypto.PubkeyToAddress(chain.DevKey(i).PublicKey) }

func (j *castJobs) run(args ...string) string {
	j.t.Helper()
	if args[0] != "abi-encode" {
		args = append(args, "--rpc-url", j.rpc)
	}
	out, err := exec.Command(j.cast, args...).CombinedOutput()
	if err != nil {
		j.t.Fatalf("cast %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// send has dev account i send sig(args) to `to` (with --value when value is not "").
func (j *castJobs) send(i int, to common.Address, value, sig string, args ...string) {
	j.t.Helper()
	a := []string{"send", "--private-key", keyHex(i), to.Hex(), sig}
	a = append(a, args...)
	if value != "" {
		a = append(a, "--value", value)
	}
	j.run(a...)
}

// call reads sig(args) from `to`; a number's " [1e18]" annotation is cut off.
func (j *castJobs) call(to common.Address, sig string, args ...string) string {
	j.t.Helper()
	out := j.run(append([]string{"call", to.Hex(), sig}, args...)...)
	if i := strings.IndexByte(out, ' '); i > 0 {
		out = out[:i]
	}
	return out
}

// job is the core's jobs(id) getter, one field a line (id, client, provider, evaluator,
// description, budget, expiredAt, status, hook, paymentToken, providerAgentId, submittedAt).
func (j *castJobs) job(id string) []string {
	j.t.Helper()
	out := j.run("call", j.dep.Contracts.JobEscrow.Hex(),
		"jobs(uint256)(uint256,address,address,address,string,uint256,uint256,uint8,address,address,uint256,uint256)", id)
	f := strings.Split(out, "\n")
	if len(f) != 12 {
		j.t.Fatalf("jobs(%s): %q", id, out)
	}
	return f
}

func (j *castJobs) tokenBalance(a common.Address) *big.Int {
	j.t.Helper()
	v, ok := new(big.Int).SetString(j.call(j.token, "balanceOf(address)(uint256)", a.Hex()), 10)
	if !ok {
		j.t.Fatal("balanceOf: not a number")
	}
	return v
}

func (j *castJobs) ethBalance(a common.Address) *big.Int {
	j.t.Helper()
	v, ok := new(big.Int).SetString(j.run("balance", a.Hex()), 10)
	if !ok {
		j.t.Fatal("balance: not a number")
	}
	return v
}

func (j *castJobs) agent(i int) string {
	return crypto.Keccak256Hash([]byte(fmt.Sprintf("did:key:worker-%d", i))).Hex()
}

// stake binds dev account i's agent and stakes 2 ETH.
func (j *castJobs) stake(i int) {
	j.t.Helper()
	reg := j.dep.Contracts.StakeRegistry
	j.send(i, reg, "", "bind(bytes32,bytes)", j.agent(i), "0x6a7773")
	j.send(i, reg, "2ether", "stake(bytes32,uint256)", j.agent(i), "2000000000000000000")
}

// open has client (dev account 1) create, plan and fund a Surety job of budget; arbiter is
// dev account 3. Returns the job id.
func (j *castJobs) open(budget string, maxEntries, maxWinners int, minStake, worker string, prev string) string {
	j.t.Helper()
	core, hook := j.dep.Contracts.JobEscrow, j.dep.Contracts.SuretyHook
	j.send(1, j.token, "", "mint(address,uint256)", who(1).Hex(), budget)
	j.send(1, j.token, "", "approve(address,uint256)", core.Hex(), budget)
	head := j.run("block", "latest", "--field", "timestamp")
	exp, _ := new(big.Int).SetString(head, 10)
	exp.Add(exp, big.NewInt(30*86400))
	j.send(1, core, "", "createJob(address,address,uint256,string,address,uint256)", j.pool.Hex(), hook.Hex(), exp.String(), "a Surety job", hook.Hex(), "0")
	id := j.call(core, "jobCounter()(uint256)")
	enc := j.run("abi-encode", planType, fmt.Sprintf("(%s,259200,432000,%d,%d,%s,%s,%s)", who(3).Hex(), maxEntries, maxWinners, minStake, worker, prev))
	j.send(1, core, "", "setBudget(uint256,address,uint256,bytes)", id, j.token.Hex(), budget, enc)
	j.send(1, core, "", "fund(uint256,uint256,bytes)", id, budget, "0x")
	return id
}

func (j *castJobs) joinAndSubmit(i int, id string) {
	j.t.Helper()
	hook := j.dep.Contracts.SuretyHook
	j.send(i, hook, "", "join(uint256,bytes32)", id, j.agent(i))
	j.send(i, hook, "", "submit(uint256,bytes32)", id, crypto.Keccak256Hash([]byte(fmt.Sprintf("work %s by %d", id, i))).Hex())
}

func bi(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return v
}

// netOf is the budget less JobEscrow's 1% platform fee (the deployment's FeeBps 100).
func netOf(budget *big.Int) *big.Int {
	fee := new(big.Int).Div(new(big.Int).Mul(budget, big.NewInt(100)), big.NewInt(10_000))
	return new(big.Int).Sub(budget, fee)
}

func bpsOf(x *big.Int, bps int64) *big.Int {
	return new(big.Int).Div(new(big.Int).Mul(x, big.NewInt(bps)), big.NewInt(10_000))
}

// TestHookDisputeSplitOnAnvil: a rejected job disputed and split through the hook: the
// arbiter gives the worker 60% and slashes 0.4 ETH of its stake to the client; every balance
// is checked to the wei.
func TestHookDisputeSplitOnAnvil(t *testing.T) {
	j := newCastJobs(t)
	hook := j.dep.Contracts.SuretyHook
	j.stake(2)
	budget := "1000000000000000000000" // 1,000 tokens
	id := j.open(budget, 1, 1, "1000000000000000000", "0x0000000000000000000000000000000000000000", "0")
	if f := j.job(id); f[2] != j.pool.Hex() || f[3] != hook.Hex() || f[7] != "1" {
		t.Fatalf("jobs(%s) = %q, want the pool as provider, the hook as evaluator, Funded", id, f)
	}
	j.joinAndSubmit(2, id)
	if f := j.job(id); f[7] != "2" {
		t.Fatalf("core status %s after the submission, want Submitted (2)", f[7])
	}
	j.send(1, hook, "", "reject(uint256,bytes32)", id, crypto.Keccak256Hash([]byte("not what I asked")).Hex())
	clientTok, clientEth := j.tokenBalance(who(1)), j.ethBalance(who(1))
	treasuryTok := j.tokenBalance(who(0))
	j.send(3, hook, "", "resolve(uint256,address[],uint16[],uint256)", id, "["+who(2).Hex()+"]", "[6000]", "400000000000000000")
	b := bi(budget)
	net := netOf(b)
	toWorker := bpsOf(net, 6000)
	if got := j.tokenBalance(who(2)); got.Cmp(toWorker) != 0 {
		t.Errorf("worker got %s, want %s", got, toWorker)
	}
	if f := j.job(id); f[7] != "3" {
		t.Errorf("core status %s after the split, want Completed (3)", f[7])
	}
	if got := new(big.Int).Sub(j.tokenBalance(who(1)), clientTok); got.Cmp(new(big.Int).Sub(net, toWorker)) != 0 {
		t.Errorf("client got back %s, want %s", got, new(big.Int).Sub(net, toWorker))
	}
	if got := new(big.Int).Sub(j.tokenBalance(who(0)), treasuryTok); got.Cmp(new(big.Int).Sub(b, net)) != 0 {
		t.Errorf("treasury got %s, want %s", got, new(big.Int).Sub(b, net))
	}
	if got := new(big.Int).Sub(j.ethBalance(who(1)), clientEth); got.Cmp(bi("400000000000000000")) != 0 {
		t.Errorf("client's ETH grew by %s, want the 0.4 ETH slash", got)
	}
	if got := j.call(j.dep.Contracts.StakeRegistry, "stakeOf(bytes32,address)(uint256)", j.agent(2), who(2).Hex()); got != "1600000000000000000" {
		t.Errorf("worker's stake %s, want 1.6 ETH", got)
	}
	if got := j.call(j.dep.Contracts.StakeRegistry, "freeStakeOf(bytes32,address)(uint256)", j.agent(2), who(2).Hex()); got != "1600000000000000000" {
		t.Errorf("worker's free stake %s, want all of it: the lock ended", got)
	}
	for _, a := range []common.Address{j.pool, hook, j.dep.Contracts.JobEscrow} {
		if got := j.tokenBalance(a); got.Sign() != 0 {
			t.Errorf("%s holds %s after the ruling", a, got)
		}
	}
}

// TestHookThreeWorkersCompeteOnAnvil: three workers join and submit; the client picks two,
// 70/30; the third gets nothing and loses no stake.
func TestHookThreeWorkersCompeteOnAnvil(t *testing.T) {
	j := newCastJobs(t)
	hook := j.dep.Contracts.SuretyHook
	for i := 4; i <= 6; i++ {
		j.stake(i)
	}
	budget := "999999999999999999999"
	id := j.open(budget, 3, 2, "500000000000000000", "0x0000000000000000000000000000000000000000", "0")
	for i := 4; i <= 6; i++ {
		j.joinAndSubmit(i, id)
	}
	j.send(1, hook, "", "pick(uint256,address[],uint16[])", id, "["+who(4).Hex()+","+who(6).Hex()+"]", "[7000,3000]")
	net := netOf(bi(budget))
	first := new(big.Int).Div(new(big.Int).Mul(net, big.NewInt(7000)), big.NewInt(10_000))
	second := new(big.Int).Sub(net, first)
	if got := j.tokenBalance(who(4)); got.Cmp(first) != 0 {
		t.Errorf("first winner %s, want %s", got, first)
	}
	if got := j.tokenBalance(who(6)); got.Cmp(second) != 0 {
		t.Errorf("second winner %s, want %s", got, second)
	}
	if got := j.tokenBalance(who(5)); got.Sign() != 0 {
		t.Errorf("the loser got %s", got)
	}
	for i := 4; i <= 6; i++ {
		if got := j.call(j.dep.Contracts.StakeRegistry, "freeStakeOf(bytes32,address)(uint256)", j.agent(i), who(i).Hex()); got != "2000000000000000000" {
			t.Errorf("worker %d's free stake %s, want all 2 ETH", i, got)
		}
	}
	if got := j.tokenBalance(j.pool); got.Sign() != 0 {
		t.Errorf("pool holds %s", got)
	}
}

// TestHookThreeMilestonesOnAnvil: a milestone job of three parts (three standard ERC-8183
// jobs linked through their plans) pays each part on its approval.
func TestHookThreeMilestonesOnAnvil(t *testing.T) {
	j := newCastJobs(t)
	hook := j.dep.Contracts.SuretyHook
	j.stake(2)
	parts := []string{"100000000000000000000", "250000000000000000000", "650000000000000000000"}
	var ids []string
	prev := "0"
	for _, b := range parts {
		id := j.open(b, 1, 1, "300000000000000000", "0x0000000000000000000000000000000000000000", prev)
		ids = append(ids, id)
		prev = id
	}
	for _, id := range ids {
		j.send(2, hook, "", "join(uint256,bytes32)", id, j.agent(2))
	}
	paid := new(big.Int)
	for k, id := range ids {
		j.send(2, hook, "", "submit(uint256,bytes32)", id, crypto.Keccak256Hash([]byte("part "+id)).Hex())
		if got := j.tokenBalance(who(2)); got.Cmp(paid) != 0 {
			t.Fatalf("part %d paid before its approval: %s", k+1, got)
		}
		j.send(1, hook, "", "approve(uint256)", id)
		paid.Add(paid, netOf(bi(parts[k])))
		if got := j.tokenBalance(who(2)); got.Cmp(paid) != 0 {
			t.Errorf("after part %d the worker has %s, want %s", k+1, got, paid)
		}
		if f := j.job(id); f[7] != "3" {
			t.Errorf("part %d: core status %s, want Completed (3): each part is a standard job", k+1, f[7])
		}
	}
	if got := j.call(j.dep.Contracts.StakeRegistry, "freeStakeOf(bytes32,address)(uint256)", j.agent(2), who(2).Hex()); got != "2000000000000000000" {
		t.Errorf("free stake %s after the last part, want all 2 ETH", got)
	}
}

// warp moves Anvil's clock by secs and mines a block.
func (j *castJobs) warp(secs int64) {
	j.t.Helper()
	j.run("rpc", "evm_increaseTime", fmt.Sprint(secs))
	j.run("rpc", "evm_mine")
}

// TestHookSilenceAndArbiterTimeoutOnAnvil: a client that stays silent past the review window
// owes the worker the budget (anyone releases it), and an arbiter that stays silent past its
// time has the dispute split evenly (anyone calls resolveExpired); to the wei, no slash.
func TestHookSilenceAndArbiterTimeoutOnAnvil(t *testing.T) {
	j := newCastJobs(t)
	hook := j.dep.Contracts.SuretyHook
	j.stake(2)
	budget := "1000000000000000000001"
	silent := j.open(budget, 1, 1, "1000000000000000000", "0x0000000000000000000000000000000000000000", "0")
	disputed := j.open(budget, 1, 1, "1000000000000000000", "0x0000000000000000000000000000000000000000", "0")
	j.joinAndSubmit(2, silent)
	j.joinAndSubmit(2, disputed)
	j.send(1, hook, "", "reject(uint256,bytes32)", disputed, crypto.Keccak256Hash([]byte("no")).Hex())
	j.warp(3*86400 + 1) // past the review window (3 days)
	j.send(7, hook, "", "release(uint256)", silent)
	net := netOf(bi(budget))
	if got := j.tokenBalance(who(2)); got.Cmp(net) != 0 {
		t.Fatalf("after release the worker has %s, want %s", got, net)
	}
	clientBefore := j.tokenBalance(who(1))
	j.warp(2*86400 + 1) // past the arbiter's time (5 days from the dispute)
	j.send(7, hook, "", "resolveExpired(uint256)", disputed)
	half := new(big.Int).Div(net, big.NewInt(2))
	if got := new(big.Int).Sub(j.tokenBalance(who(2)), net); got.Cmp(half) != 0 {
		t.Errorf("the arbiter's silence paid the worker %s, want %s", got, half)
	}
	if got := new(big.Int).Sub(j.tokenBalance(who(1)), clientBefore); got.Cmp(new(big.Int).Sub(net, half)) != 0 {
		t.Errorf("the arbiter's silence returned %s to the client, want %s", got, new(big.Int).Sub(net, half))
	}
	if got := j.call(j.dep.Contracts.StakeRegistry, "stakeOf(bytes32,address)(uint256)", j.agent(2), who(2).Hex()); got != "2000000000000000000" {
		t.Errorf("worker's stake %s, want all 2 ETH: silence never slashes", got)
	}
	if got := j.call(j.dep.Contracts.StakeRegistry, "freeStakeOf(bytes32,address)(uint256)", j.agent(2), who(2).Hex()); got != "2000000000000000000" {
		t.Errorf("worker's free stake %s, want all 2 ETH: both locks ended", got)
	}
}
