package escrow_test

import (
	"context"
	"math/big"
	"slices"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/google/go-cmp/cmp"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/txn"
)

var eth = big.NewInt(1e18)

type fixture struct {
	t                       testing.TB
	c                       *chain.Embedded
	dep                     *contracts.Deployment
	abi                     *contracts.BountyEscrow
	poster, worker, arbiter *txn.Sender
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(5, chain.DefaultDevBalance)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return newFixtureOn(t, c)
}

// newFixtureOn deploys the contracts on c and makes senders for dev accounts 1-3.
func newFixtureOn(t testing.TB, c *chain.Embedded) *fixture {
	t.Helper()
	ctx := context.Background()
	dep, err := contracts.Deploy(ctx, c, chain.DevKey(0), contracts.DeployConfig{FeeBps: 100}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, c: c, dep: dep, abi: contracts.NewBountyEscrow()}
	for i, dst := range []**txn.Sender{&f.poster, &f.worker, &f.arbiter} {
		s, err := txn.NewSender(ctx, c, txn.NewKeySigner(chain.DevKey(i+1)), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		*dst = s
	}
	return f
}

// indexer opens an indexer on db for the fixture's chain.
func (f *fixture) indexer(db *testutil.SQL, confirmations uint64) *escrow.Indexer {
	f.t.Helper()
	return f.indexerWith(f.t, db, confirmations)
}

// indexerOn is indexer for a benchmark.
func (f *fixture) indexerOn(tb testing.TB, db *testutil.SQL) *escrow.Indexer {
	return f.indexerWith(tb, db, 0)
}

func (f *fixture) indexerWith(tb testing.TB, db *testutil.SQL, confirmations uint64) *escrow.Indexer {
	tb.Helper()
	ctx := context.Background()
	row, err := sqlite.EnterChain(ctx, db.DB, sqlite.Chain{Key: "test", ChainID: chain.EmbeddedChainID, Genesis: "g", Contracts: "{}"})
	if err != nil {
		tb.Fatal(err)
	}
	ix, err := escrow.NewIndexer(ctx, escrow.IndexerConfig{DB: db.DB, Chain: row, Client: f.c, Escrow: f.dep.Contracts.BountyEscrow,
		StartBlock: f.dep.Block, Confirmations: confirmations})
	if err != nil {
		tb.Fatal(err)
	}
	return ix
}

// runIndexer runs ix until the test ends, and waits for it to stop before the test's
// database closes (cleanups run last-registered first, so call it after opening the database).
// The context it returns ends with the test.
func runIndexer(t testing.TB, ix *escrow.Indexer) context.Context {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = ix.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return ctx
}

func (f *fixture) send(s *txn.Sender, data []byte, value *big.Int) *types.Receipt {
	f.t.Helper()
	r, err := s.Send(context.Background(), txn.Call{To: f.dep.Contracts.BountyEscrow, Data: data, Value: value})
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func (f *fixture) post(amount *big.Int) (*big.Int, contracts.IBountyEscrowTerms) {
	f.t.Helper()
	head, _ := f.c.HeaderByNumber(context.Background(), nil)
	// The salt is the poster's nonce: a post that takes the same nonce on a fork gets the
	// same bounty id.
	nonce, err := f.c.PendingNonceAt(context.Background(), f.poster.Address())
	if err != nil {
		f.t.Fatal(err)
	}
	salt := common.BigToHash(new(big.Int).SetUint64(nonce))
	r := f.send(f.poster, f.abi.PackPost(common.Address{}, amount, f.arbiter.Address(), head.Time+3600, 600, new(big.Int), [32]byte{1}, salt), amount)
	p, err := f.abi.UnpackPostedEvent(r.Logs[len(r.Logs)-1])
	if err != nil {
		f.t.Fatal(err)
	}
	return p.Id, p.Terms
}

func statuses(t *testing.T, ix *escrow.Indexer) map[uint64]escrow.Status {
	t.Helper()
	list, err := ix.List(context.Background(), escrow.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[uint64]escrow.Status{}
	for _, b := range list {
		out[b.ID] = b.Status
	}
	return out
}

func TestIndexerFollowsEveryTransition(t *testing.T) {
	f := newFixture(t)
	db := testutil.OpenSQL(t)
	ix := f.indexer(db, 0)
	ctx := context.Background()
	w := f.worker.Address()

	accepted, t1 := f.post(eth)
	f.send(f.worker, f.abi.PackClaim(accepted, t1, [32]byte{9}), nil)
	f.send(f.worker, f.abi.PackSubmit(accepted, t1, w, [32]byte{2}), nil)
	f.send(f.poster, f.abi.PackAccept(accepted, t1, w), nil)

	cancelled, t2 := f.post(eth)
	f.send(f.poster, f.abi.PackCancel(cancelled, t2), nil)

	resolved, t3 := f.post(new(big.Int).Mul(eth, big.NewInt(2)))
	f.send(f.poster, f.abi.PackAssign(resolved, t3, w), nil)
	f.send(f.worker, f.abi.PackSubmit(resolved, t3, w, [32]byte{3}), nil)
	f.send(f.poster, f.abi.PackReject(resolved, t3, w, [32]byte{4}), nil)
	f.send(f.arbiter, f.abi.PackResolve(resolved, t3, w, 2500, new(big.Int)), nil)

	open, _ := f.post(eth)

	if _, err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[uint64]escrow.Status{accepted.Uint64(): escrow.StatusAccepted, cancelled.Uint64(): escrow.StatusCancelled,
		resolved.Uint64(): escrow.StatusResolved, open.Uint64(): escrow.StatusOpen}
	if diff := cmp.Diff(want, statuses(t, ix)); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	b, err := ix.Get(ctx, resolved.Uint64())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range b.History {
		names = append(names, e.Name)
	}
	if diff := cmp.Diff([]string{"Posted", "Assigned", "Submitted", "Disputed", "Resolved"}, names); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	// 2 ETH, 25% to the worker less a 1% fee on that share.
	if b.Worker != w || b.Payout != "495000000000000000" || b.Fee != "5000000000000000" || b.PosterRefund != "1500000000000000000" {
		t.Errorf("resolved bounty = %+v", b)
	}
	// The terms rebuilt from the index are the ones the contract committed to.
	inst := f.abi.Instance(f.c, f.dep.Contracts.BountyEscrow)
	onChain, err := bind.Call(inst, nil, f.abi.PackBountyOf(resolved), f.abi.UnpackBountyOf)
	if err != nil {
		t.Fatal(err)
	}
	fromIndex, err := bind.Call(inst, nil, f.abi.PackCommitmentOf(b.Terms(), b.Worker), f.abi.UnpackCommitmentOf)
	if err != nil {
		t.Fatal(err)
	}
	if onChain.Commitment != fromIndex {
		t.Errorf("index terms commit to %x, the contract holds %x", fromIndex, onChain.Commitment)
	}
	if _, err := ix.Get(ctx, 999); err == nil {
		t.Error("Get(999) found a bounty")
	}
	mine, err := ix.List(ctx, escrow.Filter{Worker: w, Status: escrow.StatusAccepted})
	if err != nil || len(mine) != 1 || mine[0].ID != accepted.Uint64() {
		t.Errorf("List(worker, accepted) = %v, %v", mine, err)
	}
}

// TestIndexerResumesWithoutDuplicates reopens the index (as after a crash) and checks that
// it continues from its cursor and ends with exactly the chain's events.
func TestIndexerResumesWithoutDuplicates(t *testing.T) {
	f := newFixture(t)
	db := testutil.OpenSQL(t)
	ctx := context.Background()
	ix := f.indexer(db, 0)
	for range 3 {
		f.post(eth)
	}
	if _, err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	at := ix.Indexed()

	again := f.indexer(db, 0)
	if again.Indexed() != at {
		t.Fatalf("reopened index starts at %d, want %d", again.Indexed(), at)
	}
	id, terms := f.post(eth)
	f.send(f.poster, f.abi.PackCancel(id, terms), nil)
	if _, err := again.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := again.Sync(ctx); err != nil { // a second sync changes nothing
		t.Fatal(err)
	}
	logs, err := f.c.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: new(big.Int).SetUint64(f.dep.Block), Addresses: []common.Address{f.dep.Contracts.BountyEscrow}})
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, l := range logs {
		if name := mustEventName(t, l); name != "OwnershipTransferred" && name != "TreasuryChanged" && name != "FeeChanged" {
			kept++
		}
	}
	bounties, events, err := again.Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if bounties != 4 || events != kept {
		t.Errorf("index holds %d bounties and %d events, want 4 and %d", bounties, events, kept)
	}
}

func mustEventName(t *testing.T, l types.Log) string {
	t.Helper()
	parsed, err := contracts.BountyEscrowMetaData.ParseABI()
	if err != nil {
		t.Fatal(err)
	}
	ev, err := parsed.EventByID(l.Topics[0])
	if err != nil {
		t.Fatal(err)
	}
	return ev.Name
}

func TestIndexerWaitsForConfirmations(t *testing.T) {
	f := newFixture(t)
	db := testutil.OpenSQL(t)
	ctx := context.Background()
	ix := f.indexer(db, 2)
	id, _ := f.post(eth)
	if _, err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := statuses(t, ix)[id.Uint64()]; ok {
		t.Fatal("indexed a bounty with no confirmations")
	}
	f.c.Mine()
	f.c.Mine()
	if _, err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if statuses(t, ix)[id.Uint64()] != escrow.StatusOpen {
		t.Error("bounty not indexed after 2 confirmations")
	}
}

func TestIndexerSurvivesReorg(t *testing.T) {
	f := newFixture(t)
	db := testutil.OpenSQL(t)
	ctx := context.Background()
	ix := f.indexer(db, 0)
	f.post(eth)
	base, err := f.c.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	replaced, _ := f.post(eth)
	if _, err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	// Fork before the second post and make the fork win with a different post that takes
	// the same nonce (and so the same bounty id): the first version of bounty 2 is gone.
	if err := f.c.Fork(base.Hash()); err != nil {
		t.Fatal(err)
	}
	poster, err := txn.NewSender(ctx, f.c, txn.NewKeySigner(chain.DevKey(1)), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	f.poster = poster
	three := new(big.Int).Mul(eth, big.NewInt(3))
	again, _ := f.post(three)
	f.c.Mine()
	if again.Cmp(replaced) != 0 {
		t.Fatalf("fork post got id %s, want %s", again, replaced)
	}
	if _, err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := ix.Get(ctx, replaced.Uint64())
	if err != nil {
		t.Fatal(err)
	}
	if b.Amount != three.String() || len(b.History) != 1 {
		t.Errorf("after the reorg bounty %s = amount %s with %d events, want the fork's 3 ETH post alone", replaced, b.Amount, len(b.History))
	}
	_, events, err := ix.Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if events != 2 {
		t.Errorf("index holds %d events after the reorg, want 2", events)
	}
}

func TestWaitIndexedAndSubscribe(t *testing.T) {
	f := newFixture(t)
	db := testutil.OpenSQL(t)
	ix := f.indexer(db, 0)
	ctx := runIndexer(t, ix)

	id, terms := f.post(eth)
	events, stop := ix.Subscribe(id.Uint64())
	defer stop()
	r := f.send(f.poster, f.abi.PackCancel(id, terms), nil)
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := ix.WaitIndexed(wctx, r.BlockNumber.Uint64()); err != nil {
		t.Fatal(err)
	}
	if statuses(t, ix)[id.Uint64()] != escrow.StatusCancelled {
		t.Error("cancel not visible after WaitIndexed")
	}
	select {
	case ev := <-events:
		if ev.Name != "Cancelled" && ev.Name != "Posted" {
			t.Errorf("live event %s", ev.Name)
		}
	case <-time.After(10 * time.Second):
		t.Error("no live event")
	}
}

// devToken deploys a DevToken and mints the poster some.
func devToken(t *testing.T, f *fixture) common.Address {
	t.Helper()
	ctx := context.Background()
	token, err := contracts.DeployDevToken(ctx, f.c, chain.DevKey(0), "Dev", "DEV")
	if err != nil {
		t.Fatal(err)
	}
	erc := contracts.NewDevToken()
	if _, err := f.poster.Send(ctx, txn.Call{To: token, Data: erc.PackMint(f.poster.Address(), new(big.Int).Mul(eth, big.NewInt(1000)))}); err != nil {
		t.Fatal(err)
	}
	return token
}

// TestPaidBetween: Paid finds the bounties between two wallets that paid the worker, either
// way round, and nothing that was cancelled, refunded, left open, or between other wallets
// (what ERC-8004 feedback needs before it counts: reputation.Settlements).
func TestPaidBetween(t *testing.T) {
	f := newFixture(t)
	db := testutil.OpenSQL(t)
	ix := f.indexer(db, 0)
	ctx := context.Background()
	w := f.worker.Address()

	accepted, t1 := f.post(eth)
	f.send(f.worker, f.abi.PackClaim(accepted, t1, [32]byte{9}), nil)
	f.send(f.worker, f.abi.PackSubmit(accepted, t1, w, [32]byte{2}), nil)
	f.send(f.poster, f.abi.PackAccept(accepted, t1, w), nil)

	cancelled, t2 := f.post(eth)
	f.send(f.poster, f.abi.PackCancel(cancelled, t2), nil)

	nothing, t3 := f.post(eth) // resolved with nothing for the worker
	f.send(f.poster, f.abi.PackAssign(nothing, t3, w), nil)
	f.send(f.worker, f.abi.PackSubmit(nothing, t3, w, [32]byte{3}), nil)
	f.send(f.poster, f.abi.PackReject(nothing, t3, w, [32]byte{4}), nil)
	f.send(f.arbiter, f.abi.PackResolve(nothing, t3, w, 0, new(big.Int)), nil)

	submitted, t4 := f.post(eth)
	f.send(f.poster, f.abi.PackAssign(submitted, t4, w), nil)
	f.send(f.worker, f.abi.PackSubmit(submitted, t4, w, [32]byte{5}), nil)

	if _, err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	ids := func(a common.Address, bs ...common.Address) []uint64 {
		t.Helper()
		paid, err := ix.Paid(ctx, a, bs)
		if err != nil {
			t.Fatal(err)
		}
		var out []uint64
		for _, b := range paid {
			out = append(out, b.ID)
		}
		return out
	}
	want := []uint64{accepted.Uint64()}
	if diff := cmp.Diff(want, ids(f.poster.Address(), w)); diff != "" {
		t.Errorf("poster → worker (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, ids(w, f.arbiter.Address(), f.poster.Address())); diff != "" {
		t.Errorf("worker → poster among others (-want +got):\n%s", diff)
	}
	if got := ids(f.arbiter.Address(), w); len(got) != 0 {
		t.Errorf("the arbiter settled nothing with the worker, got %v", got)
	}
	if got := ids(f.poster.Address()); len(got) != 0 {
		t.Errorf("no wallets: got %v", got)
	}
	// The wallets whose feedback can count: both sides of the accepted ETH bounty (it paid a
	// fee), nobody's in a token that is not asked for.
	wallets, err := ix.PaidWallets(ctx, []common.Address{{}})
	if err != nil {
		t.Fatal(err)
	}
	want2 := []common.Address{f.poster.Address(), w}
	slices.SortFunc(want2, func(a, b common.Address) int { return a.Cmp(b) })
	if diff := cmp.Diff(want2, wallets); diff != "" {
		t.Errorf("PaidWallets(ETH) (-want +got):\n%s", diff)
	}
	if other, err := ix.PaidWallets(ctx, []common.Address{common.HexToAddress("0xee")}); err != nil || len(other) != 0 {
		t.Errorf("PaidWallets(another token) = %v, %v", other, err)
	}
}
