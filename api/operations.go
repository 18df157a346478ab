package api

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/txn"
)

// A write on a slow chain (12 s blocks, a few confirmations) takes longer than a client
// wants to hold a request open. A client that says so (RFC 7240: Prefer: respond-async, and
// optionally wait=N seconds) gets the answer if it is ready within N seconds, and otherwise
// 202 Accepted with Location: /v1/operations/{id}; the node carries on, and the operation
// tells how far it got (pending, sent, mined with k of N confirmations, then done or failed
// with the answer the request would have had). GET /v1/operations/{id}/events streams it.
// Operations are kept in the node's database (when it has one, Config.Operations): after a
// restart the node carries on each unfinished one whose request had an Idempotency-Key (the
// key makes it resume the stored transaction, never send a second), within limits (resume),
// and fails the others as interrupted, naming the transaction they may have sent.

// ErrUnknownOperation reports an operation id the node does not have (never issued, or
// forgotten: operations are kept for a while after they end).
var ErrUnknownOperation = errors.New("api: no such operation")

// ErrInterrupted ends an operation the node cannot carry on after a restart: its request
// had no Idempotency-Key, so running it again might act twice.
var ErrInterrupted = errors.New("api: the node restarted before the write ended")

// opEntry is an operation, a channel closed at its next change, and, until it ends, the
// request to run again if the node restarts first.
type opEntry struct {
	op       Operation
	changed  chan struct{}
	request  *opRequest
	attempts int // runs begun after restarts
}

// opRequest is what it takes to run a write again after a restart.
type opRequest struct {
	Method string      `json:"method"`
	URI    string      `json:"uri"`
	Header http.Header `json:"header"` // the headers handlers read: Content-Type, Idempotency-Key
	Body   []byte      `json:"body"`
}

// opStoreMigrations are the table operations are kept in, under the chain they act on.
var opStoreMigrations = []sqlite.Migration{{Version: 1, SQL: `
CREATE TABLE IF NOT EXISTS api_operations (
	chain   INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	id      TEXT    NOT NULL,
	op      TEXT    NOT NULL,            -- the Operation, as GET /v1/operations/{id} shows it
	request TEXT    NOT NULL DEFAULT '', -- the opRequest to run again; '' once it ended
	final    INTEGER NOT NULL DEFAULT 0,
	attempts INTEGER NOT NULL DEFAULT 0, -- runs begun after restarts
	updated  INTEGER NOT NULL,
	PRIMARY KEY (chain, id)
) STRICT;
`}}

// opStore holds the node's operations and owns the goroutines that carry them on. With a
// database it keeps each operation there too, at each change, so a restart loses none.
type opStore struct {
	mu    sync.Mutex
	ops   map[string]*opEntry
	order []string // ids, oldest first
	tasks sync.WaitGroup

	db    *sql.DB // nil: memory only
	chain int64
	log   *slog.Logger
}

