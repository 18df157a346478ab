package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surety-ioa/surety/api/client"
)

// TestErrors: a problem answer becomes an *Error that reads like the CLI prints it and says
// whether a write was answered for good; a body that is not a problem is kept; a bad URL and
// an unreachable node are plain errors.
func TestErrors(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		body    string
		msg     string
		slug    string
		settled bool
	}{
		{"problem", 409, `{"type":"https://surety.dev/problems/bounty-closed","title":"The bounty is closed","detail":"bounty 7 is already accepted","status":409}`,
			"node refused (409): The bounty is closed: bounty 7 is already accepted", "bounty-closed", true},
		{"in progress", 409, `{"type":"https://surety.dev/problems/request-in-progress","title":"A request is in progress","status":409}`,
			"node refused (409): A request is in progress", "request-in-progress", false},
		{"chain down", 503, `{"type":"https://surety.dev/problems/chain-unreachable","title":"The chain did not answer","status":503}`,
			"node refused (503): The chain did not answer", "chain-unreachable", false},
		{"not a problem", 502, "bad gateway\n", "node refused (502): bad gateway", "", false},
		{"a DID resolution error", 400, `{"didDocument":null,"didResolutionMetadata":{"error":{"type":"https://www.w3.org/ns/did#INVALID_DID","title":"Not a valid DID","status":400,"detail":"must start with \"did:\""}},"didDocumentMetadata":{}}`,
			`node refused (400): Not a valid DID: must start with "did:"`, "INVALID_DID", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			c, err := client.New(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Info(context.Background())
			var ce *client.Error
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want *client.Error", err)
			}
			if ce.Error() != tt.msg || ce.Slug() != tt.slug || ce.Settled() != tt.settled || ce.Status != tt.status {
				t.Errorf("error %q slug %q settled %v; want %q %q %v", ce.Error(), ce.Slug(), ce.Settled(), tt.msg, tt.slug, tt.settled)
			}
		})
	}
	if _, err := client.New("127.0.0.1:7746"); !errors.Is(err, client.ErrBadURL) {
		t.Errorf("a URL without a scheme: %v", err)
	}
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	c, _ := client.New(srv.URL)
	var ce *client.Error
	if _, err := c.Info(context.Background()); err == nil || errors.As(err, &ce) || errors.Is(err, client.ErrNoAnswer) || !strings.Contains(err.Error(), "cannot reach") {
		t.Errorf("a node that is gone: %v, want a transport error saying it cannot be reached", err)
	}
}

// TestSlowNodeIsNotUnreachable: a node that takes the request and answers late (a slow
// chain) is reported as not answering in time, never as unreachable.
func TestSlowNodeIsNotUnreachable(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	c, err := client.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.WithTimeout(200 * time.Millisecond).Info(context.Background())
	if !errors.Is(err, client.ErrNoAnswer) || strings.Contains(err.Error(), "cannot reach") || !strings.Contains(err.Error(), "200ms") {
		t.Errorf("a slow node: %v, want ErrNoAnswer naming the timeout", err)
	}
}

// TestBusyNodeIsAskedAgain: a request the node refused as one too many in flight (429
// too-many-in-flight: it sent and checked nothing) is sent again, with the same body, after
// the answer's Retry-After, and so is a read (GET) refused for going over the address's rate
// (an auditor reading a head's pages of scores); a write refused for its rate is the caller's.
func TestBusyNodeIsAskedAgain(t *testing.T) {
	for _, tt := range []struct {
		name, slug string
		get        bool
		tries      int32 // requests the node sees
		ok         bool
	}{
		{"write, too many in flight", "too-many-in-flight", false, 3, true},
		{"write over the rate", "too-many-requests", false, 1, false},
		{"read, too many in flight", "too-many-in-flight", true, 3, true},
		{"read over the rate", "too-many-requests", true, 3, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var seen atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				if want := map[bool]string{false: `{"rawTx":"0x01"}`, true: ""}[tt.get]; string(body) != want || (r.Method == http.MethodGet) != tt.get {
					t.Errorf("try %d sent %s %q", seen.Load()+1, r.Method, body)
				}
				if seen.Add(1) < 3 {
					w.Header().Set("Retry-After", "1")
					w.WriteHeader(http.StatusTooManyRequests)
					_, _ = w.Write([]byte(`{"type":"https://surety.dev/problems/` + tt.slug + `","title":"busy","status":429}`))
					return
				}
				_, _ = w.Write([]byte(map[bool]string{false: `{"txHash":"0xab"}`, true: `{"status":"ok"}`}[tt.get]))
			}))
			defer srv.Close()
			c, err := client.New(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			var res any
			if tt.get {
				res, err = c.Health(context.Background())
			} else {
				res, err = c.Relay(context.Background(), []byte{1})
			}
			if got := seen.Load(); got != tt.tries || (err == nil) != tt.ok {
				t.Errorf("%d requests, answer %+v, %v; want %d requests, ok %v", got, res, err, tt.tries, tt.ok)
			}
		})
	}
}

