package registry

import (
	"context"
	"io"
	"sync"
)

// Searches never wait on the network. A capability search that finds fewer cards than its
// limit here starts a lookup of the capability's providers in the background (or joins the
// one running) and answers from the local index at once; a caller that wants what the
// network adds follows the lookup (SearchFollow, Lookup.Next), which gives the search's
// answer again, merged and ranked, each time the cards the lookup stored change it.

// LookupTimeout bounds a network lookup for a search: its Lookup's Next returns io.EOF by
// then (the cards it stored checked and written).
const LookupTimeout = discoverTimeout

// discovery is one network lookup of a capability's providers under way, which any number of
// searches follow. Its goroutine belongs to the Network (see Network.startDiscovery).
type discovery struct {
	mu      sync.Mutex
	stored  int           // cards the lookup stored so far
	ended   bool          // the lookup is over: stored is final
	changed chan struct{} // closed when stored grows or the lookup ends, then replaced (not after the end)

	// The followers' answers, shared: one search per query and change, however many follow.
	// searching is held while one is computed, so that the others wait for it.
	searching sync.Mutex
	answers   map[Query]sharedAnswer // by the query (Source cleared), at most maxSharedAnswers
}

// sharedAnswer is a query's answer once the lookup had stored cards.
type sharedAnswer struct {
	stored int
	found  []*Agent
}

func newDiscovery() *discovery { return &discovery{changed: make(chan struct{})} }

// add counts cards the lookup stored and wakes the followers.
func (d *discovery) add(n int) {
	if n == 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stored += n
	close(d.changed)
	d.changed = make(chan struct{})
}

// end marks the lookup over and wakes the followers for the last time.
func (d *discovery) end() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ended = true
	close(d.changed)
}

// answer is q's answer once the lookup had stored at least stored cards: the one a follower
// of q computed already, or computed now and kept for the others. The answer is shared:
// followers do not change it. Errors are not kept (one follower's ctx is its own).
func (d *discovery) answer(ctx context.Context, r *Registry, q Query, stored int) ([]*Agent, error) {
	q.Source = ""
	d.searching.Lock()
	defer d.searching.Unlock()
	if a, ok := d.answers[q]; ok && a.stored >= stored {
		return a.found, nil
	}
	// The cards stored by now: the answer computed holds at least them.
	now, _, _ := d.state()
	found, err := r.searchLocal(ctx, q)
	if err != nil {
		return nil, err
	}
	if d.answers == nil {
		d.answers = map[Query]sharedAnswer{}
	}
	if _, ok := d.answers[q]; ok || len(d.answers) < maxSharedAnswers {
		d.answers[q] = sharedAnswer{stored: now, found: found}
	}
	return found, nil
}

// state is what the lookup stored so far, whether that is all, and the channel closed at the
// next change.
func (d *discovery) state() (stored int, ended bool, changed <-chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stored, d.ended, d.changed
}

// Lookup follows a network lookup for one search: the capability's providers asked for their
// cards, which are checked and stored as any registration. The lookup ends within
// discoverTimeout of starting (or when the node closes). A Lookup is for one goroutine.
type Lookup struct {
	r    *Registry
	q    Query
	d    *discovery
	seen int      // d.stored when the answer was last computed
	last []*Agent // the answer last given
}

// Next waits until the lookup stored cards that change the search's answer and returns the
// new answer, whole: the local cards and the new ones, ranked together, at most the query's
// limit. Followers of the same query share the answer (one search per change): the caller
// must not modify it. It returns io.EOF once the lookup is over and the last answer given
// stands, and ctx's error when ctx ends first.
func (l *Lookup) Next(ctx context.Context) ([]*Agent, error) {
	for {
		stored, ended, changed := l.d.state()
		if stored > l.seen {
			l.seen = stored
			found, err := l.d.answer(ctx, l.r, l.q, stored)
			if err != nil {
				return nil, err
			}
			if !sameAnswer(found, l.last) {
				l.last = found
				return found, nil
			}
			continue
		}
		if ended {
			return nil, io.EOF
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Capability is the capability being looked up.
func (l *Lookup) Capability() string { return l.q.Capability }

// sameAnswer reports whether a and b list the same cards (DID and sequence number) in the
// same order.
func sameAnswer(a, b []*Agent) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].DID != b[i].DID || a[i].Seq != b[i].Seq {
			return false
		}
	}
	return true
}

// SearchFollow is Search that also hands back the network lookup its capability search
// started or joined, to follow what the lookup adds; the Lookup is nil when none runs for
// the query (no capability, enough cards here, no network, or the lookup throttles hold it
// back: a capability is looked up at most once a minute, after 5 s when no provider
// answered (doubling from the third miss in a row), at most maxLookups at once, and each
// source has at most lookupsPerSource running and starts at most lookupSourceBurst, then one
// every lookupSourceEvery). It returns at once, whatever the network does.
func (r *Registry) SearchFollow(ctx context.Context, q Query) ([]*Agent, *Lookup, error) {
	if err := q.validate(); err != nil {
		return nil, nil, err
	}
	q.Limit = q.limit()
	found, err := r.searchLocal(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	return found, r.lookup(q, found), nil
}

// SearchEncoded is SearchFollow for an answer sent encoded: it gives encode's body of the
// answer and whether a network lookup is under way (discovering), without following it.
// encode must depend on nothing but its arguments (and change no card). While the index's
// answer to q is kept and its cards' reputation weights do not change, the body encoded
// from it is kept too, and given again without reading or encoding anything: the same bytes
// encode would give.
func (r *Registry) SearchEncoded(ctx context.Context, q Query, encode func(list []*Agent, discovering bool) ([]byte, error)) ([]byte, error) {
	if err := q.validate(); err != nil {
		return nil, err
	}
	q.Limit = q.limit()
	found, body, err := r.searchKept(ctx, q, func(list []*Agent) ([]byte, error) { return encode(list, false) })
	if err != nil || body != nil {
		return body, err
	}
	return encode(found, r.lookup(q, found) != nil)
}

// lookup starts the network lookup of SearchFollow for q (Limit set) when found, its local
// answer, is short of the limit for a capability, and gives it; nil when none starts.
func (r *Registry) lookup(q Query, found []*Agent) *Lookup {
	if q.Capability == "" || len(found) >= q.Limit {
		return nil
	}
	r.mu.Lock()
	n := r.net
	r.mu.Unlock()
	if n == nil {
		return nil
	}
	d := n.startDiscovery(q.Capability, q.Source)
	if d == nil {
		return nil
	}
	// Following from the lookup's start (seen 0): cards it stored before this search read the
	// index are compared away by sameAnswer, those after are not missed.
	return &Lookup{r: r, q: q, d: d, last: found}
}
