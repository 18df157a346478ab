package p2p

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

// Anti-entropy. Gossip reaches the nodes that are up; a node that was down, or on the other
// side of a partition, misses what went by. So each node, every SyncConfig.Every, asks a few
// peers what they hold and pulls what it lacks: for each Set, 256 bucket digests (the
// SHA-256 of the sorted ids whose first byte is the bucket), then the ids of the buckets that
// differ, then the items it lacks, in batches. Whatever a peer sends is checked by the Set
// exactly as gossip would be; a peer that sends an item that fails the checks is penalized
// (Node.Penalize), which lowers its gossip score, and is left for the round. Every message
// is bounded in size, every exchange in time, and a round asks at most SyncConfig.Peers
// peers.

// SyncProtocol is the libp2p protocol of anti-entropy requests: one request and one answer
// per stream, each a JSON document that its sender ends by closing its side.
const SyncProtocol = "/surety/sync/1"

// ID is an item's id in a Set: a SHA-256 (of the item's bytes, or of what identifies it).
type ID [32]byte

// ErrBadItem marks an item a Set refused because it is forged or malformed: the peer that
// sent it is penalized. Other Put errors (a duplicate, a fact not yet indexed) are not held
// against it.
var ErrBadItem = errors.New("p2p: bad item")

// Set is one kind of item that nodes reconcile.
type Set interface {
	// IDs lists the ids of the items this node offers (a bounded window of them).
	IDs(ctx context.Context) ([]ID, error)
	// Get returns the items this node holds among ids, skipping those it does not.
	Get(ctx context.Context, ids []ID) ([][]byte, error)
	// Put checks an item a peer sent, as gossip would, and stores it. It wraps ErrBadItem
	// when the item is forged or malformed.
	Put(ctx context.Context, from peer.ID, item []byte) error
}

// Handler answers one request kind of SyncProtocol beyond set reconciliation (e.g. the audit
// log's heads and leaves): body is the request's, the answer is marshalled as JSON.
type Handler func(ctx context.Context, from peer.ID, body json.RawMessage) (any, error)

// SyncConfig tunes a Syncer.
type SyncConfig struct {
	// Every is the time between rounds (0: 10 s); the first round starts at once.
	Every time.Duration
	// Peers is how many peers a round asks (0: 3).
	Peers int
	// Timeout bounds one peer's part of a round (0: 20 s).
	Timeout time.Duration
	// WaitForPeer is how many rounds Synced waits for one in which a peer answered before it
	// closes anyway (0 or 1: it closes after the first round). A node that has peers to find
	// sets it, so that a restart that could not reach anyone at once does not count as synced.
	WaitForPeer int
	Logger      *slog.Logger
}

// Syncer runs anti-entropy over a node: it answers SyncProtocol and pulls from peers.
type Syncer struct {
	node    *Node
	cfg     SyncConfig
	serving chan struct{}

	mu       sync.Mutex
	sets     []namedSet
	handlers map[string]Handler
	rounds   []func(ctx context.Context, ask Asker) error
	busy     map[peer.ID]bool // peers with a request being served
	synced   chan struct{}    // closed after the first round a peer answered (see WaitForPeer)
	once     sync.Once
	rounds0  int // rounds so far, for WaitForPeer

	idsMu sync.Mutex // one listing at a time; peers asking meanwhile get the same one
	ids   map[string]listing
}

// listing is a set's ids (sorted) and their digests as listed at a time, for the peers that
// ask within idsFresh.
type listing struct {
	ids     []ID
	digests digests
	at      time.Time
}

// served is set's listing for answering peers: listed at most once per idsFresh. Callers
// must not change it.
func (s *Syncer) served(ctx context.Context, name string, set Set) (listing, error) {
	s.idsMu.Lock()
	defer s.idsMu.Unlock()
	if l, ok := s.ids[name]; ok && time.Since(l.at) < idsFresh {
		return l, nil
	}
	ids, err := set.IDs(ctx)
	if err != nil {
		return listing{}, err
	}
	if s.ids == nil {
		s.ids = map[string]listing{}
	}
	l := listing{ids: ids, digests: bucketDigests(ids), at: time.Now()}
	s.ids[name] = l
	return l, nil
}

