package escrow_test

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/txn"
)

type svcFixture struct {
	*fixture
	svc                     *escrow.Service
	tx                      *txn.Service
	poster, worker, arbiter common.Address
	db                      *testutil.SQL
	ix                      *escrow.Indexer
}

func newService(t *testing.T) *svcFixture {
	t.Helper()
	f := newFixture(t)
	db := testutil.OpenSQL(t)
	ix := f.indexer(db, 0)
	ctx := runIndexer(t, ix)
	row, err := sqlite.EnterChain(ctx, db.DB, sqlite.Chain{Key: "test", ChainID: chain.EmbeddedChainID, Genesis: "g", Contracts: "{}"}) // the indexer's
	if err != nil {
		t.Fatal(err)
	}
	tx, err := txn.New(ctx, txn.Config{DB: db.DB, Chain: row, Client: f.c, ReceiptTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	svc := escrow.NewService(escrow.ServiceConfig{Tx: tx, Chain: f.c, Escrow: f.dep.Contracts.BountyEscrow, Indexer: ix})
	sf := &svcFixture{fixture: f, svc: svc, tx: tx, db: db, ix: ix}
	for i, dst := range []*common.Address{&sf.poster, &sf.worker, &sf.arbiter} {
		addr, err := tx.AddKey(ctx, chain.DevKey(i+1))
		if err != nil {
			t.Fatal(err)
		}
		*dst = addr
	}
	return sf
}

// restartTx opens the fixture's transaction service again, as a restarted node does.
func (sf *svcFixture) restartTx(t *testing.T) *txn.Service {
	t.Helper()
	row, err := sqlite.EnterChain(context.Background(), sf.db.DB, sqlite.Chain{Key: "test", ChainID: chain.EmbeddedChainID, Genesis: "g", Contracts: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := txn.New(context.Background(), txn.Config{DB: sf.db.DB, Chain: row, Client: sf.c, ReceiptTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

func (sf *svcFixture) postETH(amount *big.Int, deadline time.Duration) uint64 {
	sf.t.Helper()
	head, _ := sf.c.HeaderByNumber(context.Background(), nil)
	res, err := sf.svc.Post(context.Background(), sf.poster, escrow.PostRequest{
		Amount: amount, Arbiter: sf.arbiter, Deadline: head.Time + uint64(deadline/time.Second), ReviewWindow: 600,
	})
	if err != nil {
		sf.t.Fatal(err)
	}
	if res.Bounty == nil || res.Bounty.Status != escrow.StatusOpen {
		sf.t.Fatalf("post result = %+v", res)
	}
	return res.Bounty.ID
}

func (sf *svcFixture) act(from common.Address, id uint64, a escrow.Action, args escrow.ActionArgs) *escrow.Result {
	sf.t.Helper()
	res, err := sf.svc.Act(context.Background(), from, id, a, args)
	if err != nil {
		sf.t.Fatalf("%s on %d: %v", a, id, err)
	}
	return res
}

func (sf *svcFixture) balance(a common.Address) *big.Int {
	b, err := sf.c.BalanceAt(context.Background(), a, nil)
	if err != nil {
		sf.t.Fatal(err)
	}
	return b
}

func TestServiceRunsEveryTerminalState(t *testing.T) {
	sf := newService(t)
	ctx := context.Background()
	w := escrow.ActionArgs{AgentID: common.Hash{1}}

	accepted := sf.postETH(eth, time.Hour)
	sf.act(sf.worker, accepted, escrow.ActionClaim, w)
	sf.act(sf.worker, accepted, escrow.ActionSubmit, escrow.ActionArgs{ResultHash: common.Hash{2}})
	if res := sf.act(sf.poster, accepted, escrow.ActionAccept, escrow.ActionArgs{}); res.Bounty.Status != escrow.StatusAccepted || res.Bounty.Payout != "990000000000000000" {
		t.Errorf("accept = %+v", res.Bounty)
	}

	resolved := sf.postETH(eth, time.Hour)
	sf.act(sf.poster, resolved, escrow.ActionAssign, escrow.ActionArgs{Worker: sf.worker})
	sf.act(sf.worker, resolved, escrow.ActionSubmit, escrow.ActionArgs{})
	sf.act(sf.poster, resolved, escrow.ActionReject, escrow.ActionArgs{ReasonHash: common.Hash{3}})
	if res := sf.act(sf.arbiter, resolved, escrow.ActionResolve, escrow.ActionArgs{WorkerBps: 4000}); res.Bounty.Status != escrow.StatusResolved {
		t.Errorf("resolve = %+v", res.Bounty)
	}

	cancelled := sf.postETH(eth, time.Hour)
	sf.act(sf.poster, cancelled, escrow.ActionCancel, escrow.ActionArgs{})

	released := sf.postETH(eth, time.Hour)
	sf.act(sf.worker, released, escrow.ActionClaim, w)
	sf.act(sf.worker, released, escrow.ActionSubmit, escrow.ActionArgs{})

	refunded := sf.postETH(eth, 30*time.Second)
	if err := sf.c.AdvanceTime(2 * time.Hour); err != nil { // past the deadline and every review window
		t.Fatal(err)
	}
	sf.act(sf.worker, released, escrow.ActionRelease, escrow.ActionArgs{})
	sf.act(sf.arbiter, refunded, escrow.ActionRefund, escrow.ActionArgs{})

	want := map[uint64]escrow.Status{accepted: escrow.StatusAccepted, resolved: escrow.StatusResolved, cancelled: escrow.StatusCancelled,
		released: escrow.StatusReleased, refunded: escrow.StatusRefunded}
	got := statuses(t, sf.svc.Indexer())
	for id, st := range want {
		if got[id] != st {
			t.Errorf("bounty %d is %s, want %s", id, got[id], st)
		}
	}
	// Everything was paid out; only the fees remain in the escrow.
	escrowBal := sf.balance(sf.dep.Contracts.BountyEscrow)
	fees := new(big.Int)
	for _, id := range []uint64{accepted, resolved, released} {
		b, err := sf.svc.Indexer().Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := new(big.Int).SetString(b.Fee, 10)
		fees.Add(fees, f)
	}
	if escrowBal.Cmp(fees) != 0 {
		t.Errorf("escrow holds %s wei, want exactly the fees %s", escrowBal, fees)
	}
}

func TestServiceRefusesBadCallsWithoutSending(t *testing.T) {
	sf := newService(t)
	ctx := context.Background()
	id := sf.postETH(eth, time.Hour)
	nonce := func(a common.Address) uint64 {
		n, err := sf.c.NonceAt(ctx, a, nil)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := nonce(sf.worker)
	head, _ := sf.c.HeaderByNumber(ctx, nil)
	tests := []struct {
		name string
		call func() error
		want error
		msg  string
	}{
		{"unknown bounty", func() error {
			_, err := sf.svc.Act(ctx, sf.worker, 999, escrow.ActionClaim, escrow.ActionArgs{})
			return err
		}, escrow.ErrUnknownBounty, "bounty 999"},
		{"wrong caller", func() error {
			_, err := sf.svc.Act(ctx, sf.worker, id, escrow.ActionCancel, escrow.ActionArgs{})
			return err
		}, escrow.ErrNotAllowed, "only the poster"},
		{"amount 0", func() error {
			_, err := sf.svc.Post(ctx, sf.worker, escrow.PostRequest{Amount: new(big.Int), Arbiter: sf.arbiter, Deadline: head.Time + 60, ReviewWindow: 60})
			return err
		}, escrow.ErrInvalid, "amount"},
		{"past deadline", func() error {
			_, err := sf.svc.Post(ctx, sf.worker, escrow.PostRequest{Amount: eth, Arbiter: sf.arbiter, Deadline: head.Time - 1, ReviewWindow: 60})
			return err
		}, escrow.ErrInvalid, "InvalidDeadline"},
		{"submit before assignment", func() error {
			_, err := sf.svc.Act(ctx, sf.worker, id, escrow.ActionSubmit, escrow.ActionArgs{})
			return err
		}, escrow.ErrNotAllowed, "only the worker"},
		{"unknown wallet", func() error {
			_, err := sf.svc.Act(ctx, common.HexToAddress("0x0b"), id, escrow.ActionClaim, escrow.ActionArgs{})
			return err
		}, txn.ErrUnknownWallet, "holds no such wallet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if msg := err.Error(); !strings.Contains(msg, tt.msg) {
				t.Errorf("message %q does not say %q", msg, tt.msg)
			}
		})
	}
	if after := nonce(sf.worker); after != before {
		t.Errorf("the worker's nonce moved from %d to %d: a refused call sent a transaction", before, after)
	}
	// A closed bounty says so.
	sf.act(sf.poster, id, escrow.ActionCancel, escrow.ActionArgs{})
	_, err := sf.svc.Act(ctx, sf.poster, id, escrow.ActionCancel, escrow.ActionArgs{})
	if !errors.Is(err, escrow.ErrBountyClosed) || err.Error() != fmt.Sprintf("bounty %d is already cancelled", id) {
		t.Errorf("second cancel = %v", err)
	}
}

func TestServicePostsERC20WithApproval(t *testing.T) {
	sf := newService(t)
	ctx := context.Background()
	token := devToken(t, sf.fixture)
	head, _ := sf.c.HeaderByNumber(ctx, nil)
	res, err := sf.svc.Post(ctx, sf.poster, escrow.PostRequest{Token: token, Amount: eth, Arbiter: sf.arbiter, Deadline: head.Time + 3600, ReviewWindow: 60})
	if err != nil {
		t.Fatal(err)
	}
	if res.Bounty.Token != token || res.Bounty.Amount != eth.String() {
		t.Errorf("posted = %+v", res.Bounty)
	}
}

func TestIdempotentRequestsSendOnce(t *testing.T) {
	sf := newService(t)
	ctx := context.Background()
	head, _ := sf.c.HeaderByNumber(ctx, nil)
	op := escrow.Op{Kind: escrow.OpPost, From: sf.poster, Post: escrow.PostRequest{Amount: eth, Arbiter: sf.arbiter, Deadline: head.Time + 3600, ReviewWindow: 60}}
	idem := txn.Idempotency{Caller: "did:key:z6MkCaller", Key: "k-1", Fingerprint: "post#1"}
	nonce := func() uint64 {
		n, err := sf.c.NonceAt(ctx, sf.poster, nil)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := nonce()
	first, err := sf.svc.Do(ctx, op, idem)
	if err != nil {
		t.Fatal(err)
	}
	second, err := sf.svc.Do(ctx, op, idem)
	if err != nil {
		t.Fatal(err)
	}
	if first.TxHash != second.TxHash || second.Bounty.ID != first.Bounty.ID {
		t.Errorf("retry answered %s/%d, first was %s/%d", second.TxHash, second.Bounty.ID, first.TxHash, first.Bounty.ID)
	}
	if n := nonce(); n != before+1 {
		t.Errorf("nonce moved by %d, want exactly one transaction", n-before)
	}
	if _, err := sf.svc.Do(ctx, op, txn.Idempotency{Caller: idem.Caller, Key: idem.Key, Fingerprint: "something else"}); !errors.Is(err, txn.ErrKeyReused) {
		t.Errorf("key reused for another request: %v", err)
	}
	// Another caller may use the same key.
	other, err := sf.svc.Do(ctx, op, txn.Idempotency{Caller: "did:key:z6MkOther", Key: idem.Key, Fingerprint: idem.Fingerprint})
	if err != nil || other.TxHash == first.TxHash {
		t.Errorf("other caller's request: %v, %v", other, err)
	}

	// A refused request is not remembered: its retry is judged again.
	bad := escrow.Op{Kind: escrow.OpAct, From: sf.worker, BountyID: first.Bounty.ID, Action: escrow.ActionCancel}
	badIdem := txn.Idempotency{Caller: idem.Caller, Key: "k-2", Fingerprint: "cancel#1"}
	for range 2 {
		if _, err := sf.svc.Do(ctx, bad, badIdem); !errors.Is(err, escrow.ErrNotAllowed) {
			t.Fatalf("refused request: %v", err)
		}
	}
}

// TestIdempotentRequestResumesAfterRestart plays a node that stored and broadcast a
// transaction but stopped before answering: the retry on the restarted service waits for that
// same transaction instead of sending another.
func TestIdempotentRequestResumesAfterRestart(t *testing.T) {
	sf := newService(t)
	ctx := context.Background()
	id := sf.postETH(eth, time.Hour)
	op := escrow.Op{Kind: escrow.OpAct, From: sf.poster, BountyID: id, Action: escrow.ActionCancel}
	idem := txn.Idempotency{Caller: "did:key:z6MkCaller", Key: "cancel-1", Fingerprint: "cancel#" + fmt.Sprint(id)}
	first, err := sf.svc.Do(ctx, op, idem)
	if err != nil {
		t.Fatal(err)
	}
	// Roll the record back to "sent", as if the node died after broadcasting.
	if _, err := sf.db.DB.Exec(`UPDATE escrow_requests SET state = 'sent', response = '' WHERE key = ?`, idem.Key); err != nil {
		t.Fatal(err)
	}
	restartedTx := sf.restartTx(t)
	restarted := escrow.NewService(escrow.ServiceConfig{Tx: restartedTx, Chain: sf.c, Escrow: sf.dep.Contracts.BountyEscrow, Indexer: sf.ix})
	if _, err := restartedTx.AddKey(ctx, chain.DevKey(1)); err != nil {
		t.Fatal(err)
	}
	again, err := restarted.Do(ctx, op, idem)
	if err != nil {
		t.Fatal(err)
	}
	if again.TxHash != first.TxHash || again.Bounty.Status != escrow.StatusCancelled {
		t.Errorf("resumed answer %s (%s), want the first transaction %s", again.TxHash, again.Bounty.Status, first.TxHash)
	}
	// A request left half-prepared by a dead node is forgotten at start: nothing was sent.
	if _, err := sf.db.DB.Exec(`INSERT INTO escrow_requests (chain, caller, key, fingerprint, state) SELECT chain, caller, 'half', 'x', 'preparing' FROM escrow_requests LIMIT 1`); err != nil {
		t.Fatal(err)
	}
	sf.restartTx(t)
	var n int
	if err := sf.db.DB.QueryRow(`SELECT COUNT(*) FROM escrow_requests WHERE key = 'half'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("half-prepared request kept (%d, %v)", n, err)
	}
}

func TestRelayExternallySignedTransactions(t *testing.T) {
	sf := newService(t)
	ctx := context.Background()
	// An outside wallet (dev account 4, not held by the service) signs a post itself.
	outside, err := txn.NewSender(ctx, sf.c, txn.NewKeySigner(chain.DevKey(4)), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	head, _ := sf.c.HeaderByNumber(ctx, nil)
	tx, err := outside.Sign(ctx, txn.Call{To: sf.dep.Contracts.BountyEscrow,
		Data: sf.abi.PackPost(common.Address{}, eth, sf.arbiter, head.Time+3600, 600, new(big.Int), [32]byte{}, [32]byte{1}), Value: eth})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := tx.MarshalBinary()
	res, err := sf.svc.Relay(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	if res.Bounty == nil || res.Bounty.Poster != outside.Address() || res.TxHash != tx.Hash().Hex() {
		t.Fatalf("relayed post = %+v", res)
	}
	again, err := sf.svc.Relay(ctx, raw) // the same bytes: no second transaction
	if err != nil || again.TxHash != res.TxHash {
		t.Errorf("relaying again: %v, %v", again, err)
	}
	// A call the escrow would refuse is refused before sending (signed by hand: the
	// sender's own estimate would refuse it first).
	nonce, _ := sf.c.PendingNonceAt(ctx, outside.Address())
	escrowAddr := sf.dep.Contracts.BountyEscrow
	bad := types.MustSignNewTx(chain.DevKey(4), types.LatestSignerForChainID(big.NewInt(chain.EmbeddedChainID)), &types.DynamicFeeTx{
		ChainID: big.NewInt(chain.EmbeddedChainID), Nonce: nonce, To: &escrowAddr, Gas: 300_000,
		GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(1e11),
		Data: sf.abi.PackPost(common.Address{}, eth, sf.arbiter, head.Time+3600, 600, new(big.Int), [32]byte{}, [32]byte{2}), // no value: InvalidValue
	})
	rawBad, _ := bad.MarshalBinary()
	if _, err := sf.svc.Relay(ctx, rawBad); !errors.Is(err, escrow.ErrInvalid) || !strings.Contains(err.Error(), "InvalidValue") {
		t.Errorf("value-less ETH post: %v, want the decoded InvalidValue", err)
	}
	if n, _ := sf.c.NonceAt(ctx, outside.Address(), nil); n != nonce {
		t.Errorf("a refused relay was sent (nonce %d → %d)", nonce, n)
	}
	// Nothing else is relayed to.
	other, err := outside.Sign(ctx, txn.Call{To: sf.arbiter, Value: big.NewInt(1)})
	if err != nil {
		t.Fatal(err)
	}
	rawOther, _ := other.MarshalBinary()
	if _, err := sf.svc.Relay(ctx, rawOther); !errors.Is(err, txn.ErrNotRelayable) {
		t.Errorf("transfer to a wallet: %v", err)
	}
	if _, err := sf.svc.Relay(ctx, []byte("junk")); !errors.Is(err, txn.ErrNotRelayable) {
		t.Errorf("junk: %v", err)
	}
}

// TestServiceUnclaimsAWorkerThatDoesNotSubmit: a claim on a bounty without a minimum stake
// holds it for the claim window; before it ends the poster's unclaim is refused, decoded and
// unsent; after it the bounty is open again with nobody assigned, and for the next window
// only the poster moves it. A submitted job and a staked bounty are never unclaimed.
func TestServiceUnclaimsAWorkerThatDoesNotSubmit(t *testing.T) {
	sf := newService(t)
	ctx := context.Background()
	other := escrow.AddressOf(chain.DevKey(4))
	unclaim := func(id uint64) error {
		_, err := sf.svc.Act(ctx, sf.poster, id, escrow.ActionUnclaim, escrow.ActionArgs{})
		return err
	}
	squatted := sf.postETH(eth, 24*time.Hour)
	sf.act(sf.worker, squatted, escrow.ActionClaim, escrow.ActionArgs{AgentID: common.Hash{1}})
	submitted := sf.postETH(eth, 24*time.Hour)
	sf.act(sf.worker, submitted, escrow.ActionClaim, escrow.ActionArgs{AgentID: common.Hash{1}})
	head, _ := sf.c.HeaderByNumber(ctx, nil)
	staked, err := sf.svc.Post(ctx, sf.poster, escrow.PostRequest{Amount: eth, Arbiter: sf.arbiter, Deadline: head.Time + 86400, ReviewWindow: 600, MinStake: eth})
	if err != nil {
		t.Fatal(err)
	}
	sf.act(sf.poster, staked.Bounty.ID, escrow.ActionAssign, escrow.ActionArgs{Worker: sf.worker}) // nothing locked, but the bounty has a minimum stake

	nonce, _ := sf.c.NonceAt(ctx, sf.poster, nil)
	err = unclaim(squatted)
	var be *escrow.BountyError
	if !errors.Is(err, escrow.ErrTooEarly) || !errors.As(err, &be) || be.ID != squatted || !strings.Contains(err.Error(), "has until") {
		t.Fatalf("unclaim within the window = %v, want ErrTooEarly saying until when", err)
	}
	if n, _ := sf.c.NonceAt(ctx, sf.poster, nil); n != nonce {
		t.Errorf("a refused unclaim was sent")
	}

	sf.act(sf.worker, submitted, escrow.ActionSubmit, escrow.ActionArgs{ResultHash: common.Hash{2}})
	if err := sf.c.AdvanceTime(escrow.ClaimWindow + time.Minute); err != nil {
		t.Fatal(err)
	}
	res := sf.act(sf.poster, squatted, escrow.ActionUnclaim, escrow.ActionArgs{})
	if b := res.Bounty; b.Status != escrow.StatusOpen || b.Worker != (common.Address{}) {
		t.Errorf("after unclaim: status %s, worker %s; want open with nobody", b.Status, b.Worker.Hex())
	}
	h := res.Bounty.History
	if last := h[len(h)-1]; last.Name != "Unclaimed" || string(last.Data) != fmt.Sprintf(`{"worker":"%s"}`, strings.ToLower(sf.worker.Hex())) {
		t.Errorf("history ends %s %s, want Unclaimed naming the worker", last.Name, last.Data)
	}
	// The poster's turn: the worker sent away cannot claim again first; the poster assigns.
	if _, err := sf.svc.Act(ctx, sf.worker, squatted, escrow.ActionClaim, escrow.ActionArgs{}); !errors.Is(err, escrow.ErrTooEarly) || !strings.Contains(err.Error(), "claims reopen") {
		t.Errorf("claim in the poster's turn = %v, want ErrTooEarly", err)
	}
	if res := sf.act(sf.poster, squatted, escrow.ActionAssign, escrow.ActionArgs{Worker: other}); res.Bounty.Status != escrow.StatusAssigned || res.Bounty.Worker != other {
		t.Errorf("assign after unclaim = %+v", res.Bounty)
	}

	if err := unclaim(submitted); !errors.Is(err, escrow.ErrWrongStatus) || !strings.Contains(err.Error(), "submitted") {
		t.Errorf("unclaim of a submitted job = %v, want ErrWrongStatus", err)
	}
	if err := unclaim(staked.Bounty.ID); !errors.Is(err, escrow.ErrWrongStatus) || !strings.Contains(err.Error(), "minimum stake") {
		t.Errorf("unclaim on a staked bounty = %v, want ErrWrongStatus", err)
	}
}

// TestClaimWindowIsTheContracts: the Go copy of the claim window, used in messages and help,
// is the contract's.
func TestClaimWindowIsTheContracts(t *testing.T) {
	f := newFixture(t)
	inst := f.abi.Instance(f.c, f.dep.Contracts.BountyEscrow)
	w, err := bind.Call(inst, nil, f.abi.PackCLAIMWINDOW(), f.abi.UnpackCLAIMWINDOW)
	if err != nil {
		t.Fatal(err)
	}
	if want := big.NewInt(int64(escrow.ClaimWindow / time.Second)); w.Cmp(want) != 0 {
		t.Errorf("CLAIM_WINDOW = %s s, escrow.ClaimWindow = %s s", w, want)
	}
}
