package chain_test

import (
	"context"
	"encoding/hex"
	"errors"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
)

func TestEmbeddedMinesEachTransaction(t *testing.T) {
	ctx := context.Background()
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(2, chain.DefaultDevBalance)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	from, to := chain.DevKey(0), crypto.PubkeyToAddress(chain.DevKey(1).PublicKey)
	before, err := c.BlockNumber(ctx)
	if err != nil {
		t.Fatal(err)
	}
	head, err := c.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	nonce, err := c.PendingNonceAt(ctx, crypto.PubkeyToAddress(from.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	tx := types.MustSignNewTx(from, types.LatestSignerForChainID(big.NewInt(chain.EmbeddedChainID)), &types.DynamicFeeTx{
		ChainID: big.NewInt(chain.EmbeddedChainID), Nonce: nonce, To: &to, Value: big.NewInt(1),
		Gas: 21000, GasTipCap: big.NewInt(1e9), GasFeeCap: new(big.Int).Add(head.BaseFee, big.NewInt(2e9)),
	})
	if err := c.SendTransaction(ctx, tx); err != nil {
		t.Fatal(err)
	}
	// The receipt is there as soon as SendTransaction returns: no polling.
	receipt, err := c.TransactionReceipt(ctx, tx.Hash())
	if err != nil {
		t.Fatalf("receipt right after send: %v", err)
	}
	if receipt.Status != types.ReceiptStatusSuccessful || receipt.BlockNumber.Uint64() != before+1 {
		t.Errorf("receipt status %d in block %d, want success in block %d", receipt.Status, receipt.BlockNumber, before+1)
	}
	bal, err := c.BalanceAt(ctx, to, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := new(big.Int).Add(chain.DefaultDevBalance, big.NewInt(1)); bal.Cmp(want) != 0 {
		t.Errorf("balance = %s, want %s", bal, want)
	}
}

func TestEmbeddedRunsHaveDistinctGenesis(t *testing.T) {
	ctx := context.Background()
	ids := make([]chain.Identity, 2)
	for i := range ids {
		c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(1, chain.DefaultDevBalance)})
		if err != nil {
			t.Fatal(err)
		}
		if ids[i], err = chain.Identify(ctx, c); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	if ids[0].ChainID.Int64() != chain.EmbeddedChainID || ids[1].ChainID.Int64() != chain.EmbeddedChainID {
		t.Errorf("chain ids = %s, %s; want %d", ids[0].ChainID, ids[1].ChainID, chain.EmbeddedChainID)
	}
	if ids[0].Genesis == ids[1].Genesis {
		t.Error("two embedded chains share a genesis hash: their state keys would collide")
	}
}

func TestKey(t *testing.T) {
	id := chain.Identity{ChainID: big.NewInt(1337), Genesis: common.HexToHash("0x01")}
	a := []common.Address{common.HexToAddress("0xaa")}
	tests := []struct {
		name      string
		id        chain.Identity
		contracts []common.Address
		same      bool
	}{
		{"identical", id, a, true},
		{"other genesis", chain.Identity{ChainID: big.NewInt(1337), Genesis: common.HexToHash("0x02")}, a, false},
		{"other chain id", chain.Identity{ChainID: big.NewInt(31337), Genesis: id.Genesis}, a, false},
		{"other contracts", id, []common.Address{common.HexToAddress("0xbb")}, false},
		{"no contracts", id, nil, false},
	}
	base := chain.Key(id, a)
	if !strings.HasPrefix(base, "1337-") {
		t.Errorf("key %q does not start with the chain id", base)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := chain.Key(tt.id, tt.contracts); (got == base) != tt.same {
				t.Errorf("Key = %q vs base %q, same = %v, want %v", got, base, got == base, tt.same)
			}
		})
	}
}