// newOpStore makes the store, and with a database loads the operations a previous run kept:
// finished ones still readable, and unfinished ones to carry on (resume).
func newOpStore(ctx context.Context, db *sql.DB, chain int64, log *slog.Logger) (*opStore, error) {
	st := &opStore{ops: map[string]*opEntry{}, db: db, chain: chain, log: log}
	if db == nil {
		return st, nil
	}
	if err := sqlite.Migrate(ctx, db, "api", opStoreMigrations); err != nil {
		return nil, err
	}
	if _, err := db.ExecContext(ctx, `DELETE FROM api_operations WHERE chain = ? AND final = 1 AND updated < ?`,
		chain, time.Now().Add(-operationKeep).Unix()); err != nil {
		return nil, fmt.Errorf("api: operations: %w", err)
	}
	rows, err := db.QueryContext(ctx, `SELECT op, request, attempts FROM api_operations WHERE chain = ? ORDER BY rowid`, chain)
	if err != nil {
		return nil, fmt.Errorf("api: operations: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var opJSON, reqJSON string
		e := &opEntry{changed: make(chan struct{})}
		if err := rows.Scan(&opJSON, &reqJSON, &e.attempts); err != nil {
			return nil, fmt.Errorf("api: operations: %w", err)
		}
		if err := json.Unmarshal([]byte(opJSON), &e.op); err != nil {
			return nil, fmt.Errorf("api: operations: a stored operation: %w", err)
		}
		if !e.op.Final() && reqJSON != "" {
			e.request = new(opRequest)
			if err := json.Unmarshal([]byte(reqJSON), e.request); err != nil {
				return nil, fmt.Errorf("api: operations: the request of %s: %w", e.op.ID, err)
			}
		}
		st.ops[e.op.ID] = e
		st.order = append(st.order, e.op.ID)
	}
	return st, rows.Err()
}

// add registers a new pending operation for req; false when the store is full of
// unfinished ones, or cannot keep it (the request is then answered synchronously).
func (st *opStore) add(route string, req *opRequest) (string, bool) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	now := time.Now().UTC()
	e := &opEntry{op: Operation{ID: id, Route: route, State: OpPending, Created: now, Updated: now}, changed: make(chan struct{}), request: req}
	st.mu.Lock()
	gone := st.evict(now)
	full := len(st.ops) >= maxOperations
	if !full {
		st.ops[id] = e
		st.order = append(st.order, id)
	}
	st.mu.Unlock()
	st.forget(gone)
	if full {
		return "", false
	}
	if err := st.save(e.op, req); err != nil {
		st.log.Error("keeping an operation failed; answering the request as it comes", "err", err)
		st.mu.Lock()
		delete(st.ops, id)
		st.mu.Unlock()
		return "", false
	}
	return id, true
}

// evict forgets finished operations older than operationKeep, and, when full, the oldest
// finished ones; it returns their ids, to forget in the database too.
func (st *opStore) evict(now time.Time) []string {
	var gone []string
	kept := st.order[:0]
	for _, id := range st.order {
		e, ok := st.ops[id]
		if !ok {
			continue
		}
		if e.op.Final() && (now.Sub(e.op.Updated) > operationKeep || len(st.ops) >= maxOperations) {
			delete(st.ops, id)
			gone = append(gone, id)
			continue
		}
		kept = append(kept, id)
	}
	st.order = kept
	return gone
}

// forget deletes operations from the database.
func (st *opStore) forget(ids []string) {
	if st.db == nil {
		return
	}
	for _, id := range ids {
		if _, err := st.db.Exec(`DELETE FROM api_operations WHERE chain = ? AND id = ?`, st.chain, id); err != nil {
			st.log.Warn("forgetting an operation failed", "id", id, "err", err)
		}
	}
}

// save writes op (and, while it is unfinished, the request to run again) to the database.
func (st *opStore) save(op Operation, req *opRequest) error {
	if st.db == nil {
		return nil
	}
	opJSON, err := json.Marshal(op)
	if err != nil {
		return err
	}
	reqJSON := []byte{}
	if req != nil && !op.Final() {
		if reqJSON, err = json.Marshal(req); err != nil {
			return err
		}
	}
	final := 0
	if op.Final() {
		final = 1
	}
	_, err = st.db.Exec(`INSERT INTO api_operations (chain, id, op, request, final, updated) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (chain, id) DO UPDATE SET op = excluded.op, request = excluded.request, final = excluded.final, updated = excluded.updated`,
		st.chain, op.ID, string(opJSON), string(reqJSON), final, op.Updated.Unix())
	if err != nil {
		return fmt.Errorf("api: keep operation %s: %w", op.ID, err)
	}
	return nil
}

// update changes an operation, keeps it, and wakes whoever follows it. Each operation's
// changes come from the one goroutine carrying it on, so they reach the database in order.
func (st *opStore) update(id string, f func(*Operation)) {
	st.mu.Lock()
	e, ok := st.ops[id]
	if !ok || e.op.Final() {
		st.mu.Unlock()
		return
	}
	f(&e.op)
	e.op.Updated = time.Now().UTC()
	close(e.changed)
	e.changed = make(chan struct{})
	op, req := e.op, e.request
	if op.Final() {
		e.request = nil
	}
	st.mu.Unlock()
	if err := st.save(op, req); err != nil {
		// What followers read is right; a restart would find the operation a step behind.
		st.log.Warn("keeping an operation's progress failed", "id", id, "err", err)
	}
}

