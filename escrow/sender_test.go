package escrow_test

import (
	"context"
	"errors"
	"math/big"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/core/types"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
)

// flakyChain is the embedded chain behind a send that can be slowed down or made to fail,
// and that records the nonces in the order it received them.
type flakyChain struct {
	*chain.Embedded
	mu     sync.Mutex
	jitter time.Duration // each send first sleeps up to this long
	fail   error         // when set, the next send fails with it and reaches nothing
	nonces []uint64
}

func (c *flakyChain) SendTransaction(ctx context.Context, tx *types.Transaction) error {
	if c.jitter > 0 {
		time.Sleep(rand.N(c.jitter))
	}
	c.mu.Lock()
	if err := c.fail; err != nil {
		c.fail = nil
		c.mu.Unlock()
		return err
	}
	c.nonces = append(c.nonces, tx.Nonce())
	c.mu.Unlock()
	return c.Embedded.SendTransaction(ctx, tx)
}

func (c *flakyChain) failNext(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fail = err
}

// rpcRefusal is how go-ethereum's RPC client reports an error the node answered with.
type rpcRefusal struct{ msg string }

func (e rpcRefusal) Error() string  { return e.msg }
func (e rpcRefusal) ErrorCode() int { return -32000 }

// TestSenderBroadcastsInNonceOrder: a chain may sit on a transaction whose predecessor arrives
// after it, so concurrent sends from one wallet must reach the chain in nonce order.
func TestSenderBroadcastsInNonceOrder(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	fc := &flakyChain{Embedded: f.c, jitter: 3 * time.Millisecond}
	snd, err := escrow.NewSender(ctx, fc, chain.DevKey(4), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			if _, err := snd.Send(ctx, f.arbiter.Address(), nil, big.NewInt(1)); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(fc.nonces) != n {
		t.Fatalf("%d transactions reached the chain, want %d", len(fc.nonces), n)
	}
	for i := 1; i < n; i++ {
		if fc.nonces[i] != fc.nonces[i-1]+1 {
			t.Fatalf("nonces reached the chain in the order %v", fc.nonces)
		}
	}
}

func TestSenderRecordFailureSendsNothing(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	fc := &flakyChain{Embedded: f.c}
	snd, err := escrow.NewSender(ctx, fc, chain.DevKey(4), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	diskFull := errors.New("disk full")
	_, err = snd.SendAsync(ctx, f.arbiter.Address(), nil, big.NewInt(1), func(*types.Transaction) error { return diskFull })
	if !errors.Is(err, diskFull) {
		t.Fatalf("send with a failing record: %v, want the record's error", err)
	}
	if len(fc.nonces) != 0 {
		t.Fatalf("a transaction was sent although recording it failed: nonces %v", fc.nonces)
	}
	// The nonce was not used up: the next transaction takes it and is mined.
	want, _ := f.c.PendingNonceAt(ctx, snd.Address())
	tx, err := snd.SendAsync(ctx, f.arbiter.Address(), nil, big.NewInt(1), nil)
	if err != nil {
		t.Fatal(err)
	}
	if tx.Nonce() != want {
		t.Errorf("next transaction has nonce %d, want %d", tx.Nonce(), want)
	}
	if _, err := snd.Wait(ctx, tx); err != nil {
		t.Fatal(err)
	}
}

// TestFailedBroadcastAndIdempotency: a send the chain refused is forgotten, so a retry starts
// afresh; a send that may have reached the chain keeps its stored transaction, so a retry
// waits for that one instead of sending a second.
func TestFailedBroadcastAndIdempotency(t *testing.T) {
	f := newFixture(t)
	fc := &flakyChain{Embedded: f.c}
	db := testutil.OpenSQL(t)
	ix := f.indexer(db, 0)
	ctx := runIndexer(t, ix)
	svc, err := escrow.NewService(ctx, escrow.ServiceConfig{Chain: fc, Escrow: f.dep.Contracts.BountyEscrow, Indexer: ix, ReceiptTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	poster, err := svc.AddWallet(ctx, chain.DevKey(1))
	if err != nil {
		t.Fatal(err)
	}
	head, _ := f.c.HeaderByNumber(ctx, nil)
	op := escrow.Op{Kind: escrow.OpPost, From: poster, Post: escrow.PostRequest{Amount: eth, Arbiter: f.arbiter.Address(), Deadline: head.Time + 3600, ReviewWindow: 60}}
	state := func(key string) string {
		var s string
		if err := db.DB.QueryRow(`SELECT state FROM escrow_requests WHERE key = ?`, key).Scan(&s); err != nil {
			return "none"
		}
		return s
	}
	nonce := func() uint64 {
		n, err := f.c.NonceAt(ctx, poster, nil)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	tests := []struct {
		name      string
		err       error
		wantState string // of the request after the failed send
	}{
		{"refused", rpcRefusal{"transaction type not supported"}, "none"},
		{"lost", errors.New("read tcp 127.0.0.1:1: connection reset by peer"), "sent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idem := escrow.Idempotency{Caller: "did:key:z6MkCaller", Key: tt.name, Fingerprint: "post"}
			before := nonce()
			fc.failNext(tt.err)
			if _, err := svc.Do(ctx, op, idem); err == nil {
				t.Fatal("the failed send was reported as a success")
			}
			if got := state(tt.name); got != tt.wantState {
				t.Fatalf("request state after the failed send = %s, want %s", got, tt.wantState)
			}
			res, err := svc.Do(ctx, op, idem)
			if err != nil {
				t.Fatalf("retry: %v", err)
			}
			if res.Bounty == nil || res.Bounty.Status != escrow.StatusOpen {
				t.Fatalf("retry answered %+v", res)
			}
			if n := nonce(); n != before+1 {
				t.Errorf("the poster sent %d transactions, want exactly one", n-before)
			}
			if got := state(tt.name); got != "done" {
				t.Errorf("request state after the retry = %s, want done", got)
			}
		})
	}
}

// TestSenderRecoversFromAnExternalSend: at 66f817e a transaction sent from a node-held wallet
// outside the node made the node's next request answer 500 "nonce too low". The sender now
// reads the nonce again and sends once more.
func TestSenderRecoversFromAnExternalSend(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	key := chain.DevKey(4)
	snd, err := escrow.NewSender(ctx, f.c, key, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := snd.Send(ctx, f.arbiter.Address(), nil, big.NewInt(1)); err != nil {
		t.Fatal(err) // the sender now holds the next nonce
	}
	// The same wallet, used elsewhere (a user's own script), takes that nonce.
	next, err := f.c.PendingNonceAt(ctx, snd.Address())
	if err != nil {
		t.Fatal(err)
	}
	signer := types.LatestSignerForChainID(big.NewInt(chain.EmbeddedChainID))
	to := f.arbiter.Address()
	outside, err := types.SignNewTx(key, signer, &types.DynamicFeeTx{ChainID: big.NewInt(chain.EmbeddedChainID), Nonce: next,
		To: &to, Value: big.NewInt(1), Gas: 21000, GasFeeCap: big.NewInt(200e9), GasTipCap: big.NewInt(1e9)})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.c.SendTransaction(ctx, outside); err != nil {
		t.Fatal(err)
	}
	f.c.Mine()
	var recorded []*types.Transaction
	tx, err := snd.SendAsync(ctx, f.arbiter.Address(), nil, big.NewInt(1), func(tx *types.Transaction) error {
		recorded = append(recorded, tx)
		return nil
	})
	if err != nil {
		t.Fatalf("send after an outside transaction took the nonce: %v", err)
	}
	if tx.Nonce() != next+1 {
		t.Errorf("sent with nonce %d, want %d (the one after the outside transaction)", tx.Nonce(), next+1)
	}
	if len(recorded) != 2 || recorded[1].Hash() != tx.Hash() {
		t.Errorf("recorded %d transactions; the last recorded must be the one sent", len(recorded))
	}
	if _, err := snd.Wait(ctx, tx); err != nil {
		t.Fatal(err)
	}
}

// TestRevertsOfOtherContractsKeepTheirDecodedError: a transaction to another Surety contract
// (the log's RootAnchor) that reverts is refused with the decoded custom error still behind
// it, so the caller can tell a stale anchor from a failure.
func TestRevertsOfOtherContractsKeepTheirDecodedError(t *testing.T) {
	f := newFixture(t)
	ix := f.indexer(testutil.OpenSQL(t), 0)
	ctx := runIndexer(t, ix)
	svc, err := escrow.NewService(ctx, escrow.ServiceConfig{Chain: f.c, Escrow: f.dep.Contracts.BountyEscrow, Indexer: ix, ReceiptTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	from, err := svc.AddWallet(ctx, chain.DevKey(4))
	if err != nil {
		t.Fatal(err)
	}
	anchor := contracts.NewRootAnchor()
	if _, err := svc.Transact(ctx, from, f.dep.Contracts.RootAnchor, anchor.PackAnchor(5, [32]byte{1})); err != nil {
		t.Fatal(err)
	}
	_, err = svc.Transact(ctx, from, f.dep.Contracts.RootAnchor, anchor.PackAnchor(3, [32]byte{2}))
	stale, ok := contracts.Revert[contracts.RootAnchorStaleTreeSize](err)
	if !errors.Is(err, escrow.ErrReverted) || !ok || stale.Latest != 5 || stale.Given != 3 {
		t.Fatalf("anchoring a smaller size: %v (decoded %+v), want ErrReverted with RootAnchor's StaleTreeSize(5, 3) behind it", err, stale)
	}
}
