package contracts_test

import (
	"context"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
)

// hookBench is a deployment (1% fee), a DevToken the client (dev account 1) holds and has
// approved to JobEscrow, and a worker (dev account 2) with 10 ETH staked for workerAgent.
type hookBench struct {
	c                         chain.Client
	dep                       *contracts.Deployment
	token, pool               common.Address
	client, worker, arbiter   *actor
	jobs                      *contracts.JobEscrow
	hook                      *contracts.SuretyHook
	core, hookInst, tokenInst *bind.BoundContract
	stakes                    *contracts.StakeRegistry
	reg                       *bind.BoundContract
}

func newHookBench(tb testing.TB) *hookBench {
	tb.Helper()
	ctx := context.Background()
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(testutil.DevAccounts, chain.DefaultDevBalance)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Close)
	dep, err := contracts.Deploy(ctx, c, chain.DevKey(0), contracts.DeployConfig{FeeBps: 100}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tok, err := contracts.DeployDevToken(ctx, c, chain.DevKey(0), "Job", "JOB")
	if err != nil {
		tb.Fatal(err)
	}
	h := &hookBench{c: c, dep: dep, token: tok, client: newActor(tb, c, 1), worker: newActor(tb, c, 2), arbiter: newActor(tb, c, 3),
		jobs: contracts.NewJobEscrow(), hook: contracts.NewSuretyHook()}
	h.core = h.jobs.Instance(c, dep.Contracts.JobEscrow)
	h.hookInst = h.hook.Instance(c, dep.Contracts.SuretyHook)
	if h.pool, err = bind.Call(h.hookInst, nil, h.hook.PackPool(), h.hook.UnpackPool); err != nil {
		tb.Fatal(err)
	}
	erc := contracts.NewDevToken()
	h.tokenInst = erc.Instance(c, tok)
	h.client.send(h.tokenInst, erc.PackMint(h.client.addr, ether(1_000_000_000)), nil)
	h.client.send(h.tokenInst, erc.PackApprove(dep.Contracts.JobEscrow, abiMaxUint256()), nil)
	h.stakes = contracts.NewStakeRegistry()
	h.reg = h.stakes.Instance(c, dep.Contracts.StakeRegistry)
	h.worker.send(h.reg, h.stakes.PackBind(workerAgent, []byte("proof")), nil)
	h.worker.send(h.reg, h.stakes.PackStake(workerAgent, ether(10)), ether(10))
	return h
}

