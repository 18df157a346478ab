package contracts_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/params"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
)

// The lifecycle suite runs against every chain Surety supports.
func TestLifecycleEmbedded(t *testing.T) {
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(testutil.DevAccounts, chain.DefaultDevBalance)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	runLifecycle(t, c)
}

func TestLifecycleAnvil(t *testing.T) {
	a := testutil.Anvil(t)
	c, err := ethclient.Dial(a.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	runLifecycle(t, c)
}

// actor sends transactions from one dev account and keeps track of what it spent on gas.
type actor struct {
	t    testing.TB
	c    chain.Client
	key  *ecdsa.PrivateKey
	addr common.Address
	id   *big.Int
}

func newActor(t testing.TB, c chain.Client, i int) *actor {
	id, err := c.ChainID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	k := chain.DevKey(i)
	return &actor{t: t, c: c, key: k, addr: crypto.PubkeyToAddress(k.PublicKey), id: id}
}

// try sends data to inst with value and returns the receipt, or the error (a revert shows
// up here, at gas estimation).
func (a *actor) try(inst *bind.BoundContract, data []byte, value *big.Int) (*types.Receipt, error) {
	opts := bind.NewKeyedTransactor(a.key, a.id)
	opts.Value = value
	tx, err := bind.Transact(inst, opts, data)
	if err != nil {
		return nil, err
	}
	return chain.WaitMined(context.Background(), a.c, tx.Hash())
}

func (a *actor) send(inst *bind.BoundContract, data []byte, value *big.Int) *types.Receipt {
	a.t.Helper()
	r, err := a.try(inst, data, value)
	if err != nil {
		if ce := contracts.DecodeRevert(err); ce != nil {
			a.t.Fatalf("transaction from %s reverted: %v", a.addr, ce)
		}
		a.t.Fatalf("transaction from %s: %v", a.addr, err)
	}
	if r.Status != types.ReceiptStatusSuccessful {
		a.t.Fatalf("transaction %s failed", r.TxHash)
	}
	return r
}

// balance is the account's ETH balance.
func (a *actor) balance() *big.Int {
	a.t.Helper()
	b, err := a.c.BalanceAt(context.Background(), a.addr, nil)
	if err != nil {
		a.t.Fatal(err)
	}
	return b
}

// gasCost is what a receipt's transaction cost its sender.
func gasCost(r *types.Receipt) *big.Int {
	return new(big.Int).Mul(new(big.Int).SetUint64(r.GasUsed), r.EffectiveGasPrice)
}

func ether(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), big.NewInt(params.Ether)) }

func expectRevert(t testing.TB, err error, name string) *contracts.CustomError {
	t.Helper()
	ce := contracts.DecodeRevert(err)
	if ce == nil || ce.Name != name {
		t.Fatalf("got %v, want a %s revert", err, name)
	}
	return ce
}

