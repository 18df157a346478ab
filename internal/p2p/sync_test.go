package p2p

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/surety-ioa/surety/internal/testutil"
)

// memSet is a Set in memory; items starting with "bad" fail their checks.
type memSet struct {
	mu    sync.Mutex
	items map[ID][]byte
}

func newMemSet(items ...string) *memSet {
	m := &memSet{items: map[ID][]byte{}}
	for _, it := range items {
		m.items[sha256.Sum256([]byte(it))] = []byte(it)
	}
	return m
}

func (m *memSet) IDs(context.Context) ([]ID, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ids []ID
	for id := range m.items {
		ids = append(ids, id)
	}
	return ids, nil
}

func (m *memSet) Get(_ context.Context, ids []ID) ([][]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out [][]byte
	for _, id := range ids {
		if it, ok := m.items[id]; ok {
			out = append(out, it)
		}
	}
	return out, nil
}

func (m *memSet) Put(_ context.Context, _ peer.ID, item []byte) error {
	if bytes.HasPrefix(item, []byte("bad")) {
		return fmt.Errorf("%w: %q", ErrBadItem, item)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.items[sha256.Sum256(item)] = item
	return nil
}

func (m *memSet) sorted() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, it := range m.items {
		out = append(out, string(it))
	}
	slices.Sort(out)
	return out
}

func items(prefix string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s-%d", prefix, i))
	}
	return out
}

func syncPair(t *testing.T, a, b *memSet) (*Node, *Node, *Syncer, *Syncer) {
	t.Helper()
	na := startNode(t)
	nb := startNode(t, na.Info())
	testutil.Eventually(t, "B connected to A", 5*time.Second, func() bool { return len(na.Host.Network().Peers()) > 0 })
	sa, sb := NewSyncer(na, SyncConfig{}), NewSyncer(nb, SyncConfig{})
	sa.AddSet("things", a)
	sb.AddSet("things", b)
	return na, nb, sa, sb
}

// TestSyncPullsWhatIsMissing: two nodes that each hold items the other lacks (more than one
// batch of them) end with the union after one round each, and a round with nothing missing
// fetches nothing.
func TestSyncPullsWhatIsMissing(t *testing.T) {
	shared := items("shared", 50)
	a := newMemSet(append(slices.Clone(shared), items("a", 300)...)...)
	b := newMemSet(append(slices.Clone(shared), items("b", 7)...)...)
	_, _, sa, sb := syncPair(t, a, b)
	ctx := context.Background()
	st := sa.Round(ctx)
	if st.Peers != 1 || st.Fetched["things"] != 7 {
		t.Fatalf("A's round: %+v, want 1 peer and 7 items", st)
	}
	if st := sb.Round(ctx); st.Fetched["things"] != 300 {
		t.Fatalf("B's round: %+v, want 300 items", st)
	}
	if !slices.Equal(a.sorted(), b.sorted()) || len(a.sorted()) != 357 {
		t.Fatalf("sets differ after sync: %d and %d items", len(a.sorted()), len(b.sorted()))
	}
	if st := sa.Round(ctx); st.Fetched["things"] != 0 {
		t.Fatalf("a round with nothing missing fetched %+v", st)
	}
	select {
	case <-sa.Synced():
	default:
		t.Fatal("Synced not closed after a round")
	}
}

// TestSyncPenalizesALyingPeer: a peer that offers an item failing its checks is penalized
// down to gossipsub's graylist, and the next round does not ask it again.
func TestSyncPenalizesALyingPeer(t *testing.T) {
	a := newMemSet("x")
	b := newMemSet("x", "bad-forged", "bad-other")
	na, nb, sa, _ := syncPair(t, a, b)
	ctx := context.Background()
	st := sa.Round(ctx)
	if st.Bad != 1 {
		t.Fatalf("round: %+v, want one bad item", st)
	}
	if slices.ContainsFunc(a.sorted(), func(s string) bool { return s != "x" }) {
		t.Fatalf("A stored what the liar sent: %v", a.sorted())
	}
	if got := na.Penalty(nb.Host.ID()); got < BadItemPenalty*0.99 {
		t.Fatalf("penalty %v, want about %v", got, BadItemPenalty)
	}
	sa.Round(ctx)
	if got := na.Penalty(nb.Host.ID()); got < graylist {
		t.Fatalf("penalty after two rounds %v, want at least %v", got, graylist)
	}
	if st := sa.Round(ctx); st.Peers != 0 || st.Bad != 0 {
		t.Fatalf("a graylisted peer was asked again: %+v", st)
	}
}

