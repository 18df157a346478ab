package contracts_test

import (
	"context"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
)

// The ERC-8183 reference implementation's lifecycle gas (erc-8183/base-contracts at c67e160,
// AgenticCommerce behind its UUPS proxy, with the reference's own compiler settings, measured
// on Anvil from the receipts of createJob → setBudget → fund → submit → complete with an
// ERC-20): the figures issue 29 quotes (internal/benchtable holds them too, for
// bench/RESULTS.md). The reference's code is read, never built, here.
const (
	// RefJobLifecycleGas is its steady state (not the contract's first job).
	RefJobLifecycleGas = 494_079
	// RefJobLifecycleGasFirst is a fresh deployment's first job.
	RefJobLifecycleGasFirst = 531_338
	// JobLifecycleGasTarget is issue 29's target for JobEscrow: half the reference. JobEscrow
	// misses it (docs/ERC8183.md, "Gas", shows why no implementation that stores the job
	// the ERC describes can meet it).
	JobLifecycleGasTarget = RefJobLifecycleGas / 2
	// jobLifecycleGasBudget is what JobEscrow's steady-state lifecycle measured when it was
	// written (320,657): TestJobLifecycleGas fails when it grows.
	jobLifecycleGasBudget = 321_000
)

// jobDescription is the job brief of the lifecycle measured: the reference's own end-to-end
// test's ("Generate a beautiful landscape wallpaper image", 46 bytes).
const jobDescription = "Generate a beautiful landscape wallpaper image"

// jobBudget is the reference test's budget, 20 USDC (6 decimals).
var jobBudget = big.NewInt(20_000_000)

// jobGas holds the gas of one lifecycle's five transactions, as receipts report it.
type jobGas struct{ create, budget, fund, submit, complete uint64 }

func (g jobGas) total() uint64 { return g.create + g.budget + g.fund + g.submit + g.complete }

// jobBench is a deployed JobEscrow (no fees, the reference's default), a DevToken, and the
// actors of the reference's end-to-end test: the client creates and funds, the provider sets
// the budget and submits, the evaluator completes.
type jobBench struct {
	c                           chain.Client
	escrow, token               common.Address
	client, provider, evaluator *actor
	abi                         *contracts.JobEscrow
	erc                         *contracts.DevToken
}

func newJobBench(tb testing.TB) *jobBench {
	tb.Helper()
	ctx := context.Background()
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(testutil.DevAccounts, chain.DefaultDevBalance)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	b := &jobBench{c: c, client: newActor(tb, c, 1), provider: newActor(tb, c, 2), evaluator: newActor(tb, c, 3),
		abi: contracts.NewJobEscrow(), erc: contracts.NewDevToken()}
	deployer := newActor(tb, c, 0)
	opts := bind.NewKeyedTransactor(deployer.key, deployer.id)
	addr, tx, err := bind.DeployContract(opts, common.FromHex(contracts.JobEscrowMetaData.Bin), c, b.abi.PackConstructor(deployer.addr, deployer.addr))
	if err != nil {
		tb.Fatal(err)
	}
	if r, err := chain.WaitMined(ctx, c, tx.Hash()); err != nil || r.Status != 1 {
		tb.Fatalf("deploy JobEscrow: %v", err)
	}
	b.escrow = addr
	if b.token, err = contracts.DeployDevToken(ctx, c, chain.DevKey(0), "USD Coin", "USDC"); err != nil {
		tb.Fatal(err)
	}
	b.client.send(b.erc.Instance(c, b.token), b.erc.PackMint(b.client.addr, big.NewInt(1e15)), nil)
	return b
}

