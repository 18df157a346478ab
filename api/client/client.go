// Package client is the typed Go client of a Surety node's HTTP API: one method per route,
// taking and returning the wire types of package api/wire, with problem+json answers turned
// into *Error. The CLI, the demo and the API's handler tests use it, so a route's shape is
// written once.
//
// It links no node: no network stack but net/http, no database, no cgo (internal/repotest's
// TestClientLinksNoNode holds it to that), so an agent that only calls a node pays for a
// client.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Limits and timeouts of the client.
const (
	// DefaultTimeout bounds each request when the caller's context does not.
	DefaultTimeout = 30 * time.Second
	// maxAnswer bounds how much of an answer is read.
	maxAnswer = 8 << 20
	// busyRetries is how many times a request the node refused as one too many in flight
	// (429 too-many-in-flight: nothing sent, nothing checked) is sent again, each after the
	// answer's Retry-After, at most busyWait.
	busyRetries = 12
	busyWait    = 10 * time.Second
	// SearchStreamTimeout bounds SearchAgentsStream: a node ends the stream within its
	// network lookup's bound (registry.LookupTimeout, 3 s) and 2 s more; the rest is margin
	// for a slow link. A silent or hostile node cannot hold the caller longer.
	SearchStreamTimeout = 20 * time.Second
)

// ErrNoAnswer reports a node that took the request but did not answer in time: it is
// reachable, and a write may still be going through (a slow chain): the same request sent
// again under the same Idempotency-Key resumes it.
var ErrNoAnswer = errors.New("client: the node did not answer in time")

// ErrBadURL reports a node URL that is not an http(s) URL with a host.
var ErrBadURL = errors.New("client: not a node URL like http://127.0.0.1:7746")

// Client talks to one node.
type Client struct {
	base string
	http *http.Client
	// searchStream bounds SearchAgentsStream (0: SearchStreamTimeout).
	searchStream time.Duration
}

// New makes a client for the node at base (http or https, with a host).
func New(base string) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: %q", ErrBadURL, base)
	}
	return &Client{base: strings.TrimRight(base, "/"), http: &http.Client{Timeout: DefaultTimeout}}, nil
}

// WithHTTP makes the client send through hc (a test server's client, a longer timeout).
func (c *Client) WithHTTP(hc *http.Client) *Client {
	out := *c
	out.http = hc
	return &out
}

// WithTimeout makes the client wait up to d for each answer (0: no bound but the caller's
// context).
func (c *Client) WithTimeout(d time.Duration) *Client {
	hc := *c.http
	hc.Timeout = d
	return c.WithHTTP(&hc)
}

// WithSearchStreamTimeout makes SearchAgentsStream give up on a stream after d (by default
// SearchStreamTimeout).
func (c *Client) WithSearchStreamTimeout(d time.Duration) *Client {
	out := *c
	out.searchStream = d
	return &out
}

// Base is the node's URL.
func (c *Client) Base() string { return c.base }

// Error is a refusal from the node: an RFC 9457 problem, or an answer that was not one.
type Error struct {
	Status int
	// Type is the problem type URI (https://surety.dev/problems/<slug>), when the node sent
	// one; Title, Detail and Reason are its fields.
	Type, Title, Detail, Reason string
	// Body is the answer when it was not a problem.
	Body string
}

// Slug is the last part of the problem type ("bounty-closed", or "INVALID_DID" for the W3C
// DID error types of the resolver), or "".
func (e *Error) Slug() string {
	if i := strings.LastIndexAny(e.Type, "/#"); i >= 0 {
		return e.Type[i+1:]
	}
	return ""
}

// Settled reports whether the node answered a write for good: not a 5xx (the chain or the
// node failed, and a retry under the same Idempotency-Key may still succeed or wait for the
// transaction) and not request-in-progress (the first request is still being worked on).
func (e *Error) Settled() bool {
	return e.Status < 500 && e.Slug() != "request-in-progress"
}

// Error reads like "node refused (409): Envelope refused: replayed".
func (e *Error) Error() string {
	msg := e.Body
	if e.Title != "" {
		msg = e.Title
		if e.Detail != "" {
			msg += ": " + e.Detail
		}
	}
	return fmt.Sprintf("node refused (%d): %s", e.Status, msg)
}

// request is one call: method, path (with query), body and its type, headers.
type request struct {
	method, path, contentType string
	body                      []byte
	header                    map[string]string
}

