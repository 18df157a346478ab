package api_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/google/go-cmp/cmp"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
)

// newServer builds the API over a real embedded chain and a real SQLite file.
func newServer(t testing.TB) (*api.Server, *chain.Embedded) {
	t.Helper()
	s, c, _ := build(t)
	return s, c
}

func build(t testing.TB) (*api.Server, *chain.Embedded, *sql.DB) {
	t.Helper()
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(1, chain.DefaultDevBalance)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	c.Mine()
	c.Mine()
	db := testutil.DB(t)
	s, err := api.New(api.Config{
		Version: "v-test",
		Chain: api.ChainInfo{ID: chain.EmbeddedChainID, Genesis: common.HexToHash("0x0abc"), Kind: "embedded", Key: "1337-k",
			Contracts: []api.Contract{{Name: "RootAnchor", Address: common.HexToAddress("0xaa")}}},
		Blocks:   c,
		DB:       db,
		Identity: newIdentity(t, db),
	})
	if err != nil {
		t.Fatal(err)
	}
	return s, c, db
}

// clientOf is the typed API client for s, served on a loopback test server.
func clientOf(t testing.TB, s *api.Server) *client.Client {
	t.Helper()
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return c.WithHTTP(srv.Client())
}

func get(t *testing.T, h http.Handler, method, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec
}

func TestInfo(t *testing.T) {
	s, _ := newServer(t)
	got, err := clientOf(t, s).Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got.NodeDID, "did:key:z6Mk") {
		t.Errorf("node DID = %q, want an Ed25519 did:key", got.NodeDID)
	}
	want := api.Info{
		NodeDID: got.NodeDID,
		Version: "v-test",
		Chain: api.InfoChain{ID: 1337, Kind: "embedded", BlockNumber: 2, StateKey: "1337-k",
			Genesis: "0x0000000000000000000000000000000000000000000000000000000000000abc"},
		Contracts: map[string]string{"RootAnchor": common.HexToAddress("0xaa").Hex()},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("info (-want +got):\n%s", diff)
	}
}

// fixedIndex is a chain index that holds blocks up to its value.
type fixedIndex uint64

func (f fixedIndex) Indexed() uint64 { return uint64(f) }

// fixedPeers is a p2p host with one peer, one topic whose mesh formed, and one DHT put under
// way.
type fixedPeers struct{}

func (fixedPeers) Self() (string, []string) { return "12D3KooWSelf", []string{"/ip4/127.0.0.1/tcp/1"} }
func (fixedPeers) Connected() []api.Peer {
	// One peer unscored yet; one that stalled on an answer (its penalty is in its score).
	return []api.Peer{{ID: "12D3KooWOther", Addrs: []string{"/ip4/127.0.0.1/tcp/2"}},
		{ID: "12D3KooWStaller", Addrs: []string{"/ip4/127.0.0.1/tcp/3"}, Score: ptr(-29.5), Penalty: ptr(30.0)}}
}
func (fixedPeers) Meshes() []api.Mesh {
	return []api.Mesh{{Topic: "/surety/cards/1", Peers: 1, InMesh: 1, Formed: true}}
}
func (fixedPeers) PendingPuts() int { return 1 }

// TestInfoAndPeersShowWhatTheNodeHolds: /v1/info's indexedBlock is the lowest block of the
// node's indexes (an answer reflects the chain only up to the index furthest behind), and
// /v1/peers shows each topic's mesh and the DHT puts under way: the signals a client (and
// the multi-node tests) wait on instead of sleeping.
func TestInfoAndPeersShowWhatTheNodeHolds(t *testing.T) {
	tests := []struct {
		name    string
		indexes []api.Index
		want    *uint64
	}{
		{"no index", nil, nil},
		{"one index", []api.Index{fixedIndex(7)}, ptr(uint64(7))},
		{"the lowest of two", []api.Index{fixedIndex(9), fixedIndex(4)}, ptr(uint64(4))},
		{"the lowest first", []api.Index{fixedIndex(3), fixedIndex(8)}, ptr(uint64(3))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(1, chain.DefaultDevBalance)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			db := testutil.DB(t)
			s, err := api.New(api.Config{Version: "v-test", Chain: api.ChainInfo{ID: chain.EmbeddedChainID, Kind: "embedded"}, Blocks: c, DB: db,
				Identity: newIdentity(t, db), Indexes: tt.indexes, Peers: fixedPeers{}})
			if err != nil {
				t.Fatal(err)
			}
			cl := clientOf(t, s)
			info, err := cl.Info(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, info.Chain.IndexedBlock); diff != "" {
				t.Errorf("indexedBlock (-want +got):\n%s", diff)
			}
			peers, err := cl.Peers(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			want := &api.PeerList{Peers: fixedPeers{}.Connected(), Topics: fixedPeers{}.Meshes(), PendingPuts: 1}
			if diff := cmp.Diff(want, peers); diff != "" {
				t.Errorf("peers (-want +got):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestProblems(t *testing.T) {
	s, c := newServer(t)
	tests := []struct {
		name       string
		method     string
		path       string
		breakChain bool
		status     int
		typ        string
	}{
		{"healthy", http.MethodGet, "/healthz", false, http.StatusOK, ""},
		{"unknown route", http.MethodGet, "/v1/nope", false, http.StatusNotFound, "about:blank"},
		{"wrong method", http.MethodPost, "/v1/info", false, http.StatusMethodNotAllowed, "about:blank"},
		{"chain down: info", http.MethodGet, "/v1/info", true, http.StatusServiceUnavailable, "https://surety.dev/problems/chain-unavailable"},
		{"chain down: health", http.MethodGet, "/healthz", true, http.StatusServiceUnavailable, "https://surety.dev/problems/unhealthy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.breakChain {
				c.Close() // the real chain stops answering
			}
			rec := get(t, s.Handler(), tt.method, tt.path)
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if tt.typ == "" {
				return
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("Content-Type = %q", ct)
			}
			var p api.Problem
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
				t.Fatal(err)
			}
			if p.Type != tt.typ || p.Status != tt.status || p.Title == "" || p.Instance != tt.path {
				t.Errorf("problem = %+v", p)
			}
			// Internal detail (the chain's own error text) never reaches the client.
			if p.Detail != "" && tt.status >= 500 {
				t.Errorf("5xx problem leaks detail %q", p.Detail)
			}
		})
	}
}

func TestServeShutsDownGracefully(t *testing.T) {
	s, _ := newServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln, 5*time.Second) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz = %d", resp.StatusCode)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve returned %v after shutdown", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	if _, err := http.Get("http://" + ln.Addr().String() + "/healthz"); err == nil {
		t.Error("server still answering after shutdown")
	}
}

// BenchmarkInfo measures GET /v1/info through the full echo stack (middleware, JSON, a
// block-number read from the embedded chain).
func BenchmarkInfo(b *testing.B) {
	s, _ := newServer(b)
	h := s.Handler()
	req := httptest.NewRequest(http.MethodGet, "/v1/info", nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
	}
}
