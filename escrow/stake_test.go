package escrow_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
)

// agentBinding makes an agent key and its binding to dev wallet n, as the node records it.
func agentBinding(t *testing.T, sf *svcFixture, n int) (common.Hash, []byte) {
	t.Helper()
	k, err := identity.GenerateKey(identity.Ed25519)
	if err != nil {
		t.Fatal(err)
	}
	b, err := identity.SignBinding(identity.BindingStatement{DID: k.DID.String(), Wallet: escrow.AddressOf(chain.DevKey(n)),
		ChainID: 1337, Registry: sf.dep.Contracts.StakeRegistry, IssuedAt: time.Now().Unix(), Nonce: identity.NewNonce()}, k, chain.DevKey(n))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(b)
	return identity.AgentID(k.DID.String()), raw
}

// TestStakeLifecycle bonds stake through the service (binding on chain first), unbonds part,
// and withdraws it after the delay, checking the chain's record and the wallet's balance at
// each step; every refusal on the way is found before anything is sent.
func TestStakeLifecycle(t *testing.T) {
	sf := newService(t)
	ctx := context.Background()
	wallet := sf.worker // dev account 2
	agent, proof := agentBinding(t, sf, 2)
	nonce := func() uint64 {
		n, err := sf.c.NonceAt(ctx, wallet, nil)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	do := func(op escrow.Op, key string) (*escrow.Result, error) {
		op.From, op.Agent = wallet, agent
		return sf.svc.Do(ctx, op, escrow.Idempotency{Caller: "did:test", Key: key, Fingerprint: key})
	}
	two, one := new(big.Int).Mul(eth, big.NewInt(2)), eth

	// Refused before sending: nothing staked yet, no binding to bind with, zero amount.
	before := nonce()
	refusals := []struct {
		name string
		op   escrow.Op
		want error
		msg  string
	}{
		{"stake without a binding", escrow.Op{Kind: escrow.OpStake, Amount: one}, escrow.ErrInvalid, "has not bound agent"},
		{"stake zero", escrow.Op{Kind: escrow.OpStake, Amount: new(big.Int), Proof: proof}, escrow.ErrInvalid, "amount must be positive"},
		{"unbond before staking", escrow.Op{Kind: escrow.OpUnbond, Amount: one}, escrow.ErrNotStaked, "holds no stake"},
		{"withdraw before unbonding", escrow.Op{Kind: escrow.OpWithdrawStake}, escrow.ErrNothingToWithdraw, "unbond first"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			_, err := do(tt.op, "")
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want %v saying %q", err, tt.want, tt.msg)
			}
		})
	}
	if nonce() != before {
		t.Fatalf("a refused stake call sent a transaction")
	}

	// The first stake binds on chain, then stakes; a retry with the same key sends nothing.
	res, err := do(escrow.Op{Kind: escrow.OpStake, Amount: two, Proof: proof}, "stake-1")
	if err != nil {
		t.Fatal(err)
	}
	if res.Stake == nil || res.Stake.Status != escrow.StakeBound || res.Stake.Staked != two.String() || res.Stake.Token != (common.Address{}) {
		t.Fatalf("after staking: %+v", res.Stake)
	}
	if got := nonce(); got != before+2 {
		t.Errorf("nonce %d, want %d (bind, stake)", got, before+2)
	}
	again, err := do(escrow.Op{Kind: escrow.OpStake, Amount: two, Proof: proof}, "stake-1")
	if err != nil || again.TxHash != res.TxHash || nonce() != before+2 {
		t.Errorf("retry = %+v, %v; nonce %d", again, err, nonce())
	}
	// A second stake adds without binding again.
	if res, err = do(escrow.Op{Kind: escrow.OpStake, Amount: one, Proof: proof}, "stake-2"); err != nil || res.Stake.Staked != "3000000000000000000" {
		t.Fatalf("second stake: %+v, %v", res, err)
	}
	if got := nonce(); got != before+3 {
		t.Errorf("nonce %d, want %d", got, before+3)
	}

	// Unbond more than staked: refused, nothing sent. Then unbond one.
	if _, err := do(escrow.Op{Kind: escrow.OpUnbond, Amount: new(big.Int).Mul(eth, big.NewInt(4))}, ""); !errors.Is(err, escrow.ErrStakeTooLow) {
		t.Errorf("unbond 4 of 3: %v", err)
	}
	res, err = do(escrow.Op{Kind: escrow.OpUnbond, Amount: one}, "unbond-1")
	if err != nil {
		t.Fatal(err)
	}
	if res.Stake.Staked != two.String() || res.Stake.Unbonding != one.String() || res.Stake.UnlockAt == 0 {
		t.Fatalf("after unbonding: %+v", res.Stake)
	}
	if _, err := do(escrow.Op{Kind: escrow.OpWithdrawStake}, ""); !errors.Is(err, escrow.ErrStillBonded) || !strings.Contains(err.Error(), "unlocks at") {
		t.Errorf("withdraw during the delay: %v", err)
	}
	if got := nonce(); got != before+4 {
		t.Errorf("nonce %d, want %d: a refused call sent something", got, before+4)
	}

	// After the delay the wallet gets its ETH back, less gas.
	if err := sf.c.AdvanceTime(time.Duration(contracts.DefaultUnbondDelay+1) * time.Second); err != nil {
		t.Fatal(err)
	}
	bal := func() *big.Int {
		b, err := sf.c.BalanceAt(ctx, wallet, nil)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	was := bal()
	res, err = do(escrow.Op{Kind: escrow.OpWithdrawStake}, "withdraw-1")
	if err != nil {
		t.Fatal(err)
	}
	if res.Stake.Unbonding != "0" || res.Stake.Staked != two.String() {
		t.Errorf("after withdrawing: %+v", res.Stake)
	}
	gained := new(big.Int).Sub(bal(), was)
	if gained.Cmp(one) >= 0 || gained.Cmp(new(big.Int).Sub(one, big.NewInt(1e15))) < 0 {
		t.Errorf("wallet gained %s wei, want 1 ETH less gas", gained)
	}
	rec, err := sf.svc.StakeOf(ctx, agent, wallet)
	if err != nil || rec.Staked != two.String() || rec.Status != escrow.StakeBound {
		t.Errorf("StakeOf = %+v, %v", rec, err)
	}
}