type namedSet struct {
	name string
	set  Set
}

// NewSyncer registers the sync protocol on node; Run pulls from peers.
func NewSyncer(node *Node, cfg SyncConfig) *Syncer {
	if cfg.Every == 0 {
		cfg.Every = DefaultSyncEvery
	}
	if cfg.Peers == 0 {
		cfg.Peers = defaultSyncPeers
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = defaultSyncTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Syncer{node: node, cfg: cfg, serving: make(chan struct{}, maxServing), handlers: map[string]Handler{}, synced: make(chan struct{})}
	node.Host.SetStreamHandler(SyncProtocol, s.serve)
	return s
}

// AddSet reconciles set under name (which peers must use too), after the sets added before.
func (s *Syncer) AddSet(name string, set Set) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sets = append(s.sets, namedSet{name, set})
}

// Handle answers requests of kind name with h.
func (s *Syncer) Handle(name string, h Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers[name] = h
}

// OnRound runs f with each peer a round asks, after the sets are reconciled with it: for
// catch-ups that are not set reconciliation (the audit log's leaves).
func (s *Syncer) OnRound(f func(ctx context.Context, ask Asker) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rounds = append(s.rounds, f)
}

// Synced is closed once a round has ended in which a peer answered, or after
// SyncConfig.WaitForPeer rounds (at least one) whether or not one did.
func (s *Syncer) Synced() <-chan struct{} { return s.synced }