// TestSyncRefusesBadRequests: a request kind nobody handles, a get of more than a batch and
// a request over the size bound get errors, not answers.
func TestSyncRefusesBadRequests(t *testing.T) {
	_, nb, sa, _ := syncPair(t, newMemSet(), newMemSet("x"))
	ask := Asker{s: sa, peer: nb.Host.ID()}
	ctx := context.Background()
	var out json.RawMessage
	if err := ask.Ask(ctx, "nothing.digests", nil, &out); err == nil {
		t.Error("an unknown set was answered")
	}
	if err := ask.Ask(ctx, "things.get", getRequest{IDs: make([]ID, MaxSyncBatch+1)}, &out); err == nil {
		t.Error("a get of more than a batch was answered")
	}
	big := idsRequest{Buckets: make([]int, maxSyncRequest/2)}
	if err := ask.Ask(ctx, "things.ids", big, &out); err == nil {
		t.Error("a request over the bound was sent")
	}
}

// TestSyncHandlers: a Handler answers its kind with the asker's peer id.
func TestSyncHandlers(t *testing.T) {
	na, nb, sa, sb := syncPair(t, newMemSet(), newMemSet())
	sb.Handle("echo", func(_ context.Context, from peer.ID, body json.RawMessage) (any, error) {
		return map[string]string{"from": from.String(), "body": string(body)}, nil
	})
	var got map[string]string
	if err := (Asker{s: sa, peer: nb.Host.ID()}).Ask(context.Background(), "echo", 42, &got); err != nil {
		t.Fatal(err)
	}
	if got["from"] != na.Host.ID().String() || got["body"] != "42" {
		t.Fatalf("answer %v", got)
	}
}

func FuzzSyncRequest(f *testing.F) {
	f.Add([]byte(`{"kind":"things.get","body":{"ids":["` + fmt.Sprintf("%x", sha256.Sum256([]byte("x"))) + `"]}}`))
	f.Add([]byte(`{"kind":"things.ids","body":{"buckets":[0,255,-1,300]}}`))
	f.Add([]byte(`{"kind":"things.digests"}`))
	f.Add([]byte(`{"kind":"things.get","body":{"ids":["zz"]}}`))
	s := &Syncer{handlers: map[string]Handler{}, sets: []namedSet{{"things", newMemSet("x", "y")}}}
	f.Fuzz(func(t *testing.T, b []byte) {
		var req syncRequest
		if err := readMessage(bytes.NewReader(b), maxSyncRequest, &req); err != nil {
			return
		}
		_, _ = s.answer(context.Background(), "", req)
	})
}

// TestSyncSurvivesStalledStreams: peers that open more streams than a node serves at once
// and send nothing on them hold no serving slot; another peer's round is answered.
func TestSyncSurvivesStalledStreams(t *testing.T) {
	a := newMemSet("x", "y")
	na, _, _, sb := syncPair(t, a, newMemSet())
	ctx := context.Background()
	for range maxServing + 1 {
		stalled := startNode(t, na.Info())
		for range 3 {
			st, err := stalled.Host.NewStream(ctx, na.Host.ID(), SyncProtocol)
			if err != nil {
				break // refused: as good
			}
			defer st.Reset()
			_, _ = st.Write([]byte("{")) // a request that never ends
		}
	}
	st := RoundStats{Fetched: map[string]int{}}
	if reached, err := sb.withPeer(ctx, na.Host.ID(), &st); err != nil || !reached || st.Fetched["things"] != 2 {
		t.Fatalf("B's sync with A while peers stall A's streams: %+v, %v", st, err)
	}
}

// TestSyncedWaitsForAPeer: with WaitForPeer, rounds that reach nobody (a restart whose peers
// are not connected yet) do not make the node synced until that many have passed, and the
// first round a peer answers does.
func TestSyncedWaitsForAPeer(t *testing.T) {
	synced := func(s *Syncer) bool {
		select {
		case <-s.Synced():
			return true
		default:
			return false
		}
	}
	ctx := context.Background()
	alone := NewSyncer(startNode(t), SyncConfig{WaitForPeer: 3})
	for i := 1; i <= 3; i++ {
		if st := alone.Round(ctx); st.Peers != 0 {
			t.Fatalf("a node with no peer synced with %d", st.Peers)
		}
		if got := synced(alone); got != (i == 3) {
			t.Fatalf("after %d rounds with nobody: synced %v", i, got)
		}
	}
	na := startNode(t)
	nb := startNode(t, na.Info())
	testutil.Eventually(t, "B connected to A", 5*time.Second, func() bool { return len(nb.Host.Network().Peers()) > 0 })
	sa, sb := NewSyncer(na, SyncConfig{}), NewSyncer(nb, SyncConfig{WaitForPeer: 3})
	sa.AddSet("things", newMemSet("x"))
	sb.AddSet("things", newMemSet("y"))
	if st := sb.Round(ctx); st.Peers != 1 || !synced(sb) {
		t.Fatalf("a round a peer answered: %+v, synced %v", st, synced(sb))
	}
}
