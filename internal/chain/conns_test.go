package chain_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surety-ioa/surety/internal/chain"
)

// TestDialBoundsConnections: calls at once over http share at most MaxRPCConns connections to
// the endpoint, where each used to open one of its own (issue 25's load test: ~1,000). A
// JSON-RPC endpoint on loopback answers eth_chainId at once and eth_blockNumber after a
// pause, and counts its open connections.
func TestDialBoundsConnections(t *testing.T) {
	var open, most atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		result := `"0x539"`
		if req.Method == "eth_blockNumber" {
			time.Sleep(20 * time.Millisecond)
			result = `"0x10"`
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":` + result + `}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			n := open.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	c, err := chain.Dial(context.Background(), srv.URL, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	const calls = 4 * chain.MaxRPCConns
	var wg sync.WaitGroup
	var failed atomic.Int32
	for range calls {
		wg.Go(func() {
			if _, err := c.BlockNumber(context.Background()); err != nil {
				failed.Add(1)
			}
		})
	}
	wg.Wait()
	if n := failed.Load(); n != 0 {
		t.Fatalf("%d of %d calls failed", n, calls)
	}
	if m := most.Load(); m > chain.MaxRPCConns {
		t.Errorf("%d calls at once held %d connections, want at most %d", calls, m, chain.MaxRPCConns)
	}
}