// TestWithdraw: Withdraw posts the signed envelope to /v1/withdraw as application/jose under
// its Idempotency-Key and decodes the transaction; nothing credited is the node's 409.
func TestWithdraw(t *testing.T) {
	for _, tt := range []struct {
		name   string
		status int
		answer string
		tx     string
		slug   string
	}{
		{"credited", http.StatusOK, `{"txHash":"0xab","block":7,"gasUsed":30000}`, "0xab", ""},
		{"nothing credited", http.StatusConflict, `{"type":"https://surety.dev/problems/nothing-to-withdraw","title":"Nothing to withdraw","status":409}`, "", "nothing-to-withdraw"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				if r.Method != http.MethodPost || r.URL.Path != "/v1/withdraw" || r.Header.Get("Content-Type") != "application/jose" ||
					r.Header.Get("Idempotency-Key") != "key-1" || string(body) != "a.b.c" {
					t.Errorf("sent %s %s (%s, key %q): %q", r.Method, r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("Idempotency-Key"), body)
				}
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.answer))
			}))
			defer srv.Close()
			c, err := client.New(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.Withdraw(context.Background(), []byte("a.b.c"), "key-1")
			var ce *client.Error
			switch {
			case tt.slug != "":
				if !errors.As(err, &ce) || ce.Status != tt.status || ce.Slug() != tt.slug {
					t.Errorf("answer %+v, %v; want *client.Error %d %s", res, err, tt.status, tt.slug)
				}
			case err != nil || res.TxHash != tt.tx || res.Block != 7 || res.GasUsed != 30000:
				t.Errorf("answer %+v, %v; want tx %s in block 7", res, err, tt.tx)
			}
		})
	}
}

// TestLogCheckpoint: LogCheckpoint gets /v1/log/checkpoint and returns the signed note byte for
// byte (the verifier checks the signature over exactly those bytes); a node that signs no
// checkpoints is its 501 problem.
func TestLogCheckpoint(t *testing.T) {
	const note = "surety.log/31337/0x5fbdb2315678afecb367f032d93f642f64180aa3/did:key:z6Mk\n11\n" +
		"0QE94qp2yTyR0kttPY4WEuxh/5x3TA02gruYMUQ/pSI=\n\n— surety.log/31337/0x5fbdb2315678afecb367f032d93f642f64180aa3/did:key:z6Mk AbCd\n"
	for _, tt := range []struct {
		name   string
		status int
		answer string
		slug   string
	}{
		{"signed", http.StatusOK, note, ""},
		{"no RootAnchor", http.StatusNotImplemented, `{"type":"https://surety.dev/problems/no-checkpoint","title":"This node signs no checkpoints","status":501}`, "no-checkpoint"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodGet || r.URL.Path != "/v1/log/checkpoint" {
					t.Errorf("sent %s %s", r.Method, r.URL.Path)
				}
				if tt.status == http.StatusOK {
					w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				}
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.answer))
			}))
			defer srv.Close()
			c, err := client.New(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.LogCheckpoint(context.Background())
			var ce *client.Error
			switch {
			case tt.slug != "":
				if !errors.As(err, &ce) || ce.Status != tt.status || ce.Slug() != tt.slug {
					t.Errorf("answer %q, %v; want *client.Error %d %s", got, err, tt.status, tt.slug)
				}
			case err != nil || string(got) != note:
				t.Errorf("answer %q, %v; want the note as sent", got, err)
			}
		})
	}
}