func runLifecycle(t *testing.T, c chain.Client) {
	ctx := context.Background()
	deployer, poster, worker, arbiter := newActor(t, c, 0), newActor(t, c, 1), newActor(t, c, 2), newActor(t, c, 3)
	dep, err := contracts.Deploy(ctx, c, deployer.key, contracts.DeployConfig{FeeBps: 100}, nil)
	if err != nil {
		t.Fatal(err)
	}
	escrowABI := contracts.NewBountyEscrow()
	escrow := escrowABI.Instance(c, dep.Contracts.BountyEscrow)
	stakesABI := contracts.NewStakeRegistry()
	stakes := stakesABI.Instance(c, dep.Contracts.StakeRegistry)

	// --- a whole bounty: post, claim, submit, accept, withdraw ---
	head, err := c.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	amount := ether(1)
	spec := crypto.Keccak256Hash([]byte("spec"))
	gas := map[string]uint64{}
	r := poster.send(escrow, escrowABI.PackPost(common.Address{}, amount, arbiter.addr, head.Time+86400, 3600, big.NewInt(0), spec, newSalt(t)), amount)
	gas["post"] = r.GasUsed
	posted, err := escrowABI.UnpackPostedEvent(r.Logs[0])
	if err != nil {
		t.Fatal(err)
	}
	id, terms := posted.Id, posted.Terms
	if terms.Poster != poster.addr || terms.Amount.Cmp(amount) != 0 || terms.FeeBps != 100 || terms.SpecHash != spec {
		t.Fatalf("posted terms = %+v", terms)
	}

	agent := crypto.Keccak256Hash([]byte("did:key:z6MkLifecycleWorker"))
	workerBefore := worker.balance()
	r = worker.send(escrow, escrowABI.PackClaim(id, terms, agent), nil)
	gas["claim"] = r.GasUsed
	workerGas := gasCost(r)
	r = worker.send(escrow, escrowABI.PackSubmit(id, terms, worker.addr, crypto.Keccak256Hash([]byte("result"))), nil)
	gas["submit"] = r.GasUsed
	workerGas.Add(workerGas, gasCost(r))

	// Only the poster accepts; the revert arrives as a decoded custom error.
	_, err = worker.try(escrow, escrowABI.PackAccept(id, terms, worker.addr), nil) // reverts at estimation: no gas spent
	ce := expectRevert(t, err, "NotPoster")
	if ce.Args[1].(common.Address) != worker.addr {
		t.Errorf("NotPoster names %v, want the worker", ce.Args[1])
	}
	gas["accept"] = poster.send(escrow, escrowABI.PackAccept(id, terms, worker.addr), nil).GasUsed
	t.Logf("gas in ETH, intrinsic included: post %d + claim %d + submit %d + accept %d = %d",
		gas["post"], gas["claim"], gas["submit"], gas["accept"], gas["post"]+gas["claim"]+gas["submit"]+gas["accept"])

	_, err = poster.try(escrow, escrowABI.PackAccept(id, terms, worker.addr), nil)
	if ce := expectRevert(t, err, "WrongStatus"); ce.Args[1].(uint8) != 4 { // Accepted
		t.Errorf("WrongStatus carries status %v, want 4 (Accepted)", ce.Args[1])
	}

	fee := new(big.Int).Div(amount, big.NewInt(100))
	payout := new(big.Int).Sub(amount, fee)
	if got := new(big.Int).Sub(worker.balance(), workerBefore); got.Cmp(new(big.Int).Sub(payout, workerGas)) != 0 {
		t.Errorf("worker received %s net, want payout %s less its gas %s", got, payout, workerGas)
	}
	// The payout was pushed, so nothing is left to withdraw; the fee waits for the treasury.
	_, err = worker.try(escrow, escrowABI.PackWithdraw(common.Address{}), nil)
	expectRevert(t, err, "NothingToWithdraw")
	before := deployer.balance()
	r = deployer.send(escrow, escrowABI.PackWithdrawFees(common.Address{}), nil) // the deployer is the treasury
	wantFee := new(big.Int).Sub(fee, big.NewInt(1))                              // one wei stays to keep the slot warm
	if got := new(big.Int).Sub(deployer.balance(), before); got.Cmp(new(big.Int).Sub(wantFee, gasCost(r))) != 0 {
		t.Errorf("treasury received %s, want fee %s less gas", got, wantFee)
	}
	escrowBalance, err := c.BalanceAt(ctx, dep.Contracts.BountyEscrow, nil)
	if err != nil {
		t.Fatal(err)
	}
	if escrowBalance.Cmp(big.NewInt(1)) != 0 {
		t.Errorf("escrow holds %s after every withdrawal, want the 1 wei fee remainder", escrowBalance)
	}

	// --- an ERC-20 bounty, cancelled: the tokens come back ---
	token := devTokenFor(t, c, dep)
	erc := contracts.NewDevToken()
	tokenInst := erc.Instance(c, token)
	tokenBalance := func(a common.Address) *big.Int {
		t.Helper()
		b, err := bind.Call(tokenInst, nil, erc.PackBalanceOf(a), erc.UnpackBalanceOf)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	held := tokenBalance(poster.addr)
	r = poster.send(escrow, escrowABI.PackPost(token, ether(5), arbiter.addr, head.Time+86400, 3600, big.NewInt(0), spec, newSalt(t)), nil)
	posted, err = escrowABI.UnpackPostedEvent(r.Logs[len(r.Logs)-1])
	if err != nil {
		t.Fatal(err)
	}
	if got := tokenBalance(dep.Contracts.BountyEscrow); got.Cmp(ether(5)) != 0 {
		t.Errorf("escrow holds %s tokens, want 5", got)
	}
	poster.send(escrow, escrowABI.PackCancel(posted.Id, posted.Terms), nil)
	if got := tokenBalance(poster.addr); got.Cmp(held) != 0 {
		t.Errorf("poster has %s tokens after cancel, want %s back", got, held)
	}

	// --- stake and slash ---
	worker.send(stakes, stakesABI.PackBind(agent, []byte("jws proof")), nil)
	worker.send(stakes, stakesABI.PackStake(agent, ether(2)), ether(2))
	stakeOf := func() *big.Int {
		t.Helper()
		s, err := bind.Call(stakes, nil, stakesABI.PackStakeOf(agent, worker.addr), stakesABI.UnpackStakeOf)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if s := stakeOf(); s.Cmp(ether(2)) != 0 {
		t.Fatalf("stakeOf = %s, want 2 ETH", s)
	}
	// Nobody slashes at will: the registry's only slashing path is the escrow's locker role.
	_, err = poster.try(stakes, stakesABI.PackUnlock(big.NewInt(1), worker.addr, ether(1), ether(1), poster.addr), nil)
	expectRevert(t, err, "NotLocker")

	// A claim locks the bounty's minimum stake; the stake cannot leave while it is locked;
	// the arbiter's ruling slashes at most the lock, to the poster.
	r = poster.send(escrow, escrowABI.PackPost(common.Address{}, ether(1), arbiter.addr, head.Time+86400, 3600, ether(1), spec, newSalt(t)), ether(1))
	if posted, err = escrowABI.UnpackPostedEvent(r.Logs[len(r.Logs)-1]); err != nil {
		t.Fatal(err)
	}
	worker.send(escrow, escrowABI.PackClaim(posted.Id, posted.Terms, agent), nil)
	rec, err := bind.Call(stakes, nil, stakesABI.PackRecordOf(agent, worker.addr), stakesABI.UnpackRecordOf)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Locked.Cmp(ether(1)) != 0 {
		t.Errorf("locked = %s after the claim, want 1 ETH", rec.Locked)
	}
	_, err = worker.try(stakes, stakesABI.PackRequestUnbond(agent, ether(2)), nil)
	expectRevert(t, err, "InsufficientStake")
	worker.send(escrow, escrowABI.PackSubmit(posted.Id, posted.Terms, worker.addr, crypto.Keccak256Hash([]byte("work"))), nil)
	poster.send(escrow, escrowABI.PackReject(posted.Id, posted.Terms, worker.addr, crypto.Keccak256Hash([]byte("late"))), nil)
	_, err = arbiter.try(escrow, escrowABI.PackResolve(posted.Id, posted.Terms, worker.addr, 0, ether(2)), nil)
	expectRevert(t, err, "SlashAboveLock")
	half := new(big.Int).Div(ether(1), big.NewInt(2))
	before = poster.balance()
	arbiter.send(escrow, escrowABI.PackResolve(posted.Id, posted.Terms, worker.addr, 0, half), nil)
	if got, want := new(big.Int).Sub(poster.balance(), before), new(big.Int).Add(ether(1), half); got.Cmp(want) != 0 {
		t.Errorf("poster received %s, want %s (the bounty back and the slash)", got, want)
	}
	if s := stakeOf(); s.Cmp(new(big.Int).Sub(ether(2), half)) != 0 {
		t.Errorf("stake after slash = %s, want 1.5 ETH", s)
	}
}

// newSalt is a fresh post salt: each post a new bounty.
func newSalt(tb testing.TB) common.Hash {
	tb.Helper()
	var h common.Hash
	if _, err := rand.Read(h[:]); err != nil {
		tb.Fatal(err)
	}
	return h
}
