package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/api/wire"
)

// FuzzSearchAgentsStream: whatever a node sends as a search stream, SearchAgentsStream
// returns (an error, or nil after done) without panicking, and calls show only with an
// answer it decoded.
func FuzzSearchAgentsStream(f *testing.F) {
	f.Add("event: agents\ndata: {\"agents\":[],\"discovering\":true}\n\nevent: agents\ndata: {\"agents\":[{\"did\":\"did:key:z\",\"name\":\"A\"}]}\n\nevent: done\ndata: {}\n\n")
	f.Add("event: agents\ndata: {\"agents\":[\n\n")
	f.Add("data: x\n\nevent: done\n\n")
	f.Add("event: agents\ndata: null\n\n")
	f.Add("event: agents\ndata: {\"agents\":\ndata: []}\n\nevent: done\n\n") // one event's data over two lines
	f.Add("")
	f.Fuzz(func(t *testing.T, body string) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte(body))
		}))
		defer srv.Close()
		c, err := client.New(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = c.SearchAgentsStream(ctx, url.Values{"capability": {"audit"}}, func(l *wire.AgentList) error {
			if l == nil {
				t.Fatal("show called without an answer")
			}
			return nil
		})
	})
}
