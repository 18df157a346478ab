package api_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/registry"
)

// TestSearchesAreBudgetedPerAddress is the API half of review 30's M6: anyone may search, so
// one address searches api.SearchBurst at once and api.SearchRate a second after that; many
// parallel searches from one address get 429 too-many-requests with Retry-After, naming the
// searches; another address has its own budget.
func TestSearchesAreBudgetedPerAddress(t *testing.T) {
	s := newRegistryServer(t)
	search := func(addr string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/v1/agents?capability=pdf", nil)
		req.RemoteAddr = addr
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		return rec
	}
	var wg sync.WaitGroup
	var ok, refused atomic.Int32
	for range api.SearchBurst + 50 {
		wg.Go(func() {
			switch rec := search("192.0.2.7:1234"); rec.Code {
			case http.StatusOK:
				ok.Add(1)
			case http.StatusTooManyRequests:
				refused.Add(1)
				if p := problemOf(t, rec); !strings.HasSuffix(p.Type, "/too-many-requests") || !strings.Contains(p.Detail, "searches") || rec.Header().Get("Retry-After") == "" {
					t.Errorf("refused as %+v (Retry-After %q), want too-many-requests naming the searches, with Retry-After", p, rec.Header().Get("Retry-After"))
				}
			default:
				t.Errorf("a search: %d %s", rec.Code, rec.Body)
			}
		})
	}
	wg.Wait()
	t.Logf("%d searches answered, %d refused", ok.Load(), refused.Load())
	if refused.Load() == 0 {
		t.Errorf("%d parallel searches from one address, none refused", api.SearchBurst+50)
	}
	if rec := search("192.0.2.8:1234"); rec.Code != http.StatusOK {
		t.Errorf("another address: %d %s, want 200", rec.Code, rec.Body)
	}
}

// busyAgents is a registry that runs as many searches as it takes.
type busyAgents struct{ api.Agents }

func (busyAgents) SearchFollow(context.Context, registry.Query) ([]*registry.Agent, *registry.Lookup, error) {
	return nil, nil, registry.ErrBusy
}

// TestBusySearchIs503: a search the registry has no room for (registry.ErrBusy, past its
// bound of searches at once) is 503 search-busy with Retry-After, not a 500.
func TestBusySearchIs503(t *testing.T) {
	s, err := api.New(api.Config{Blocks: stubBlocks{}, DB: stubDB{}, Identity: stubIdentity{}, Agents: busyAgents{}})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptestDo(s, http.MethodGet, "/v1/agents?q=x", "")
	if p := problemOf(t, rec); rec.Code != http.StatusServiceUnavailable || !strings.HasSuffix(p.Type, "/search-busy") || rec.Header().Get("Retry-After") == "" {
		t.Errorf("GET /v1/agents with the registry busy: %d %+v (Retry-After %q), want 503 search-busy with Retry-After", rec.Code, p, rec.Header().Get("Retry-After"))
	}
}

// hugeAgents answers every search with about 30 MB of cards and no lookup to follow: more
// than a connection's buffers hold, so a client that does not read blocks the stream's write.
type hugeAgents struct{ api.Agents }

func (hugeAgents) SearchFollow(context.Context, registry.Query) ([]*registry.Agent, *registry.Lookup, error) {
	a := &registry.Agent{SignedCard: registry.SignedCard{JWS: strings.Repeat("x", 100<<10)}}
	list := make([]*registry.Agent, 300)
	for i := range list {
		list[i] = a
	}
	return list, nil, nil
}

// TestSearchStreamEndsWhenTheClientStopsReading is the regression test of review 30's L1: a
// client that sends a stream request and never reads does not pin the handler (and the
// marshalled answer) for ever; each event's write has a deadline.
func TestSearchStreamEndsWhenTheClientStopsReading(t *testing.T) {
	s, err := api.New(api.Config{Blocks: stubBlocks{}, DB: stubDB{}, Identity: stubIdentity{}, Agents: hugeAgents{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.Write([]byte("GET /v1/agents?capability=pdf HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "the stream's handler running", 5*time.Second, func() bool { return running(streamHandler) })
	testutil.Eventually(t, "the stream's handler gone", 2*api.StreamWriteTimeout, func() bool { return !running(streamHandler) })
}

// streamHandler is the function that runs for the length of a search stream.
const streamHandler = "api.(*Server).streamAgents"

// running reports whether a goroutine of this process is in fn.
func running(fn string) bool {
	buf := make([]byte, 8<<20)
	return bytes.Contains(buf[:runtime.Stack(buf, true)], []byte(fn))
}