// do sends r and decodes a 2xx JSON answer into out (when not nil); any other answer is an
// *Error.
func (c *Client) do(ctx context.Context, r request, out any) error {
	status, data, err := c.send(ctx, r)
	if err != nil {
		return err
	}
	return c.decode(status, data, out)
}

// decode decodes a 2xx answer into out (when not nil and the answer has a body).
func (c *Client) decode(status int, data []byte, out any) error {
	if out == nil || status == http.StatusNoContent {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("node %s answered something unexpected: %w", c.base, err)
	}
	return nil
}

// send sends r and returns a 2xx answer's status and body; any other answer is an *Error.
// A request refused as one too many in flight from this address (the node sent and checked
// nothing), and a read refused for going over the address's rate (a GET changes nothing), is
// sent again after the answer's Retry-After, up to busyRetries times: a client reading many
// pages (an auditor's check of a head's scores) slows to the node's rate rather than fail.
func (c *Client) send(ctx context.Context, r request) (int, []byte, error) {
	for retries := 0; ; retries++ {
		status, data, wait, err := c.sendOnce(ctx, r)
		var busy *Error
		if retries >= busyRetries || !errors.As(err, &busy) || !retried(r.method, busy.Slug()) {
			return status, data, err
		}
		select {
		case <-ctx.Done():
			return status, data, err
		case <-time.After(min(max(wait, time.Second), busyWait)):
		}
	}
}

// retried says whether send tries again a request of method refused with the problem slug.
func retried(method, slug string) bool {
	return slug == "too-many-in-flight" || method == http.MethodGet && slug == "too-many-requests"
}

// sendOnce is one try of send; wait is the answer's Retry-After (0 without one).
func (c *Client) sendOnce(ctx context.Context, r request) (status int, data []byte, wait time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, r.method, c.base+r.path, bytes.NewReader(r.body))
	if err != nil {
		return 0, nil, 0, err
	}
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		var op *net.OpError
		dialed := !(errors.As(err, &op) && op.Op == "dial") // a dial that timed out never reached the node
		if ue != nil && ue.Timeout() && dialed && ctx.Err() == nil {
			return 0, nil, 0, fmt.Errorf("%w: node %s did not answer within %s; it may still be working (on a slow chain, raise --timeout; the same command resumes the request)", ErrNoAnswer, c.base, c.http.Timeout)
		}
		return 0, nil, 0, fmt.Errorf("cannot reach node %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	data, err = io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return 0, nil, 0, fmt.Errorf("read answer from %s: %w", c.base, err)
	}
	if resp.StatusCode >= 300 {
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
			wait = time.Duration(secs) * time.Second
		}
		return 0, nil, wait, errorOf(resp.StatusCode, data)
	}
	return resp.StatusCode, data, 0, nil
}

// problem is the part of an RFC 9457 problem an *Error keeps.
type problem struct {
	Type, Title, Detail, Reason string
}

// errorOf is the *Error of an answer with status: its problem (for the DID resolver, the
// one in its resolution result's didResolutionMetadata.error), or its text.
func errorOf(status int, data []byte) *Error {
	e := &Error{Status: status}
	var p struct {
		problem
		Resolution struct {
			Error problem `json:"error"`
		} `json:"didResolutionMetadata"`
	}
	if json.Unmarshal(data, &p) == nil && p.Title == "" {
		p.problem = p.Resolution.Error
	}
	if p.Title != "" {
		e.Type, e.Title, e.Detail, e.Reason = p.Type, p.Title, p.Detail, p.Reason
	} else {
		e.Body = strings.TrimSpace(string(data))
	}
	return e
}

func (c *Client) get(ctx context.Context, path string, out any) error {
	return c.do(ctx, request{method: http.MethodGet, path: path}, out)
}

// postJOSE posts a signed envelope (compact JWS or JWS JSON).
func (c *Client) postJOSE(ctx context.Context, path string, env []byte, out any) error {
	return c.do(ctx, request{method: http.MethodPost, path: path, contentType: "application/jose", body: env}, out)
}

func (c *Client) postJSON(ctx context.Context, path string, v any, out any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.do(ctx, request{method: http.MethodPost, path: path, contentType: "application/json", body: body}, out)
}

// esc escapes one path segment (a DID, a group id).
func esc(s string) string { return url.PathEscape(s) }