// leftOver is an operation a previous run left unfinished.
type leftOver struct {
	op       Operation
	request  *opRequest // nil when it cannot run again
	attempts int
}

// unfinished returns the operations a previous run left unfinished.
func (st *opStore) unfinished() []leftOver {
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []leftOver
	for _, id := range st.order {
		if e := st.ops[id]; e != nil && !e.op.Final() {
			out = append(out, leftOver{op: e.op, request: e.request, attempts: e.attempts})
		}
	}
	return out
}

// begin counts a run of an operation begun after a restart, in the database first: a run
// that takes the node down with it still counts.
func (st *opStore) begin(id string) error {
	if st.db != nil {
		if _, err := st.db.Exec(`UPDATE api_operations SET attempts = attempts + 1 WHERE chain = ? AND id = ?`, st.chain, id); err != nil {
			return fmt.Errorf("api: count a run of operation %s: %w", id, err)
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if e := st.ops[id]; e != nil {
		e.attempts++
	}
	return nil
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
// the answer if it comes within the client's wait, else 202 with the operation. The
// operation counts against its client address's writes in flight until it ends: it outlives
// the request, so nothing else bounds how many one client leaves to the node.
func (s *Server) async(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		pref := parsePrefer(c.Request().Header.Values("Prefer"))
		if !pref.async {
			return next(c)
		}
		leave, err := s.enterAddress(c)
		if err != nil {
			return err
		}
		handedOver := false // to the operation, which leaves when it ends
		defer func() {
			if !handedOver {
				leave()
			}
		}()
		body, err := readBody(c)
		if err != nil {
			return err
		}
		r := c.Request()
		// Kept to run again after a restart: only a request with an Idempotency-Key can be
		// (the key makes a second run wait for the first's transaction), and only a small one
		// is kept (writes are envelopes of a few KiB; the table is not a store for bodies).
		var saved *opRequest
		if r.Header.Get("Idempotency-Key") != "" && len(body) <= maxKeptRequest {
			saved = &opRequest{Method: r.Method, URI: r.URL.RequestURI(), Header: http.Header{}, Body: body}
			for _, h := range []string{echo.HeaderContentType, "Idempotency-Key"} {
				if v := r.Header.Values(h); len(v) > 0 {
					saved.Header[h] = v
				}
			}
		}
		id, ok := s.ops.add(r.Method+" "+r.URL.Path, saved)
		if !ok { // full: answer as if nobody had asked
			r.Body = io.NopCloser(bytes.NewReader(body))
			return next(c)
		}
		req := r.Clone(context.WithoutCancel(r.Context())) // the operation outlives the request
		req.Body = io.NopCloser(bytes.NewReader(body))
		rec, done := s.carryOn(id, req, c.Path(), c.ParamNames(), c.ParamValues(), next, leave)
		handedOver = true
		wait := min(pref.wait, s.cfg.RequestTimeout)
		select {
		case <-done:
			if op, _, _ := s.ops.get(id); op.Final() { // else the shutdown cut it short: 202
				for k, v := range rec.header {
					c.Response().Header()[k] = v
				}
				return c.Blob(rec.code(), rec.header.Get(echo.HeaderContentType), rec.body.Bytes())
			}
		case <-time.After(wait):
		case <-r.Context().Done():
		}
		op, _, _ := s.ops.get(id)
		c.Response().Header().Set(echo.HeaderLocation, "/v1/operations/"+id)
		c.Response().Header().Set("Preference-Applied", "respond-async")
		return c.JSON(http.StatusAccepted, op)
	}
}

// carryOn runs the write req as operation id on a goroutine the store owns, bounded by
// operationTimeout and the server's shutdown, recording its progress and its answer, and
// calls leave (when set) as it ends. done is closed when rec holds the answer.
func (s *Server) carryOn(id string, req *http.Request, path string, names, values []string, next echo.HandlerFunc, leave func()) (rec *recorder, done <-chan struct{}) {
	ctx, cancel := context.WithTimeout(req.Context(), operationTimeout)
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
	rec = &recorder{header: http.Header{}}
	c := s.echo.NewContext(req.WithContext(ctx), rec)
	c.SetPath(path)
	// Copies: echo reuses a request's context (and its parameter slices) for another
	// request once it is answered, while the operation goes on.
	c.SetParamNames(append([]string(nil), names...)...)
	c.SetParamValues(append([]string(nil), values...)...)
	finished := make(chan struct{})
	s.ops.tasks.Add(1)
	go func() {
		defer s.ops.tasks.Done()
		defer close(finished)
		if leave != nil {
			defer leave() // before the answer is out: a client's next write finds room
		}
		defer cancel()
		defer stopOnClose()
		err := s.runOperation(next, c)
		if err != nil && ctx.Err() != nil && s.closing.Err() != nil {
			return // cut short by the node's shutdown: the next run carries it on
		}
		if err != nil {
			s.echo.HTTPErrorHandler(err, c)
		}
		s.finish(id, rec)
	}()
	return rec, finished
}

// finish records an operation's answer.
func (s *Server) finish(id string, rec *recorder) {
	status := rec.code()
	s.ops.update(id, func(o *Operation) {
		o.Status, o.Result = status, json.RawMessage(bytes.TrimSpace(rec.body.Bytes()))
		o.State = OpDone
		if status >= 300 {
			o.State = OpFailed
		}
	})
}

// resume carries on the operations a previous run left unfinished: a request with an
// Idempotency-Key runs again (the key makes it wait for the transaction it stored, never
// send another), at most maxResumes times and while younger than operationTimeout; the
// others fail as interrupted, naming the transaction they may have sent. It runs once.
func (s *Server) resume() {
	s.resumeOnce.Do(func() {
		for _, left := range s.ops.unfinished() {
			id := left.op.ID
			why := "the request had no Idempotency-Key, so the node does not run it again"
			switch {
			case left.request == nil:
			case time.Since(left.op.Created) > operationTimeout:
				why = fmt.Sprintf("it began more than %s ago", operationTimeout)
			case left.attempts >= maxResumes:
				why = fmt.Sprintf("the node restarted %d times while carrying it on", left.attempts)
			default:
				if s.rerun(id, left.request) {
					continue
				}
				why = "the node could not run it again"
			}
			rec := &recorder{header: http.Header{}}
			req, _ := http.NewRequest(http.MethodGet, "/v1/operations/"+id, nil) // a constant URL: no error
			if left.op.TxHash != "" {
				why += "; it sent transaction " + left.op.TxHash + ": look it up before sending the write again"
			}
			s.echo.HTTPErrorHandler(withDetail(ErrInterrupted, "%s", why), s.echo.NewContext(req, rec))
			s.finish(id, rec)
		}
	})
}

// rerun runs a kept request again as operation id, through the route it was sent to.
func (s *Server) rerun(id string, saved *opRequest) bool {
	req, err := http.NewRequestWithContext(context.Background(), saved.Method, saved.URI, bytes.NewReader(saved.Body))
	if err != nil {
		s.log.Error("a kept operation's request is unusable", "id", id, "err", err)
		return false
	}
	if err := s.ops.begin(id); err != nil {
		s.log.Error("could not count a run of an operation", "id", id, "err", err)
		return false
	}
	req.Header = saved.Header.Clone()
	c := s.echo.NewContext(req, nil)
	s.echo.Router().Find(req.Method, req.URL.Path, c)
	s.log.Info("carrying on an operation from before the restart", "id", id, "route", req.Method+" "+req.URL.Path)
	s.carryOn(id, req, c.Path(), c.ParamNames(), c.ParamValues(), c.Handler(), nil)
	return true
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
		return withDetail(ErrUnknownOperation, "operation %s is unknown here (operations are kept %s after they end)", clip(c.Param("id"), 64), operationKeep)
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
