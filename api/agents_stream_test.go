package api_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/api/wire"
)

// TestSearchAgentsAsEventStream: GET /v1/agents answers as server-sent events when the client
// accepts them, and as JSON otherwise; a node without a network lookup to follow (this one
// has no peers: node's tests follow real lookups) streams its answer and done; a bad query
// is a problem before any event.
func TestSearchAgentsAsEventStream(t *testing.T) {
	h := newRegistryServer(t).Handler()
	const answer = `"name":"Summarizer"`
	for _, tt := range []struct {
		name, path, accept string
		code               int
		contentType        string
		body               []string // in this order
	}{
		{"json", "/v1/agents?capability=pdf", "", http.StatusOK, "application/json", []string{`{"agents":[{`, answer}},
		{"stream", "/v1/agents?capability=pdf", "text/event-stream", http.StatusOK, "text/event-stream",
			[]string{"event: agents\ndata: {\"agents\":[{", answer, "}]}\n\nevent: done\ndata: {}\n\n"}},
		{"stream among others", "/v1/agents?q=summarizes", "application/json;q=0.5, text/event-stream", http.StatusOK, "text/event-stream", []string{"event: agents\n", "event: done\n"}},
		{"stream refused", "/v1/agents?q=summarizes", "text/event-stream;q=0, application/json", http.StatusOK, "application/json", []string{`{"agents":[{`}},
		{"nothing found", "/v1/agents?capability=audit", "text/event-stream", http.StatusOK, "text/event-stream", []string{"event: agents\ndata: {\"agents\":[]}\n\nevent: done\n"}},
		{"bad query", "/v1/agents?capability=Not+A+Tag", "text/event-stream", http.StatusBadRequest, "application/problem+json", []string{`"detail":"capability`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, tt.path, nil)
			if tt.accept != "" {
				req.Header.Set("Accept", tt.accept)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			body := rec.Body.String()
			if rec.Code != tt.code || !strings.HasPrefix(rec.Header().Get("Content-Type"), tt.contentType) {
				t.Fatalf("%d %s: %s", rec.Code, rec.Header().Get("Content-Type"), body)
			}
			rest := body
			for _, want := range tt.body {
				i := strings.Index(rest, want)
				if i < 0 {
					t.Fatalf("answer %q: want %q (in order)", body, want)
				}
				rest = rest[i+len(want):]
			}
			if strings.Contains(body, "discovering") {
				t.Errorf("a node without a lookup says discovering: %s", body)
			}
		})
	}
}

// TestClientSearchAgentsStream: the typed client reads the stream, and a node's plain JSON
// answer (a node that does not stream) as one answer.
func TestClientSearchAgentsStream(t *testing.T) {
	s := newRegistryServer(t)
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	jsonOnly := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del("Accept")
		s.Handler().ServeHTTP(w, r)
	}))
	defer jsonOnly.Close()
	for _, base := range []string{srv.URL, jsonOnly.URL} {
		c, err := client.New(base)
		if err != nil {
			t.Fatal(err)
		}
		var answers []*wire.AgentList
		err = c.SearchAgentsStream(context.Background(), url.Values{"capability": {"pdf"}}, func(l *wire.AgentList) error {
			answers = append(answers, l)
			return nil
		})
		if err != nil || len(answers) != 1 || len(answers[0].Agents) != 1 || answers[0].Agents[0].Name != "Summarizer" || answers[0].Discovering {
			t.Errorf("%s: SearchAgentsStream = %+v, %v; want one answer, the card", base, answers, err)
		}
		err = c.SearchAgentsStream(context.Background(), url.Values{"capability": {"Not A Tag"}}, func(*wire.AgentList) error { return nil })
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Status != http.StatusBadRequest {
			t.Errorf("%s: a bad query: %v, want a 400 *client.Error", base, err)
		}
	}
}

// FuzzSearchAgentsAccept: whatever Accept header a client sends, a search answers 200 as
// JSON or as an event stream ending in done, never an error.
func FuzzSearchAgentsAccept(f *testing.F) {
	for _, a := range []string{"", "*/*", "text/event-stream", "text/event-stream;q=0", "application/json;q=0.5, text/event-stream",
		"text/event-stream;;q=", "TEXT/EVENT-STREAM", ",,,", "text/*"} {
		f.Add(a)
	}
	h := newRegistryServer(f).Handler()
	var calls atomic.Uint32
	f.Fuzz(func(t *testing.T, accept string) {
		req := httptest.NewRequest(http.MethodGet, "/v1/agents?capability=pdf", nil)
		req.Header.Set("Accept", accept)
		// Each call from its own address: the fuzzer's thousands of searches a second from one
		// would meet the per-address search rate (429), which is not what this fuzzes.
		n := calls.Add(1)
		req.RemoteAddr = fmt.Sprintf("10.%d.%d.%d:4242", n>>16&255, n>>8&255, n&255)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		ct, body := rec.Header().Get("Content-Type"), rec.Body.String()
		switch {
		case rec.Code != http.StatusOK:
			t.Fatalf("Accept %q: %d %s", accept, rec.Code, body)
		case ct == "text/event-stream":
			if !strings.HasPrefix(body, "event: agents\n") || !strings.HasSuffix(body, "event: done\ndata: {}\n\n") {
				t.Fatalf("Accept %q: stream %q", accept, body)
			}
		case strings.HasPrefix(ct, "application/json"):
			if !strings.HasPrefix(body, `{"agents":[`) {
				t.Fatalf("Accept %q: %q", accept, body)
			}
		default:
			t.Fatalf("Accept %q: answered as %q", accept, ct)
		}
	})
}
