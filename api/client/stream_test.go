package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/api/wire"
)

// streamServer serves a search stream written by write.
func streamServer(t *testing.T, write func(w http.ResponseWriter, r *http.Request)) *client.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		write(w, r)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSearchStreamRefusesAnEndlessEvent is a regression test of review 30's L2: a hostile
// node sending 1,000 data lines of 1 MB without ending the event gets an error once the
// event is larger than an answer may be, not the client's memory and quadratic copying.
func TestSearchStreamRefusesAnEndlessEvent(t *testing.T) {
	line := []byte("data: " + strings.Repeat("x", 1<<20) + "\n")
	c := streamServer(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("event: agents\n"))
		for range 1000 {
			if _, err := w.Write(line); err != nil {
				return
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := c.SearchAgentsStream(ctx, url.Values{"capability": {"audit"}}, func(*wire.AgentList) error { return nil })
	runtime.ReadMemStats(&after)
	if err == nil || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("SearchAgentsStream = %v, want an event too large", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("reading the stream allocated %d MB", alloc>>20)
	}
}

// TestSearchStreamHasADeadline is a regression test of review 30's L2: a node that sends its
// first answer and then nothing, never done, does not hang the caller: the stream ends with
// an error within the client's bound (WithSearchStreamTimeout; by default
// client.SearchStreamTimeout), even under a context without a deadline.
func TestSearchStreamHasADeadline(t *testing.T) {
	stop := make(chan struct{})
	c := streamServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("event: agents\ndata: {\"agents\":[],\"discovering\":true}\n\n"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}).WithSearchStreamTimeout(300 * time.Millisecond)
	t.Cleanup(func() { close(stop) }) // before the server's Close, which waits for the handler
	done := make(chan error, 1)
	shown := 0
	go func() {
		done <- c.SearchAgentsStream(context.Background(), url.Values{"capability": {"audit"}}, func(*wire.AgentList) error { shown++; return nil })
	}()
	select {
	case err := <-done:
		if err == nil || shown != 1 {
			t.Errorf("SearchAgentsStream = %v after %d answers, want the first answer, then an error", err, shown)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("SearchAgentsStream still waits on a silent node after 10 s")
	}
}
