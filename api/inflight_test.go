package api

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

// TestOperationsInFlightPerAddress: a client address leaves at most maxInFlightPerAddress
// operations to the node at once; the next is refused (429 too-many-in-flight, Retry-After)
// before its handler runs, while another address, and a synchronous write from the same one,
// go through; once the operations end the address may leave more, and nothing is left
// counted.
func TestOperationsInFlightPerAddress(t *testing.T) {
	e := echo.New()
	e.IPExtractor = clientAddress(nil)
	s := &Server{cfg: Config{RequestTimeout: 5 * time.Second}, echo: e, log: slog.New(slog.DiscardHandler), closing: t.Context(), ops: mustOpStore(t)}
	e.HTTPErrorHandler = errorHandler(s.log)
	release := make(chan struct{})
	var ran atomic.Int32
	e.POST("/slow", func(c echo.Context) error {
		ran.Add(1)
		<-release
		return c.NoContent(http.StatusCreated)
	}, s.async)
	e.POST("/fast", func(c echo.Context) error { return c.NoContent(http.StatusCreated) }, s.async)
	post := func(path, addr, prefer string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader("{}"))
		req.RemoteAddr = addr + ":40000"
		if prefer != "" {
			req.Header.Set("Prefer", prefer)
		}
		e.ServeHTTP(rec, req)
		return rec
	}
	for i := range maxInFlightPerAddress {
		if rec := post("/slow", "192.0.2.1", "respond-async, wait=0"); rec.Code != http.StatusAccepted {
			t.Fatalf("operation %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	rec := post("/slow", "192.0.2.1", "respond-async, wait=0")
	if rec.Code != http.StatusTooManyRequests || !strings.Contains(rec.Body.String(), "too-many-in-flight") || rec.Header().Get("Retry-After") != "5" {
		t.Errorf("one operation too many: %d %s (Retry-After %q), want 429 too-many-in-flight, Retry-After 5", rec.Code, rec.Body, rec.Header().Get("Retry-After"))
	}
	if rec := post("/fast", "192.0.2.1", ""); rec.Code != http.StatusCreated {
		t.Errorf("a synchronous write from the same address: %d %s", rec.Code, rec.Body)
	}
	if rec := post("/slow", "192.0.2.2", "respond-async, wait=0"); rec.Code != http.StatusAccepted {
		t.Errorf("an operation from another address: %d %s", rec.Code, rec.Body)
	}
	close(release)
	s.ops.tasks.Wait()
	if ran.Load() != maxInFlightPerAddress+1 {
		t.Errorf("the handler ran %d times, want %d: the refused operation must not run", ran.Load(), maxInFlightPerAddress+1)
	}
	if rec := post("/slow", "192.0.2.1", "respond-async, wait=5"); rec.Code != http.StatusCreated {
		t.Errorf("an operation once the others ended: %d %s", rec.Code, rec.Body)
	}
	s.ops.tasks.Wait()
	s.inFlight.mu.Lock()
	defer s.inFlight.mu.Unlock()
	if len(s.inFlight.n) != 0 {
		t.Errorf("counted in flight after everything ended: %v", s.inFlight.n)
	}
}