// Run runs a round at once and then every SyncConfig.Every until ctx ends; until Synced, a
// round that reached nobody is retried after unsyncedRetry.
func (s *Syncer) Run(ctx context.Context) {
	for {
		s.Round(ctx)
		wait := s.cfg.Every
		select {
		case <-s.synced:
		default:
			wait = min(wait, unsyncedRetry)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// RoundStats says what one round did.
type RoundStats struct {
	Peers   int            // peers every set and hook went through with
	Reached int            // peers that answered at least one set
	Fetched map[string]int // items stored, by set
	Bad     int            // items refused as forged or malformed
}

// Round reconciles every set with up to SyncConfig.Peers random connected peers.
func (s *Syncer) Round(ctx context.Context) RoundStats {
	st := RoundStats{Fetched: map[string]int{}}
	defer func() {
		s.mu.Lock()
		s.rounds0++
		done := st.Reached > 0 || s.rounds0 >= s.cfg.WaitForPeer
		s.mu.Unlock()
		if done {
			s.once.Do(func() { close(s.synced) })
		}
	}()
	peers := s.node.Host.Network().Peers()
	rand.Shuffle(len(peers), func(i, j int) { peers[i], peers[j] = peers[j], peers[i] })
	asked := 0
	for _, p := range peers {
		if asked >= s.cfg.Peers || ctx.Err() != nil {
			break
		}
		if s.node.Penalty(p) >= graylist {
			continue
		}
		asked++
		pctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
		reached, err := s.withPeer(pctx, p, &st)
		if reached {
			st.Reached++
		}
		cancel()
		if err != nil && ctx.Err() == nil {
			s.cfg.Logger.Debug("p2p: sync with peer", "peer", p, "err", err)
			continue
		}
		if err == nil {
			st.Peers++
		}
	}
	return st
}

// withPeer reconciles every set with p, then runs the round hooks. A set or hook that fails
// (the peer is busy, an index here is behind) does not keep the others from running; an item
// that fails its checks ends the peer's part of the round, and costs it.
func (s *Syncer) withPeer(ctx context.Context, p peer.ID, st *RoundStats) (reached bool, err error) {
	s.mu.Lock()
	sets, rounds := slices.Clone(s.sets), slices.Clone(s.rounds)
	s.mu.Unlock()
	ask := Asker{s: s, peer: p}
	var errs []error
	bad := func(err error) bool {
		if !errors.Is(err, ErrBadItem) {
			return false
		}
		st.Bad++
		s.node.Penalize(p, BadItemPenalty)
		return true
	}
	for _, ns := range sets {
		n, err := s.reconcile(ctx, ask, ns)
		st.Fetched[ns.name] += n
		reached = reached || err == nil
		if bad(err) {
			return reached, err
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("set %s: %w", ns.name, err))
		}
	}
	for _, f := range rounds {
		err := f(ctx, ask)
		if bad(err) {
			return reached, err
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return reached, errors.Join(errs...)
}

// digests are a set's bucket digests and counts.
type digests struct {
	Counts []int `json:"counts"`
	Sums   []ID  `json:"sums"`
}

// bucketDigests sorts ids in place and digests them.
func bucketDigests(ids []ID) digests {
	slices.SortFunc(ids, func(a, b ID) int { return bytes.Compare(a[:], b[:]) })
	d := digests{Counts: make([]int, syncBuckets), Sums: make([]ID, syncBuckets)}
	for b := range syncBuckets {
		lo, _ := slices.BinarySearchFunc(ids, byte(b), func(id ID, b byte) int { return int(id[0]) - int(b) })
		hi := lo
		for hi < len(ids) && int(ids[hi][0]) == b {
			hi++
		}
		if hi == lo {
			continue
		}
		h := sha256.New()
		for _, id := range ids[lo:hi] {
			h.Write(id[:])
		}
		d.Counts[b] = hi - lo
		copy(d.Sums[b][:], h.Sum(nil))
	}
	return d
}

type idsRequest struct {
	Buckets []int `json:"buckets"`
}

type getRequest struct {
	IDs []ID `json:"ids"`
}

// reconcile pulls from p the items of one set that this node lacks, and says how many it
// stored.
func (s *Syncer) reconcile(ctx context.Context, ask Asker, ns namedSet) (int, error) {
	var theirs digests
	if err := ask.Ask(ctx, ns.name+".digests", nil, &theirs); err != nil {
		return 0, err
	}
	if len(theirs.Counts) != syncBuckets || len(theirs.Sums) != syncBuckets {
		return 0, fmt.Errorf("%w: %d bucket digests, want %d", ErrBadItem, len(theirs.Sums), syncBuckets)
	}
	mine, err := ns.set.IDs(ctx)
	if err != nil {
		return 0, err
	}
	ours := bucketDigests(mine)
	var differ []int
	for b := range syncBuckets {
		if theirs.Counts[b] > 0 && ours.Sums[b] != theirs.Sums[b] {
			differ = append(differ, b)
		}
	}
	if len(differ) == 0 {
		return 0, nil
	}
	var list []ID
	if err := ask.Ask(ctx, ns.name+".ids", idsRequest{Buckets: differ}, &list); err != nil {
		return 0, err
	}
	have := make(map[ID]bool, len(mine))
	for _, id := range mine {
		have[id] = true
	}
	var want []ID
	if len(list) > MaxSyncIDs {
		list = list[:MaxSyncIDs]
	}
	for _, id := range list {
		if !have[id] && slices.Contains(differ, int(id[0])) {
			have[id] = true
			want = append(want, id)
		}
	}
	stored := 0
	for batch := range slices.Chunk(want, MaxSyncBatch) {
		var items [][]byte
		if err := ask.Ask(ctx, ns.name+".get", getRequest{IDs: batch}, &items); err != nil {
			return stored, err
		}
		if len(items) > len(batch) {
			return stored, fmt.Errorf("%w: %d items for %d ids", ErrBadItem, len(items), len(batch))
		}
		for _, it := range items {
			err := ns.set.Put(ctx, ask.peer, it)
			switch {
			case err == nil:
				stored++
			case errors.Is(err, ErrBadItem):
				return stored, err
			default:
				s.cfg.Logger.Debug("p2p: synced item not taken", "set", ns.name, "peer", ask.peer, "err", err)
			}
		}
	}
	return stored, nil
}

// Asker sends requests to one peer.
type Asker struct {
	s    *Syncer
	peer peer.ID
}

// Peer is the peer asked.
func (a Asker) Peer() peer.ID { return a.peer }

// Others are askers for up to n other connected peers that are not graylisted, at random: a
// round hook asks them to confirm what one peer said before acting on it.
func (a Asker) Others(n int) []Asker {
	peers := a.s.node.Host.Network().Peers()
	rand.Shuffle(len(peers), func(i, j int) { peers[i], peers[j] = peers[j], peers[i] })
	var out []Asker
	for _, p := range peers {
		if len(out) >= n {
			break
		}
		if p != a.peer && a.s.node.Penalty(p) < graylist {
			out = append(out, Asker{s: a.s, peer: p})
		}
	}
	return out
}

// syncRequest and syncAnswer are the messages of SyncProtocol.
type syncRequest struct {
	Kind string          `json:"kind"`
	Body json.RawMessage `json:"body,omitempty"`
}

type syncAnswer struct {
	Body  json.RawMessage `json:"body,omitempty"`
	Error string          `json:"error,omitempty"`
}

// Ask sends a request of kind with body and decodes the answer into out.
func (a Asker) Ask(ctx context.Context, kind string, body, out any) error {
	req := syncRequest{Kind: kind}
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		req.Body = b
	}
	line, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if len(line) >= maxSyncRequest {
		return fmt.Errorf("p2p: sync request %s is %d bytes, at most %d", kind, len(line), maxSyncRequest)
	}
	st, err := a.s.node.Host.NewStream(ctx, a.peer, SyncProtocol)
	if err != nil {
		return err
	}
	defer st.Close()
	if d, ok := ctx.Deadline(); ok {
		_ = st.SetDeadline(d)
	}
	if _, err := st.Write(append(line, '\n')); err != nil {
		st.Reset()
		return err
	}
	_ = st.CloseWrite()
	var ans syncAnswer
	if err := readMessage(st, maxSyncAnswer, &ans); err != nil {
		st.Reset()
		return fmt.Errorf("%s: %w", kind, err)
	}
	if ans.Error != "" {
		return fmt.Errorf("%s: the peer answered: %s", kind, truncate(ans.Error, 200))
	}
	if err := json.Unmarshal(ans.Body, out); err != nil {
		return fmt.Errorf("%w: %s answer: %v", ErrBadItem, kind, err)
	}
	return nil
}

// readMessage decodes the one JSON message of at most max bytes that r carries (the sender
// closes its side after it).
func readMessage(r io.Reader, max int, v any) error {
	b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return err
	}
	if len(b) > max {
		return fmt.Errorf("message larger than %d bytes", max)
	}
	return json.Unmarshal(b, v)
}

// serve answers one request on st: one at a time per peer, in one of maxServing slots,
// each answer written within syncWriteStall a chunk (a peer that stalls is penalized).
func (s *Syncer) serve(st network.Stream) {
	defer st.Close()
	from := st.Conn().RemotePeer()
	// One request at a time per peer, and none from a graylisted one.
	if !s.enter(from) {
		st.Reset()
		return
	}
	defer s.leave(from)
	// The request first, within requestWait, before a serving slot is taken: a peer that
	// opens streams and sends nothing holds nothing.
	_ = st.SetReadDeadline(time.Now().Add(requestWait))
	var req syncRequest
	if err := readMessage(st, maxSyncRequest, &req); err != nil {
		st.Reset()
		return
	}
	select {
	case s.serving <- struct{}{}:
		defer func() { <-s.serving }()
	default:
		st.Reset() // busy: the asker tries another peer or the next round
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Timeout)
	defer cancel()
	body, err := s.answer(ctx, from, req)
	ans := syncAnswer{}
	if err != nil {
		ans.Error = err.Error()
	} else if ans.Body, err = json.Marshal(body); err != nil {
		ans = syncAnswer{Error: err.Error()}
	}
	line, err := json.Marshal(ans)
	if err != nil || len(line) > maxSyncAnswer {
		line, _ = json.Marshal(syncAnswer{Error: "answer too large"})
	}
	if err := writeAnswer(st, append(line, '\n'), time.Now().Add(s.cfg.Timeout)); err != nil {
		st.Reset()
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			// It asked and does not read: it held a slot others needed.
			s.node.Penalize(from, StallPenalty)
			s.cfg.Logger.Debug("p2p: sync peer stalled reading its answer", "peer", from)
		}
	}
}

// writeAnswer writes b to st by chunks, each within syncWriteStall, all by deadline: a peer
// that stops reading frees its serving slot within syncWriteStall, not the whole timeout.
func writeAnswer(st network.Stream, b []byte, deadline time.Time) error {
	for len(b) > 0 {
		n := min(len(b), syncWriteChunk)
		d := time.Now().Add(syncWriteStall)
		if deadline.Before(d) {
			d = deadline
		}
		_ = st.SetWriteDeadline(d)
		if _, err := st.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// enter admits a request from peer p unless p already has one being served or is
// graylisted; leave ends it.
func (s *Syncer) enter(p peer.ID) bool {
	if s.node.Penalty(p) >= graylist {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy[p] {
		return false
	}
	if s.busy == nil {
		s.busy = map[peer.ID]bool{}
	}
	s.busy[p] = true
	return true
}

func (s *Syncer) leave(p peer.ID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.busy, p)
}

// answer is the body of the answer to req.
func (s *Syncer) answer(ctx context.Context, from peer.ID, req syncRequest) (any, error) {
	s.mu.Lock()
	h := s.handlers[req.Kind]
	var set Set
	var name, op string
	for _, ns := range s.sets {
		if rest, ok := strings.CutPrefix(req.Kind, ns.name+"."); ok {
			set, name, op = ns.set, ns.name, rest
		}
	}
	s.mu.Unlock()
	if h != nil {
		return h(ctx, from, req.Body)
	}
	if set == nil {
		return nil, fmt.Errorf("unknown request %q", truncate(req.Kind, 60))
	}
	switch op {
	case "digests":
		l, err := s.served(ctx, name, set)
		if err != nil {
			return nil, err
		}
		return l.digests, nil
	case "ids":
		var r idsRequest
		if err := json.Unmarshal(req.Body, &r); err != nil {
			return nil, fmt.Errorf("ids request: %v", err)
		}
		l, err := s.served(ctx, name, set)
		if err != nil {
			return nil, err
		}
		ids := l.ids
		want := map[byte]bool{}
		for _, b := range r.Buckets {
			if b >= 0 && b < syncBuckets {
				want[byte(b)] = true
			}
		}
		out := []ID{}
		for _, id := range ids {
			if want[id[0]] && len(out) < MaxSyncIDs {
				out = append(out, id)
			}
		}
		return out, nil
	case "get":
		var r getRequest
		if err := json.Unmarshal(req.Body, &r); err != nil {
			return nil, fmt.Errorf("get request: %v", err)
		}
		if len(r.IDs) > MaxSyncBatch {
			return nil, fmt.Errorf("%d ids; at most %d per request", len(r.IDs), MaxSyncBatch)
		}
		items, err := set.Get(ctx, r.IDs)
		if err != nil {
			return nil, err
		}
		// Keep the answer within its bound: the asker asks for the rest next round.
		total := 0
		for i, it := range items {
			if total += len(it) * 4 / 3; total > maxSyncAnswer/2 {
				return items[:i], nil
			}
		}
		return items, nil
	}
	return nil, fmt.Errorf("unknown request %q", truncate(req.Kind, 60))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// MarshalText writes an id in hex, so ids read well in JSON.
func (id ID) MarshalText() ([]byte, error) { return fmt.Appendf(nil, "%x", id[:]), nil }

// UnmarshalText reads an id written by MarshalText.
func (id *ID) UnmarshalText(b []byte) error {
	if len(b) != 64 {
		return fmt.Errorf("id: %d hex digits, want 64", len(b))
	}
	_, err := hex.Decode(id[:], b)
	return err
}
