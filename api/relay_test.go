package api_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/stake"
	"github.com/surety-ioa/surety/txn"
)

// relayNode is the API over real services on the simulated chain, with the contracts
// deployed: the relay, the operations and JSON-RPC as a node serves them.
type relayNode struct {
	s   *api.Server
	c   *chain.Embedded
	dep *contracts.Deployment
}

// newRelayNode deploys the contracts on a fresh simulated chain (dev accounts 0 to 11
// funded), opens the indexes and services over a SQLite file, and builds the API over them.
func newRelayNode(t *testing.T) *relayNode {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(12, chain.DefaultDevBalance)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	dep, err := contracts.Deploy(ctx, c, chain.DevKey(0), contracts.DeployConfig{FeeBps: 100}, nil)
	if err != nil {
		t.Fatal(err)
	}
	db := testutil.DB(t)
	row, err := sqlite.EnterChain(ctx, db, sqlite.Chain{Key: "test", ChainID: chain.EmbeddedChainID, Genesis: "g", Contracts: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	txs, err := txn.New(ctx, txn.Config{DB: db, Chain: row, Client: c})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := escrow.NewIndexer(ctx, escrow.IndexerConfig{DB: db, Chain: row, Client: c, Escrow: dep.Contracts.BountyEscrow, StartBlock: dep.Block})
	if err != nil {
		t.Fatal(err)
	}
	stakes, err := stake.NewIndex(ctx, stake.Config{DB: db, Chain: row, Client: c, ChainID: chain.EmbeddedChainID,
		Registry: dep.Contracts.StakeRegistry, StartBlock: dep.Block})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, run := range []func(context.Context) error{ix.Run, stakes.Run} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = run(ctx)
		}()
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	ids := newIdentity(t, db)
	info := api.ChainInfo{ID: chain.EmbeddedChainID, Genesis: common.HexToHash("0x0abc"), Kind: "embedded", Key: "test"}
	for _, n := range dep.Contracts.Named() {
		info.Contracts = append(info.Contracts, api.Contract{Name: n.Name, Address: n.Address})
	}
	s, err := api.New(api.Config{Version: "v-test", Chain: info, Blocks: c, DB: db, Identity: ids,
		Bounties: escrow.NewService(escrow.ServiceConfig{Tx: txs, Chain: c, Escrow: dep.Contracts.BountyEscrow, Indexer: ix}),
		Staking:  stake.NewService(stake.ServiceConfig{Tx: txs, Chain: c, Registry: dep.Contracts.StakeRegistry, Index: stakes}),
		Senders:  txs, Wallets: ids, Stakes: stakes, Indexes: []api.Index{ix, stakes}, ChainRPC: c,
		WriteRate: 1e9, WriteBurst: 1 << 30, RPCRate: 1e9, RPCBurst: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	return &relayNode{s: s, c: c, dep: dep}
}

// post signs an ETH bounty post to the escrow from key's wallet at nonce; an underpriced one
// offers less than the chain's base fee, so the chain keeps it and never mines it.
func (n *relayNode) post(t *testing.T, key *ecdsa.PrivateKey, nonce uint64, underpriced bool) []byte {
	t.Helper()
	head, err := n.c.HeaderByNumber(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tip, feeCap := big.NewInt(1e9), new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), big.NewInt(1e9))
	if underpriced {
		feeCap = new(big.Int).Div(head.BaseFee, big.NewInt(2))
		tip = feeCap
	}
	to := n.dep.Contracts.BountyEscrow
	salt := crypto.Keccak256Hash(crypto.FromECDSA(key), big.NewInt(int64(nonce)).Bytes())
	data := contracts.NewBountyEscrow().PackPost(common.Address{}, big.NewInt(1e15), crypto.PubkeyToAddress(chain.DevKey(0).PublicKey),
		head.Time+3600, 600, new(big.Int), [32]byte{}, salt)
	tx := types.MustSignNewTx(key, types.LatestSignerForChainID(big.NewInt(chain.EmbeddedChainID)), &types.DynamicFeeTx{
		ChainID: big.NewInt(chain.EmbeddedChainID), Nonce: nonce, To: &to, Gas: 400_000, GasTipCap: tip, GasFeeCap: feeCap,
		Value: big.NewInt(1e15), Data: data})
	raw, err := tx.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// relayRequest is POST /v1/tx/raw of raw from client address addr.
func relayRequest(ctx context.Context, raw []byte, addr, prefer string) *http.Request {
	body, _ := json.Marshal(api.RelayRequest{RawTx: hexutil.Bytes(raw)})
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/tx/raw", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.RemoteAddr = addr + ":40000"
	if prefer != "" {
		req.Header.Set("Prefer", prefer)
	}
	return req
}

func (n *relayNode) pendingNonce(t *testing.T, key *ecdsa.PrivateKey) uint64 {
	t.Helper()
	nonce, err := n.c.PendingNonceAt(context.Background(), crypto.PubkeyToAddress(key.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	return nonce
}

// hanging are relay requests that wait for receipts that never come, until stopped.
type hanging struct {
	stop context.CancelFunc
	wg   sync.WaitGroup
}

// hang sends raw from addr and returns once the chain holds it (key's pending nonce moved),
// leaving the request waiting for its receipt.
func (h *hanging) hang(t *testing.T, n *relayNode, ctx context.Context, key *ecdsa.PrivateKey, raw []byte, addr string) {
	t.Helper()
	before := n.pendingNonce(t, key)
	rec := httptest.NewRecorder()
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		n.s.Handler().ServeHTTP(rec, relayRequest(ctx, raw, addr, ""))
	}()
	deadline := time.Now().Add(10 * time.Second)
	for n.pendingNonce(t, key) == before {
		if time.Now().After(deadline) {
			t.Fatalf("the relay did not send the transaction from %s", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRelayHoldsLittleForTransactionsThatNeverMine: the relay holds nothing for a
// transaction that cannot mine yet, holds at most a few writes in flight per client address
// and per wallet, and takes only small bodies. A transaction whose nonce is above its
// wallet's next one is refused unsent (409 nonce-gap); Prefer: respond-async on /v1/tx/raw
// is answered synchronously, never as an operation the node carries on; a fifth relay in
// flight from one address, or for one wallet, is refused with 429 and Retry-After, sending
// nothing; a body above 64 KiB is 413. At 409c49a the future nonce was 202 Accepted and
// held as an operation (a receipt poll a second, for two minutes, up to 10,000 of them: 400
// requests took a node from 190 MB to 499 MB), as was respond-async, any number were held
// per address and wallet, and a body of 256 KiB was read.
func TestRelayHoldsLittleForTransactionsThatNeverMine(t *testing.T) {
	n := newRelayNode(t)
	h := n.s.Handler()
	serve := func(req *http.Request) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	problem := func(rec *httptest.ResponseRecorder) string {
		var p api.Problem
		_ = json.Unmarshal(rec.Body.Bytes(), &p)
		return strings.TrimPrefix(p.Type, "https://surety.dev/problems/")
	}
	bg := context.Background()

	t.Run("a nonce above the wallet's next is refused unsent", func(t *testing.T) {
		key := chain.DevKey(1)
		next := n.pendingNonce(t, key)
		rec := serve(relayRequest(bg, n.post(t, key, next+1, false), "192.0.2.1", "respond-async, wait=0"))
		if rec.Code != http.StatusConflict || problem(rec) != "nonce-gap" || rec.Header().Get("Location") != "" {
			t.Errorf("nonce %d with %d next: %d %s (Location %q), want 409 nonce-gap and no operation", next+1, next, rec.Code, rec.Body, rec.Header().Get("Location"))
		}
		if got := n.pendingNonce(t, key); got != next {
			t.Errorf("the wallet's pending nonce moved %d → %d: the chain holds the refused transaction", next, got)
		}
	})

	t.Run("respond-async is answered synchronously", func(t *testing.T) {
		key := chain.DevKey(1)
		rec := serve(relayRequest(bg, n.post(t, key, n.pendingNonce(t, key), false), "192.0.2.1", "respond-async, wait=0"))
		var res escrow.Result
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &res) != nil || res.Bounty == nil {
			t.Errorf("a relay with Prefer: respond-async: %d %s, want 200 and the posted bounty", rec.Code, rec.Body)
		}
		if rec.Header().Get("Preference-Applied") != "" {
			t.Errorf("Preference-Applied: %q on /v1/tx/raw", rec.Header().Get("Preference-Applied"))
		}
	})

	t.Run("bodies are small", func(t *testing.T) {
		junk := bytes.Repeat([]byte{0x02}, 40<<10) // 80 KiB of hex
		rec := serve(relayRequest(bg, junk, "192.0.2.1", ""))
		if rec.Code != http.StatusRequestEntityTooLarge || problem(rec) != "too-large" {
			t.Errorf("an 80 KiB body: %d %s, want 413 too-large", rec.Code, rec.Body)
		}
	})

	fifth := func(t *testing.T, key *ecdsa.PrivateKey, raw []byte, addr, what string) {
		t.Helper()
		before := n.pendingNonce(t, key)
		ctx, cancel := context.WithTimeout(bg, 3*time.Second)
		defer cancel()
		rec := serve(relayRequest(ctx, raw, addr, ""))
		if rec.Code != http.StatusTooManyRequests || problem(rec) != "too-many-in-flight" || rec.Header().Get("Retry-After") == "" {
			t.Errorf("%s: %d %s (Retry-After %q), want 429 too-many-in-flight with Retry-After", what, rec.Code, rec.Body, rec.Header().Get("Retry-After"))
		}
		if got := n.pendingNonce(t, key); got != before {
			t.Errorf("%s: the refused transaction reached the chain", what)
		}
	}

	t.Run("a few in flight per client address", func(t *testing.T) {
		ctx, stop := context.WithCancel(bg)
		held := &hanging{stop: stop}
		defer func() { held.stop(); held.wg.Wait() }()
		for i := range 4 {
			key := chain.DevKey(2 + i)
			held.hang(t, n, ctx, key, n.post(t, key, n.pendingNonce(t, key), true), "192.0.2.2")
		}
		key := chain.DevKey(6)
		fifth(t, key, n.post(t, key, n.pendingNonce(t, key), true), "192.0.2.2", "a fifth relay in flight from one address")
		// Another address is not held back by the first: its relay is sent (and hangs too).
		held.hang(t, n, ctx, key, n.post(t, key, n.pendingNonce(t, key), true), "192.0.2.3")
	})

	t.Run("a few in flight per wallet", func(t *testing.T) {
		ctx, stop := context.WithCancel(bg)
		held := &hanging{stop: stop}
		defer func() { held.stop(); held.wg.Wait() }()
		key := chain.DevKey(7)
		for i := range 4 {
			held.hang(t, n, ctx, key, n.post(t, key, n.pendingNonce(t, key), true), fmt.Sprintf("192.0.2.%d", 10+i))
		}
		fifth(t, key, n.post(t, key, n.pendingNonce(t, key), true), "192.0.2.99", "a fifth relay in flight for one wallet")
	})
}

// rpcCall is one JSON-RPC call to POST /v1/rpc, and its result or error.
func (n *relayNode) rpcCall(t *testing.T, method string, params ...any) (json.RawMessage, *struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/v1/rpc", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	n.s.Handler().ServeHTTP(rec, req)
	var out struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &out) != nil {
		t.Fatalf("%s: %d %s", method, rec.Code, rec.Body)
	}
	return out.Result, out.Error
}

// TestRPCReadsOnlyTheNodesContractsAtRecentBlocks: eth_call and eth_estimateGas through
// POST /v1/rpc answer for the node's own contracts at recent blocks, what a wallet sending
// through the node needs, and refuse any other address, and blocks further back than 128:
// the node is no open read proxy of its chain. At 409c49a both answered for any address at
// any block. eth_getLogs answers for the node's contracts, in ranges of at most 5,000 blocks.
func TestRPCReadsOnlyTheNodesContractsAtRecentBlocks(t *testing.T) {
	n := newRelayNode(t)
	for range 140 {
		n.c.Mine()
	}
	head, err := n.c.BlockNumber(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	escrowAddr := n.dep.Contracts.BountyEscrow.Hex()
	other := "0x000000000000000000000000000000000000dEaD"
	minStake := hexutil.Encode(crypto.Keccak256([]byte("minStake()"))[:4])
	feeBps := hexutil.Encode(crypto.Keccak256([]byte("feeBps()"))[:4])
	// Two mined transactions: one to the escrow (refused by it, mined all the same) and one
	// to another address.
	sent := map[string]common.Hash{}
	for i, to := range map[string]common.Address{"escrow": n.dep.Contracts.BountyEscrow, "other": common.HexToAddress(other)} {
		key := chain.DevKey(map[string]int{"escrow": 10, "other": 11}[i])
		tx := types.MustSignNewTx(key, types.LatestSignerForChainID(big.NewInt(chain.EmbeddedChainID)), &types.DynamicFeeTx{
			ChainID: big.NewInt(chain.EmbeddedChainID), To: &to, Gas: 100_000, GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(1e11), Data: []byte{0xde, 0xad}})
		if err := n.c.SendTransaction(context.Background(), tx); err != nil {
			t.Fatal(err)
		}
		sent[i] = tx.Hash()
	}
	for _, tt := range []struct {
		name    string
		method  string
		params  []any
		refused string // what the refusal says; "" for an answer
	}{
		{"eth_getTransactionByHash of a call to the escrow", "eth_getTransactionByHash", []any{sent["escrow"]}, ""},
		{"eth_getTransactionByHash of an unknown transaction", "eth_getTransactionByHash", []any{common.Hash{1}}, ""},
		{"eth_getTransactionByHash of a transfer to another address", "eth_getTransactionByHash", []any{sent["other"]}, "the node's own contracts"},
		{"eth_call of the escrow at the head", "eth_call", []any{map[string]any{"to": escrowAddr, "data": feeBps}, "latest"}, ""},
		{"eth_call of the registry, pending", "eth_call", []any{map[string]any{"to": n.dep.Contracts.StakeRegistry.Hex(), "data": minStake}, "pending"}, ""},
		{"eth_call of the escrow 100 blocks back", "eth_call", []any{map[string]any{"to": escrowAddr, "data": feeBps}, hexutil.Uint64(head - 100)}, ""},
		{"eth_estimateGas of the escrow", "eth_estimateGas", []any{map[string]any{"to": escrowAddr, "data": feeBps}}, ""},
		{"eth_call of another address", "eth_call", []any{map[string]any{"to": other, "data": "0x"}, "latest"}, "the node's own contracts"},
		{"eth_estimateGas of another address", "eth_estimateGas", []any{map[string]any{"to": other, "value": "0x1"}}, "the node's own contracts"},
		{"eth_call of the escrow at its deployment", "eth_call", []any{map[string]any{"to": escrowAddr, "data": feeBps}, hexutil.Uint64(n.dep.Block)}, "recent blocks"},
		{"eth_call of the escrow at the earliest block", "eth_call", []any{map[string]any{"to": escrowAddr, "data": feeBps}, "earliest"}, "recent blocks"},
		// An auditor's replay (log verify --recompute) reads the logs of the node's contracts
		// in ranges of 5,000 blocks; nothing of other addresses, nothing wider.
		{"eth_getLogs of the escrow since its deployment", "eth_getLogs", []any{map[string]any{"address": escrowAddr, "fromBlock": hexutil.Uint64(n.dep.Block), "toBlock": "latest"}}, ""},
		{"eth_getLogs of both contracts with a topic", "eth_getLogs", []any{map[string]any{"address": []string{escrowAddr, n.dep.Contracts.StakeRegistry.Hex()}, "fromBlock": "earliest", "topics": []any{nil, common.Hash{1}}}}, ""},
		{"eth_getLogs of another address", "eth_getLogs", []any{map[string]any{"address": other, "fromBlock": "earliest"}}, "the node's own contracts"},
		{"eth_getLogs of no address", "eth_getLogs", []any{map[string]any{"fromBlock": "earliest"}}, "names the node's contracts"},
		{"eth_getLogs over 5,000 blocks", "eth_getLogs", []any{map[string]any{"address": escrowAddr, "fromBlock": "earliest", "toBlock": hexutil.Uint64(5000)}}, "at most 5000 blocks"},
		{"eth_getLogs by block hash", "eth_getLogs", []any{map[string]any{"address": escrowAddr, "blockHash": common.Hash{1}}}, "blockHash"},
		// One address many times over was as many passes of the chain's filter (the review of
		// issue 28: 5,800 copies, 4.85 s): the same contract twice is served once, more
		// addresses than the node's contracts and wide topic lists are refused.
		{"eth_getLogs of the escrow twice", "eth_getLogs", []any{map[string]any{"address": []string{escrowAddr, escrowAddr}, "fromBlock": "earliest"}}, ""},
		{"eth_getLogs of four addresses", "eth_getLogs", []any{map[string]any{"address": []string{escrowAddr, escrowAddr, escrowAddr, escrowAddr}, "fromBlock": "earliest"}}, "at most 3"},
		{"eth_getLogs with five alternatives of a topic", "eth_getLogs", []any{map[string]any{"address": escrowAddr, "fromBlock": "earliest",
			"topics": []any{[]common.Hash{{1}, {2}, {3}, {4}, {5}}}}}, "at most 4"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, rerr := n.rpcCall(t, tt.method, tt.params...)
			switch {
			case tt.refused == "" && rerr != nil:
				t.Errorf("%s: error %d %q, want an answer", tt.name, rerr.Code, rerr.Message)
			case tt.refused != "" && (rerr == nil || !strings.Contains(rerr.Message, tt.refused)):
				t.Errorf("%s: %s %+v, want a refusal saying %q", tt.name, res, rerr, tt.refused)
			case tt.method == "eth_getTransactionByHash" && tt.refused == "" && tt.params[0] == sent["escrow"]:
				// What go-ethereum's client needs to name the sender: from, and the block.
				from := crypto.PubkeyToAddress(chain.DevKey(10).PublicKey)
				var tx struct {
					From      common.Address `json:"from"`
					BlockHash *common.Hash   `json:"blockHash"`
					Hash      common.Hash    `json:"hash"`
				}
				if err := json.Unmarshal(res, &tx); err != nil || tx.From != from || tx.BlockHash == nil || tx.Hash != sent["escrow"] {
					t.Errorf("%s: %s (%v)", tt.name, res, err)
				}
			}
		})
	}
}

// TestRelayRefusesUnknownRevertsAsTheContracts: a relayed call the contract refuses for a
// reason no decoder knows (a selector the stake registry or the escrow lacks, from a fresh,
// unfunded wallet, as a flood of junk sends) is the contract's refusal, 422 reverted, and
// nothing reaches the chain. At 2cc7d25 it was a 500 internal error: BenchmarkPublicNodeLoad
// saw thousands of them.
func TestRelayRefusesUnknownRevertsAsTheContracts(t *testing.T) {
	n := newRelayNode(t)
	for _, to := range []common.Address{n.dep.Contracts.StakeRegistry, n.dep.Contracts.BountyEscrow} {
		key, err := crypto.GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		tx := types.MustSignNewTx(key, types.LatestSignerForChainID(big.NewInt(chain.EmbeddedChainID)), &types.DynamicFeeTx{
			ChainID: big.NewInt(chain.EmbeddedChainID), To: &to, Gas: 200_000, GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(2e9),
			Data: []byte{0xde, 0xad, 0xbe, 0xef, 1, 2, 3}})
		raw, err := tx.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		n.s.Handler().ServeHTTP(rec, relayRequest(context.Background(), raw, "192.0.2.1", ""))
		var p api.Problem
		_ = json.Unmarshal(rec.Body.Bytes(), &p)
		if rec.Code != http.StatusUnprocessableEntity || !strings.HasSuffix(p.Type, "/reverted") {
			t.Errorf("junk call of %s: %d %s, want 422 reverted", to.Hex(), rec.Code, rec.Body)
		}
		if got := n.pendingNonce(t, key); got != 0 {
			t.Errorf("junk call of %s: the wallet's pending nonce is %d: the chain holds it", to.Hex(), got)
		}
	}
}
