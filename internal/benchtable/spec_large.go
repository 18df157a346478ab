package benchtable

// SuretyLarge is the table `make bench-large` writes (bench/RESULTS-large.md): the node's
// figures at a million agents, the sizes issue 31 sets targets for (1M cards; 1M agents and
// 10M audits), from one run of the benchmarks that take their size from the environment
// (SURETY_BENCH_CARDS, SURETY_BENCH_AUDITS, SURETY_BENCH_SCALE), beside references measured
// in the same run.
func SuretyLarge() Spec {
	const (
		benchref = "internal/benchref"
		registry = "registry"
		semantic = "registry/semantic"
		repu     = "reputation"
	)
	refs := map[string]Reference{
		"sqlite-read":    {Label: "raw SQLite read by key, 100k rows (benchref)", From: Source{benchref, "BenchmarkSQLiteRead", "ns/op"}},
		"recompute":      {Label: "bare Compute, 1M agents / 10M audits (BenchmarkRecompute)", From: Source{repu, "BenchmarkRecompute", "ns/op"}},
		"semantic-exact": {Label: "semantic search comparing every row (SearchExact), p99, same run", From: Source{semantic, "BenchmarkSemanticSearch", "exact-p99-ms"}},
		"repu-heap":      {Label: "Go heap's peak, same span (sampled every 10 ms)", From: Source{repu, "BenchmarkReputationQuery", "heap-peak-MB"}},
		"node-empty":     {Label: "the same process on an empty database (BenchmarkNodeMemory)", From: Source{"node", "BenchmarkNodeMemory", "empty-peak-MB"}},
	}
	search := func(unit string) Source { return Source{registry, "BenchmarkSearch", unit} }
	tenMS := maxTime("p99 ≤ 10 ms", 0.010)
	rows := []Row{
		{Figure: "search 1M cards, p50 (every kind, both modes)", From: search("p50-ms"), Ref: "sqlite-read",
			Note: "as a node holds them: 990,000 staked, 10,000 unstaked (MaxUnstakedCards); earlier tables measured a tenth staked, which no node holds (docs/SEARCH.md)"},
		{Figure: "search 1M cards, p99 (every kind, both modes)", From: search("p99-ms"), Ref: "sqlite-read", Note: "no target of its own: each kind below has one"},
	}
	for _, k := range []struct{ unit, label string }{
		{"text", "keyword mode, words (OR-ed, ranked)"},
		{"sentence", "keyword mode, a natural sentence"},
		{"prefix", "keyword mode, prefix*"},
		{"phrase", "keyword mode, \"phrase\""},
		{"cap", "capability (with its hierarchy)"},
		{"text+cap", "keyword mode, text + capability"},
		{"all", "everything (ranked)"},
		{"unstaked", "keyword mode, a word no staked card holds"},
		{"hybrid-text", "hybrid mode (the default), words"},
		{"hybrid-sentence", "hybrid mode (the default), a natural sentence"},
		{"hybrid-prefix", "hybrid mode (the default), prefix*"},
		{"hybrid-phrase", "hybrid mode (the default), \"phrase\""},
		{"hybrid-text+cap", "hybrid mode (the default), text + capability"},
		{"hybrid-unstaked", "hybrid mode (the default), a word no staked card holds"},
	} {
		rows = append(rows, Row{Figure: "search p99 at 1M cards, " + k.label, From: search("p99-ms/" + k.unit), Ref: "sqlite-read", Target: tenMS})
	}
	rows = append(rows,
		Row{Figure: "search index build, 1M cards from SQLite", From: Source{registry, "BenchmarkIndexBuild", "build-s"}, Ref: "sqlite-read",
			Note: "once per start"},
		Row{Figure: "semantic search 1M cards (query vector + 200 nearest), p99", From: Source{semantic, "BenchmarkSemanticSearch", "p99-ms"}, Ref: "semantic-exact",
			Target: tenMS, Note: "a sign-code prefilter, then the candidates' exact scores; reference: every row compared, same queries, in alternation"},
		Row{Figure: "semantic search 1M cards, recall@200 against every row compared", From: Source{semantic, "BenchmarkSemanticSearch", "recall200"}, Alone: true,
			Note: "the share of the exact 200 nearest that the prefilter's answer holds"},

		Row{Figure: "service recomputation at a new score time, 1M agents / 10M audits in memory", From: Source{repu, "BenchmarkReputationQuery", "refresh-s"}, Ref: "recompute",
			Target: maxTime("≤ 5 s", 5), Note: "every audit's decay summed again: once per clock step"},
		Row{Figure: "service recomputation at the same score time, 1,000 audits since (10M audits)", From: Source{repu, "BenchmarkReputationQuery", "incremental-s"}, Ref: "recompute",
			Target: maxTime("≤ 5 s", 5), Note: "the last recomputation's pair sums carried over, bit for bit a full one's"},
		Row{Figure: "start: 10M audits read from SQLite into memory", From: Source{repu, "BenchmarkReputationQuery", "load-s"}, Ref: "recompute",
			Target: maxTime("≤ 1 s per 1M audits (10 s)", 10)},
		Row{Figure: "start: the load and the first computation (10M audits)", From: Source{repu, "BenchmarkReputationQuery", "first-refresh-s"}, Ref: "recompute"},
		Row{Figure: "reputation service's peak RSS, 1M agents / 10M audits", From: Source{repu, "BenchmarkReputationQuery", "rss-peak-MB"}, Ref: "repu-heap",
			Target: &Target{Text: "RSS ≤ 1.5 GB", Max: 1.5e9}, Note: "VmHWM, reset after the fill, under the node's memory limit (memlimit, as cmd/surety sets it); SQLite's page cache included"},
		Row{Figure: "reputation query, p99 (10M audits)", From: Source{repu, "BenchmarkReputationQuery", "p99-ms"}, Ref: "sqlite-read", Target: maxTime("p99 ≤ 2 ms", 0.002)},

		Row{Figure: "a node's registry and reputation at 1M cards and 10M audits: peak RSS", From: Source{"node", "BenchmarkNodeMemory", "peak-MB"}, Ref: "node-empty",
			Note: "a fresh process opens the node's database as the node does at start: registry (search and semantic indexes), reputation through its first computation, one search and one query; VmHWM"},
		Row{Figure: "same, time to open", From: Source{"node", "BenchmarkNodeMemory", "open-s"}, Ref: "recompute"},
	)
	return Spec{Module: "github.com/surety-ioa/surety", References: refs, Rows: rows}
}
