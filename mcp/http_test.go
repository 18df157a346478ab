package mcp

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/surety-ioa/surety/api/wire"
)

// spoofing adds a forged caller header to every request it sends.
type spoofing struct{ next http.RoundTripper }

func (s spoofing) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(callerHeader, "6.6.6.6:666")
	r.Header.Set(hostHeader, "evil.example")
	return s.next.RoundTrip(r)
}

// TestCallerAddressCarriesIntoTheAPI: a tool called over /mcp calls the API as the caller:
// the API sees the caller's socket address (so its per-address quotas count the caller) and
// the Host it asked for, not a loopback of the node's own and not what the caller wrote into
// the handler's own headers.
func TestCallerAddressCarriesIntoTheAPI(t *testing.T) {
	var mu sync.Mutex
	var seen, hosts []string
	apiHandler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen, hosts = append(seen, r.RemoteAddr), append(hosts, r.Host)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(wire.Info{Version: "t", NodeDID: "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK",
			Chain: wire.InfoChain{ID: 1337}, Contracts: map[string]string{"BountyEscrow": "0x01"}})
	})
	conns := map[string]bool{} // the caller's connections' addresses
	srv := httptest.NewUnstartedServer(NewHandler(HTTPConfig{API: apiHandler, Version: "t"}))
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			conns[c.RemoteAddr().String()] = true
			mu.Unlock()
		}
	}
	srv.Start()
	defer srv.Close()

	cl := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := cl.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: srv.URL,
		HTTPClient: &http.Client{Transport: spoofing{http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "node_info", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("node_info: %v %+v", err, res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("the tool did not call the API")
	}
	for i, addr := range seen {
		if !conns[addr] {
			t.Errorf("the API saw a call from %q, want one of the caller's %v", addr, conns)
		}
		if want := strings.TrimPrefix(srv.URL, "http://"); hosts[i] != want {
			t.Errorf("the API saw a call to host %q, want the caller's %q", hosts[i], want)
		}
	}
}
