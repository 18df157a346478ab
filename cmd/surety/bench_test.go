package main

import (
	"context"
	"net/http"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/internal/testutil/apitest"
)

// BenchmarkPostRoundTrip measures POST /v1/bounties on a node against Anvil (automine): the
// request is verified, the transaction sent, its receipt awaited and the bounty indexed, so it
// is visible to GET when the answer comes. Each iteration makes 200 posts from 4 concurrent
// clients (each its own DID and wallet) and reports the p50 and p99 latency. Target: p50 under
// 50 ms.
func BenchmarkPostRoundTrip(b *testing.B) {
	a := testutil.Anvil(b)
	ctx := context.Background()
	client, err := ethclient.Dial(a.URL)
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	dep, err := contracts.Deploy(ctx, client, chain.DevKey(0), contracts.DeployConfig{FeeBps: 100}, nil)
	if err != nil {
		b.Fatal(err)
	}
	depFile := filepath.Join(b.TempDir(), "deployment.json")
	if err := writeDeployment(depFile, dep); err != nil {
		b.Fatal(err)
	}
	node := start(b, "node", "--data-dir", b.TempDir(), "--listen", "127.0.0.1:0", "--rpc", a.URL, "--deployment", depFile,
		"--dev-wallets", "--dev-accounts", "6", "--log-level", "warn")
	base := node.apiURL(b)
	bc := apitest.NewClient(b, base)
	clients := []*apitest.Party{bc.NewParty(1), bc.NewParty(2), bc.NewParty(3), bc.NewParty(4)}
	arbiter := bystander // the escrow refuses an arbiter that is the poster
	head, _ := client.HeaderByNumber(ctx, nil)

	b.ResetTimer()
	for range b.N {
		var mu sync.Mutex
		var lat []time.Duration
		var wg sync.WaitGroup
		for _, p := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 50 {
					env := bc.Envelope(p, 0, map[string]any{"wallet": p.Wallet, "amount": "1000", "arbiter": arbiter, "deadline": head.Time + 86400, "reviewWindow": 600})
					start := time.Now()
					code, body := bc.Request("POST", "/v1/bounties", env, nil)
					d := time.Since(start)
					if code != http.StatusCreated {
						b.Errorf("post: %d %s", code, body)
						return
					}
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		if len(lat) > 0 {
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		}
	}
}
