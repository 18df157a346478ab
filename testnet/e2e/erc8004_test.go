package e2e

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/internal/testutil/apitest"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/testnet"
)

// TestERC8004FeedbackOnAnvil is issue 29's acceptance for imported feedback, through a node
// process on Anvil: a worker settles a 1 ETH bounty with a market and registers its DID in the
// ERC-8004 Identity Registry (surety erc8004 register); a hundred fresh wallets rate it 0 in
// the Reputation Registry, which anyone may write to, and move none of its figures, bit for
// bit; the market's wallet, which paid it, rates it with cast (an independent client of the
// registry), and that rating, alone, counts: at ExternalWeight, full backing; a second node
// process on the same chain imports the same, bit for bit.
func TestERC8004FeedbackOnAnvil(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Anvil and a node process")
	}
	waiting.Parallel(t) // waits on the index and the scores' recomputations
	ctx := t.Context()
	nw := startNetwork(t, 2, testnet.Config{Deploy: contracts.DeployConfig{FeeBps: contracts.DefaultFeeBps}},
		func(int) []string { return []string{"--log-level", "warn"} })
	base := nw.Nodes[0].URL()
	bc := apitest.NewClient(t, base)
	eth := dialChain(t, nw)
	head, err := eth.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	dep := nw.Devnet.Deployment

	// The market pays the worker 1 ETH through the escrow.
	market, worker := bc.NewParty(1), bc.NewParty(2)
	for _, p := range []*apitest.Party{market, worker} {
		body := map[string]any{"op": "stake", "wallet": p.Wallet, "amount": "1000000000000000000"}
		if code, out := bc.Request("POST", "/v1/stake", bc.Envelope(p, 0, body), nil); code != http.StatusOK && code != http.StatusCreated {
			t.Fatalf("stake for %s: %d %s", p.Key.DID, code, out)
		}
	}
	code, out := bc.Request("POST", "/v1/bounties", bc.Envelope(market, 0, map[string]any{"wallet": market.Wallet, "amount": "1000000000000000000",
		"arbiter": bystander, "deadline": head.Time + 3600, "reviewWindow": 600}), nil)
	if code != http.StatusCreated {
		t.Fatalf("post: %d %s", code, out)
	}
	id := apitest.DecodeResult(t, out).Bounty.ID
	for _, step := range []struct {
		p      *apitest.Party
		action string
	}{{worker, "claim"}, {worker, "submit"}, {market, "accept"}} {
		if code, out := bc.Act(step.p, id, step.action, map[string]any{}); code != http.StatusOK {
			t.Fatalf("%s: %d %s", step.action, code, out)
		}
	}

	// The worker's wallet registers its DID as an ERC-8004 agent (metadata "did" on chain).
	did := worker.Key.DID.String()
	cmd := exec.CommandContext(ctx, surety.Path(t), "erc8004", "register", "--node", base, "--did", did, "--dev-account", "2", "--json")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	reg, err := cmd.Output()
	if err != nil {
		t.Fatalf("erc8004 register: %v\n%s%s", err, reg, stderr.String())
	}
	var agent struct {
		AgentID uint64 `json:"agentId"`
		DID     string `json:"did"`
	}
	if err := json.Unmarshal(reg, &agent); err != nil || agent.DID != did {
		t.Fatalf("erc8004 register printed %s (%v)", reg, err)
	}

	figures := func() (score, weight, external float64, imported []common.Address) {
		t.Helper()
		var r struct {
			Score, Weight, External float64
			Imported                []struct{ Client common.Address }
		}
		if code, body := bc.Request("GET", "/v1/reputation/"+did, nil, nil); code != http.StatusOK || json.Unmarshal(body, &r) != nil {
			t.Fatalf("reputation: %d %s", code, body)
		}
		for _, im := range r.Imported {
			imported = append(imported, im.Client)
		}
		return r.Score, r.Weight, r.External, imported
	}
	feedbackHeld := func(n int) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			var list struct{ Feedback []json.RawMessage }
			code, body := bc.Request("GET", fmt.Sprintf("/v1/erc8004/agents/%d/feedback", agent.AgentID), nil, nil)
			if code == http.StatusOK && json.Unmarshal(body, &list) == nil && len(list.Feedback) >= n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the node holds %d feedback of agent %d after a minute, want %d: %s", len(list.Feedback), agent.AgentID, n, body)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	s0, w0, x0, i0 := figures()
	if x0 != 0 || len(i0) != 0 {
		t.Fatalf("before any feedback: external %v, imported %v", x0, i0)
	}

	// A hundred fresh wallets, each funded with a little ETH, each rate the worker 0.
	rep := contracts.NewReputationRegistry()
	fresh := make([]*ecdsa.PrivateKey, 100)
	for i := range fresh {
		if fresh[i], err = crypto.GenerateKey(); err != nil {
			t.Fatal(err)
		}
	}
	funder := chain.DevKey(7)
	sendAll(t, eth, funder, len(fresh), func(i int) (common.Address, []byte, *big.Int) {
		return crypto.PubkeyToAddress(fresh[i].PublicKey), nil, big.NewInt(1e16)
	})
	zero := rep.PackGiveFeedback(new(big.Int).SetUint64(agent.AgentID), big.NewInt(0), 0, "starred", "", "", "", [32]byte{})
	for _, k := range fresh {
		sendAll(t, eth, k, 1, func(int) (common.Address, []byte, *big.Int) { return dep.Contracts.ReputationRegistry, zero, nil })
	}
	feedbackHeld(len(fresh))
	// The index holds them, so every recomputation from now on reads them. Until one has run,
	// nothing can have moved; the market's rating below is given after they were held, so the
	// recomputation that first counts it has read them too, and then it alone may count.
	if s, w, x, im := figures(); math.Float64bits(s) != math.Float64bits(s0) || math.Float64bits(w) != math.Float64bits(w0) || x != 0 || len(im) != 0 {
		t.Fatalf("100 fresh wallets' ratings moved the worker: score %v → %v, weight %v → %v, external %v, imported %v", s0, s, w0, w, x, im)
	}

	// The market's wallet paid the worker: its rating, given with cast, counts.
	cast := testutil.Tool(t, "cast")
	if out, err := exec.CommandContext(ctx, cast, "send", "--rpc-url", nw.Devnet.RPC(), "--private-key", common.Bytes2Hex(crypto.FromECDSA(chain.DevKey(1))),
		dep.Contracts.ReputationRegistry.Hex(), "giveFeedback(uint256,int128,uint8,string,string,string,string,bytes32)",
		fmt.Sprint(agent.AgentID), "90", "0", "starred", "", "", "", "0x"+strings.Repeat("00", 32)).CombinedOutput(); err != nil {
		t.Fatalf("cast send giveFeedback: %v\n%s", err, out)
	}
	feedbackHeld(len(fresh) + 1)
	deadline := time.Now().Add(time.Minute)
	for {
		s, w, x, im := figures()
		if len(im) > 0 {
			if len(im) != 1 || im[0] != market.Wallet { // 100 fresh wallets' ratings count for nothing
				t.Fatalf("imported %v, want the market's wallet %s alone (the 100 fresh wallets' ratings must not count)", im, market.Wallet)
			}
			// 1 ETH settled (0.995 paid + 200 × 0.005 of fee): full backing, at age 0 or a few
			// seconds: ExternalWeight, to the fixed point's step.
			if math.Abs(x-reputation.ExternalWeight) > 1e-6 || math.Abs((w-w0)-x) > 1e-9 || !(s > s0) {
				t.Fatalf("the market's 90: score %v → %v, weight %v → %v, external %v; want the score up and the weight up by %v",
					s0, s, w0, w, x, reputation.ExternalWeight)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the market's rating never counted: score %v weight %v external %v", s, w, x)
		}
		time.Sleep(500 * time.Millisecond)
	}
	// The second node process, reading the same chain on its own, imports the same: the same
	// figures, bit for bit, and the same rating (scores are computed at a shared clock step).
	other := apitest.NewClient(t, nw.Nodes[1].URL())
	mine := func(c *apitest.Client) string {
		t.Helper()
		var r struct {
			Score, Weight, External float64
			Imported                json.RawMessage
		}
		if code, body := c.Request("GET", "/v1/reputation/"+did, nil, nil); code != http.StatusOK || json.Unmarshal(body, &r) != nil {
			t.Fatalf("reputation at %s: %d %s", c.Base, code, body)
		}
		return fmt.Sprintf("%x %x %x %s", math.Float64bits(r.Score), math.Float64bits(r.Weight), math.Float64bits(r.External), r.Imported)
	}
	want := mine(bc)
	deadline = time.Now().Add(time.Minute)
	for got := mine(other); got != want; got = mine(other) {
		if time.Now().After(deadline) {
			t.Fatalf("node 1's figures %s, node 0's %s", got, want)
		}
		time.Sleep(500 * time.Millisecond)
	}

	// The CLI says what counts.
	show, err := exec.CommandContext(ctx, surety.Path(t), "erc8004", "import", "--node", base, did).CombinedOutput()
	if err != nil || !strings.Contains(string(show), "counted in reputation: 1") || !strings.Contains(string(show), "from "+market.Wallet.Hex()) {
		t.Errorf("erc8004 import: %v\n%s", err, show)
	}
}

