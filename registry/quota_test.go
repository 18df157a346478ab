package registry_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/big"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/p2p"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/registry"
)

// ticking is a clock that moves a second each time it is read.
type ticking struct {
	mu sync.Mutex
	t  time.Time
}

func (c *ticking) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

// quotaRegistry is a registry on a ticking clock holding at most maxUnstaked unstaked cards.
func quotaRegistry(t *testing.T, st registry.StakeReader, maxUnstaked int) *registry.Registry {
	t.Helper()
	db := testutil.DB(t)
	ctx := context.Background()
	row, err := sqlite.EnterChain(ctx, db, sqlite.Chain{Key: "t", ChainID: 1, Genesis: "g", Contracts: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	clock := &ticking{t: now}
	r, err := registry.New(ctx, registry.Config{DB: db, Chain: row, Stakes: st, Now: clock.now, UnstakedPerMinute: 1 << 20, MaxUnstaked: maxUnstaked})
	requireFTS5(t, err)
	return r
}

// TestJunkCardsAreBounded: a DID costs nothing, so unstaked cards are a class with a quota
// (Config.MaxUnstaked): junk from fresh keys, each sent by another source (at 409c49a each
// peer id was a budget of its own), replaces the unstaked cards received longest ago and
// never a staked one. The sync window lists staked cards first: junk cannot push them out of
// what a node offers its peers (at 409c49a it listed the newest received).
func TestJunkCardsAreBounded(t *testing.T) {
	ctx := context.Background()
	st := stakes{}
	var staked []*identity.Key
	for range 5 {
		k := mustKey(t)
		st[k.DID.String()] = big.NewInt(2e18)
		staked = append(staked, k)
	}
	r := quotaRegistry(t, st, 20)
	var stakedIDs []p2p.ID
	for _, k := range staked {
		raw := card(t, k, 1, "Staked", "a staked agent", "audit")
		if _, err := r.Register(ctx, raw, "api"); err != nil {
			t.Fatal(err)
		}
		stakedIDs = append(stakedIDs, sha256.Sum256(raw))
	}
	var junk []string
	for i := range 100 {
		k := mustKey(t)
		if _, err := r.Register(ctx, card(t, k, 1, "Junk", "junk", "audit"), fmt.Sprintf("peer:%d", i)); err != nil {
			t.Fatal(err)
		}
		junk = append(junk, k.DID.String())
	}
	held := 0
	for _, did := range junk {
		if _, err := r.Get(ctx, did); err == nil {
			held++
		}
	}
	if held > 20 {
		t.Errorf("the node holds %d of 100 unstaked junk cards, want at most 20", held)
	}
	for _, k := range staked {
		if _, err := r.Get(ctx, k.DID.String()); err != nil {
			t.Errorf("a staked card went: %v", err)
		}
	}
	ids, err := registry.SyncSetWindow(r, 10).IDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range stakedIDs {
		if !slices.Contains(ids, id) {
			t.Errorf("staked card %d is not in a sync window of 10 cards", i)
		}
	}
}
