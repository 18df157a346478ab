package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
)

// TestBodiesAreCapped: a body above the cap is refused with 413 too-large, whatever the
// route does with it, and the node reads no more of it than the cap.
func TestBodiesAreCapped(t *testing.T) {
	s, _ := newServer(t)
	for _, tt := range []struct {
		name, path string
		size       int
	}{
		{"an envelope route", "/v1/envelopes/verify", 300 << 10},
		{"registration", "/v1/dids/register", 1 << 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, tt.path, bytes.NewReader(bytes.Repeat([]byte("a"), tt.size))))
			var p api.Problem
			if rec.Code != http.StatusRequestEntityTooLarge || json.Unmarshal(rec.Body.Bytes(), &p) != nil || !strings.HasSuffix(p.Type, "/too-large") {
				t.Errorf("%d bytes to %s: %d %s, want 413 too-large", tt.size, tt.path, rec.Code, rec.Body)
			}
		})
	}
}

// serveWith runs a server over a fresh chain and database with cfg's timeouts on loopback,
// until the test ends.
func serveWith(t *testing.T, timeouts api.Config) string {
	t.Helper()
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(1, chain.DefaultDevBalance)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	db := testutil.DB(t)
	s, err := api.New(api.Config{Version: "v-test", Chain: api.ChainInfo{ID: chain.EmbeddedChainID, Genesis: common.HexToHash("0x0abc"), Kind: "embedded", Key: "k"},
		Blocks: c, DB: db, Identity: newIdentity(t, db),
		ReadTimeout: timeouts.ReadTimeout, ReadHeaderTimeout: timeouts.ReadHeaderTimeout, IdleTimeout: timeouts.IdleTimeout})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln, time.Second) }()
	t.Cleanup(func() { cancel(); <-done })
	return ln.Addr().String()
}

// TestSlowClientsAreCutOff: a client that sends its headers, or its body, too slowly loses the
// connection once the read timeout passes, so slow connections cannot pile up (at 66f817e, 400
// slow-body connections stayed open past 45 s).
func TestSlowClientsAreCutOff(t *testing.T) {
	addr := serveWith(t, api.Config{ReadTimeout: 300 * time.Millisecond, ReadHeaderTimeout: 200 * time.Millisecond})
	for _, tt := range []struct {
		name string
		sent string
	}{
		{"headers never finished", "POST /v1/envelopes/verify HTTP/1.1\r\nHost: x\r\n"},
		{"body never finished", "POST /v1/envelopes/verify HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"partial\":"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := fmt.Fprint(conn, tt.sent); err != nil {
				t.Fatal(err)
			}
			// The server must end the exchange; the deadline only keeps a failing test from
			// hanging (it is 15× the timeout under test).
			_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, err = bufio.NewReader(conn).ReadString(0)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("the connection was still open after 5 s; the server's read timeout is 300 ms")
			}
		})
	}
}

// TestWritesAreLimitedPerAddress: one address's writes are limited, and a client cannot pick
// the address they are counted under: X-Forwarded-For is ignored unless it comes from a
// trusted proxy (at 66f817e rotating the header stored 30 of 30 spam cards).
func TestWritesAreLimitedPerAddress(t *testing.T) {
	_, proxy, _ := net.ParseCIDR("192.0.2.0/24") // httptest's client address
	for _, tt := range []struct {
		name    string
		proxies []*net.IPNet
		limited bool
	}{
		{"X-Forwarded-For from a client is ignored", nil, true},
		{"X-Forwarded-For from a trusted proxy names the client", []*net.IPNet{proxy}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(1, chain.DefaultDevBalance)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			db := testutil.DB(t)
			s, err := api.New(api.Config{Version: "v-test", Chain: api.ChainInfo{ID: chain.EmbeddedChainID, Kind: "embedded", Key: "k"},
				Blocks: c, DB: db, Identity: newIdentity(t, db), WriteRate: 0.01, WriteBurst: 5, TrustedProxies: tt.proxies})
			if err != nil {
				t.Fatal(err)
			}
			refused := 0
			for i := range 20 {
				req := httptest.NewRequest(http.MethodPost, "/v1/envelopes/verify", strings.NewReader("not an envelope"))
				req.Header.Set("X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i))
				rec := httptest.NewRecorder()
				s.Handler().ServeHTTP(rec, req)
				if rec.Code == http.StatusTooManyRequests {
					refused++
				}
			}
			if tt.limited && refused != 15 {
				t.Errorf("%d of 20 writes refused, want 15 (a burst of 5 from one socket address)", refused)
			}
			if !tt.limited && refused != 0 {
				t.Errorf("%d of 20 writes from 20 clients behind a trusted proxy refused, want 0", refused)
			}
			// Reads are not counted.
			if rec := get(t, s.Handler(), http.MethodGet, "/v1/info"); rec.Code != http.StatusOK {
				t.Errorf("a read after the writes: %d", rec.Code)
			}
		})
	}
}

