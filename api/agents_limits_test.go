package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/surety-ioa/surety/api"
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
