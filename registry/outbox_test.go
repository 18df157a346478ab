package registry

import (
	"context"
	"fmt"
	"log/slog"
	"math/big"
	"testing"
	"time"

	"github.com/surety-ioa/surety/identity"
)

// TestOneDIDCannotFillTheOutbox (review 31, finding 8): a staked agent registering card after
// card while nothing is spread takes one place in the outbox, not all of them: only its
// newest card waits, and another agent's registration finds room and returns at once, where
// it used to wait for its request's context to end although its card was stored.
func TestOneDIDCannotFillTheOutbox(t *testing.T) {
	flood, _ := identity.GenerateKey(identity.Ed25519)
	other, _ := identity.GenerateKey(identity.Ed25519)
	r := newTestRegistry(t, stakeMap{flood.DID.String(): big.NewInt(1e18), other.DID.String(): big.NewInt(1e18)})
	// A network whose spread does not run: what is queued stays queued. Its capability was
	// provided a moment ago, so registering announces nothing.
	const room = 8
	n := &Network{r: r, out: newOutbox(room), spreadDone: make(chan struct{}), log: slog.New(slog.DiscardHandler),
		prov: providing{provided: map[string]time.Time{"audit": time.Now()}}}
	r.mu.Lock()
	r.net = n
	r.mu.Unlock()

	// Each registration gets the API's request timeout (30 s); none may last until it ends.
	const requestTimeout = 30 * time.Second
	register := func(k *identity.Key, seq uint64) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		if _, err := r.Register(ctx, signedCard(t, k, seq, fmt.Sprintf("Agent v%d", seq), "audit"), "test"); err != nil {
			t.Fatal(err)
		}
		if ctx.Err() != nil {
			t.Fatalf("registering %s's card %d waited until the request's context ended", k.DID, seq)
		}
	}
	const cards = 3 * room
	for seq := uint64(1); seq <= cards; seq++ {
		register(flood, seq)
	}
	start := time.Now()
	register(other, 1)
	if took := time.Since(start); took > requestTimeout/2 {
		t.Errorf("another agent's registration took %v behind a full outbox", took)
	}
	if got := n.out.line.Len(); got != 2 {
		t.Errorf("%d cards wait, want 2 (one per DID)", got)
	}
	if got := n.PendingPuts(); got != 2 {
		t.Errorf("PendingPuts %d, want the 2 staked cards waiting", got)
	}
	// Spread sends the flooding agent's newest card (it came first), then the other's.
	first, ok := n.out.take()
	if !ok || first.DID != flood.DID.String() || first.Seq != cards {
		t.Fatalf("first card spread: %+v, want %s's card %d", first, flood.DID, cards)
	}
	if second, ok := n.out.take(); !ok || second.DID != other.DID.String() {
		t.Fatalf("second card spread: %+v, want %s's", second, other.DID)
	}
	if _, ok := n.out.take(); ok {
		t.Error("a third card waited")
	}
}