// TestEachRequestLimitHoldsAlone: each per-address limit refuses on its own, the other set out
// of reach. A PUT counts as a write like a POST (a flood of task texts), and POST /v1/rpc has a
// limit of its own within the writes (a loop of eth_call has the node's chain compute). At
// 5ab6450 no test flooded PUTs, and the JSON-RPC limit was only reached behind the write limit.
func TestEachRequestLimitHoldsAlone(t *testing.T) {
	writesOnly := api.Config{WriteRate: 0.01, WriteBurst: 5, RPCRate: 1e9, RPCBurst: 1 << 30}
	callsOnly := api.Config{WriteRate: 1e9, WriteBurst: 1 << 30, RPCRate: 0.01, RPCBurst: 5}
	for _, tt := range []struct {
		name, method, path, body string
		limits                   api.Config
		what                     string // what the 429 names
	}{
		// The requests are refused (400) or answered (an unknown JSON-RPC method) before
		// anything would reach the stand-ins.
		{"POST writes", http.MethodPost, "/v1/bounties/x/claim", "{}", writesOnly, "writes"},
		{"PUT writes", http.MethodPut, "/v1/bounties/x/spec", "a task text", writesOnly, "writes"},
		{"JSON-RPC calls, within the writes", http.MethodPost, "/v1/rpc", `{"jsonrpc":"2.0","id":1,"method":"nope"}`, callsOnly, "JSON-RPC calls"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.limits
			cfg.Blocks, cfg.DB, cfg.Identity, cfg.ChainRPC = stubBlocks{}, stubDB{}, stubIdentity{}, stubChainRPC{}
			cfg.Bounties, cfg.Staking, cfg.Senders, cfg.Wallets, cfg.Stakes = stubBounties{}, stubStaking{}, stubSenders{}, stubWallets{}, stubStakes{}
			s, err := api.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			refused := 0
			for range 20 {
				rec := httptest.NewRecorder()
				s.Handler().ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body)))
				switch {
				case rec.Code == http.StatusTooManyRequests:
					refused++
					if p := problemOf(t, rec); !strings.Contains(p.Detail, tt.what) {
						t.Fatalf("refused by another limit: %s, want one on %s", p.Detail, tt.what)
					}
				case rec.Code >= 500:
					t.Fatalf("%s %s reached a stand-in: %d %s", tt.method, tt.path, rec.Code, rec.Body)
				}
			}
			if refused != 15 {
				t.Errorf("%d of 20 refused, want 15 (a burst of 5 from one address)", refused)
			}
		})
	}
}

// TestEachBodyCapHoldsAlone: a body is capped twice, by the server's middleware in front of
// every route and by each handler's own read, and each cap holds without the other, reading
// little past it: the middleware before a handler that reads without a cap (at the route's
// own cap where it has one), and the handlers' read with no middleware. At 5ab6450 either
// could go and TestBodiesAreCapped still passed, refused by the other.
func TestEachBodyCapHoldsAlone(t *testing.T) {
	t.Run("the server's", func(t *testing.T) {
		s, _ := newServer(t)
		for _, tt := range []struct {
			method, route, path string
			limit               int
		}{
			{http.MethodPost, "/v1/uncapped", "/v1/uncapped", api.MaxBody},
			{http.MethodPut, "/v1/bounties/:id/spec", "/v1/bounties/1/spec", api.MaxSpecBody},
		} {
			s.HandleUncapped(tt.method, tt.route)
			body := bytes.NewReader(make([]byte, 2*tt.limit))
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, body))
			if rec.Code != http.StatusRequestEntityTooLarge || !strings.HasSuffix(problemOf(t, rec).Type, "/too-large") {
				t.Errorf("%d bytes to %s: %d %s, want 413 too-large", 2*tt.limit, tt.path, rec.Code, rec.Body)
			}
			if read := 2*tt.limit - body.Len(); read > tt.limit+1 {
				t.Errorf("%s: the handler read %d bytes, want at most %d", tt.path, read, tt.limit+1)
			}
		}
	})
	t.Run("the handlers'", func(t *testing.T) {
		body := bytes.NewReader(make([]byte, 2*api.MaxBody))
		if _, err := api.ReadBody(body); !errors.Is(err, api.ErrTooLarge) {
			t.Errorf("%d bytes read as a handler does: %v, want ErrTooLarge", 2*api.MaxBody, err)
		}
		if read := 2*api.MaxBody - body.Len(); read > api.MaxBody+1 {
			t.Errorf("read %d bytes, want at most %d", read, api.MaxBody+1)
		}
	})
}