// lifecycle runs createJob → setBudget (by the provider) → fund → submit → complete once and
// returns the gas of each transaction. The client approves the escrow for the budget before
// funding, as the reference's test does (that approval is the token's, not counted).
func (b *jobBench) lifecycle(tb testing.TB) jobGas {
	tb.Helper()
	ctx := context.Background()
	head, err := b.c.HeaderByNumber(ctx, nil)
	if err != nil {
		tb.Fatal(err)
	}
	esc := b.abi.Instance(b.c, b.escrow)
	var g jobGas
	r := b.client.send(esc, b.abi.PackCreateJob(b.provider.addr, b.evaluator.addr, new(big.Int).SetUint64(head.Time+3600), jobDescription, common.Address{}, new(big.Int)), nil)
	g.create = r.GasUsed
	created, err := b.abi.UnpackJobCreatedEvent(r.Logs[0])
	if err != nil {
		tb.Fatal(err)
	}
	id := created.JobId
	g.budget = b.provider.send(esc, b.abi.PackSetBudget(id, b.token, jobBudget, nil), nil).GasUsed
	b.client.send(b.erc.Instance(b.c, b.token), b.erc.PackApprove(b.escrow, jobBudget), nil)
	g.fund = b.client.send(esc, b.abi.PackFund(id, jobBudget, nil), nil).GasUsed
	g.submit = b.provider.send(esc, b.abi.PackSubmit(id, crypto.Keccak256Hash([]byte("https://example.com/wallpaper.jpg")), nil), nil).GasUsed
	g.complete = b.evaluator.send(esc, b.abi.PackComplete(id, [32]byte{'a', 'p', 'p', 'r', 'o', 'v', 'e', 'd'}, nil), nil).GasUsed
	return g
}

// steady brings the deployment to steady state: one job done (the job counter, the provider's
// balance are non-zero) and one funded job left open, so the escrow's token balance is
// non-zero too, as in a running system.
func (b *jobBench) steady(tb testing.TB) {
	tb.Helper()
	b.lifecycle(tb)
	ctx := context.Background()
	head, err := b.c.HeaderByNumber(ctx, nil)
	if err != nil {
		tb.Fatal(err)
	}
	esc := b.abi.Instance(b.c, b.escrow)
	r := b.client.send(esc, b.abi.PackCreateJob(b.provider.addr, b.evaluator.addr, new(big.Int).SetUint64(head.Time+86400), "held open", common.Address{}, new(big.Int)), nil)
	created, err := b.abi.UnpackJobCreatedEvent(r.Logs[0])
	if err != nil {
		tb.Fatal(err)
	}
	b.client.send(esc, b.abi.PackSetBudget(created.JobId, b.token, big.NewInt(1), nil), nil)
	b.client.send(b.erc.Instance(b.c, b.token), b.erc.PackApprove(b.escrow, big.NewInt(1)), nil)
	b.client.send(esc, b.abi.PackFund(created.JobId, big.NewInt(1), nil), nil)
}

// BenchmarkJobLifecycleGas reports the gas of JobEscrow's ERC-8183 lifecycle, createJob →
// setBudget → fund → submit → complete with an ERC-20, on the embedded chain (mainnet's gas
// schedule): a fresh deployment's first job and steady state (see steady), beside the
// reference's figures (RefJobLifecycleGas, RefJobLifecycleGasFirst).
func BenchmarkJobLifecycleGas(b *testing.B) {
	jb := newJobBench(b)
	first := jb.lifecycle(b)
	jb.steady(b)
	var g jobGas
	var total uint64
	for b.Loop() {
		g = jb.lifecycle(b)
		total += g.total()
	}
	b.ReportMetric(float64(first.total()), "gas-first")
	b.ReportMetric(float64(total)/float64(b.N), "gas/lifecycle")
	b.ReportMetric(float64(g.create), "gas-createJob")
	b.ReportMetric(float64(g.budget), "gas-setBudget")
	b.ReportMetric(float64(g.fund), "gas-fund")
	b.ReportMetric(float64(g.submit), "gas-submit")
	b.ReportMetric(float64(g.complete), "gas-complete")
}

// TestJobLifecycleGas measures the steady-state lifecycle, holds it to jobLifecycleGasBudget
// and logs it beside the reference and the target. Gas is deterministic: this is a budget,
// not a timing.
func TestJobLifecycleGas(t *testing.T) {
	jb := newJobBench(t)
	first := jb.lifecycle(t)
	jb.steady(t)
	g := jb.lifecycle(t)
	if g.total() > jobLifecycleGasBudget {
		t.Errorf("steady-state lifecycle took %d gas, budget %d", g.total(), jobLifecycleGasBudget)
	}
	t.Logf("first job %d gas; steady state %d gas (createJob %d, setBudget %d, fund %d, submit %d, complete %d); reference %d, target %d",
		first.total(), g.total(), g.create, g.budget, g.fund, g.submit, g.complete, RefJobLifecycleGas, JobLifecycleGasTarget)
}
