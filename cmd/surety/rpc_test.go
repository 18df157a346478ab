package main

import (
	"context"
	"encoding/hex"
	"io"
	"math/big"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/internal/testutil/apitest"
)

// TestNodeJSONRPCRelaysOnlyItsContracts: POST /v1/rpc is enough for Foundry's cast (an
// independent client) to read the chain and send a StakeRegistry call through the node, with
// the contract's revert data passed through. An attacker gets nothing more: a transfer to
// anyone else, a call the registry would refuse (sent raw, past any estimate), batches,
// other methods and junk are refused, and nothing reaches the chain.
func TestNodeJSONRPCRelaysOnlyItsContracts(t *testing.T) {
	waiting.Parallel(t) // a node (or devnet) of its own
	dir := t.TempDir()
	node := start(t, "node", "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0", "--dev-accounts", "3",
		"--p2p-listen", "/ip4/127.0.0.1/tcp/0", "--log-level", "warn")
	base := node.apiURL(t)
	url := base + "/v1/rpc"
	reg := apitest.GetInfo(t, base).Contracts["StakeRegistry"]
	ctx := context.Background()
	key, victim := chain.DevKey(1), crypto.PubkeyToAddress(chain.DevKey(2).PublicKey)
	from := crypto.PubkeyToAddress(key.PublicKey)

	cast := func(args ...string) (string, error) {
		out, err := exec.Command(testutil.Tool(t, "cast"), append(args, "--rpc-url", url)...).CombinedOutput()
		return string(out), err
	}
	if out, err := cast("chain-id"); err != nil || strings.TrimSpace(out) != "1337" {
		t.Fatalf("cast chain-id through the node: %v %s", err, out)
	}
	agent := "0x" + strings.Repeat("01", 32)
	pk := "0x" + hex.EncodeToString(crypto.FromECDSA(key))
	if out, err := cast("send", reg, "bind(bytes32,bytes)", agent, "0x", "--private-key", pk); err != nil || !strings.Contains(out, "status               1") {
		t.Fatalf("cast send through the node: %v\n%s", err, out)
	}
	// Binding twice reverts: cast sees the registry's own error in the revert data, which it
	// names when its signature cache knows the selector (a machine without one, offline,
	// shows the data alone).
	regABI, err := contracts.StakeRegistryMetaData.ParseABI()
	if err != nil {
		t.Fatal(err)
	}
	wrongStatus := "0x" + hex.EncodeToString(regABI.Errors["WrongStatus"].ID.Bytes()[:4])
	if out, err := cast("send", reg, "bind(bytes32,bytes)", agent, "0x", "--private-key", pk); err == nil ||
		!strings.Contains(out, "WrongStatus") && !strings.Contains(out, `data: "`+wrongStatus) {
		t.Errorf("a second bind through the node: %v\n%s", err, out)
	}

	c, err := ethclient.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	nonce, err := c.PendingNonceAt(ctx, from)
	if err != nil {
		t.Fatal(err)
	}
	before, err := c.BalanceAt(ctx, victim, nil)
	if err != nil {
		t.Fatal(err)
	}
	sign := func(to common.Address, value *big.Int, data []byte) *types.Transaction {
		tx, err := types.SignNewTx(key, types.LatestSignerForChainID(big.NewInt(1337)), &types.DynamicFeeTx{ChainID: big.NewInt(1337), Nonce: nonce,
			To: &to, Value: value, Gas: 200_000, GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(1e11), Data: data})
		if err != nil {
			t.Fatal(err)
		}
		return tx
	}
	if err := c.SendTransaction(ctx, sign(victim, big.NewInt(1e18), nil)); err == nil || !strings.Contains(err.Error(), "relays only calls to") {
		t.Errorf("a transfer through the relay: %v", err)
	}
	rebind := contracts.NewStakeRegistry().PackBind(common.HexToHash(agent), nil)
	if err := c.SendTransaction(ctx, sign(common.HexToAddress(reg), nil, rebind)); err == nil || !strings.Contains(err.Error(), "already bound agent") {
		t.Errorf("the relay and a call the registry refuses: %v, want the registry's refusal", err)
	}
	// A transaction valid on any chain (no chain id), or on another chain: not relayed.
	bind2 := contracts.NewStakeRegistry().PackBind(common.Hash{2}, nil)
	unprotected, err := types.SignTx(types.NewTransaction(nonce, common.HexToAddress(reg), nil, 200_000, big.NewInt(1e11), bind2), types.HomesteadSigner{}, key)
	if err != nil {
		t.Fatal(err)
	}
	otherChain, err := types.SignNewTx(key, types.LatestSignerForChainID(big.NewInt(1)), &types.DynamicFeeTx{ChainID: big.NewInt(1), Nonce: nonce,
		To: ptrTo(common.HexToAddress(reg)), Gas: 200_000, GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(1e11), Data: bind2})
	if err != nil {
		t.Fatal(err)
	}
	for name, tx := range map[string]*types.Transaction{"unprotected": unprotected, "another chain's": otherChain} {
		if err := c.SendTransaction(ctx, tx); err == nil || !strings.Contains(err.Error(), "not relayed") {
			t.Errorf("the relay and an %s transaction: %v", name, err)
		}
	}
	if after, err := c.BalanceAt(ctx, victim, nil); err != nil || after.Cmp(before) != 0 {
		t.Errorf("the victim's balance moved: %v -> %v (%v)", before, after, err)
	}
	if n, err := c.PendingNonceAt(ctx, from); err != nil || n != nonce {
		t.Errorf("the wallet's nonce moved: %d -> %d (%v): something was sent", nonce, n, err)
	}

	defer func() {
		// Last, as it uses up this address's allowance: a flood of calls is cut off. At once
		// (30 clients of 10 calls each), so that however slow the machine, the calls come
		// faster than the allowance refills (10 a second, 100 at once).
		var limited atomic.Int32
		var wg sync.WaitGroup
		for range 30 {
			wg.Go(func() {
				for range 10 {
					resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}`))
					if err != nil {
						t.Error(err)
						return
					}
					resp.Body.Close()
					if resp.StatusCode == http.StatusTooManyRequests {
						limited.Add(1)
					}
				}
			})
		}
		wg.Wait()
		if limited.Load() == 0 {
			t.Error("300 JSON-RPC calls at once from one address were all answered")
		}
	}()
	for _, tt := range []struct{ name, body, want string }{
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}]`, `"code":-32600`},
		// Logs are served of the node's own contracts only (an auditor's replay), so a query
		// naming none is refused.
		{"logs of no contract", `{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{}]}`, `"code":-32602`},
		{"admin", `{"jsonrpc":"2.0","id":1,"method":"anvil_setBalance","params":["` + from.Hex() + `","0x1"]}`, `"code":-32601`},
		{"sign", `{"jsonrpc":"2.0","id":1,"method":"eth_sendTransaction","params":[{}]}`, `"code":-32601`},
		{"junk", `nope`, `"code":-32700`},
		{"not 2.0", `{"id":1,"method":"eth_chainId"}`, `"code":-32600`},
		{"bad params", `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["nope"]}`, `"code":-32602`},
		{"huge fee history", `{"jsonrpc":"2.0","id":1,"method":"eth_feeHistory","params":["0x100000","latest",[]]}`, `"code":-32602`},
		{"too large", `{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":["` + strings.Repeat("a", 2<<20) + `"]}`, `"status":413`},
	} {
		resp, err := http.Post(url, "application/json", strings.NewReader(tt.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), tt.want) {
			t.Errorf("%s: %d %s, want %s", tt.name, resp.StatusCode, b, tt.want)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