func TestDevKeys(t *testing.T) {
	seen := map[common.Address]int{}
	for i := range 20 {
		addr := crypto.PubkeyToAddress(chain.DevKey(i).PublicKey)
		if j, dup := seen[addr]; dup {
			t.Fatalf("dev keys %d and %d share address %s", i, j, addr)
		}
		seen[addr] = i
		if again := crypto.PubkeyToAddress(chain.DevKey(i).PublicKey); again != addr {
			t.Fatalf("dev key %d is not deterministic", i)
		}
	}
	// The well-known first two accounts of the test mnemonic (Anvil and Hardhat print them).
	for i, want := range []struct{ key, addr string }{
		{"ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80", "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"},
		{"59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d", "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"},
	} {
		k := chain.DevKey(i)
		if got := hex.EncodeToString(crypto.FromECDSA(k)); got != want.key {
			t.Errorf("dev key %d = %s, want %s", i, got, want.key)
		}
		if got := crypto.PubkeyToAddress(k.PublicKey).Hex(); got != want.addr {
			t.Errorf("dev account %d = %s, want %s", i, got, want.addr)
		}
	}
	if got := len(chain.DevAlloc(5, big.NewInt(1))); got != 5 {
		t.Errorf("DevAlloc(5) funds %d accounts", got)
	}
}

func TestDialErrors(t *testing.T) {
	// A port that was free a moment ago: nothing answers there.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	// A server that accepts connections but never answers.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()

	tests := []struct {
		name        string
		url         string
		unreachable bool
		want        string
	}{
		{"not a url", "localhost", false, "not a URL"},
		{"bad scheme", "ftp://127.0.0.1:1", false, "scheme must be"},
		{"refused", closed, true, "cannot reach RPC " + closed + ": connection refused"},
		{"silent", "http://" + silent.Addr().String(), true, "cannot reach RPC"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := chain.Dial(context.Background(), tt.url, 300*time.Millisecond)
			if err == nil {
				t.Fatal("Dial succeeded")
			}
			if errors.Is(err, chain.ErrUnreachable) != tt.unreachable {
				t.Errorf("errors.Is(%v, ErrUnreachable) = %v, want %v", err, !tt.unreachable, tt.unreachable)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestDialAnvil(t *testing.T) {
	a := testutil.Anvil(t)
	c, err := chain.Dial(context.Background(), a.URL, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	id, err := chain.Identify(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if id.ChainID.Int64() != 31337 {
		t.Errorf("anvil chain id = %s, want 31337", id.ChainID)
	}
	bal, err := c.BalanceAt(context.Background(), crypto.PubkeyToAddress(chain.DevKey(3).PublicKey), nil)
	if err != nil {
		t.Fatal(err)
	}
	if bal.Cmp(chain.DefaultDevBalance) != 0 {
		t.Errorf("dev account 3 holds %s on anvil, want %s", bal, chain.DefaultDevBalance)
	}
}

// BenchmarkEmbeddedTransfer measures one signed ETH transfer sent to the embedded chain and
// mined into its own block: the floor under every transaction the node sends there.
func BenchmarkEmbeddedTransfer(b *testing.B) {
	ctx := context.Background()
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(2, chain.DefaultDevBalance)})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	from, to := chain.DevKey(0), crypto.PubkeyToAddress(chain.DevKey(1).PublicKey)
	signer := types.LatestSignerForChainID(big.NewInt(chain.EmbeddedChainID))
	nonce := uint64(0)
	b.ReportAllocs()
	for b.Loop() {
		head, err := c.HeaderByNumber(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		tx := types.MustSignNewTx(from, signer, &types.DynamicFeeTx{
			ChainID: big.NewInt(chain.EmbeddedChainID), Nonce: nonce, To: &to, Value: big.NewInt(1),
			Gas: 21000, GasTipCap: big.NewInt(1e9), GasFeeCap: new(big.Int).Add(head.BaseFee, big.NewInt(2e9)),
		})
		if err := c.SendTransaction(ctx, tx); err != nil {
			b.Fatal(err)
		}
		nonce++
	}
}
