package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/internal/testutil/apitest"
)

// plan is what one bounty of the Anvil test goes through.
type plan struct {
	market, agent int // indexes into markets and agents
	end           escrow.Status
	amount        *big.Int
	id            uint64
}

// TestTwentyBountiesOnAnvil is the escrow acceptance test: two marketplaces and three agents
// run 20 bounties concurrently through the API on a real Anvil, to every terminal state; then
// every balance on chain must add up to the wei, fees included.
func TestTwentyBountiesOnAnvil(t *testing.T) {
	waiting.Parallel(t) // a node (or devnet) of its own
	devnet := deployOnAnvil(t, contracts.DeployConfig{FeeBps: 100})
	ctx, client, dep := context.Background(), devnet.Client, devnet.Dep
	node := start(t, "node", "--data-dir", t.TempDir(), "--listen", "127.0.0.1:0", "--rpc", devnet.URL, "--deployment", devnet.DepFile,
		"--dev-wallets", "--dev-accounts", "7")
	base := node.apiURL(t)
	bc := apitest.NewClient(t, base)
	markets := []*apitest.Party{bc.NewParty(1), bc.NewParty(2)}
	agents := []*apitest.Party{bc.NewParty(3), bc.NewParty(4), bc.NewParty(5)}
	arbiter := bc.NewParty(6)

	wallets := []common.Address{markets[0].Wallet, markets[1].Wallet, agents[0].Wallet, agents[1].Wallet, agents[2].Wallet, arbiter.Wallet}
	start := map[common.Address]*big.Int{}
	for _, w := range wallets {
		b, err := client.BalanceAt(ctx, w, nil)
		if err != nil {
			t.Fatal(err)
		}
		start[w] = b
	}

	ends := []escrow.Status{escrow.StatusAccepted, escrow.StatusResolved, escrow.StatusRefunded, escrow.StatusCancelled, escrow.StatusReleased}
	var plans []*plan
	for i := range 20 {
		plans = append(plans, &plan{market: i % 2, agent: i % 3, end: ends[i%5], amount: new(big.Int).Mul(big.NewInt(int64(i+1)), big.NewInt(1e15))})
	}
	var (
		mu     sync.Mutex
		txs    []string // every transaction the API reported
		failed []string
	)
	call := func(p *apitest.Party, id uint64, action string, body map[string]any) {
		code, out := bc.Act(p, id, action, body)
		mu.Lock()
		defer mu.Unlock()
		if code != http.StatusOK {
			failed = append(failed, fmt.Sprintf("%s on %d: %d %s", action, id, code, out))
			return
		}
		txs = append(txs, apitest.DecodeResult(t, out).TxHash)
	}
	head, _ := client.HeaderByNumber(ctx, nil)
	deadline := head.Time + 3600

	// Phase 1, all bounties at once: post, and everything that needs no waiting.
	var wg sync.WaitGroup
	for _, pl := range plans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, ag := markets[pl.market], agents[pl.agent]
			post := map[string]any{"wallet": m.Wallet, "amount": pl.amount.String(), "arbiter": arbiter.Wallet, "deadline": deadline, "reviewWindow": 600}
			code, out := bc.Request("POST", "/v1/bounties", bc.Envelope(m, 0, post), nil)
			if code != http.StatusCreated {
				mu.Lock()
				failed = append(failed, fmt.Sprintf("post: %d %s", code, out))
				mu.Unlock()
				return
			}
			res := apitest.DecodeResult(t, out)
			pl.id = res.Bounty.ID
			mu.Lock()
			txs = append(txs, res.TxHash)
			mu.Unlock()
			switch pl.end {
			case escrow.StatusAccepted:
				call(ag, pl.id, "claim", map[string]any{})
				call(ag, pl.id, "submit", map[string]any{"resultHash": common.Hash{1}})
				call(m, pl.id, "accept", map[string]any{})
			case escrow.StatusResolved:
				call(m, pl.id, "assign", map[string]any{"worker": ag.Wallet})
				call(ag, pl.id, "submit", map[string]any{})
				call(m, pl.id, "reject", map[string]any{})
				call(arbiter, pl.id, "resolve", map[string]any{"workerBps": 3333})
			case escrow.StatusCancelled:
				call(m, pl.id, "cancel", map[string]any{})
			case escrow.StatusReleased:
				call(ag, pl.id, "claim", map[string]any{})
				call(ag, pl.id, "submit", map[string]any{})
			case escrow.StatusRefunded:
				call(ag, pl.id, "claim", map[string]any{})
			}
		}()
	}
	wg.Wait()
	if len(failed) > 0 {
		t.Fatalf("phase 1 failures:\n%v", failed)
	}

	// Phase 2: past every deadline and review window, the rest settle.
	if err := devnet.IncreaseTime(ctx, 2*time.Hour); err != nil {
		t.Fatal(err)
	}
	for _, pl := range plans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch pl.end {
			case escrow.StatusReleased:
				call(agents[pl.agent], pl.id, "release", map[string]any{})
			case escrow.StatusRefunded:
				call(markets[pl.market], pl.id, "refund", map[string]any{})
			}
		}()
	}
	wg.Wait()
	if len(failed) > 0 {
		t.Fatalf("phase 2 failures:\n%v", failed)
	}

	// Every bounty reached its end, in the index and on chain.
	escrowABI := contracts.NewBountyEscrow()
	inst := escrowABI.Instance(client, dep.Contracts.BountyEscrow)
	statusIndex := map[escrow.Status]uint8{escrow.StatusAccepted: 4, escrow.StatusReleased: 5, escrow.StatusResolved: 6, escrow.StatusRefunded: 7, escrow.StatusCancelled: 8}
	fees, flows := new(big.Int), map[common.Address]*big.Int{}
	for _, w := range wallets {
		flows[w] = new(big.Int)
	}
	for _, pl := range plans {
		code, out := bc.Request("GET", fmt.Sprintf("/v1/bounties/%d", pl.id), nil, nil)
		var b escrow.Bounty
		if err := json.Unmarshal(out, &b); err != nil || code != http.StatusOK {
			t.Fatalf("get %d: %d %s", pl.id, code, out)
		}
		if b.Status != pl.end {
			t.Errorf("bounty %d is %s, want %s", pl.id, b.Status, pl.end)
		}
		onChain, err := bind.Call(inst, nil, escrowABI.PackBountyOf(new(big.Int).SetUint64(pl.id)), escrowABI.UnpackBountyOf)
		if err != nil {
			t.Fatal(err)
		}
		if onChain.Status != statusIndex[pl.end] {
			t.Errorf("bounty %d on chain has status %d, want %d", pl.id, onChain.Status, statusIndex[pl.end])
		}
		m, ag := markets[pl.market].Wallet, agents[pl.agent].Wallet
		payout, _ := new(big.Int).SetString(b.Payout, 10)
		refund, _ := new(big.Int).SetString(b.PosterRefund, 10)
		fee, _ := new(big.Int).SetString(b.Fee, 10)
		flows[m].Sub(flows[m], pl.amount)
		flows[m].Add(flows[m], refund)
		flows[ag].Add(flows[ag], payout)
		fees.Add(fees, fee)
	}
	// Gas paid by each wallet, from the receipts of every transaction the API reported.
	for _, h := range txs {
		r, err := client.TransactionReceipt(ctx, common.HexToHash(h))
		if err != nil {
			t.Fatal(err)
		}
		tx, _, err := client.TransactionByHash(ctx, r.TxHash)
		if err != nil {
			t.Fatal(err)
		}
		from, err := txSender(tx)
		if err != nil {
			t.Fatal(err)
		}
		cost := new(big.Int).Mul(new(big.Int).SetUint64(r.GasUsed), r.EffectiveGasPrice)
		if flows[from] == nil {
			t.Fatalf("transaction %s from unexpected wallet %s", h, from.Hex())
		}
		flows[from].Sub(flows[from], cost)
	}
	for _, w := range wallets {
		got, err := client.BalanceAt(ctx, w, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := new(big.Int).Add(start[w], flows[w])
		if got.Cmp(want) != 0 {
			t.Errorf("wallet %s holds %s wei, want %s (off by %s)", w.Hex(), got, want, new(big.Int).Sub(got, want))
		}
	}
	escrowBal, err := client.BalanceAt(ctx, dep.Contracts.BountyEscrow, nil)
	if err != nil {
		t.Fatal(err)
	}
	if escrowBal.Cmp(fees) != 0 {
		t.Errorf("escrow holds %s wei, want exactly the fees %s", escrowBal, fees)
	}
	t.Logf("20 bounties settled in %d transactions; fees %s wei", len(txs), fees)
}

func txSender(tx *types.Transaction) (common.Address, error) {
	return types.Sender(types.LatestSignerForChainID(tx.ChainId()), tx)
}
