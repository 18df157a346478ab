package api

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/surety-ioa/surety/txn"
)

// A write on a slow chain (12 s blocks, a few confirmations) takes longer than a client
// wants to hold a request open. A client that says so (RFC 7240: Prefer: respond-async, and
// optionally wait=N seconds) gets the answer if it is ready within N seconds, and otherwise
// 202 Accepted with Location: /v1/operations/{id}; the node carries on, and the operation
// tells how far it got (pending, sent, mined with k of N confirmations, then done or failed
// with the answer the request would have had). GET /v1/operations/{id}/events streams it.
// Operations live in memory: after a restart a client re-sends its request under the same
// Idempotency-Key, which resumes the stored transaction rather than sending another.

// OpState is how far an operation got.
type OpState string

// Operation states, in order; done and failed are final.
const (
	OpPending OpState = "pending" // accepted: being checked and prepared
	OpSent    OpState = "sent"    // the transaction is with the chain
	OpMined   OpState = "mined"   // in a block; confirmations and the index are awaited
	OpDone    OpState = "done"    // answered: Status is 2xx and Result the answer
	OpFailed  OpState = "failed"  // refused or failed: Result is the problem
)

// Operation is GET /v1/operations/{id}: a write the node carries on after 202 Accepted.
type Operation struct {
	ID    string  `json:"id"`
	Route string  `json:"route"`
	State OpState `json:"state"`
	// TxHash and Block are the transaction the write sent, once sent and mined.
	TxHash string `json:"txHash,omitempty"`
	Block  uint64 `json:"block,omitempty"`
	// Confirmations is how many blocks followed Block, of the Want the node's indexes wait
	// for (while mined, on a node that waits for some).
	Confirmations *OpConfirmations `json:"confirmations,omitempty"`
	// Status and Result are the answer the request would have had: its HTTP status and body
	// (the route's JSON, or its problem), once done or failed.
	Status  int             `json:"status,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Created time.Time       `json:"created"`
	Updated time.Time       `json:"updated"`
}

// OpConfirmations counts the blocks after an operation's transaction.
type OpConfirmations struct {
	Have uint64 `json:"have"`
	Want uint64 `json:"want"`
}

// Final says the operation has its answer.
func (o *Operation) Final() bool { return o.State == OpDone || o.State == OpFailed }

// ErrUnknownOperation reports an operation id the node does not have (never issued, or
// forgotten: operations are kept for a while after they end, and not across restarts).
var ErrUnknownOperation = errors.New("api: no such operation")

// opEntry is an operation and a channel closed at its next change.
type opEntry struct {
	op      Operation
	changed chan struct{}
}

// opStore holds the node's operations and owns the goroutines that carry them on.
type opStore struct {
	mu    sync.Mutex
	ops   map[string]*opEntry
	order []string // ids, oldest first
	tasks sync.WaitGroup
}

func newOpStore() *opStore { return &opStore{ops: map[string]*opEntry{}} }

// add registers a new pending operation; false when the store is full of unfinished ones
// (the request is then answered synchronously).
func (st *opStore) add(route string) (string, bool) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	now := time.Now().UTC()
	st.mu.Lock()
	defer st.mu.Unlock()
	st.evict(now)
	if len(st.ops) >= maxOperations {
		return "", false
	}
	st.ops[id] = &opEntry{op: Operation{ID: id, Route: route, State: OpPending, Created: now, Updated: now}, changed: make(chan struct{})}
	st.order = append(st.order, id)
	return id, true
}

// evict forgets finished operations older than operationKeep, and, when full, the oldest
// finished ones.
func (st *opStore) evict(now time.Time) {
	kept := st.order[:0]
	for _, id := range st.order {
		e := st.ops[id]
		if e.op.Final() && (now.Sub(e.op.Updated) > operationKeep || len(st.ops) >= maxOperations) {
			delete(st.ops, id)
			continue
		}
		kept = append(kept, id)
	}
	st.order = kept
}

// update changes an operation and wakes whoever follows it.
func (st *opStore) update(id string, f func(*Operation)) {
	st.mu.Lock()
	defer st.mu.Unlock()
	e, ok := st.ops[id]
	if !ok || e.op.Final() {
		return
	}
	f(&e.op)
	e.op.Updated = time.Now().UTC()
	close(e.changed)
	e.changed = make(chan struct{})
}

// get returns an operation and a channel closed at its next change.
func (st *opStore) get(id string) (Operation, <-chan struct{}, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	e, ok := st.ops[id]
	if !ok {
		return Operation{}, nil, false
	}
	return e.op, e.changed, true
}

// preference is what a request's Prefer header asks (RFC 7240).
type preference struct {
	async bool
	wait  time.Duration
}

func parsePrefer(h []string) preference {
	var p preference
	for _, v := range h {
		for _, part := range strings.Split(v, ",") {
			part = strings.ToLower(strings.TrimSpace(part))
			switch {
			case part == "respond-async":
				p.async = true
			case strings.HasPrefix(part, "wait="):
				if n, err := strconv.Atoi(strings.TrimPrefix(part, "wait=")); err == nil && n >= 0 {
					p.wait = time.Duration(n) * time.Second
				}
			}
		}
	}
	return p
}

// recorder is the response of a request the node carries on as an operation.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

// code is the answer's status: 200 when the handler wrote a body without setting one.
func (r *recorder) code() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}

// async runs a write as an operation when the client prefers it (Prefer: respond-async):
// the answer if it comes within the client's wait, else 202 with the operation.
func (s *Server) async(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		pref := parsePrefer(c.Request().Header.Values("Prefer"))
		if !pref.async {
			return next(c)
		}
		body, err := readBody(c)
		if err != nil {
			return err
		}
		route := c.Request().Method + " " + c.Request().URL.Path
		id, ok := s.ops.add(route)
		if !ok { // full: answer as if nobody had asked
			c.Request().Body = io.NopCloser(bytes.NewReader(body))
			return next(c)
		}
		// The operation outlives the request (not the server): its own context, bounded.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request().Context()), operationTimeout)
		stopOnClose := context.AfterFunc(s.closing, cancel)
		ctx = txn.WithProgress(ctx, func(p txn.Progress) {
			s.ops.update(id, func(o *Operation) {
				switch p.Stage {
				case txn.StageSent:
					o.State, o.TxHash = OpSent, p.Tx.Hex()
				case txn.StageMined:
					o.State, o.TxHash, o.Block = OpMined, p.Tx.Hex(), p.Block
				}
			})
		})
		req := c.Request().Clone(ctx)
		req.Body = io.NopCloser(bytes.NewReader(body))
		rec := &recorder{header: http.Header{}}
		c2 := s.echo.NewContext(req, rec)
		c2.SetPath(c.Path())
		// Copies: echo reuses c (and its parameter slices) for another request once this
		// one is answered, while the operation goes on.
		c2.SetParamNames(append([]string(nil), c.ParamNames()...)...)
		c2.SetParamValues(append([]string(nil), c.ParamValues()...)...)
		done := make(chan struct{})
		s.ops.tasks.Add(1)
		go func() {
			defer s.ops.tasks.Done()
			defer close(done)
			defer cancel()
			defer stopOnClose()
			if err := s.runOperation(next, c2); err != nil {
				s.echo.HTTPErrorHandler(err, c2)
			}
			status := rec.code()
			s.ops.update(id, func(o *Operation) {
				o.Status, o.Result = status, json.RawMessage(bytes.TrimSpace(rec.body.Bytes()))
				o.State = OpDone
				if status >= 300 {
					o.State = OpFailed
				}
			})
		}()
		wait := min(pref.wait, s.cfg.RequestTimeout)
		select {
		case <-done:
			for k, v := range rec.header {
				c.Response().Header()[k] = v
			}
			return c.Blob(rec.code(), rec.header.Get(echo.HeaderContentType), rec.body.Bytes())
		case <-time.After(wait):
		case <-c.Request().Context().Done():
		}
		op, _, _ := s.ops.get(id)
		c.Response().Header().Set(echo.HeaderLocation, "/v1/operations/"+id)
		c.Response().Header().Set("Preference-Applied", "respond-async")
		return c.JSON(http.StatusAccepted, op)
	}
}

// runOperation runs a handler off the request's goroutine, where the server's own panic
// recovery does not reach: a panic becomes an error (and a 500 answer), not a dead node.
func (s *Server) runOperation(next echo.HandlerFunc, c echo.Context) (err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("operation panicked", "path", c.Path(), "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("api: operation panicked: %v", r)
		}
	}()
	return next(c)
}

// withConfirmations fills in how many blocks followed a mined operation's transaction.
func (s *Server) withConfirmations(ctx context.Context, op Operation) Operation {
	want := s.cfg.Chain.Confirmations
	if op.State != OpMined || op.Block == 0 || want == 0 {
		return op
	}
	head, err := s.cfg.Blocks.BlockNumber(ctx)
	if err != nil {
		return op
	}
	have := uint64(0)
	if head > op.Block {
		have = min(head-op.Block, want)
	}
	op.Confirmations = &OpConfirmations{Have: have, Want: want}
	return op
}

// getOperation answers GET /v1/operations/{id}.
func (s *Server) getOperation(c echo.Context) error {
	op, _, ok := s.ops.get(c.Param("id"))
	if !ok {
		return withDetail(ErrUnknownOperation, "operation %s is unknown here (operations are kept %s after they end, and not across restarts)", clip(c.Param("id"), 64), operationKeep)
	}
	return c.JSON(http.StatusOK, s.withConfirmations(c.Request().Context(), op))
}

// operationEvents streams an operation as server-sent events: its state now and at each
// change (and each new block while it waits for confirmations), until it ends.
func (s *Server) operationEvents(c echo.Context) error {
	op, changed, ok := s.ops.get(c.Param("id"))
	if !ok {
		return withDetail(ErrUnknownOperation, "operation %s is unknown here", clip(c.Param("id"), 64))
	}
	ctx := c.Request().Context()
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	var last []byte
	tick := time.NewTicker(operationPoll)
	defer tick.Stop()
	for {
		b, _ := json.Marshal(s.withConfirmations(ctx, op))
		if !bytes.Equal(b, last) {
			if _, err := fmt.Fprintf(w, "event: operation\ndata: %s\n\n", b); err != nil {
				return nil
			}
			w.Flush()
			last = b
		}
		if op.Final() {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-tick.C: // a new block may add a confirmation
		}
		op, changed, _ = s.ops.get(op.ID)
	}
}
