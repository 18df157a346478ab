package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/labstack/echo/v4"

	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/txn"
)

// TestPreferAsync: Prefer: respond-async answers a write that is done within the wait with
// its own answer, and one that is not with 202 and its operation, which then follows the
// write to its end; a client that does not ask waits for the answer as before.
func TestPreferAsync(t *testing.T) {
	e := echo.New()
	s := &Server{cfg: Config{RequestTimeout: 5 * time.Second}, echo: e, log: slog.New(slog.DiscardHandler), closing: t.Context(), ops: mustOpStore(t)}
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

// opServers returns a function that starts a server over one SQLite database (one node's,
// started again and again): its routes are the caller's to add; stop begins its shutdown.
func opServers(t *testing.T) func() (s *Server, e *echo.Echo, stop context.CancelFunc) {
	db := testutil.DB(t)
	chainRow, err := sqlite.EnterChain(t.Context(), db, sqlite.Chain{Key: "test", ChainID: 1, Genesis: "0x01", Contracts: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	return func() (*Server, *echo.Echo, context.CancelFunc) {
		ops, err := newOpStore(t.Context(), db, chainRow, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		e := echo.New()
		ctx, stop := context.WithCancel(t.Context())
		s := &Server{cfg: Config{RequestTimeout: 5 * time.Second}, echo: e, log: slog.New(slog.DiscardHandler), closing: ctx, ops: ops}
		e.HTTPErrorHandler = errorHandler(s.log)
		return s, e, stop
	}
}

func mustOpStore(t testing.TB) *opStore {
	t.Helper()
	st, err := newOpStore(t.Context(), nil, 0, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestOperationsOutliveARestart: a node that stops (or dies) while carrying on writes finds
// them in its database when it starts again. One whose request had an Idempotency-Key runs
// again, with the same key and body, and ends with its answer; one without is not run again
// (it might act twice) and fails as interrupted, naming the transaction it had sent; finished
// ones stay readable after the next restart.
func TestOperationsOutliveARestart(t *testing.T) {
	start := opServers(t)
	type call struct{ key, body string }
	// node makes a server over the database whose /slow/:n sends a "transaction" (progress)
	// and then waits for release, or for the server's end.
	node := func(release <-chan struct{}, calls chan<- call) (*Server, *echo.Echo, context.CancelFunc) {
		s, e, stop := start()
		e.POST("/slow/:n", func(c echo.Context) error {
			body, _ := io.ReadAll(c.Request().Body)
			calls <- call{c.Request().Header.Get("Idempotency-Key"), c.Param("n") + " " + string(body)}
			txn.Report(c.Request().Context(), txn.Progress{Stage: txn.StageSent, Tx: common.Hash{0xaa}})
			select {
			case <-release:
				return c.JSON(http.StatusCreated, map[string]string{"n": c.Param("n")})
			case <-c.Request().Context().Done():
				return c.Request().Context().Err()
			}
		}, s.async)
		// /late answers once the node is shutting down: done by then, it is recorded done.
		e.POST("/late", func(c echo.Context) error {
			calls <- call{c.Request().Header.Get("Idempotency-Key"), "late"}
			<-c.Request().Context().Done()
			return c.JSON(http.StatusCreated, map[string]string{"late": "yes"})
		}, s.async)
		e.GET("/v1/operations/:id", s.getOperation)
		return s, e, stop
	}
	post := func(e *echo.Echo, path, key string) string {
		t.Helper()
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(`{"x":1}`))
		req.Header.Set("Prefer", "respond-async, wait=0")
		req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		e.ServeHTTP(rec, req)
		if rec.Code != http.StatusAccepted {
			t.Fatalf("POST %s: %d %s", path, rec.Code, rec.Body)
		}
		return rec.Header().Get("Location")
	}
	get := func(e *echo.Echo, loc string) Operation {
		t.Helper()
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, loc, nil))
		var op Operation
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &op) != nil {
			t.Fatalf("GET %s: %d %s", loc, rec.Code, rec.Body)
		}
		return op
	}
	until := func(e *echo.Echo, loc string, state OpState) Operation {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			op := get(e, loc)
			if op.State == state {
				return op
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s stayed %s, want %s: %+v", loc, op.State, state, op)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	// The first run: three writes under way when the node stops, two of them with a key.
	release, calls := make(chan struct{}), make(chan call, 10)
	s, e, stop := node(release, calls)
	first := post(e, "/slow/1", "k1")
	<-calls
	withKey := post(e, "/slow/2", "k2")
	<-calls
	withoutKey := post(e, "/slow/3", "")
	<-calls
	late := post(e, "/late", "k4")
	<-calls
	until(e, withKey, OpSent)
	until(e, withoutKey, OpSent)
	stop() // the node shuts down while they wait
	s.ops.tasks.Wait()
	if op := get(e, late); op.State != OpDone || op.Status != http.StatusCreated {
		t.Errorf("a write that answered as the node shut down: %+v, want it done", op)
	}

	// The second run carries them on.
	release2, calls2 := make(chan struct{}), make(chan call, 10)
	s2, e2, stop2 := node(release2, calls2)
	defer stop2()
	if op := get(e2, first); op.State != OpSent {
		t.Fatalf("the first write after the restart, before it is carried on: %+v", op)
	}
	s2.resume()
	again := map[string]string{}
	for range 2 {
		c := <-calls2
		again[c.key] = c.body
	}
	if again["k1"] != `1 {"x":1}` || again["k2"] != `2 {"x":1}` || len(again) != 2 {
		t.Errorf("ran again: %v; want /slow/1 and /slow/2 with their keys and bodies, and not /slow/3", again)
	}
	op := until(e2, withoutKey, OpFailed)
	if op.Status != http.StatusServiceUnavailable || !strings.Contains(string(op.Result), "interrupted") || !strings.Contains(string(op.Result), common.Hash{0xaa}.Hex()) {
		t.Errorf("the write without a key after the restart: %+v (%s)", op, op.Result)
	}
	close(release2)
	if op := until(e2, withKey, OpDone); op.Status != http.StatusCreated || string(op.Result) != `{"n":"2"}` {
		t.Errorf("the write with a key after the restart: %+v (%s)", op, op.Result)
	}
	until(e2, first, OpDone)
	stop2()
	s2.ops.tasks.Wait()

	// A third run reads the finished ones and runs nothing.
	s3, e3, stop3 := node(make(chan struct{}), make(chan call))
	defer stop3()
	if n := len(s3.ops.unfinished()); n != 0 {
		t.Errorf("%d operations unfinished after they all ended", n)
	}
	if op := get(e3, withKey); op.State != OpDone || string(op.Result) != `{"n":"2"}` {
		t.Errorf("a finished operation after another restart: %+v", op)
	}
}

// TestOperationsAreNotCarriedOnForever: an operation under way at each of maxResumes
// restarts (one that takes the node down, say) fails as interrupted at the next start
// instead of running again, and so does one older than operationTimeout.
func TestOperationsAreNotCarriedOnForever(t *testing.T) {
	start := opServers(t)
	ran := make(chan struct{}, 10)
	node := func() (*Server, *echo.Echo, context.CancelFunc) {
		s, e, stop := start()
		e.POST("/hangs", func(c echo.Context) error {
			ran <- struct{}{}
			<-c.Request().Context().Done()
			return c.Request().Context().Err()
		}, s.async)
		return s, e, stop
	}
	s, e, stop := node()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/hangs", strings.NewReader("{}"))
	req.Header.Set("Prefer", "respond-async, wait=0")
	req.Header.Set("Idempotency-Key", "k")
	e.ServeHTTP(rec, req)
	if rec.Code != http.StatusAccepted {
		t.Fatalf("POST /hangs: %d %s", rec.Code, rec.Body)
	}
	id := strings.TrimPrefix(rec.Header().Get("Location"), "/v1/operations/")
	<-ran
	for restart := 1; ; restart++ {
		stop()
		s.ops.tasks.Wait()
		s, _, stop = node()
		s.resume()
		if restart > maxResumes {
			break
		}
		<-ran // carried on again
	}
	defer stop()
	op, _, ok := s.ops.get(id)
	if !ok || op.State != OpFailed || !strings.Contains(string(op.Result), fmt.Sprintf("restarted %d times", maxResumes)) {
		t.Errorf("after %d restarts: %+v (%s), want it interrupted", maxResumes+1, op, op.Result)
	}
	if len(ran) != 0 {
		t.Errorf("it ran again after %d restarts", maxResumes)
	}

	// One begun longer ago than operations run is not run again either.
	old := Operation{ID: "old", Route: "POST /hangs", State: OpSent, Created: time.Now().Add(-2 * operationTimeout), Updated: time.Now()}
	if err := s.ops.save(old, &opRequest{Method: http.MethodPost, URI: "/hangs", Header: http.Header{"Idempotency-Key": {"k2"}}}); err != nil {
		t.Fatal(err)
	}
	stop()
	s.ops.tasks.Wait()
	s, _, stop = node()
	defer stop()
	s.resume()
	if op, _, _ := s.ops.get("old"); op.State != OpFailed || !strings.Contains(string(op.Result), "began more than") || len(ran) != 0 {
		t.Errorf("an operation older than %s: %+v (%s), ran %d times", operationTimeout, op, op.Result, len(ran))
	}
}

// TestOnceRunsThenOnRetries: a retry answered from the store (a replayed envelope, or a write
// the node carries on after a restart) waits for what the first answer waited for (a stake
// for the node's index), and answers 200 where the first answered its own status; an old
// envelope under a key the node never stored acts on nothing.
func TestOnceRunsThenOnRetries(t *testing.T) {
	e := echo.New()
	s := &Server{echo: e, log: slog.New(slog.DiscardHandler)}
	for _, tc := range []struct {
		replayed error
		status   int
		body     string
	}{{nil, http.StatusCreated, "1\n"}, {errors.New("replayed"), http.StatusOK, "2\n"}} {
		rec := httptest.NewRecorder()
		c := e.NewContext(httptest.NewRequest(http.MethodPost, "/", nil), rec)
		waited := 0
		err := once(s, c, &signedRequest{sender: "did:key:z6Mk", replayed: tc.replayed}, "fp", http.StatusCreated,
			func(context.Context, txn.Idempotency) (int, error) { return 1, nil },
			func(context.Context, txn.Idempotency) (int, error) { return 2, nil },
			func(context.Context, int) { waited++ })
		if err != nil || waited != 1 || rec.Code != tc.status || rec.Body.String() != tc.body {
			t.Errorf("replayed=%v: err %v, waited %d times, answered %d %q; want it to wait once and answer %d %q", tc.replayed, err, waited, rec.Code, rec.Body, tc.status, tc.body)
		}
	}
	// The attack: an old envelope (replayed, or expired: both are only marked authentic) under
	// an Idempotency-Key the node never stored starts nothing; it gets its refusal.
	stale := errors.New("envelope expired")
	acted := false
	c := e.NewContext(httptest.NewRequest(http.MethodPost, "/", nil), httptest.NewRecorder())
	err := once(s, c, &signedRequest{sender: "did:key:z6Mk", replayed: stale}, "fp", http.StatusCreated,
		func(context.Context, txn.Idempotency) (int, error) { acted = true; return 1, nil },
		func(context.Context, txn.Idempotency) (int, error) { return 0, txn.ErrNoSuchRequest },
		nil)
	if !errors.Is(err, stale) || acted {
		t.Errorf("an old envelope under a new key: err %v, acted %v; want its refusal and nothing done", err, acted)
	}
}
