package contracts_test

import (
	"context"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
)

// happyPath runs post → claim → submit → accept once, in ETH (token zero) or an ERC-20, with
// a minimum stake (the claim locks it, the accept releases it; see stakeWorker) or none, and
// returns the gas of the four transactions as receipts report it (intrinsic cost included).
func happyPath(tb testing.TB, c chain.Client, dep *contracts.Deployment, token common.Address, minStake *big.Int) (post, claim, submit, accept uint64) {
	ctx := context.Background()
	poster, worker, arbiter := newActor(tb, c, 1), newActor(tb, c, 2), newActor(tb, c, 3)
	escrowABI := contracts.NewBountyEscrow()
	escrow := escrowABI.Instance(c, dep.Contracts.BountyEscrow)
	head, err := c.HeaderByNumber(ctx, nil)
	if err != nil {
		tb.Fatal(err)
	}
	amount := ether(1)
	var value *big.Int
	if token == (common.Address{}) {
		value = amount
	}
	r := poster.send(escrow, escrowABI.PackPost(token, amount, arbiter.addr, head.Time+86400, 3600, minStake, crypto.Keccak256Hash([]byte("spec")), newSalt(tb)), value)
	posted, err := escrowABI.UnpackPostedEvent(r.Logs[len(r.Logs)-1])
	if err != nil {
		tb.Fatal(err)
	}
	post = r.GasUsed
	claim = worker.send(escrow, escrowABI.PackClaim(posted.Id, posted.Terms, workerAgent), nil).GasUsed
	submit = worker.send(escrow, escrowABI.PackSubmit(posted.Id, posted.Terms, worker.addr, [32]byte{2}), nil).GasUsed
	accept = poster.send(escrow, escrowABI.PackAccept(posted.Id, posted.Terms, worker.addr), nil).GasUsed
	return post, claim, submit, accept
}

// workerAgent is the agent id happyPath's worker claims with.
var workerAgent = [32]byte{1}

// stakeWorker binds workerAgent to happyPath's worker and stakes amount for it.
func stakeWorker(tb testing.TB, c chain.Client, dep *contracts.Deployment, amount *big.Int) {
	worker, stakes := newActor(tb, c, 2), contracts.NewStakeRegistry()
	inst := stakes.Instance(c, dep.Contracts.StakeRegistry)
	worker.send(inst, stakes.PackBind(workerAgent, []byte("proof")), nil)
	worker.send(inst, stakes.PackStake(workerAgent, amount), amount)
}

// devTokenFor deploys a DevToken, mints the poster plenty and approves the escrow once.
func devTokenFor(tb testing.TB, c chain.Client, dep *contracts.Deployment) common.Address {
	ctx := context.Background()
	token, err := contracts.DeployDevToken(ctx, c, chain.DevKey(0), "Surety Dev", "SDEV")
	if err != nil {
		tb.Fatal(err)
	}
	poster := newActor(tb, c, 1)
	erc := contracts.NewDevToken()
	inst := erc.Instance(c, token)
	poster.send(inst, erc.PackMint(poster.addr, ether(1_000_000)), nil)
	poster.send(inst, erc.PackApprove(dep.Contracts.BountyEscrow, abiMaxUint256()), nil)
	return token
}

func abiMaxUint256() *big.Int {
	return new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
}

// BenchmarkHappyPathGas reports the gas of post + claim + submit + accept on the embedded
// chain (whose gas schedule is mainnet's), in ETH and in an ERC-20, and in ETH with a minimum
// stake the claim locks, for the first bounty of a fresh deployment and in steady state (after
// the first fee has opened the fee slot). The targets are 200,000 gas for the ETH path and
// 230,000 with a minimum stake (TestHappyPathGasBudget holds them).
func BenchmarkHappyPathGas(b *testing.B) {
	for _, tc := range []struct {
		name     string
		token    bool
		minStake bool
	}{{"ETH", false, false}, {"ERC20", true, false}, {"ETH-minStake", false, true}} {
		b.Run(tc.name, func(b *testing.B) {
			c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(testutil.DevAccounts, chain.DefaultDevBalance)})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			dep, err := contracts.Deploy(context.Background(), c, chain.DevKey(0), contracts.DeployConfig{FeeBps: contracts.DefaultFeeBps}, nil)
			if err != nil {
				b.Fatal(err)
			}
			var token common.Address
			if tc.token {
				token = devTokenFor(b, c, dep)
			}
			minStake := new(big.Int)
			if tc.minStake {
				minStake = ether(1)
				stakeWorker(b, c, dep, minStake)
			}
			p, cl, s, a := happyPath(b, c, dep, token, minStake)
			first := p + cl + s + a
			var total, post, claim, submit, accept uint64
			b.ResetTimer()
			for b.Loop() {
				p, cl, s, a := happyPath(b, c, dep, token, minStake)
				post, claim, submit, accept = p, cl, s, a
				total += p + cl + s + a
			}
			b.ReportMetric(float64(first), "gas-first")
			b.ReportMetric(float64(total)/float64(b.N), "gas/lifecycle")
			b.ReportMetric(float64(post), "gas-post")
			b.ReportMetric(float64(claim), "gas-claim")
			b.ReportMetric(float64(submit), "gas-submit")
			b.ReportMetric(float64(accept), "gas-accept")
		})
	}
}

// TestHappyPathGasBudget holds the ETH lifecycle, post → claim → submit → accept in steady
// state, to its gas budgets: 200,000 without a minimum stake, 230,000 with one (the claim
// locks the stake in the registry and the accept releases it). Gas is deterministic, so this
// is a budget, not a timing.
func TestHappyPathGasBudget(t *testing.T) {
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(testutil.DevAccounts, chain.DefaultDevBalance)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	dep, err := contracts.Deploy(context.Background(), c, chain.DevKey(0), contracts.DeployConfig{FeeBps: contracts.DefaultFeeBps}, nil)
	if err != nil {
		t.Fatal(err)
	}
	stakeWorker(t, c, dep, ether(1))
	happyPath(t, c, dep, common.Address{}, new(big.Int)) // opens the fee slot: steady state after
	for _, tc := range []struct {
		name     string
		minStake *big.Int
		budget   uint64
	}{{"no minimum stake", new(big.Int), 200_000}, {"1 ETH minimum stake", ether(1), 230_000}} {
		p, cl, s, a := happyPath(t, c, dep, common.Address{}, tc.minStake)
		if total := p + cl + s + a; total > tc.budget {
			t.Errorf("%s: lifecycle took %d gas (post %d, claim %d, submit %d, accept %d), budget %d", tc.name, total, p, cl, s, a, tc.budget)
		} else {
			t.Logf("%s: %d gas (post %d, claim %d, submit %d, accept %d)", tc.name, total, p, cl, s, a)
		}
	}
}
