package registry_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/registry"
)

// slowReputation is a ReputationReader that takes a while per card and counts the searches
// reading it at once: a search's ranking work under load, measured from the inside.
type slowReputation struct {
	mu            sync.Mutex
	inFlight, max int
}

func (s *slowReputation) Weight(ctx context.Context, did string) (float64, error) {
	s.mu.Lock()
	s.inFlight++
	s.max = max(s.max, s.inFlight)
	s.mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	s.mu.Lock()
	s.inFlight--
	s.mu.Unlock()
	return 1, nil
}

// TestSearchesInFlightAreBounded is the regression test of review 30's M6: 100 searches at
// once never run more than Config.MaxSearches at a time; those that find no room within the
// short wait are refused with ErrBusy, not queued without end.
func TestSearchesInFlightAreBounded(t *testing.T) {
	db := testutil.DB(t)
	ctx := context.Background()
	row, err := sqlite.EnterChain(ctx, db, sqlite.Chain{Key: "t", ChainID: 1, Genesis: "g", Contracts: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	rep := &slowReputation{}
	const bound = 3
	r, err := registry.New(ctx, registry.Config{DB: db, Chain: row, Stakes: stakes{}, Reputation: rep, MaxSearches: bound, UnstakedPerMinute: 1000,
		Now: func() time.Time { return now }})
	requireFTS5(t, err)
	if _, err := r.Register(ctx, card(t, mustKey(t), 1, "Summarizer", "summarizes papers", "summarize"), "test"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var ok, busy atomic.Int32
	for range 100 {
		wg.Go(func() {
			found, err := r.Search(ctx, registry.Query{Capability: "summarize"})
			switch {
			case err == nil && len(found) == 1:
				ok.Add(1)
			case errors.Is(err, registry.ErrBusy):
				busy.Add(1)
			default:
				t.Errorf("Search = %v, %v", found, err)
			}
		})
	}
	wg.Wait()
	t.Logf("%d answered, %d busy; at most %d at once", ok.Load(), busy.Load(), rep.max)
	if rep.max > bound {
		t.Errorf("%d searches ran at once, want at most %d", rep.max, bound)
	}
	if ok.Load() == 0 {
		t.Error("no search answered")
	}
}
