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
