package reputation_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/reputation/merkle"
)

// BenchmarkReputationQuery fills the store with 1,000,000 audits among 100,000 agents
// (SURETY_BENCH_AUDITS changes the count; agents are a tenth) and recomputes the scores:
// first-refresh-s reads the audits from SQLite into memory (once per start), refresh-s is
// every later full recomputation (target ≤ 0.5 s), follow-ns what one more audit costs the
// scores in memory (the incremental update). Then it measures Reputation(did), what GET
// /v1/reputation/{did} does, over 10,000 random agents (target p99 ≤ 2 ms).
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
	// An audit recorded: the subject's score follows at once (what Submit does after the
	// checks and the store), O(1) where a recomputation is O(audits).
	r := rand.New(rand.NewPCG(9, 10))
	const follows = 100_000
	start = time.Now()
	for i := range follows {
		a, s := r.IntN(agents), r.IntN(agents-1)
		if s >= a {
			s++
		}
		reputation.Follow(svc, &reputation.Audit{Auditor: benchDID(a), Subject: benchDID(s), Envelope: "new-" + strconv.Itoa(i), Score: r.Float64(), Time: time.Now().Unix()}, true)
	}
	follow := time.Since(start) / follows
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
		b.ReportMetric(load.Seconds(), "first-refresh-s")
		b.ReportMetric(refresh.Seconds(), "refresh-s")
		b.ReportMetric(float64(follow.Nanoseconds()), "follow-ns")
		b.StartTimer()
	}
}

// benchDID is the DID of agent i in the benchmark: it needs no key, as the audits go straight
// into the store.
func benchDID(i int) string { return fmt.Sprintf("did:key:z6MkAgent%07d", i) }

// fillAudits writes audits random current audits among the agents dids straight into the
// store's table, in one transaction: an audit history without the signing.
func fillAudits(tb testing.TB, db *sql.DB, row int64, audits int, dids []string) {
	tb.Helper()
	tx, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer tx.Rollback()
	ins, err := tx.Prepare(`INSERT INTO reputation_audits (chain, leaf, auditor, subject, target, score, time, backed, evidence_hash, evidence_uri, envelope)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, '', x'00')`)
	if err != nil {
		tb.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	now := time.Now().Unix()
	agents := len(dids)
	for i := range audits {
		a, s := r.IntN(agents), r.IntN(agents)
		if a == s {
			s = (s + 1) % agents
		}
		leaf := merkle.LeafHash([]byte(strconv.Itoa(i)))
		if _, err := ins.Exec(row, leaf.String(), dids[a], dids[s], "envelope:"+strconv.Itoa(i), r.Float64(), now-int64(r.IntN(1e7)), r.IntN(2), "0x"+leaf.String()); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}
