package chainlog

import (
	"context"
	"errors"
	"math/big"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/core/types"
)

// slowHead is a chain whose head reads wait for release, counting them.
type slowHead struct {
	calls   atomic.Int32
	release chan struct{}
}

func (s *slowHead) BlockNumber(ctx context.Context) (uint64, error) {
	s.calls.Add(1)
	select {
	case <-s.release:
		return 0, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func (s *slowHead) FilterLogs(context.Context, ethereum.FilterQuery) ([]types.Log, error) {
	return nil, nil
}

func (s *slowHead) HeaderByNumber(context.Context, *big.Int) (*types.Header, error) {
	return nil, errors.New("not here")
}

// TestCatchUpSharesOneHeadRead: a public node's readers call CatchUp per request (an audit
// whose auditor or subject the indexes lack), so callers at the same time share one read of
// the chain's head: at first 440 of them held 440 chain calls under the public node's load
// test. A caller whose ctx ends leaves with its error, and the read goes on for the others.
func TestCatchUpSharesOneHeadRead(t *testing.T) {
	chain := &slowHead{release: make(chan struct{})}
	f := &Follower{cfg: Config{Name: "test", Client: chain, Confirmations: 1}}
	f.cond = sync.NewCond(&f.mu)
	const callers = 50
	gone, cancel := context.WithCancel(context.Background())
	errs := make(chan error, callers+1)
	var wg sync.WaitGroup
	wg.Go(func() { errs <- f.CatchUp(gone) })
	for range callers {
		wg.Go(func() { errs <- f.CatchUp(context.Background()) })
	}
	time.Sleep(200 * time.Millisecond) // every caller is waiting on the read by now
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Errorf("the caller whose ctx ended: %v, want context.Canceled", err)
	}
	close(chain.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a caller sharing the read: %v", err)
		}
	}
	if n := chain.calls.Load(); n > 2 {
		t.Errorf("%d callers made %d head reads, want them to share one", callers+1, n)
	}
}
