// Package memlimit keeps a node's Go memory near what it holds. Go's collector lets the heap
// grow to twice what is live before it collects; under a flood of requests that each leave
// garbage, a node's resident set then grows with the flood's rate rather than with what it
// stores (issue 25's load test: ~330 MB for ~100 MB live). A soft memory limit makes the
// collector work harder near it instead. A fixed limit would starve a node that holds a large
// graph, so the limit follows the live heap: max(floor, Headroom × live), set again every
// Every.
package memlimit

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	// DefaultFloor is the limit a node keeps while what it holds is small.
	DefaultFloor = 128 << 20
	// Headroom is the limit's multiple of the live heap once that is past the floor's share.
	Headroom = 1.5
	// Every is how often the limit follows the live heap.
	Every = 10 * time.Second
)

// For is the limit for a live heap of live bytes: max(floor, Headroom × live).
func For(live uint64, floor int64) int64 {
	return max(floor, int64(math.Min(float64(live)*Headroom, math.MaxInt64)))
}

// Start keeps the limit at For(live heap, floor) until stop is called, which restores the
// limit there was. It does nothing (stop too) when floor is 0 or less, or when GOMEMLIMIT is
// set: the operator's own limit wins.
func Start(floor int64) (stop func()) {
	if floor <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	before := debug.SetMemoryLimit(-1)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	follow := func() {
		kept.Lock()
		defer kept.Unlock()
		kept.floor = floor
		debug.SetMemoryLimit(max(For(live(), floor), kept.lent))
	}
	follow()
	wg.Go(func() {
		t := time.NewTicker(Every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				follow()
			}
		}
	})
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			wg.Wait()
			kept.Lock()
			defer kept.Unlock()
			kept.floor = 0
			debug.SetMemoryLimit(before)
		})
	}
}

// kept is the floor of the limit Start keeps (0: none), and serializes the limit's changes.
var kept struct {
	sync.Mutex
	floor int64
	lent  int64 // the limit while Lend's caller computes (0: none); the limit stays at least this
}

// Hold says the caller has just allocated bytes it keeps (a graph's columns, read at start):
// where Start keeps the limit, it follows at once, as if the last collection had found them
// live, rather than at the next Every. Until then a heap grown past the limit by what it holds
// would keep the collector running back to back (at ten million audits, nearly half of the
// graph's load). It never lowers the limit, and does nothing where Start keeps none.
func Hold(bytes int64) {
	kept.Lock()
	defer kept.Unlock()
	if kept.floor <= 0 || bytes <= 0 {
		return
	}
	if l := For(live()+uint64(bytes), kept.floor); l > debug.SetMemoryLimit(-1) {
		debug.SetMemoryLimit(l)
	}
}

// Lend says the caller is about to hold up to bytes more for a while (a recomputation's
// arrays, next to the ones it replaces): where Start keeps the limit and the memory the
// runtime holds would pass it with them, the limit is raised until done is called to what the
// runtime holds after a collection (the one the limit would have started anyway), free heap
// aside, plus bytes.
// Otherwise the collector runs back to back over a heap that is all live (at a full refresh
// of 100,000 agents, fifteen collections that freed nothing and took up to half the CPUs),
// and the process grows by the same bytes all the same; with the loan it grows by no more,
// and no garbage from before fills the room. done puts back the limit there was (Start's
// next tick follows the live heap again).
func Lend(bytes int64) (done func()) {
	kept.Lock()
	defer kept.Unlock()
	if kept.floor <= 0 || bytes <= 0 || kept.lent > 0 || held()+uint64(bytes) <= uint64(debug.SetMemoryLimit(-1)) {
		return func() {}
	}
	runtime.GC()
	kept.lent = int64(min(held(), math.MaxInt64/4)) + bytes
	kept.lent += kept.lent / 32 // the collector aims the heap 3 % below the limit
	before := debug.SetMemoryLimit(-1)
	if kept.lent > before {
		debug.SetMemoryLimit(kept.lent)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			kept.Lock()
			defer kept.Unlock()
			kept.lent = 0
			if kept.floor > 0 {
				// The limit there was, not For the live heap: a collection during the loan
				// found the computation's arrays live beside the ones they replace.
				debug.SetMemoryLimit(before)
			}
		})
	}
}

// held is the memory the runtime holds as the limit counts it, all it mapped less the heap it
// gave back to the system, without the free heap it keeps (which a heap growing to the limit
// would reuse, and the collector gives back under it).
func held() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}, {Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	var v [3]uint64
	for i := range s {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		v[i] = s[i].Value.Uint64()
	}
	return v[0] - min(v[1]+v[2], v[0])
}

// live is the heap the last collection found live.
func live() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// ParseSize reads a size in bytes: a whole number with an optional unit B, KiB, MiB or GiB
// (e.g. "128MiB"); "0" means none.
func ParseSize(text string) (int64, error) {
	s := strings.TrimSpace(text)
	units := []struct {
		suffix string
		scale  int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}
	scale := int64(1)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, scale = strings.TrimSpace(rest), u.scale
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/scale {
		return 0, fmt.Errorf("%q is not a size like 128MiB, 1GiB or 0 (units: B, KiB, MiB, GiB)", text)
	}
	return n * scale, nil
}
