package registry

import (
	"fmt"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// TestDiscoveredEvictsInsteadOfClearing: a full throttle map makes room by forgetting the
// capabilities whose time passed, or else the one due soonest; a capability looked up a
// moment ago keeps its throttle through a flood of fresh tags (review 30, M5).
func TestDiscoveredEvictsInsteadOfClearing(t *testing.T) {
	now := time.Now()
	p := providing{discovered: map[string]discovered{}}
	p.remember("honest", discovered{next: now.Add(discoverEvery)}, now)
	for i := range maxDiscovered + 500 {
		p.remember(fmt.Sprintf("flood-%d", i), discovered{next: now.Add(time.Duration(i+1) * time.Millisecond)}, now)
	}
	if len(p.discovered) > maxDiscovered {
		t.Errorf("%d capabilities remembered, want at most %d", len(p.discovered), maxDiscovered)
	}
	if d, ok := p.discovered["honest"]; !ok || !d.next.After(now) {
		t.Errorf("the honest capability's throttle was flushed: %v, %v", d, ok)
	}
	// Once their time passed, the flood's entries make room all at once.
	later := now.Add(time.Hour)
	p.remember("next", discovered{next: later.Add(discoverEvery)}, later)
	if len(p.discovered) != 1 {
		t.Errorf("after an hour, %d capabilities remembered, want only the new one", len(p.discovered))
	}
}

// TestBackoffDoubles: a capability no provider answered for waits discoverRetry after the
// first two misses in a row, then twice as long for each further one, at most
// discoverBackoffMax.
func TestBackoffDoubles(t *testing.T) {
	for _, tt := range []struct {
		misses int
		want   time.Duration
	}{{1, discoverRetry}, {2, discoverRetry}, {3, 2 * discoverRetry}, {4, 4 * discoverRetry}, {20, discoverBackoffMax}, {1000, discoverBackoffMax}} {
		if got := backoff(tt.misses); got != tt.want {
			t.Errorf("backoff(%d) = %s, want %s", tt.misses, got, tt.want)
		}
	}
}

// TestLookupBudgetPerSource: a source (none of whose lookups is running) starts
// lookupSourceBurst lookups, then one every lookupSourceEvery; another source has its own budget; the node's own searches are free.
func TestLookupBudgetPerSource(t *testing.T) {
	now := time.Now()
	p := providing{sources: map[string]*rate.Limiter{}, busy: map[string]int{}}
	for i := range lookupSourceBurst {
		if !p.allow("api:192.0.2.1", now) {
			t.Fatalf("lookup %d of a fresh source refused", i+1)
		}
	}
	if p.allow("api:192.0.2.1", now) {
		t.Error("a lookup over the burst allowed")
	}
	if !p.allow("api:192.0.2.2", now) || !p.allow("", now) {
		t.Error("another source, or the node itself, refused")
	}
	if !p.allow("api:192.0.2.1", now.Add(lookupSourceEvery)) {
		t.Error("no lookup after lookupSourceEvery")
	}
}
