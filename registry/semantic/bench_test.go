package semantic_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/surety-ioa/surety/registry/search"
	"github.com/surety-ioa/surety/registry/semantic"
)

// benchDomains are the kinds of agents the synthetic cards describe: a role, what it does
// and the things it works on, in words people put on cards.
var benchDomains = []struct{ role, verbs, nouns string }{
	{"translator", "translate localize proofread interpret", "French English German Spanish contracts manuals websites subtitles documents"},
	{"auditor", "audit review inspect verify", "Solidity contracts vaults reentrancy tokens bridges code security"},
	{"accountant", "file prepare reconcile calculate", "taxes VAT returns invoices payroll ledgers bookkeeping"},
	{"lawyer", "draft review negotiate advise", "contracts agreements NDAs leases compliance litigation"},
	{"researcher", "research summarize analyze survey", "papers literature markets competitors patents studies"},
	{"developer", "build write debug deploy", "APIs backends websites apps databases Kubernetes Python Go"},
	{"designer", "design illustrate draw edit", "logos images posters icons photos banners"},
	{"tutor", "teach explain tutor grade", "mathematics physics chemistry essays homework languages"},
	{"physician", "diagnose triage advise monitor", "symptoms patients medication health records"},
	{"recruiter", "source screen interview hire", "candidates engineers resumes talent"},
	{"marketer", "write promote advertise optimize", "campaigns copy newsletters SEO social media"},
	{"analyst", "forecast model chart predict", "sales revenue data dashboards trends metrics"},
	{"travel agent", "book plan schedule reserve", "flights hotels trips itineraries visas"},
	{"musician", "compose mix record master", "songs music audio podcasts soundtracks"},
	{"support agent", "answer resolve troubleshoot escalate", "tickets customers complaints refunds"},
}

// benchCard is the i-th synthetic card's text: name, description and capability tags as the
// registry indexes them.
func benchCard(r *rand.Rand, i int) string {
	d := benchDomains[r.IntN(len(benchDomains))]
	pick := func(s string, n int) string {
		f := strings.Fields(s)
		r.Shuffle(len(f), func(a, b int) { f[a], f[b] = f[b], f[a] })
		return strings.Join(f[:min(n, len(f))], " ")
	}
	o := benchDomains[r.IntN(len(benchDomains))]
	return fmt.Sprintf("%s %s agent %d. I %s %s, and sometimes %s %s, for clients who need it fast and right. %s %s",
		pick(d.nouns, 1), d.role, i, pick(d.verbs, 2), pick(d.nouns, 4), pick(o.verbs, 1), pick(o.nouns, 2), pick(d.verbs, 1), pick(d.nouns, 2))
}

var benchQueries = []string{
	"someone who can turn French contracts into English",
	"I need my Solidity vault checked for reentrancy before launch",
	"who can do my German VAT return",
	"translate",
	"security audit",
	"localisation",
	"tax accountant",
	"help me find a lawyer to review a lease",
	"summarize research papers about batteries",
	"design a logo",
	"book flights and hotels for a conference in Berlin",
	"kubernetes deployment",
}

// benchN is how many cards the benchmarks index: 100,000, or $SURETY_BENCH_CARDS.
func benchN() int {
	if v, err := strconv.Atoi(os.Getenv("SURETY_BENCH_CARDS")); err == nil && v > 0 {
		return v
	}
	return 100_000
}

func benchIndex(b *testing.B, m *semantic.Model) *semantic.Index {
	b.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	x := semantic.NewIndex()
	for i := range benchN() {
		x.Put(int64(i), m.Vector(search.Terms(benchCard(r, i))))
	}
	return x
}

// BenchmarkSemanticSearch measures a semantic query over 100,000 synthetic cards
// ($SURETY_BENCH_CARDS to change it): the query's analysis and vector, then the 200 nearest
// cards. It reports p50 and p99 over 1,000 queries of Search (sign-code prefilter, then
// exact scores), exact-p99-ms over 1,000 queries of SearchExact in alternation with them
// (every row compared: the same run's reference), and recall200, the share of SearchExact's
// 200 that Search finds, over the queries. Target: p99 <= 5 ms (a hybrid search's part).
func BenchmarkSemanticSearch(b *testing.B) {
	m := semantic.Default()
	x := benchIndex(b, m)
	runtime.GC() // the build's garbage is not the searches' to collect
	b.ResetTimer()
	for range b.N {
		lat := make([]time.Duration, 0, 1000)
		exact := make([]time.Duration, 0, 1000)
		found, asked := 0, 0
		for i := range 1000 {
			q := benchQueries[i%len(benchQueries)]
			start := time.Now()
			hits := x.Search(m.Vector(search.Terms(q)), 200)
			lat = append(lat, time.Since(start))
			start = time.Now()
			all := x.SearchExact(m.Vector(search.Terms(q)), 200)
			exact = append(exact, time.Since(start))
			if len(hits) != 200 || len(all) != 200 {
				b.Fatalf("%q: %d hits, %d exact", q, len(hits), len(all))
			}
			if i < len(benchQueries) {
				in := map[int64]bool{}
				for _, h := range all {
					in[h.ID] = true
				}
				for _, h := range hits {
					if in[h.ID] {
						found++
					}
				}
				asked += len(all)
			}
		}
		b.StopTimer()
		slices.Sort(lat)
		slices.Sort(exact)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(exact[len(exact)*99/100].Microseconds())/1000, "exact-p99-ms")
		b.ReportMetric(float64(found)/float64(asked), "recall200")
		b.StartTimer()
	}
}

// BenchmarkSemanticBuild measures vectorizing and indexing 100,000 synthetic cards (their
// analysis included). Target: well under the 60 s the whole index build may take.
func BenchmarkSemanticBuild(b *testing.B) {
	m := semantic.Default()
	for range b.N {
		start := time.Now()
		x := benchIndex(b, m)
		b.ReportMetric(time.Since(start).Seconds(), "build-s")
		if x.Len() != benchN() {
			b.Fatalf("%d vectors", x.Len())
		}
	}
}