// open creates, plans and funds a single-worker job with a 1 ETH stake (prev: the previous
// milestone part, or 0) and has the worker join it; returns the job id and the gas.
func (h *hookBench) open(tb testing.TB, prev *big.Int) (*big.Int, uint64) {
	tb.Helper()
	head, err := h.c.HeaderByNumber(context.Background(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	plan, err := contracts.EncodePlan(contracts.ISuretyHookPlan{Arbiter: h.arbiter.addr, ReviewWindow: 3 * 86400, ArbiterTime: 5 * 86400,
		MaxEntries: 1, MaxWinners: 1, MinStake: ether(1), PrevPart: prev})
	if err != nil {
		tb.Fatal(err)
	}
	hook := h.dep.Contracts.SuretyHook
	budget := ether(1000)
	r := h.client.send(h.core, h.jobs.PackCreateJob(h.pool, hook, new(big.Int).SetUint64(head.Time+30*86400), jobDescription, hook, new(big.Int)), nil)
	gas := r.GasUsed
	id, err := bind.Call(h.core, nil, h.jobs.PackJobCounter(), h.jobs.UnpackJobCounter)
	if err != nil {
		tb.Fatal(err)
	}
	gas += h.client.send(h.core, h.jobs.PackSetBudget(id, h.token, budget, plan), nil).GasUsed
	gas += h.client.send(h.core, h.jobs.PackFund(id, budget, nil), nil).GasUsed
	gas += h.worker.send(h.hookInst, h.hook.PackJoin(id, workerAgent), nil).GasUsed
	return id, gas
}

// dispute runs a whole disputed job: create, plan, fund, join, submit, reject, and the
// arbiter's 60/40 split with a 0.5 ETH slash. Returns its gas.
func (h *hookBench) dispute(tb testing.TB) uint64 {
	id, gas := h.open(tb, new(big.Int))
	gas += h.worker.send(h.hookInst, h.hook.PackSubmit(id, [32]byte{1}), nil).GasUsed
	gas += h.client.send(h.hookInst, h.hook.PackReject(id, [32]byte{2}), nil).GasUsed
	gas += h.arbiter.send(h.hookInst, h.hook.PackResolve(id, []common.Address{h.worker.addr}, []uint16{6000}, big.NewInt(5e17)), nil).GasUsed
	// The slash took 0.5 ETH of the worker's stake: put it back (not counted), so that a
	// benchmark can run the path as often as it likes.
	h.worker.send(h.reg, h.stakes.PackStake(workerAgent, big.NewInt(5e17)), big.NewInt(5e17))
	return gas
}

// milestones runs a three-part milestone job: three linked jobs, each created, planned,
// funded, joined, submitted and approved. Returns its gas.
func (h *hookBench) milestones(tb testing.TB) uint64 {
	var gas uint64
	prev := new(big.Int)
	for range 3 {
		id, g := h.open(tb, prev)
		gas += g
		gas += h.worker.send(h.hookInst, h.hook.PackSubmit(id, [32]byte{1}), nil).GasUsed
		gas += h.client.send(h.hookInst, h.hook.PackApprove(id), nil).GasUsed
		prev = id
	}
	return gas
}

// approve runs the hook's happy path: create, plan, fund, join, submit, approve.
func (h *hookBench) approve(tb testing.TB) uint64 {
	id, gas := h.open(tb, new(big.Int))
	gas += h.worker.send(h.hookInst, h.hook.PackSubmit(id, [32]byte{1}), nil).GasUsed
	gas += h.client.send(h.hookInst, h.hook.PackApprove(id), nil).GasUsed
	return gas
}

// BenchmarkHookPathsGas reports the gas of Surety's ERC-8183 paths through SuretyHook on the
// embedded chain, from receipts (intrinsic costs included), steady state (a first job has
// opened the fee slots): a single-worker job approved (create, setBudget with the plan, fund,
// join with a 1 ETH stake lock, submit, approve), the dispute path (the same to submit, then
// reject and the arbiter's split with a slash), and a three-part milestone job.
func BenchmarkHookPathsGas(b *testing.B) {
	for _, tc := range []struct {
		name string
		run  func(*hookBench, testing.TB) uint64
	}{{"approve", (*hookBench).approveTB}, {"dispute", (*hookBench).disputeTB}, {"milestones3", (*hookBench).milestonesTB}} {
		b.Run(tc.name, func(b *testing.B) {
			h := newHookBench(b)
			h.approve(b)
			var total uint64
			for b.Loop() {
				total += tc.run(h, b)
			}
			b.ReportMetric(float64(total)/float64(b.N), "gas/path")
		})
	}
}

func (h *hookBench) approveTB(tb testing.TB) uint64    { return h.approve(tb) }
func (h *hookBench) disputeTB(tb testing.TB) uint64    { return h.dispute(tb) }
func (h *hookBench) milestonesTB(tb testing.TB) uint64 { return h.milestones(tb) }

// TestHookPathsGas logs the paths' gas and holds them to budgets a little above what they
// measured when written, so a change that makes them dearer fails here.
func TestHookPathsGas(t *testing.T) {
	h := newHookBench(t)
	h.approve(t)
	for _, tc := range []struct {
		name   string
		gas    uint64
		budget uint64
	}{{"approve", h.approve(t), 745_000}, {"dispute", h.dispute(t), 810_000}, {"milestones3", h.milestones(t), 2_280_000}} {
		t.Logf("%s: %d gas", tc.name, tc.gas)
		if tc.gas > tc.budget {
			t.Errorf("%s took %d gas, budget %d", tc.name, tc.gas, tc.budget)
		}
	}
}
