package api

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

// TestPreferAsync: Prefer: respond-async answers a write that is done within the wait with
// its own answer, and one that is not with 202 and its operation, which then follows the
// write to its end; a client that does not ask waits for the answer as before.
func TestPreferAsync(t *testing.T) {
	e := echo.New()
	s := &Server{cfg: Config{RequestTimeout: 5 * time.Second}, echo: e, log: slog.New(slog.DiscardHandler), closing: t.Context(), ops: newOpStore()}
	e.HTTPErrorHandler = errorHandler(s.log)
	release := make(chan struct{})
	e.POST("/slow", func(c echo.Context) error {
		<-release
		return c.JSON(http.StatusCreated, map[string]string{"done": "yes"})
	}, s.async)
	e.POST("/refused", func(c echo.Context) error { return ErrUnknownOperation }, s.async)
	e.POST("/panics", func(c echo.Context) error { panic("a bug") }, s.async)
	e.GET("/v1/operations/:id", s.getOperation)
	post := func(path, prefer string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader("{}"))
		if prefer != "" {
			req.Header.Set("Prefer", prefer)
		}
		e.ServeHTTP(rec, req)
		return rec
	}
	rec := post("/slow", "respond-async, wait=0")
	loc := rec.Header().Get("Location")
	if rec.Code != http.StatusAccepted || !strings.HasPrefix(loc, "/v1/operations/") || !strings.Contains(rec.Body.String(), `"state":"pending"`) {
		t.Fatalf("a slow write, async: %d %q %s", rec.Code, loc, rec.Body)
	}
	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, loc, nil))
		if strings.Contains(rec.Body.String(), `"state":"done"`) {
			if !strings.Contains(rec.Body.String(), `"status":201`) || !strings.Contains(rec.Body.String(), `"result":{"done":"yes"}`) {
				t.Errorf("the finished operation: %s", rec.Body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the operation never finished: %s", rec.Body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if rec := post("/slow", "respond-async, wait=5"); rec.Code != http.StatusCreated || rec.Body.String() != `{"done":"yes"}`+"\n" {
		t.Errorf("a write done within the wait: %d %s, want its own answer", rec.Code, rec.Body)
	}
	if rec := post("/slow", ""); rec.Code != http.StatusCreated {
		t.Errorf("a write without Prefer: %d %s", rec.Code, rec.Body)
	}
	if rec := post("/refused", "respond-async, wait=5"); rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "unknown-operation") {
		t.Errorf("a refused write within the wait: %d %s, want its problem", rec.Code, rec.Body)
	}
	// A handler that panics off the request's goroutine fails its operation; the node lives.
	if rec := post("/panics", "respond-async, wait=5"); rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "internal") {
		t.Errorf("a write that panics: %d %s, want a 500 problem", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/operations/nope", nil))
	if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "unknown-operation") {
		t.Errorf("an unknown operation: %d %s", rec.Code, rec.Body)
	}
	s.ops.tasks.Wait()
}

func TestParsePrefer(t *testing.T) {
	tests := []struct {
		in    []string
		async bool
		wait  time.Duration
	}{
		{nil, false, 0},
		{[]string{"respond-async"}, true, 0},
		{[]string{"respond-async, wait=10"}, true, 10 * time.Second},
		{[]string{"wait=3", "Respond-Async"}, true, 3 * time.Second},
		{[]string{"wait=-1, respond-async"}, true, 0},
		{[]string{"handling=lenient"}, false, 0},
	}
	for _, tt := range tests {
		if got := parsePrefer(tt.in); got.async != tt.async || got.wait != tt.wait {
			t.Errorf("parsePrefer(%q) = %+v, want async %v wait %s", tt.in, got, tt.async, tt.wait)
		}
	}
}