// sendAll sends n transactions from key, the i-th to to(i) with data and value, and waits for
// the last one's receipt (each one must succeed).
func sendAll(t *testing.T, eth *ethclient.Client, key *ecdsa.PrivateKey, n int, to func(i int) (common.Address, []byte, *big.Int)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	from := crypto.PubkeyToAddress(key.PublicKey)
	id, err := eth.ChainID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	nonce, err := eth.PendingNonceAt(ctx, from)
	if err != nil {
		t.Fatal(err)
	}
	tip, err := eth.SuggestGasTipCap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	head, err := eth.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	feeCap := new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), tip)
	signer := types.LatestSignerForChainID(id)
	var hashes []common.Hash
	for i := range n {
		addr, data, value := to(i)
		tx, err := types.SignNewTx(key, signer, &types.DynamicFeeTx{ChainID: id, Nonce: nonce + uint64(i), GasTipCap: tip, GasFeeCap: feeCap,
			Gas: 300_000, To: &addr, Value: value, Data: data})
		if err != nil {
			t.Fatal(err)
		}
		if err := eth.SendTransaction(ctx, tx); err != nil {
			t.Fatalf("send %d from %s: %v", i, from, err)
		}
		hashes = append(hashes, tx.Hash())
	}
	for _, h := range hashes {
		for {
			r, err := eth.TransactionReceipt(ctx, h)
			if err == nil {
				if r.Status != types.ReceiptStatusSuccessful {
					t.Fatalf("transaction %s from %s reverted", h, from)
				}
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("no receipt for %s: %v", h, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}
