package escrow_test

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/txn"
)

// BenchmarkIndexerCatchUp measures a fresh index catching up on 10,000 bounty events (5,000
// posts and 5,000 cancels) on the embedded chain. The target is under 5 s: see the events/s
// metric.
func BenchmarkIndexerCatchUp(b *testing.B) {
	ctx := context.Background()
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(3, chain.DefaultDevBalance)})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	f := newFixtureOn(b, c)
	head, _ := c.HeaderByNumber(ctx, nil)
	const bounties = 5000
	for i := range bounties {
		tx, err := f.poster.SendAsync(ctx, txn.Call{To: f.dep.Contracts.BountyEscrow,
			Data:  f.abi.PackPost(common.Address{}, big.NewInt(int64(i+1)), f.arbiter.Address(), head.Time+86400, 600, new(big.Int), [32]byte{}, common.BigToHash(big.NewInt(int64(i+1)))),
			Value: big.NewInt(int64(i + 1))}, nil)
		if err != nil {
			b.Fatal(err)
		}
		r, err := f.poster.Wait(ctx, tx)
		if err != nil {
			b.Fatal(err)
		}
		p, err := f.abi.UnpackPostedEvent(r.Logs[0])
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.poster.SendAsync(ctx, txn.Call{To: f.dep.Contracts.BountyEscrow, Data: f.abi.PackCancel(p.Id, p.Terms)}, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	var events int
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db := testutil.OpenSQL(b)
		ix := f.indexerOn(b, db)
		b.StartTimer()
		start := time.Now()
		if _, err := ix.Sync(ctx); err != nil {
			b.Fatal(err)
		}
		elapsed := time.Since(start)
		b.StopTimer()
		_, n, err := ix.Count(ctx)
		if err != nil {
			b.Fatal(err)
		}
		events = n
		b.ReportMetric(float64(n)/elapsed.Seconds(), "events/s")
		b.StartTimer()
	}
	if events != 2*bounties {
		b.Fatalf("indexed %d events, want %d", events, 2*bounties)
	}
}
