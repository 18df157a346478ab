package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMCPIsBoundedInFlight: /mcp takes at most 4 requests in flight from one client address
// (the fifth is 429 too-many-in-flight) and 64 across addresses (the 65th is 503 mcp-busy);
// a slot is free again once its request ends.
func TestMCPIsBoundedInFlight(t *testing.T) {
	s := newFullServer(t)
	release := make(chan struct{})
	entered := make(chan struct{}, 100)
	s.MountMCP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		w.WriteHeader(http.StatusOK)
	}))
	post := func(addr string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.RemoteAddr = addr
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, req)
		return w
	}
	var wg sync.WaitGroup
	// refused sends a request that must be refused before the handler: one that reaches it
	// instead is an error (and is let go with the others at the end).
	refused := func(addr string) *httptest.ResponseRecorder {
		done := make(chan *httptest.ResponseRecorder, 1)
		wg.Add(1)
		go func() { defer wg.Done(); done <- post(addr) }()
		select {
		case w := <-done:
			return w
		case <-entered:
			t.Errorf("a request from %s reached the handler, want it refused", addr)
			return httptest.NewRecorder()
		}
	}
	hold := func(n int, addr func(i int) string) {
		for i := range n {
			wg.Add(1)
			go func() { defer wg.Done(); post(addr(i)) }()
			select {
			case <-entered:
			case <-time.After(5 * time.Second):
				t.Fatalf("request %d did not reach the handler", i)
			}
		}
	}
	hold(4, func(int) string { return "10.0.0.1:1000" })
	if w := refused("10.0.0.1:2000"); w.Code != http.StatusTooManyRequests || !strings.Contains(w.Body.String(), "too-many-in-flight") {
		t.Errorf("a fifth request from one address: %d %s, want 429 too-many-in-flight", w.Code, w.Body)
	}
	hold(60, func(i int) string { return fmt.Sprintf("10.1.%d.%d:1000", i/200, i%200+1) })
	if w := refused("10.2.0.1:1000"); w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "mcp-busy") || w.Header().Get("Retry-After") == "" {
		t.Errorf("a 65th request: %d %s, want 503 mcp-busy with Retry-After", w.Code, w.Body)
	}
	close(release)
	wg.Wait()
	release = make(chan struct{})
	close(release)
	if w := post("10.0.0.1:3000"); w.Code != http.StatusOK {
		t.Errorf("once the others ended: %d %s, want the request served", w.Code, w.Body)
	}
}