// TestStakeCredentialsSpendTheChainCallBudget: every GET /v1/credentials/{did}/stake makes the
// node's chain answer (a block, an eth_call), so it spends the same per-address budget as
// POST /v1/rpc; at 0d1b1c5 reads had no limit, and anyone could run down a metered RPC through
// it (found by review).
func TestStakeCredentialsSpendTheChainCallBudget(t *testing.T) {
	s := newFullServerWith(t, api.Config{WriteRate: 1e9, WriteBurst: 1 << 30, RPCRate: 1e-9, RPCBurst: 2})
	did := "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK"
	codes := []int{
		get(t, s.Handler(), http.MethodGet, "/v1/credentials/"+did+"/stake").Code,
		httptestDo(s, http.MethodPost, "/v1/rpc", `{"jsonrpc":"2.0","id":1,"method":"nope"}`).Code,
	}
	rec := get(t, s.Handler(), http.MethodGet, "/v1/credentials/"+did+"/stake")
	if codes[0] == http.StatusTooManyRequests || codes[1] == http.StatusTooManyRequests {
		t.Fatalf("refused within the burst of 2: %v", codes)
	}
	if rec.Code != http.StatusTooManyRequests || !strings.Contains(problemOf(t, rec).Detail, "JSON-RPC calls") {
		t.Errorf("a third chain call (stake credential, JSON-RPC, stake credential) from one address: %d %s, want 429", rec.Code, rec.Body)
	}
}

func httptestDo(s *api.Server, method, path, body string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
	return rec
}

// TestLeafPagesAreBudgetedPerAddress: anyone may read the log's leaves (each page up to 256
// leaves and 1 MiB), its heads, and an anchored head's scores (a page of 1,000 agents, the
// inputs up to 5,000 audits), so one address reads leafPageBurst pages of each at once and
// leafPageRate a second after that; another address has its own budget. Without the scores
// route's limit, its rows fail.
func TestLeafPagesAreBudgetedPerAddress(t *testing.T) {
	s := newFullServer(t)
	// The log's read routes anyone may page through, each with a budget of its own: the
	// leaves, the heads, and an anchored head's scores (issue 28).
	for _, route := range []struct{ path, limit string }{
		{"/v1/log/leaves?limit=1", "pages of the log's leaves"},
		{"/v1/log/heads?limit=1", "pages of the log's heads"},
		{"/v1/log/scores?limit=1", "pages of an anchored head's scores"},
	} {
		page := func(addr string) *httptest.ResponseRecorder {
			req := httptest.NewRequest(http.MethodGet, route.path, nil)
			req.RemoteAddr = addr
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, req)
			return rec
		}
		refused := 0
		for range api.LeafPageBurst + 5 {
			if rec := page("192.0.2.7:1234"); rec.Code == http.StatusTooManyRequests {
				refused++
				if p := problemOf(t, rec); !strings.Contains(p.Detail, route.limit) {
					t.Fatalf("%s: refused by another limit: %s", route.path, p.Detail)
				}
			}
		}
		if refused < 4 || refused > 5 { // one page may come back in the time the loop took
			t.Errorf("%s: %d of %d pages refused from one address, want about 5", route.path, refused, api.LeafPageBurst+5)
		}
		if rec := page("192.0.2.8:1234"); rec.Code == http.StatusTooManyRequests {
			t.Errorf("%s: another address was refused: %s", route.path, rec.Body)
		}
	}
}
