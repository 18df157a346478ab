package registry

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/internal/units"
	"github.com/surety-ioa/surety/registry/search"
	"github.com/surety-ioa/surety/registry/semantic"
)

// benchIndexRegistry is a registry without a database whose indexes (text and vectors) hold
// BenchmarkSearch's cards (loadBenchCards: the same words, capabilities and stakes; DIDs made
// up), built as loadIndex builds them: the index's part of a search, without SQLite. It is
// built for each run of BenchmarkHybridIndex and dropped after it: kept in a package
// variable, its hundreds of megabytes stayed live through the benchmarks that ran after it
// in the same process (BenchmarkSearch), and each of their collections marked them too.
func benchIndexRegistry() *Registry {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("SURETY_BENCH_CARDS")); err == nil && v > 0 {
		n = v
	}
	r := &Registry{index: search.New(), vectors: semantic.NewIndex(), unstakedVectors: semantic.NewIndex()}
	r.semantic = r.nearest
	r.cfg.Reputation = Neutral{}
	rng := rand.New(rand.NewPCG(1, 2))
	const b58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
	ids, docs := make([]int64, n), make([]search.Doc, n)
	for i := range n {
		did := []byte("did:key:z6Mk")
		for range 44 {
			did = append(did, b58[rng.IntN(len(b58))])
		}
		name, description, caps, staked := benchCard(i, n)
		weight := 1.0
		if staked {
			weight = units.StakeWeight(float64(i+1) / 1000)
		}
		ids[i] = int64(i + 1)
		docs[i] = search.Doc{DID: string(did), Name: name, Description: description, Capabilities: caps, Staked: staked, StakeWeight: weight}
	}
	r.index.Build(ids, docs)
	for i, id := range ids {
		r.putVector(id, docs[i], cardVector(docs[i]))
	}
	return r
}

// benchCard is the i-th of n cards of loadBenchCards: its name, description, capabilities
// and whether it is staked. Ten words, two to a card, so every word is on about a fifth of
// the cards: each query matches tens of thousands at 100k, the broad case.
//
// Which cards are staked is benchCorpus's: chosen by a hash of i, so that the staked and the
// unstaked cards say every word (staked every tenth card, they all said "translate" first,
// and those rows measured a query no staked card matches rather than their kind). That case
// is its own kind: the unstaked cards whose first word is "audio" also say "podcasts", which
// no staked card says (BenchmarkSearch's "unstaked"). benchIndexRegistry builds the same
// cards; bench_test.go reads it as BenchCard.
func benchCard(i, n int) (name, description string, caps []string, staked bool) {
	words := [...]string{"translate", "summarize", "audit", "research", "legal", "medical", "code", "review", "image", "audio"}
	w1, w2 := words[i%len(words)], words[(i/10)%len(words)]
	caps = []string{w1, w2}
	if w1 == w2 {
		caps = []string{w1, w1 + "/" + words[(i/100)%len(words)]}
	}
	if benchCorpus() == "tenth" {
		staked = uint32(i)*2654435761>>16%10 == 0
	} else {
		staked = testutil.StakedAsANodeHolds(i, n, MaxUnstakedCards)
	}
	description = fmt.Sprintf("%s and %s for marketplaces, papers and contracts", w1, w2)
	if !staked && w1 == "audio" {
		description += ", podcasts too"
	}
	return fmt.Sprintf("%s agent %d", w1, i), description, caps, staked
}

// benchCorpus is how the search benchmarks' cards are staked, $SURETY_BENCH_CORPUS:
//   - "node" (the default): as a node holds them. A DID costs nothing, so a node holds at
//     most MaxUnstakedCards unstaked cards, and every card past them is staked: a tenth of
//     the cards unstaked, at most 10,000 (a hundredth at 1M cards).
//   - "tenth": a tenth staked, nine in ten unstaked, the corpus of the rows before 2026-11-27's
//     (bench/RESULTS.md's history). No node holds it past 11,111 cards: the benchmark raises
//     the registry's MaxUnstaked to load it.
func benchCorpus() string {
	if c := os.Getenv("SURETY_BENCH_CORPUS"); c == "tenth" {
		return c
	}
	return "node"
}

// BenchmarkHybridIndex times the index's part of BenchmarkSearch's hybrid queries (and a few
// keyword ones beside them) on benchIndexRegistry: p50 and p99 per kind over
// $SURETY_BENCH_RUNS runs (100) of each, alternating.
func BenchmarkHybridIndex(b *testing.B) {
	r := benchIndexRegistry()
	ctx := context.Background()
	queries := []struct {
		kind string
		q    Query
	}{
		{"hybrid-sentence", Query{Text: "I need someone who can translate my legal documents and review the code of my agents"}},
		{"hybrid-phrase", Query{Text: `"image and audio"`}},
		{"hybrid-text+cap", Query{Text: "research", Capability: "medical"}},
		{"hybrid-text+cap", Query{Text: "summarize papers", Capability: "research"}},
		{"hybrid-text", Query{Text: "translate legal"}},
		{"hybrid-prefix", Query{Text: "summar*"}},
		{"text+cap", Query{Text: "research", Capability: "medical", Mode: ModeKeyword}},
		{"text+cap", Query{Text: "summarize papers", Capability: "research", Mode: ModeKeyword}},
		{"phrase", Query{Text: `"image and audio"`, Mode: ModeKeyword}},
		{"hybrid-unstaked", Query{Text: "podcasts"}},
		{"unstaked", Query{Text: "podcasts", Mode: ModeKeyword}},
	}
	if k := os.Getenv("SURETY_BENCH_KINDS"); k != "" {
		queries = slices.DeleteFunc(queries, func(q struct {
			kind string
			q    Query
		}) bool {
			return !slices.Contains(strings.Split(k, ","), q.kind)
		})
	}
	if len(queries) == 0 {
		b.Fatalf("SURETY_BENCH_KINDS=%q names none of the kinds", os.Getenv("SURETY_BENCH_KINDS"))
	}
	runs := 100
	if v, err := strconv.Atoi(os.Getenv("SURETY_BENCH_RUNS")); err == nil && v > 0 {
		runs = v
	}
	b.ResetTimer()
	for range b.N {
		byKind := map[string][]time.Duration{}
		for i := range runs * len(queries) {
			q := queries[i%len(queries)]
			q.q.Limit = q.q.limit()
			iq, _, err := r.indexQueryOf(q.q)
			if err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			a, err := r.indexHits(ctx, iq)
			d := time.Since(start)
			if err != nil || len(a.hits) == 0 {
				b.Fatalf("%+v: %v", q.q, err)
			}
			byKind[q.kind] = append(byKind[q.kind], d)
		}
		for kind, l := range byKind {
			slices.Sort(l)
			b.ReportMetric(float64(l[len(l)/2].Microseconds())/1000, "p50-ms/"+kind)
			b.ReportMetric(float64(l[len(l)*99/100].Microseconds())/1000, "p99-ms/"+kind)
		}
	}
}