// TestOutboxKeepsTheNewestCardPerDID: a newer card of a DID waiting takes its place in line,
// an older one is ignored; the counts of bytes and staked cards follow; an unstaked card that
// would weigh the outbox over maxUnstakedSpread takes its DID out of line; close forgets all
// and refuses what comes.
func TestOutboxKeepsTheNewestCardPerDID(t *testing.T) {
	card := func(did string, seq uint64, jws string, staked bool) *Agent {
		return &Agent{SignedCard: SignedCard{Card: Card{DID: did, Seq: seq}, JWS: jws}, Staked: staked}
	}
	ctx := context.Background()
	o := newOutbox(4)
	for _, c := range []struct {
		a    *Agent
		want int
	}{
		{card("a", 1, "a1", true), queued},
		{card("b", 1, "b1", false), queued},
		{card("a", 3, "a3--", true), queued},
		{card("a", 2, "a2", true), notNewer},
		{card("b", 2, "b2", true), queued},  // now staked
		{card("a", 4, "a4", false), queued}, // no longer staked
		{card("c", 1, "c1", true), queued},
	} {
		if got := o.put(ctx, c.a); got != c.want {
			t.Errorf("put %s's card %d: %d, want %d", c.a.DID, c.a.Seq, got, c.want)
		}
	}
	if o.line.Len() != 3 || o.bytes != 6 || o.staked != 2 || o.pending() != 2 {
		t.Errorf("%d waiting, %d bytes, %d staked, %d pending; want 3, 6, 2, 2", o.line.Len(), o.bytes, o.staked, o.pending())
	}
	for _, want := range []string{"a4", "b2", "c1"} {
		a, ok := o.take()
		if !ok || a.JWS != want {
			t.Fatalf("took %+v, want %s", a, want)
		}
	}
	if o.pending() != 2 { // b2 and c1's DHT puts, under way
		t.Errorf("pending %d with two puts under way", o.pending())
	}
	o.done()
	o.done()

	// An unstaked card over the weight bound: its DID leaves the line.
	o.put(ctx, card("d", 1, "d1", false))
	o.bytes = maxUnstakedSpread - 1 // as if others weighed the rest
	if got := o.put(ctx, card("d", 2, "d2-heavier", false)); got != left || o.line.Len() != 0 || o.bytes != maxUnstakedSpread-1-2 {
		t.Errorf("heavy unstaked card: %d, %d waiting, %d bytes", got, o.line.Len(), o.bytes)
	}
	o.bytes = 0

	o.put(ctx, card("e", 1, "e1", true))
	o.close()
	if o.line.Len() != 0 || o.bytes != 0 || o.pending() != 0 {
		t.Errorf("after close: %d waiting, %d bytes, %d pending", o.line.Len(), o.bytes, o.pending())
	}
	if got := o.put(ctx, card("f", 1, "f1", true)); got != stopped {
		t.Errorf("put after close: %d", got)
	}
}

// TestOutboxWarnsOnceInAWhile: staked cards left to anti-entropy are told in one line of log
// every spreadWarnEvery with their count, not one line each.
func TestOutboxWarnsOnceInAWhile(t *testing.T) {
	o := newOutbox(1)
	now := time.Now()
	if n, due := o.leftWarning(now); !due || n != 1 {
		t.Errorf("first card left: %d, %v; want a warning for 1", n, due)
	}
	for i := range 5 {
		if _, due := o.leftWarning(now.Add(time.Duration(i) * time.Second)); due {
			t.Errorf("warned again %d s after the last", i)
		}
	}
	if n, due := o.leftWarning(now.Add(spreadWarnEvery)); !due || n != 6 {
		t.Errorf("after %v: %d, %v; want a warning for the 6 cards since", spreadWarnEvery, n, due)
	}
}

// TestFreeCardsLeaveRoomForStakedOnes (review 41, finding 8): unstaked cards from this
// node's clients take at most half the outbox's places, so a staked card finds room at once
// however many free ones came first.
func TestFreeCardsLeaveRoomForStakedOnes(t *testing.T) {
	ctx := context.Background()
	o := newOutbox(8)
	queuedFree := 0
	for i := range 20 {
		did := fmt.Sprintf("did:key:free%d", i)
		if o.put(ctx, &Agent{SignedCard: SignedCard{Card: Card{DID: did, Seq: 1}, JWS: "x"}}) == queued {
			queuedFree++
		}
	}
	if queuedFree != 4 {
		t.Errorf("%d unstaked cards queued in an outbox of 8, want 4", queuedFree)
	}
	for i := range 4 {
		did := fmt.Sprintf("did:key:staked%d", i)
		if got := o.put(ctx, &Agent{SignedCard: SignedCard{Card: Card{DID: did, Seq: 1}, JWS: "x"}, Staked: true}); got != queued {
			t.Fatalf("staked card %d after the free ones: %d, want queued", i, got)
		}
	}
}
