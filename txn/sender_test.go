package txn_test

import (
	"context"
	"errors"
	"math/big"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/txn"
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

// fixture is the embedded chain with the contracts deployed and dev accounts funded.
type fixture struct {
	c   *chain.Embedded
	dep *contracts.Deployment
	to  common.Address // a wallet to pay
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(5, chain.DefaultDevBalance)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	dep, err := contracts.Deploy(context.Background(), c, chain.DevKey(0), contracts.DeployConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{c: c, dep: dep, to: crypto.PubkeyToAddress(chain.DevKey(3).PublicKey)}
}

// service opens a transaction service on a fresh database, sending through client.
func (f *fixture) service(t *testing.T, db *testutil.SQL, client txn.Backend) *txn.Service {
	t.Helper()
	row, err := sqlite.EnterChain(context.Background(), db.DB, sqlite.Chain{Key: "test", ChainID: chain.EmbeddedChainID, Genesis: "g", Contracts: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := txn.New(context.Background(), txn.Config{DB: db.DB, Chain: row, Client: client, ReceiptTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// pay is a request that pays one wei to f.to and answers with its transaction hash.
func (f *fixture) pay(from common.Address) txn.Request[string] {
	return txn.Request[string]{
		From: from,
		Prepare: func(context.Context, *txn.Sender) (txn.Call, error) {
			return txn.Call{To: f.to, Value: big.NewInt(1)}, nil
		},
		Finish: func(_ context.Context, r *types.Receipt) (string, error) { return r.TxHash.Hex(), nil },
	}
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
	snd, err := txn.NewSender(ctx, fc, txn.NewKeySigner(chain.DevKey(4)), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			if _, err := snd.Send(ctx, txn.Call{To: f.to, Value: big.NewInt(1)}); err != nil {
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
	snd, err := txn.NewSender(ctx, fc, txn.NewKeySigner(chain.DevKey(4)), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	diskFull := errors.New("disk full")
	_, err = snd.SendAsync(ctx, txn.Call{To: f.to, Value: big.NewInt(1)}, func(*types.Transaction) error { return diskFull })
	if !errors.Is(err, diskFull) {
		t.Fatalf("send with a failing record: %v, want the record's error", err)
	}
	if len(fc.nonces) != 0 {
		t.Fatalf("a transaction was sent although recording it failed: nonces %v", fc.nonces)
	}
	// The nonce was not used up: the next transaction takes it and is mined.
	want, _ := f.c.PendingNonceAt(ctx, snd.Address())
	tx, err := snd.SendAsync(ctx, txn.Call{To: f.to, Value: big.NewInt(1)}, nil)
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
	ctx := context.Background()
	svc := f.service(t, db, fc)
	poster, err := svc.AddKey(ctx, chain.DevKey(1))
	if err != nil {
		t.Fatal(err)
	}
	req := f.pay(poster)
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
			idem := txn.Idempotency{Caller: "did:key:z6MkCaller", Key: tt.name, Fingerprint: "pay"}
			before := nonce()
			fc.failNext(tt.err)
			if _, err := txn.Do(ctx, svc, idem, req); err == nil {
				t.Fatal("the failed send was reported as a success")
			}
			if got := state(tt.name); got != tt.wantState {
				t.Fatalf("request state after the failed send = %s, want %s", got, tt.wantState)
			}
			hash, err := txn.Do(ctx, svc, idem, req)
			if err != nil {
				t.Fatalf("retry: %v", err)
			}
			if r, err := f.c.TransactionReceipt(ctx, common.HexToHash(hash)); err != nil || r.Status != types.ReceiptStatusSuccessful {
				t.Fatalf("retry answered %s: %v", hash, err)
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
	snd, err := txn.NewSender(ctx, f.c, txn.NewKeySigner(key), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := snd.Send(ctx, txn.Call{To: f.to, Value: big.NewInt(1)}); err != nil {
		t.Fatal(err) // the sender now holds the next nonce
	}
	// The same wallet, used elsewhere (a user's own script), takes that nonce.
	next, err := f.c.PendingNonceAt(ctx, snd.Address())
	if err != nil {
		t.Fatal(err)
	}
	signer := types.LatestSignerForChainID(big.NewInt(chain.EmbeddedChainID))
	to := f.to
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
	tx, err := snd.SendAsync(ctx, txn.Call{To: f.to, Value: big.NewInt(1)}, func(tx *types.Transaction) error {
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

// TestRevertsReachTheCallersDecoder: a call the contract refuses fails at estimation and sends
// nothing; without a decoder the error still carries the revert data (contracts.Revert finds
// RootAnchor's StaleTreeSize in it), and with one the caller gets its own error.
func TestRevertsReachTheCallersDecoder(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	svc := f.service(t, testutil.OpenSQL(t), f.c)
	from, err := svc.AddKey(ctx, chain.DevKey(4))
	if err != nil {
		t.Fatal(err)
	}
	anchor := contracts.NewRootAnchor()
	if _, err := svc.Transact(ctx, from, txn.Call{To: f.dep.Contracts.RootAnchor, Data: anchor.PackAnchor(5, [32]byte{1})}); err != nil {
		t.Fatal(err)
	}
	before, _ := f.c.NonceAt(ctx, from, nil)
	_, err = svc.Transact(ctx, from, txn.Call{To: f.dep.Contracts.RootAnchor, Data: anchor.PackAnchor(3, [32]byte{2})})
	stale, ok := contracts.Revert[contracts.RootAnchorStaleTreeSize](err)
	if !ok || stale.Latest != 5 || stale.Given != 3 {
		t.Fatalf("anchoring a smaller size: %v (decoded %+v), want RootAnchor's StaleTreeSize(5, 3)", err, stale)
	}
	mine := errors.New("stale")
	_, err = svc.Transact(ctx, from, txn.Call{To: f.dep.Contracts.RootAnchor, Data: anchor.PackAnchor(3, [32]byte{2}),
		Decode: func(error) error { return mine }})
	if !errors.Is(err, mine) {
		t.Errorf("with a decoder: %v, want the decoder's error", err)
	}
	if after, _ := f.c.NonceAt(ctx, from, nil); after != before {
		t.Errorf("a refused call sent a transaction (nonce %d → %d)", before, after)
	}
	if _, err := svc.Transact(ctx, common.HexToAddress("0x0b"), txn.Call{To: f.to}); !errors.Is(err, txn.ErrUnknownWallet) {
		t.Errorf("from a wallet the node does not hold: %v", err)
	}
}

// TestRequestsAreOncePerKey: a retry with the same key gets the stored answer and sends
// nothing, the key of another request is refused, another caller may use the same key, a
// request the contract refuses is not remembered, and after a restart a request whose
// transaction was stored waits for that transaction.
func TestRequestsAreOncePerKey(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	db := testutil.OpenSQL(t)
	svc := f.service(t, db, f.c)
	from, err := svc.AddKey(ctx, chain.DevKey(1))
	if err != nil {
		t.Fatal(err)
	}
	nonce := func() uint64 {
		n, err := f.c.NonceAt(ctx, from, nil)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	idem := txn.Idempotency{Caller: "did:key:z6MkCaller", Key: "k-1", Fingerprint: "pay#1"}
	before := nonce()
	first, err := txn.Do(ctx, svc, idem, f.pay(from))
	if err != nil {
		t.Fatal(err)
	}
	if again, err := txn.Do(ctx, svc, idem, f.pay(from)); err != nil || again != first || nonce() != before+1 {
		t.Errorf("retry answered %s, %v (first %s); nonce moved by %d", again, err, first, nonce()-before)
	}
	if _, err := txn.Do(ctx, svc, txn.Idempotency{Caller: idem.Caller, Key: idem.Key, Fingerprint: "other"}, f.pay(from)); !errors.Is(err, txn.ErrKeyReused) {
		t.Errorf("key reused for another request: %v", err)
	}
	if other, err := txn.Do(ctx, svc, txn.Idempotency{Caller: "did:key:z6MkOther", Key: idem.Key, Fingerprint: idem.Fingerprint}, f.pay(from)); err != nil || other == first {
		t.Errorf("another caller's request: %s, %v", other, err)
	}
	if _, err := txn.Retry(ctx, svc, txn.Idempotency{Caller: idem.Caller, Key: "never"}, f.pay(from)); !errors.Is(err, txn.ErrNoSuchRequest) {
		t.Errorf("retry of a request never made: %v", err)
	}
	refused := f.pay(from)
	refused.Prepare = func(context.Context, *txn.Sender) (txn.Call, error) { return txn.Call{}, errors.New("refused") }
	badIdem := txn.Idempotency{Caller: idem.Caller, Key: "k-2", Fingerprint: "bad"}
	for range 2 {
		if _, err := txn.Do(ctx, svc, badIdem, refused); err == nil || err.Error() != "refused" {
			t.Fatalf("refused request: %v", err)
		}
	}

	// A node that stored and broadcast a transaction but stopped before answering.
	if _, err := db.DB.Exec(`UPDATE escrow_requests SET state = 'sent', response = '' WHERE key = ? AND caller = ?`, idem.Key, idem.Caller); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DB.Exec(`INSERT INTO escrow_requests (chain, caller, key, fingerprint, state) SELECT chain, caller, 'half', 'x', 'preparing' FROM escrow_requests LIMIT 1`); err != nil {
		t.Fatal(err)
	}
	restarted := f.service(t, db, f.c)
	if _, err := restarted.AddKey(ctx, chain.DevKey(1)); err != nil {
		t.Fatal(err)
	}
	var half int
	if err := db.DB.QueryRow(`SELECT COUNT(*) FROM escrow_requests WHERE key = 'half'`).Scan(&half); err != nil || half != 0 {
		t.Errorf("a half-prepared request survived the restart (%d, %v)", half, err)
	}
	was := nonce()
	resumed, err := txn.Do(ctx, restarted, idem, f.pay(from))
	if err != nil || resumed != first || nonce() != was {
		t.Errorf("resumed request answered %s, %v (first %s); nonce moved by %d", resumed, err, first, nonce()-was)
	}
}
