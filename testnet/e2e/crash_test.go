package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/internal/testutil/apitest"
	"github.com/surety-ioa/surety/testnet"
)

// TestCrashDuringSettlement kills a real node (SIGKILL) while it is posting bounties,
// restarts it, retries every request with its Idempotency-Key, and checks that the index
// matches the chain exactly and that no request made a second transaction.
func TestCrashDuringSettlement(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Anvil and a node process")
	}
	waiting.Parallel(t) // waits on its node process and the chain
	nw := startNetwork(t, 1, testnet.Config{Deploy: contracts.DeployConfig{FeeBps: 100}}, func(int) []string { return []string{"--log-level", "warn"} })
	ctx, client, dep := t.Context(), dialChain(t, nw), nw.Devnet.Deployment
	base := nw.Nodes[0].URL()

	bc := apitest.NewClient(t, base)
	markets := []*apitest.Party{bc.NewParty(1), bc.NewParty(2)}
	head, _ := client.HeaderByNumber(ctx, nil)

	// 40 posts, each with its own Idempotency-Key and body.
	type request struct {
		key  string
		by   *apitest.Party
		body map[string]any
		env  []byte
		done bool
	}
	var reqs []*request
	for i := range 40 {
		m := markets[i%2]
		body := map[string]any{"wallet": m.Wallet, "amount": fmt.Sprint(1e15 + i), "arbiter": markets[(i+1)%2].Wallet,
			"deadline": head.Time + 7200, "reviewWindow": 600}
		reqs = append(reqs, &request{key: fmt.Sprintf("post-%d", i), by: m, body: body, env: bc.Envelope(m, 0, body)})
	}
	send := func(r *request, timeout time.Duration) (int, []byte, error) {
		cl := &http.Client{Timeout: timeout}
		req, _ := http.NewRequest("POST", base+"/v1/bounties", bytes.NewReader(r.env))
		req.Header.Set("Idempotency-Key", r.key)
		resp, err := cl.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b, nil
	}

	// Fire them four at a time and kill the node as soon as the first answers come back.
	var wg sync.WaitGroup
	var mu sync.Mutex
	answered := 0
	queue := make(chan *request)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range queue {
				code, _, err := send(r, 10*time.Second)
				if err == nil && code < 300 {
					mu.Lock()
					r.done = true
					answered++
					mu.Unlock()
				}
			}
		}()
	}
	killed := make(chan struct{})
	go func() {
		for {
			mu.Lock()
			n := answered
			mu.Unlock()
			if n >= 5 {
				if err := nw.Kill(0, syscall.SIGKILL); err != nil {
					t.Error(err)
				}
				close(killed)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	for _, r := range reqs {
		select {
		case queue <- r:
		case <-killed:
		}
	}
	close(queue)
	wg.Wait()
	<-killed
	t.Logf("killed the node after %d of %d posts were answered", answered, len(reqs))

	// Restart on the same data dir and retry everything, as clients would.
	if err := nw.Restart(ctx, 0); err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		for attempt := 0; ; attempt++ {
			code, body, err := send(r, 30*time.Second)
			if err != nil {
				t.Fatalf("%s: %v", r.key, err)
			}
			if code < 300 {
				break
			}
			// Never reached the node before the crash: nothing was stored or sent, so the
			// client signs the same request afresh (same key) and sends it again.
			if strings.Contains(string(body), "issued-before-start") && attempt == 0 {
				r.env = bc.Envelope(r.by, 0, r.body)
				continue
			}
			t.Fatalf("%s after restart: %d %s", r.key, code, body)
		}
	}

	// Exactly one bounty per request on chain, and the index agrees with the chain.
	if posted := postedOnChain(t, client, dep.Contracts.BountyEscrow); posted != len(reqs) {
		t.Fatalf("the chain has %d bounties for %d requests: a retry sent a second transaction or a request was lost", posted, len(reqs))
	}
	code, body, err := func() (int, []byte, error) {
		resp, err := http.Get(base + "/v1/bounties?limit=1000")
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b, nil
	}()
	if err != nil || code != http.StatusOK {
		t.Fatalf("list: %d %v", code, err)
	}
	var list struct {
		Bounties []escrow.Bounty `json:"bounties"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Bounties) != len(reqs) {
		t.Fatalf("the index holds %d bounties, the chain %d", len(list.Bounties), len(reqs))
	}
	escrowABI := contracts.NewBountyEscrow()
	inst := escrowABI.Instance(client, dep.Contracts.BountyEscrow)
	amounts := map[string]bool{}
	for _, b := range list.Bounties {
		onChain, err := bind.Call(inst, nil, escrowABI.PackBountyOf(new(big.Int).SetUint64(b.ID)), escrowABI.UnpackBountyOf)
		if err != nil {
			t.Fatal(err)
		}
		if onChain.Status != 0 || b.Status != escrow.StatusOpen {
			t.Errorf("bounty %d: index %s, chain status %d", b.ID, b.Status, onChain.Status)
		}
		amounts[b.Amount] = true
	}
	if len(amounts) != len(reqs) {
		t.Errorf("%d distinct amounts for %d requests: some request was posted twice", len(amounts), len(reqs))
	}
}