// TestStakeRefusesRevokedAgent: once the controller revokes the agent, more stake is refused
// with the reason, while unbonding still works, so the stake never gets stuck.
func TestStakeRefusesRevokedAgent(t *testing.T) {
	sf := newService(t)
	ctx := context.Background()
	wallet := sf.worker
	agent, proof := agentBinding(t, sf, 2)
	if _, err := sf.svc.Do(ctx, escrow.Op{Kind: escrow.OpStake, From: wallet, Agent: agent, Amount: eth, Proof: proof}, escrow.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	reg := contracts.NewStakeRegistry()
	if _, err := sf.svc.Transact(ctx, wallet, sf.dep.Contracts.StakeRegistry, reg.PackRevoke(agent)); err != nil {
		t.Fatal(err)
	}
	_, err := sf.svc.Do(ctx, escrow.Op{Kind: escrow.OpStake, From: wallet, Agent: agent, Amount: eth, Proof: proof}, escrow.Idempotency{})
	var se *escrow.StakeError
	if !errors.Is(err, escrow.ErrAgentClosed) || !errors.As(err, &se) || se.Agent != agent || !strings.Contains(err.Error(), "revoked") {
		t.Fatalf("stake on a revoked agent: %v", err)
	}
	res, err := sf.svc.Do(ctx, escrow.Op{Kind: escrow.OpUnbond, From: wallet, Agent: agent, Amount: eth}, escrow.Idempotency{})
	if err != nil || res.Stake.Status != escrow.StakeRevoked || res.Stake.Unbonding != eth.String() {
		t.Fatalf("unbond a revoked agent's stake: %+v, %v", res, err)
	}
}
