package stake_test

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/stake"
	"github.com/surety-ioa/surety/txn"
)

// svcFixture is the stake service on the embedded chain, sending from dev wallets 1-3.
type svcFixture struct {
	*fixture
	svc    *stake.Service
	tx     *txn.Service
	worker common.Address // dev account 2
}

func newService(t *testing.T) *svcFixture {
	t.Helper()
	f := newFixture(t)
	ctx := context.Background()
	db := testutil.OpenSQL(t)
	row, err := sqlite.EnterChain(ctx, db.DB, sqlite.Chain{Key: "test", ChainID: chain.EmbeddedChainID, Genesis: "g", Contracts: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := txn.New(ctx, txn.Config{DB: db.DB, Chain: row, Client: f.c, ReceiptTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		if _, err := tx.AddKey(ctx, chain.DevKey(i)); err != nil {
			t.Fatal(err)
		}
	}
	svc := stake.NewService(stake.ServiceConfig{Tx: tx, Chain: f.c, Registry: f.dep.Contracts.StakeRegistry})
	return &svcFixture{fixture: f, svc: svc, tx: tx, worker: addr(chain.DevKey(2))}
}

// agentBinding makes an agent key and its binding to dev wallet n, as the node records it.
func agentBinding(t *testing.T, sf *svcFixture, n int) (common.Hash, []byte) {
	t.Helper()
	k := newAgent(t, identity.Ed25519)
	return identity.AgentID(k.DID.String()), sf.binding(k, chain.DevKey(n))
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
	do := func(op stake.Op, key string) (*stake.Result, error) {
		op.From, op.Agent = wallet, agent
		return sf.svc.Do(ctx, op, txn.Idempotency{Caller: "did:test", Key: key, Fingerprint: key})
	}
	two, one := new(big.Int).Mul(eth, big.NewInt(2)), eth

	// Refused before sending: nothing staked yet, no binding to bind with, zero amount.
	before := nonce()
	refusals := []struct {
		name string
		op   stake.Op
		want error
		msg  string
	}{
		{"stake without a binding", stake.Op{Kind: stake.OpStake, Amount: one}, stake.ErrInvalid, "has not bound agent"},
		{"stake zero", stake.Op{Kind: stake.OpStake, Amount: new(big.Int), Proof: proof}, stake.ErrInvalid, "amount must be positive"},
		{"unbond before staking", stake.Op{Kind: stake.OpUnbond, Amount: one}, stake.ErrNotStaked, "holds no stake"},
		{"withdraw before unbonding", stake.Op{Kind: stake.OpWithdrawStake}, stake.ErrNothingToWithdraw, "unbond first"},
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
	res, err := do(stake.Op{Kind: stake.OpStake, Amount: two, Proof: proof}, "stake-1")
	if err != nil {
		t.Fatal(err)
	}
	if res.Stake == nil || res.Stake.Status != stake.StatusBound || res.Stake.Staked != two.String() || res.Stake.Token != (common.Address{}) {
		t.Fatalf("after staking: %+v", res.Stake)
	}
	if got := nonce(); got != before+2 {
		t.Errorf("nonce %d, want %d (bind, stake)", got, before+2)
	}
	again, err := do(stake.Op{Kind: stake.OpStake, Amount: two, Proof: proof}, "stake-1")
	if err != nil || again.TxHash != res.TxHash || nonce() != before+2 {
		t.Errorf("retry = %+v, %v; nonce %d", again, err, nonce())
	}
	// A second stake adds without binding again.
	if res, err = do(stake.Op{Kind: stake.OpStake, Amount: one, Proof: proof}, "stake-2"); err != nil || res.Stake.Staked != "3000000000000000000" {
		t.Fatalf("second stake: %+v, %v", res, err)
	}
	if got := nonce(); got != before+3 {
		t.Errorf("nonce %d, want %d", got, before+3)
	}

	// Unbond more than staked: refused, nothing sent. Then unbond one.
	if _, err := do(stake.Op{Kind: stake.OpUnbond, Amount: new(big.Int).Mul(eth, big.NewInt(4))}, ""); !errors.Is(err, stake.ErrStakeTooLow) {
		t.Errorf("unbond 4 of 3: %v", err)
	}
	res, err = do(stake.Op{Kind: stake.OpUnbond, Amount: one}, "unbond-1")
	if err != nil {
		t.Fatal(err)
	}
	if res.Stake.Staked != two.String() || res.Stake.Unbonding != one.String() || res.Stake.UnlockAt == 0 {
		t.Fatalf("after unbonding: %+v", res.Stake)
	}
	if _, err := do(stake.Op{Kind: stake.OpWithdrawStake}, ""); !errors.Is(err, stake.ErrStillBonded) || !strings.Contains(err.Error(), "unlocks at") {
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
	res, err = do(stake.Op{Kind: stake.OpWithdrawStake}, "withdraw-1")
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
	if err != nil || rec.Staked != two.String() || rec.Status != stake.StatusBound {
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
	if _, err := sf.svc.Do(ctx, stake.Op{Kind: stake.OpStake, From: wallet, Agent: agent, Amount: eth, Proof: proof}, txn.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	reg := contracts.NewStakeRegistry()
	if _, err := sf.tx.Transact(ctx, wallet, txn.Call{To: sf.dep.Contracts.StakeRegistry, Data: reg.PackRevoke(agent)}); err != nil {
		t.Fatal(err)
	}
	_, err := sf.svc.Do(ctx, stake.Op{Kind: stake.OpStake, From: wallet, Agent: agent, Amount: eth, Proof: proof}, txn.Idempotency{})
	var se *stake.Error
	if !errors.Is(err, stake.ErrAgentClosed) || !errors.As(err, &se) || se.Agent != agent || !strings.Contains(err.Error(), "revoked") {
		t.Fatalf("stake on a revoked agent: %v", err)
	}
	res, err := sf.svc.Do(ctx, stake.Op{Kind: stake.OpUnbond, From: wallet, Agent: agent, Amount: eth}, txn.Idempotency{})
	if err != nil || res.Stake.Status != stake.StatusRevoked || res.Stake.Unbonding != eth.String() {
		t.Fatalf("unbond a revoked agent's stake: %+v, %v", res, err)
	}
}

// TestRelayExternallySignedStakeCalls: a wallet the node does not hold signs its own bind;
// the node relays it once (the same bytes again only wait for it), and refuses calls to
// other contracts.
func TestRelayExternallySignedStakeCalls(t *testing.T) {
	sf := newService(t)
	ctx := context.Background()
	outside, err := txn.NewSender(ctx, sf.c, txn.NewKeySigner(chain.DevKey(4)), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	agent := newAgent(t, identity.Ed25519)
	bindTx, err := outside.Sign(ctx, txn.Call{To: sf.dep.Contracts.StakeRegistry,
		Data: contracts.NewStakeRegistry().PackBind(identity.AgentID(agent.DID.String()), sf.binding(agent, chain.DevKey(4)))})
	if err != nil {
		t.Fatal(err)
	}
	rawBind, _ := bindTx.MarshalBinary()
	res, err := sf.svc.Relay(ctx, rawBind)
	if err != nil || res.TxHash != bindTx.Hash().Hex() {
		t.Fatalf("relayed bind: %+v, %v", res, err)
	}
	if again, err := sf.svc.Relay(ctx, rawBind); err != nil || again.TxHash != res.TxHash {
		t.Errorf("relaying again: %+v, %v", again, err)
	}
	if rec, err := sf.svc.StakeOf(ctx, identity.AgentID(agent.DID.String()), outside.Address()); err != nil || rec.Status != stake.StatusBound {
		t.Errorf("after the relayed bind the record is %+v, %v", rec, err)
	}
	other, err := outside.Sign(ctx, txn.Call{To: sf.worker, Value: big.NewInt(1)})
	if err != nil {
		t.Fatal(err)
	}
	rawOther, _ := other.MarshalBinary()
	if _, err := sf.svc.Relay(ctx, rawOther); !errors.Is(err, txn.ErrNotRelayable) {
		t.Errorf("transfer to a wallet: %v", err)
	}
}

// TestRotateAndRevokeThroughTheService: a controller rotates its agent to a successor (the
// stake moves with it, and every node's index counts the successor and refuses the old DID),
// then revokes the successor; what the registry would refuse (a wallet that never bound the
// agent, no successor binding, a successor that is the agent itself or already has a record,
// an agent already rotated or revoked) is refused before anything is sent, saying why.
func TestRotateAndRevokeThroughTheService(t *testing.T) {
	sf := newService(t)
	ctx := context.Background()
	ix := sf.index(testutil.OpenSQL(t))
	wallet, stranger := sf.worker, addr(chain.DevKey(3)) // dev accounts 2 and 3
	old, next := newAgent(t, identity.Ed25519), newAgent(t, identity.Ed25519)
	agent, successor := identity.AgentID(old.DID.String()), identity.AgentID(next.DID.String())
	if _, err := sf.svc.Do(ctx, stake.Op{Kind: stake.OpStake, From: wallet, Agent: agent, Amount: eth, Proof: sf.binding(old, chain.DevKey(2))}, txn.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	proof := sf.binding(next, chain.DevKey(2))
	nonce := func() uint64 {
		n, err := sf.c.NonceAt(ctx, wallet, nil)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	type refusal struct {
		name string
		op   stake.Op
		want error
		msg  string
	}
	// refuses runs each op, wants its refusal, and wants no transaction sent for any.
	refuses := func(refusals []refusal) {
		t.Helper()
		before := nonce()
		for _, tt := range refusals {
			t.Run(tt.name, func(t *testing.T) {
				_, err := sf.svc.Do(ctx, tt.op, txn.Idempotency{})
				if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
					t.Fatalf("err = %v, want %v saying %q", err, tt.want, tt.msg)
				}
			})
		}
		if nonce() != before {
			t.Fatal("a refused call sent a transaction")
		}
	}
	refuses([]refusal{
		{"revoke from a wallet that never bound it", stake.Op{Kind: stake.OpRevoke, From: stranger, Agent: agent}, stake.ErrNotController, "only a wallet that bound it can revoke it"},
		{"rotate from a wallet that never bound it", stake.Op{Kind: stake.OpRotate, From: stranger, Agent: agent, Successor: successor, Proof: proof}, stake.ErrNotController, "can rotate it"},
		{"rotate without the successor's binding", stake.Op{Kind: stake.OpRotate, From: wallet, Agent: agent, Successor: successor}, stake.ErrInvalid, "no binding of the successor"},
		{"rotate to itself", stake.Op{Kind: stake.OpRotate, From: wallet, Agent: agent, Successor: agent, Proof: proof}, stake.ErrInvalid, "must be another agent"},
	})

	res, err := sf.svc.Do(ctx, stake.Op{Kind: stake.OpRotate, From: wallet, Agent: agent, Successor: successor, Proof: proof}, txn.Idempotency{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stake == nil || res.Stake.Agent != successor || res.Stake.Status != stake.StatusBound || res.Stake.Staked != eth.String() {
		t.Errorf("after the rotation the answer holds %+v, want the successor's stake", res.Stake)
	}
	sync1(t, ix)
	st, err := ix.KeyState(ctx, old.DID.String())
	if err != nil || st.Status != stake.KeyRotated || st.Successor != next.DID.String() || st.Controller != wallet {
		t.Errorf("the old DID's key state: %+v, %v", st, err)
	}
	if ok, err := ix.Bound(ctx, next.DID.String(), wallet); !ok || err != nil {
		t.Errorf("the index does not count the successor as bound (%v)", err)
	}

	// The old agent is closed; a successor must be fresh.
	third := newAgent(t, identity.Ed25519)
	refuses([]refusal{
		{"rotate the old agent again", stake.Op{Kind: stake.OpRotate, From: wallet, Agent: agent, Successor: identity.AgentID(third.DID.String()), Proof: sf.binding(third, chain.DevKey(2))}, stake.ErrAgentClosed, "already rotated away"},
		{"revoke the old agent", stake.Op{Kind: stake.OpRevoke, From: wallet, Agent: agent}, stake.ErrAgentClosed, "already rotated away"},
		{"rotate to a successor that has a record", stake.Op{Kind: stake.OpRotate, From: wallet, Agent: successor, Successor: agent, Proof: sf.binding(old, chain.DevKey(2))}, stake.ErrInvalid, "rotate to a fresh key"},
	})

	res, err = sf.svc.Do(ctx, stake.Op{Kind: stake.OpRevoke, From: wallet, Agent: successor}, txn.Idempotency{})
	if err != nil || res.Stake.Status != stake.StatusRevoked {
		t.Fatalf("revoke the successor: %+v, %v", res, err)
	}
	sync1(t, ix)
	if st, err := ix.KeyState(ctx, next.DID.String()); err != nil || st.Status != stake.KeyRevoked {
		t.Errorf("the successor's key state after the revocation: %+v, %v", st, err)
	}
	if _, err := sf.svc.Do(ctx, stake.Op{Kind: stake.OpRevoke, From: wallet, Agent: successor}, txn.Idempotency{}); !errors.Is(err, stake.ErrAgentClosed) || !strings.Contains(err.Error(), "already revoked") {
		t.Errorf("revoke again: %v", err)
	}

	// Stake a claimed bounty locks stays where it was locked until the bounty ends.
	locked := newAgent(t, identity.Ed25519)
	lockedID := identity.AgentID(locked.DID.String())
	if _, err := sf.svc.Do(ctx, stake.Op{Kind: stake.OpStake, From: wallet, Agent: lockedID, Amount: eth, Proof: sf.binding(locked, chain.DevKey(2))}, txn.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	sf.lock(chain.DevKey(2), lockedID, big.NewInt(1e17))
	if _, err := sf.svc.Do(ctx, stake.Op{Kind: stake.OpRotate, From: wallet, Agent: lockedID, Successor: identity.AgentID(third.DID.String()), Proof: sf.binding(third, chain.DevKey(2))}, txn.Idempotency{}); !errors.Is(err, stake.ErrStakeLocked) || !strings.Contains(err.Error(), "once they end") {
		t.Errorf("rotate with locked stake: %v", err)
	}
}
