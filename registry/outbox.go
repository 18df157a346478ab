package registry

import (
	"container/list"
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// outbox holds the cards accepted here that are still to be spread (gossiped, and put in the
// DHT when staked) by Network.spread: at most one card per DID, the newest (a newer card of a
// DID waiting takes its place in the line), the DIDs in the order their waiting card first
// came, and at most limit DIDs. No registration waits on it for long: an unstaked card is
// queued only while there is room, unstaked cards take at most half the places, and the
// waiting cards weigh under maxUnstakedSpread, a
// staked one waits at most spreadWait for room; a card not queued is stored all the same, and
// anti-entropy carries it.
type outbox struct {
	mu      sync.Mutex
	limit   int
	line    *list.List               // of *Agent, oldest first
	byDID   map[string]*list.Element // the DIDs waiting, in line
	bytes   int64                    // the JWS bytes of the cards waiting
	staked  int                      // staked cards waiting
	off     bool                     // closed: nothing more is queued
	roomFor chan struct{}            // closed when a card leaves a full line (nil: nobody waits)
	// ready holds a token when cards may be waiting (spread's wake-up).
	ready chan struct{}
	// putting counts the DHT puts taken from the line and not yet done.
	putting atomic.Int64
	// leftStaked counts the staked cards left to anti-entropy since warned, the last time
	// a warning said so (leftWarning).
	leftStaked int
	warned     time.Time
}

func newOutbox(limit int) *outbox {
	return &outbox{limit: limit, line: list.New(), byDID: map[string]*list.Element{}, ready: make(chan struct{}, 1)}
}

// What put did with a card.
const (
	queued   = iota // a waits, alone or in its DID's place in line
	notNewer        // an at least as new card of a's DID waits
	left            // not queued: anti-entropy carries it (no room, or too heavy)
	stopped         // not queued: the outbox is closed
)

// put queues a, or puts it in the place of the card of its DID waiting, and says which it
// did. An unstaked card never waits; a staked one waits for room at most spreadWait (or
// until ctx ends, or the outbox closes).
func (o *outbox) put(ctx context.Context, a *Agent) int {
	size := int64(len(a.JWS))
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		o.mu.Lock()
		if o.off {
			o.mu.Unlock()
			return stopped
		}
		if e, ok := o.byDID[a.DID]; ok {
			fate := o.merge(e, a, size)
			o.mu.Unlock()
			return fate
		}
		if len(o.byDID) < o.limit && (a.Staked || o.bytes+size <= maxUnstakedSpread && o.line.Len()-o.staked < o.unstakedLimit()) {
			o.byDID[a.DID] = o.line.PushBack(a)
			o.add(a, size, 1)
			o.mu.Unlock()
			o.wake()
			return queued
		}
		if !a.Staked {
			o.mu.Unlock()
			return left // no room, or over the weight bound
		}
		if o.roomFor == nil {
			o.roomFor = make(chan struct{})
		}
		room := o.roomFor
		o.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(spreadWait)
		}
		select {
		case <-room:
		case <-timer.C:
			return left
		case <-ctx.Done():
			return left
		}
	}
}

// unstakedLimit is how many unstaked cards may wait: half the line, so that the other half
// is kept for staked cards (review 41: free cards from this node's clients filled every place,
// and staked cards were left to anti-entropy after spreadWait).
func (o *outbox) unstakedLimit() int { return max(1, o.limit/2) }

// merge puts a in e's place when a is newer than the card waiting there (under o.mu). An
// unstaked card that would take the waiting cards over maxUnstakedSpread takes its DID out
// of the line instead: anti-entropy carries its newest card.
func (o *outbox) merge(e *list.Element, a *Agent, size int64) int {
	old := e.Value.(*Agent)
	if !newer(&a.SignedCard, old.Seq, old.JWS) {
		return notNewer
	}
	o.add(old, -int64(len(old.JWS)), -1)
	if !a.Staked && o.bytes+size > maxUnstakedSpread {
		o.remove(e)
		return left
	}
	e.Value = a
	o.add(a, size, 1)
	return queued
}

// add counts a card of size bytes coming (sign 1) or going (-1) (under o.mu).
func (o *outbox) add(a *Agent, size int64, sign int) {
	o.bytes += size
	if a.Staked {
		o.staked += sign
	}
}

// remove takes e's DID out of the line (its card already uncounted) and tells a staked card
// waiting for room that there is some (under o.mu).
func (o *outbox) remove(e *list.Element) {
	delete(o.byDID, e.Value.(*Agent).DID)
	o.line.Remove(e)
	if o.roomFor != nil {
		close(o.roomFor)
		o.roomFor = nil
	}
}

func (o *outbox) wake() {
	select {
	case o.ready <- struct{}{}:
	default:
	}
}

// take removes the card first in line; a staked one counts in putting until its DHT put is
// done (done). ok is false when the line is empty.
func (o *outbox) take() (a *Agent, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	e := o.line.Front()
	if e == nil {
		return nil, false
	}
	a = e.Value.(*Agent)
	o.add(a, -int64(len(a.JWS)), -1)
	o.remove(e)
	if a.Staked {
		o.putting.Add(1)
	}
	return a, true
}

// done says a staked card's DHT put (or the attempt) is over.
func (o *outbox) done() { o.putting.Add(-1) }

// pending is how many staked cards wait in line or have their DHT put under way.
func (o *outbox) pending() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.staked + int(o.putting.Load())
}

// close forgets the cards waiting (stored, not spread: anti-entropy carries them), ends the
// waits for room and refuses what comes after.
func (o *outbox) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.off = true
	for e := o.line.Front(); e != nil; e = o.line.Front() {
		a := e.Value.(*Agent)
		o.add(a, -int64(len(a.JWS)), -1)
		o.remove(e)
	}
	if o.roomFor != nil {
		close(o.roomFor)
		o.roomFor = nil
	}
}

// leftWarning counts a staked card left to anti-entropy at now, and says how many were
// since the last warning when one is due (at most one every spreadWarnEvery), so that a
// burst of registrations faster than gossip does not write a line of log for each.
func (o *outbox) leftWarning(now time.Time) (int, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.leftStaked++
	if now.Sub(o.warned) < spreadWarnEvery {
		return 0, false
	}
	n := o.leftStaked
	o.leftStaked, o.warned = 0, now
	return n, true
}
