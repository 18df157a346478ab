package reputation_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surety-ioa/surety/internal/memlimit"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/reputation"
)

// BenchmarkReputationQuery fills the store with 1,000,000 audits among 100,000 agents
// (SURETY_BENCH_AUDITS changes the count; agents are a tenth: SURETY_BENCH_AUDITS=10000000
// is the 1M agents / 10M audits case, make bench-large) and measures what a node does with
// them:
//
//   - load-s: reading the audits that count from SQLite into memory, once per start (target
//     ≤ 1 s per 1M audits);
//   - first-refresh-s: the load and the first computation, what a start takes before its
//     scores are fresh;
//   - refresh-s: a full recomputation at a new score time, every audit's decay summed again
//     (the clock step, a minute here; target ≤ 0.3 s at 1M audits, ≤ 5 s at 10M);
//   - incremental-s: a recomputation at the same score time after 1,000 more audits, which
//     carries the last one's pair sums over (the one every 5 s while audits arrive);
//   - follow-ns: what one more audit costs the scores in memory (O(1));
//   - rss-peak-MB: the process's peak RSS (VmHWM) from after the fill (the peak is reset
//     then, /proc/self/clear_refs) to the end: the node's part, with SQLite's page cache;
//     heap-peak-MB, the Go heap's peak over the same span, sampled every 10 ms (target for
//     the RSS ≤ 1.5 GB at 10M audits);
//   - p50-ms, p99-ms: Reputation(did), what GET /v1/reputation/{did} does, over 10,000
//     random agents (target p99 ≤ 2 ms).
//
// From the fill on, the benchmark keeps the Go memory limit a node keeps (cmd/surety's
// default --memory-limit: memlimit.Start(memlimit.DefaultFloor), max(128 MiB, 1.5 × the live
// heap), set again every 10 s), so the collector runs before the heap doubles, as it does in
// a node; with GOMEMLIMIT set, that limit wins, as in a node.
func BenchmarkReputationQuery(b *testing.B) {
	ctx := context.Background()
	audits := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("SURETY_BENCH_AUDITS")); err == nil && v > 0 {
		audits = v
	}
	agents := audits / 10
	db, row, store := openChainStore(b)
	dids := make([]string, agents)
	for i := range dids {
		dids[i] = benchDID(i)
	}
	fillAudits(b, db, row, audits, dids)
	staked := stakeMap{}
	for i := 0; i < agents; i += 10 {
		staked[benchDID(i)] = 1 + float64(i%7)
	}
	dids = nil
	defer memlimit.Start(memlimit.DefaultFloor)() // the node's own policy (cmd/surety node.go)
	peak := watchMemory(b)
	clock := time.Now()
	svc := reputation.NewService(reputation.ServiceConfig{Store: store, Stakes: staked, Rules: &reputation.Rules{}, Now: func() time.Time { return clock }})
	start := time.Now()
	if err := reputation.LoadGraph(ctx, svc); err != nil { // reads the audits from SQLite into memory
		b.Fatal(err)
	}
	load := time.Since(start)
	if err := svc.Refresh(ctx); err != nil {
		b.Fatal(err)
	}
	first := time.Since(start)
	clock = clock.Add(time.Minute) // the next score step: every audit's decay changes
	start = time.Now()
	if err := svc.Refresh(ctx); err != nil {
		b.Fatal(err)
	}
	refresh := time.Since(start)
	// An audit recorded: the subject's score follows at once (what Submit does after the
	// checks and the store), O(1) where a recomputation is O(audits).
	r := rand.New(rand.NewPCG(9, 10))
	const follows = 100_000
	start = time.Now()
	var incremental time.Duration
	for i := range follows {
		a, s := r.IntN(agents), r.IntN(agents-1)
		if s >= a {
			s++
		}
		reputation.Follow(svc, &reputation.Audit{Auditor: benchDID(a), Subject: benchDID(s), Envelope: "new-" + strconv.Itoa(i), Score: r.Float64(), Time: clock.Unix() - 60}, true)
		if i == 999 { // 1,000 audits since the last recomputation, at its score time
			followed := time.Since(start)
			t0 := time.Now()
			if err := svc.Refresh(ctx); err != nil {
				b.Fatal(err)
			}
			incremental = time.Since(t0)
			if !reputation.Carried(svc) {
				b.Fatal("the recomputation at the same score time summed every audit again")
			}
			start = time.Now().Add(-followed)
		}
	}
	follow := time.Since(start) / follows
	rss, heap, live := peak()
	b.ResetTimer()
	for range b.N {
		lat := make([]time.Duration, 0, 10_000)
		for range 10_000 {
			d := benchDID(r.IntN(agents))
			t0 := time.Now()
			rep, err := svc.Reputation(ctx, d)
			if err != nil || rep.Audits == 0 && len(rep.Feeding) != 0 {
				b.Fatalf("%s: %+v, %v", d, rep, err)
			}
			lat = append(lat, time.Since(t0))
		}
		b.StopTimer()
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		b.ReportMetric(load.Seconds(), "load-s")
		b.ReportMetric(first.Seconds(), "first-refresh-s")
		b.ReportMetric(refresh.Seconds(), "refresh-s")
		b.ReportMetric(incremental.Seconds(), "incremental-s")
		b.ReportMetric(float64(follow.Nanoseconds()), "follow-ns")
		b.ReportMetric(rss/1e6, "rss-peak-MB")
		b.ReportMetric(heap/1e6, "heap-peak-MB")
		b.ReportMetric(live/1e6, "live-peak-MB")
		b.StartTimer()
	}
}

// watchMemory frees what the process holds (the fill's), resets its peak RSS and samples the
// Go heap every 10 ms; the function it returns stops and gives the peak RSS (VmHWM, 0 where
// /proc does not say), the peak heap (live objects and garbage not yet collected) and the
// peak live heap (what a collection found live: the structures' own size, whatever the
// collector's pace), in bytes.
func watchMemory(tb testing.TB) func() (rss, heap, live float64) {
	tb.Helper()
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // resets VmHWM to the current RSS
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	var top, topLive atomic.Uint64
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > top.Load() {
				top.Store(v)
			}
			if v := sample[1].Value.Uint64(); v > topLive.Load() {
				topLive.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() (float64, float64, float64) {
		close(done)
		<-stopped
		rss, _ := testutil.ProcStatus(os.Getpid(), "VmHWM") // 0 where /proc does not say
		return float64(rss), float64(top.Load()), float64(topLive.Load())
	}
}

// benchDID is the DID of agent i in the benchmark: it needs no key, as the audits go straight
// into the store.
func benchDID(i int) string { return fmt.Sprintf("did:key:z6MkAgent%07d", i) }

// fillAudits writes audits random current audits among the agents dids straight into the
// store's table (testutil.FillAudits).
func fillAudits(tb testing.TB, db *sql.DB, row int64, audits int, dids []string) {
	tb.Helper()
	if err := testutil.FillAudits(context.Background(), db, row, audits, len(dids), func(i int) string { return dids[i] }); err != nil {
		tb.Fatal(err)
	}
}
