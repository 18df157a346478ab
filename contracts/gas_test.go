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

// happyPath runs post → claim → submit → accept once, in ETH (token zero) or an ERC-20, and
// returns the gas of the four transactions as receipts report it (intrinsic cost included).
func happyPath(tb testing.TB, c chain.Client, dep *contracts.Deployment, token common.Address) (post, claim, submit, accept uint64) {
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
	r := poster.send(escrow, escrowABI.PackPost(token, amount, arbiter.addr, head.Time+86400, 3600, big.NewInt(0), crypto.Keccak256Hash([]byte("spec")), newSalt(tb)), value)
	posted, err := escrowABI.UnpackPostedEvent(r.Logs[len(r.Logs)-1])
	if err != nil {
		tb.Fatal(err)
	}
	post = r.GasUsed
	claim = worker.send(escrow, escrowABI.PackClaim(posted.Id, posted.Terms, [32]byte{1}), nil).GasUsed
	submit = worker.send(escrow, escrowABI.PackSubmit(posted.Id, posted.Terms, worker.addr, [32]byte{2}), nil).GasUsed
	accept = poster.send(escrow, escrowABI.PackAccept(posted.Id, posted.Terms, worker.addr), nil).GasUsed
	return post, claim, submit, accept
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
// chain (whose gas schedule is mainnet's), in ETH and in an ERC-20, for the first bounty of a
// fresh deployment and in steady state (after the first fee has opened the fee slot). The
// target is 200,000 gas for the ETH path.
func BenchmarkHappyPathGas(b *testing.B) {
	for _, tc := range []struct {
		name  string
		token bool
	}{{"ETH", false}, {"ERC20", true}} {
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
			p, cl, s, a := happyPath(b, c, dep, token)
			first := p + cl + s + a
			var total, post, claim, submit, accept uint64
			b.ResetTimer()
			for b.Loop() {
				p, cl, s, a := happyPath(b, c, dep, token)
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
