package reputation_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/reputation"
)

// BenchmarkReputationQuery fills the store with 1,000,000 audits among 100,000 agents
// (SURETY_BENCH_AUDITS changes the count; agents are a tenth) and recomputes the scores:
// first-refresh-s reads the audits from SQLite into memory (once per start), refresh-s is
// every later full recomputation (target ≤ 0.5 s). Then it measures Reputation(did), what GET
// /v1/reputation/{did} does, over 10,000 random agents (target p99 ≤ 2 ms).
func BenchmarkReputationQuery(b *testing.B) {
	ctx := context.Background()
	audits := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("SURETY_BENCH_AUDITS")); err == nil && v > 0 {
		audits = v
	}
	agents := audits / 10
	db := testutil.DB(b)
	row, err := sqlite.EnterChain(ctx, db, sqlite.Chain{Key: "t", ChainID: 1337, Genesis: "g", Contracts: "{}"})
	if err != nil {
		b.Fatal(err)
	}
	store, err := reputation.OpenStore(ctx, db, row)
	if err != nil {
		b.Fatal(err)
	}
	did := func(i int) string { return fmt.Sprintf("did:key:z6MkAgent%07d", i) }
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	ins, err := tx.Prepare(`INSERT INTO reputation_audits (chain, leaf, auditor, subject, target, score, time, backed, evidence_hash, evidence_uri, envelope)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, '', x'00')`)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	now := time.Now().Unix()
	for i := range audits {
		a, s := r.IntN(agents), r.IntN(agents)
		if a == s {
			s = (s + 1) % agents
		}
		leaf := reputation.LeafHash([]byte(strconv.Itoa(i)))
		if _, err := ins.Exec(row, leaf.String(), did(a), did(s), "envelope:"+strconv.Itoa(i), r.Float64(), now-int64(r.IntN(1e7)), r.IntN(2), "0x"+leaf.String()); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	staked := stakeMap{}
	for i := 0; i < agents; i += 10 {
		staked[did(i)] = 1 + float64(i%7)
	}
	svc := reputation.NewService(reputation.ServiceConfig{Store: store, Stakes: staked, Rules: &reputation.Rules{}})
	start := time.Now()
	if err := svc.Refresh(ctx); err != nil { // reads the audits from SQLite into memory
		b.Fatal(err)
	}
	load := time.Since(start)
	start = time.Now()
	if err := svc.Refresh(ctx); err != nil { // every later recomputation
		b.Fatal(err)
	}
	refresh := time.Since(start)
	b.ResetTimer()
	for range b.N {
		lat := make([]time.Duration, 0, 10_000)
		for range 10_000 {
			d := did(r.IntN(agents))
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
		b.ReportMetric(load.Seconds(), "first-refresh-s")
		b.ReportMetric(refresh.Seconds(), "refresh-s")
		b.StartTimer()
	}
}
