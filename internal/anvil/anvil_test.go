package anvil_test

import (
	"context"
	"errors"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/surety-ioa/surety/internal/anvil"
	"github.com/surety-ioa/surety/internal/testutil"
)

func TestStartAndStop(t *testing.T) {
	bin := testutil.Tool(t, "anvil")
	ctx := context.Background()
	a, err := anvil.Start(ctx, anvil.Config{Bin: bin, ChainID: 4242})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	if !strings.HasPrefix(a.URL, "http://127.0.0.1:") {
		t.Errorf("URL = %q, want loopback", a.URL)
	}
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(a.URL, "http://"), time.Second)
	if err != nil {
		t.Fatalf("anvil not listening: %v", err)
	}
	conn.Close()

	a.Stop()
	select {
	case <-a.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("anvil still running after Stop")
	}
	a.Stop() // a second Stop is harmless
	if _, err := net.DialTimeout("tcp", strings.TrimPrefix(a.URL, "http://"), time.Second); err == nil {
		t.Error("port still accepting connections after Stop")
	}
}

func TestStartOnBusyPortFails(t *testing.T) {
	bin := testutil.Tool(t, "anvil")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	_, err = anvil.Start(context.Background(), anvil.Config{Bin: bin, Port: port, StartTimeout: 5 * time.Second})
	if !errors.Is(err, anvil.ErrPortInUse) {
		t.Fatalf("Start on a busy port: %v, want ErrPortInUse", err)
	}
}

// TestStartRefusesAChainAlreadyThere: at 66f817e a devnet started on a port where the user's
// own Anvil listened found it answering, took it for its own, and deployed onto it.
func TestStartRefusesAChainAlreadyThere(t *testing.T) {
	bin := testutil.Tool(t, "anvil")
	theirs, err := anvil.Start(context.Background(), anvil.Config{Bin: bin})
	if err != nil {
		t.Fatal(err)
	}
	defer theirs.Stop()
	if ours, err := anvil.Start(context.Background(), anvil.Config{Bin: bin, Port: theirs.Port, StartTimeout: 5 * time.Second}); !errors.Is(err, anvil.ErrPortInUse) {
		if ours != nil {
			ours.Stop()
		}
		t.Fatalf("Start on a port where a chain answers: %v, want ErrPortInUse", err)
	}
}

func TestStartWithMissingBinary(t *testing.T) {
	_, err := anvil.Start(context.Background(), anvil.Config{Bin: "/nonexistent/anvil"})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/anvil") {
		t.Fatalf("err = %v, want it to name the binary", err)
	}
}

// TestMinesWhatAutomineLeft: under load, anvil 1.7.1's automine can leave a ready transaction
// in the pool with no block coming (foundry-rs/foundry#10122); at dd94647 this held up one
// wallet of TestTwentyBountiesOnAnvil for its whole two minutes in CI. Turning automine off
// leaves a transaction there the same way; the devnet must still mine it.
func TestMinesWhatAutomineLeft(t *testing.T) {
	ctx := context.Background()
	a, err := anvil.Start(ctx, anvil.Config{Bin: testutil.Tool(t, "anvil")})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	c, err := ethclient.DialContext(ctx, a.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Client().CallContext(ctx, nil, "evm_setAutomine", false); err != nil {
		t.Fatal(err)
	}
	// Anvil's test account 1 (internal/chain, which derives it, is above this package).
	key, err := crypto.HexToECDSA("59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d")
	if err != nil {
		t.Fatal(err)
	}
	id, err := c.ChainID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	head, err := c.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	to := common.Address{9}
	tx, err := types.SignNewTx(key, types.LatestSignerForChainID(id), &types.DynamicFeeTx{
		ChainID: id, To: &to, Value: big.NewInt(1), Gas: 21000,
		GasTipCap: big.NewInt(1), GasFeeCap: new(big.Int).Mul(head.BaseFee, big.NewInt(2)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SendTransaction(ctx, tx); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	r, err := bind.WaitMined(wctx, c, tx.Hash())
	if err != nil {
		t.Fatalf("a transaction left ready in the pool was not mined: %v", err)
	}
	if r.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("status %d", r.Status)
	}
}

// TestRequeuesWhatAutomineLeftQueued: under load, anvil 1.7.1 can also queue a transaction
// behind a predecessor that was mined while it was being added (at f281de4 this held up one
// wallet of TestTwentyBountiesOnAnvil for its whole two minutes in CI: ten transactions
// queued from the wallet's next nonce on, none ready). Setting the wallet's nonce past a
// queued transaction's predecessor leaves the pool in that same state; the devnet must still
// mine it, and the one queued behind it. A transaction behind a real gap stays queued.
func TestRequeuesWhatAutomineLeftQueued(t *testing.T) {
	ctx := context.Background()
	a, err := anvil.Start(ctx, anvil.Config{Bin: testutil.Tool(t, "anvil")})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	c, err := ethclient.DialContext(ctx, a.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Anvil's test account 1 (internal/chain, which derives it, is above this package).
	key, err := crypto.HexToECDSA("59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d")
	if err != nil {
		t.Fatal(err)
	}
	from := crypto.PubkeyToAddress(key.PublicKey)
	id, err := c.ChainID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	head, err := c.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	send := func(nonce uint64) *types.Transaction {
		t.Helper()
		to := common.Address{9}
		tx, err := types.SignNewTx(key, types.LatestSignerForChainID(id), &types.DynamicFeeTx{
			ChainID: id, Nonce: nonce, To: &to, Value: big.NewInt(1), Gas: 21000,
			GasTipCap: big.NewInt(1), GasFeeCap: new(big.Int).Mul(head.BaseFee, big.NewInt(2)),
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.SendTransaction(ctx, tx); err != nil {
			t.Fatal(err)
		}
		return tx
	}
	// Nonces 1 and 2 wait for 0, and 9 for 3 to 8: all queued.
	first, second, gapped := send(1), send(2), send(9)
	var pool struct {
		Pending, Queued hexutil.Uint64
	}
	if err := c.Client().CallContext(ctx, &pool, "txpool_status"); err != nil {
		t.Fatal(err)
	}
	if pool.Pending != 0 || pool.Queued != 3 {
		t.Fatalf("pool = %+v before the nonce moved, want 3 queued", pool)
	}
	// Nonce 0 is spent outside the pool: nothing in it will ever provide 1's predecessor.
	if err := c.Client().CallContext(ctx, nil, "anvil_setNonce", from, hexutil.Uint64(1)); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, tx := range []*types.Transaction{first, second} {
		r, err := bind.WaitMined(wctx, c, tx.Hash())
		if err != nil {
			t.Fatalf("nonce %d, queued at the wallet's next nonce, was not mined: %v", tx.Nonce(), err)
		}
		if r.Status != types.ReceiptStatusSuccessful {
			t.Fatalf("nonce %d: status %d", tx.Nonce(), r.Status)
		}
	}
	time.Sleep(2 * time.Second) // four looks of the watcher
	if _, err := c.TransactionReceipt(ctx, gapped.Hash()); err == nil {
		t.Fatal("nonce 9, behind a real gap, was mined")
	}
	if err := c.Client().CallContext(ctx, &pool, "txpool_status"); err != nil {
		t.Fatal(err)
	}
	if pool.Queued != 1 {
		t.Fatalf("pool = %+v, want nonce 9 still queued", pool)
	}
}
