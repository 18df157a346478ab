package benchtable

// Source names one figure of a run: a benchmark of a package (its path below the module, or
// GasSnapshot for a forge test) and the unit of the metric read from it.
type Source struct {
	Pkg, Bench, Unit string
}

// Range is a published figure that was not measured in the run, from Lo to Hi (equal for a
// single value), in the unit of the figures compared with it.
type Range struct {
	Lo, Hi float64
	// Cite says where the figure comes from.
	Cite string
}

// Reference is what a figure is compared with: another figure of the same run, or a
// published one.
type Reference struct {
	Label string
	// From is the figure measured in the run; unused when Published is set.
	From      Source
	Published *Range
	// Receipts marks a gas reference measured from transaction receipts (intrinsic gas and
	// cold storage included): a forge snapshot's figure (one test call, no intrinsic costs,
	// storage warm across steps) is not comparable with it, and Build refuses the pair.
	Receipts bool
}

// Target is a bound that an issue sets for a figure. It bounds the value, in the base unit
// of its dimension (seconds, per second, gas), or the ratio when Ratio is set. Max and Min
// are ignored when zero.
type Target struct {
	Text     string
	Max, Min float64
	Ratio    bool
}

// Row is one line of the table.
type Row struct {
	Figure string
	From   Source
	// Ref is the key of the row's reference in Spec.References.
	Ref    string
	Target *Target
	Note   string
	// Alone is a row compared with nothing: no reference, no ratio (one step of a lifecycle
	// whose reference is published only whole, or a forge figure beside receipts). Ref and
	// Target must then be empty; a row without a reference that is not Alone is an error.
	Alone bool
}

// Spec is the whole table: the module whose packages the sources name, the references,
// and the rows in order.
type Spec struct {
	Module     string
	References map[string]Reference
	Rows       []Row
}

// ERC-8004's giveFeedback (its reputation registry's write) costs from ERC8004FeedbackGasLo to
// ERC8004FeedbackGasHi gas per feedback: the published, measured figure that Surety's
// benchmark issue quotes. Surety compares a bounty's settlement, and the anchor of an audit
// epoch (which covers any number of audits), with one feedback.
const (
	ERC8004FeedbackGasLo = 131_528
	ERC8004FeedbackGasHi = 213_372
)

// The ERC-8183 reference implementation's gas for one job's lifecycle, createJob → setBudget →
// fund → submit → complete with an ERC-20: erc-8183/base-contracts at commit c67e160
// (AgenticCommerce behind its UUPS proxy, with its own compiler settings), measured on Anvil
// from the five receipts, as issue 29 quotes it: ERC8183RefLifecycleGas in steady state (not
// the contract's first job), ERC8183RefLifecycleGasFirst for a fresh deployment's first job.
// The reference's code is read, never built, by this repository.
const (
	ERC8183RefLifecycleGas      = 494_079
	ERC8183RefLifecycleGasFirst = 531_338
)

// throughput85 is the identity issue's target for envelopes: at least 0.85 of the raw
// primitive's throughput, that is at most 1/0.85 of its time per operation.
var throughput85 = &Target{Text: "≥ 0.85× raw throughput (ratio ≤ 1.18)", Max: 1 / 0.85, Ratio: true}

func maxTime(text string, seconds float64) *Target { return &Target{Text: text, Max: seconds} }

// atLeast bounds a figure from below, where higher is better (a score, a rate).
func atLeast(text string, x float64) *Target { return &Target{Text: text, Min: x} }

// Surety is the table `make bench` writes. Every Go benchmark of the project appears in it,
// as a row or as a reference; a new benchmark needs a row here before `make bench` passes.
func Surety() Spec {
	const (
		identity  = "identity"
		benchref  = "internal/benchref"
		registry  = "registry"
		semantic  = "registry/semantic"
		groups    = "groups"
		repu      = "reputation"
		envSign   = "BenchmarkEnvelopeVsRaw/sign/"
		envVerify = "BenchmarkEnvelopeVsRaw/verify/"
		gasBench  = "BenchmarkHappyPathGas/"
		load      = "BenchmarkPublicNodeLoad"
	)
	relevance := func(unit string) Source { return Source{registry, "BenchmarkRelevance", unit} }
	refs := map[string]Reference{
		"ed25519-sign":   {Label: "raw ed25519 sign, 768 B (benchref)", From: Source{benchref, "BenchmarkEd25519Sign", "ns/op"}},
		"ed25519-verify": {Label: "raw ed25519 verify, 768 B (benchref)", From: Source{benchref, "BenchmarkEd25519Verify", "ns/op"}},
		// The envelope rows' references: the raw primitive on the same input, timed in
		// alternation with the envelope operation in one benchmark.
		"ed25519-sign-pair":   {Label: "raw ed25519 sign, same input, alternating", From: Source{identity, envSign + "ed25519", "raw-ns"}},
		"ed25519-verify-pair": {Label: "raw ed25519 verify, same input, alternating", From: Source{identity, envVerify + "ed25519", "raw-ns"}},
		"secp256k1-sign":      {Label: "raw secp256k1 sign, same input, alternating (go-ethereum)", From: Source{identity, envSign + "secp256k1", "raw-ns"}},
		"secp256k1-verify":    {Label: "raw secp256k1 verify, same input, alternating (go-ethereum)", From: Source{identity, envVerify + "secp256k1", "raw-ns"}},
		"sqlite-insert":       {Label: "raw SQLite insert, autocommit, WAL (benchref)", From: Source{benchref, "BenchmarkSQLiteInsert", "ns/op"}},
		"sqlite-read":         {Label: "raw SQLite read by key, 100k rows (benchref)", From: Source{benchref, "BenchmarkSQLiteRead", "ns/op"}},
		"echo":                {Label: "bare echo handler, same JSON (benchref)", From: Source{benchref, "BenchmarkEchoHandler", "ns/op"}},
		"node-empty":          {Label: "the same process on an empty database (BenchmarkNodeMemory)", From: Source{"node", "BenchmarkNodeMemory", "empty-peak-MB"}},
		"recompute":           {Label: "bare Compute, same size (BenchmarkRecompute)", From: Source{repu, "BenchmarkRecompute", "ns/op"}},
		"repu-heap":           {Label: "Go heap's peak, same span (sampled every 10 ms)", From: Source{repu, "BenchmarkReputationQuery", "heap-peak-MB"}},
		"register-p50":        {Label: "local registration p50 (BenchmarkRegister)", From: Source{registry, "BenchmarkRegister", "p50-ms"}},
		"info-http":           {Label: "GET /v1/info, same 8 clients and server, same run", From: Source{"node", "BenchmarkRegisterHTTP", "info-req/s"}},
		"semantic-exact":      {Label: "semantic search comparing every row (SearchExact), p99, same run", From: Source{semantic, "BenchmarkSemanticSearch", "exact-p99-ms"}},
		"info-rps":            {Label: "GET /v1/info, 8 clients, same run", From: Source{"api", "BenchmarkAgentsThroughput", "info-req/s"}},
		"propagation-p99":     {Label: "a card's gossip to 19 peers, p99 (BenchmarkPropagation20)", From: Source{registry, "BenchmarkPropagation20", "p99-ms"}},
		// The relevance rows' references: the search before issue 30, measured by the same
		// benchmark on the same cards (registry/relevance_test.go's legacySearch).
		"legacy-ndcg10":         {Label: "keyword search before #30, same run", From: relevance("legacy-ndcg10")},
		"legacy-ndcg10/natural": {Label: "keyword search before #30, same run", From: relevance("legacy-ndcg10/natural")},
		"legacy-ndcg10/keyword": {Label: "keyword search before #30, same run", From: relevance("legacy-ndcg10/keyword")},
		"legacy-ndcg10/variant": {Label: "keyword search before #30, same run", From: relevance("legacy-ndcg10/variant")},
		"legacy-ndcg10/heldout": {Label: "keyword search before #30, same run", From: relevance("legacy-ndcg10/heldout")},
		"legacy-recall10":       {Label: "keyword search before #30, same run", From: relevance("legacy-recall10")},
		"load-rss-idle":         {Label: "node 0's RSS before the attack (BenchmarkPublicNodeLoad)", From: Source{"testnet/e2e", load, "rss-idle-MB"}},
		"load-db-bound":         {Label: "what quotas and write rates let the attack store (loadDBBound)", From: Source{"testnet/e2e", load, "db-bound-MB"}},
		"load-idle-p50":         {Label: "the same write before the attack, p50", From: Source{"testnet/e2e", load, "idle-p50-ms"}},
		"erc8004": {Label: "ERC-8004 giveFeedback, one feedback", Published: &Range{Lo: ERC8004FeedbackGasLo, Hi: ERC8004FeedbackGasHi,
			Cite: "published figure quoted by the benchmark issue"}},
		"erc8183": {Label: "ERC-8183 reference (c67e160), same lifecycle, steady state", Published: &Range{Lo: ERC8183RefLifecycleGas, Hi: ERC8183RefLifecycleGas,
			Cite: "measured on Anvil at the reference's commit, quoted by issue 29"}, Receipts: true},
		"erc8183-first": {Label: "ERC-8183 reference (c67e160), a fresh deployment's first job", Published: &Range{Lo: ERC8183RefLifecycleGasFirst, Hi: ERC8183RefLifecycleGasFirst,
			Cite: "measured on Anvil at the reference's commit, quoted by issue 29"}, Receipts: true},
	}
	rows := []Row{
		{Figure: "envelope sign, EdDSA", From: Source{identity, envSign + "ed25519", "envelope-ns"}, Ref: "ed25519-sign-pair", Target: throughput85},
		{Figure: "envelope verify, EdDSA (replay check included)", From: Source{identity, envVerify + "ed25519", "envelope-ns"}, Ref: "ed25519-verify-pair", Target: throughput85},
		{Figure: "envelope sign, ES256K", From: Source{identity, envSign + "secp256k1", "envelope-ns"}, Ref: "secp256k1-sign", Target: throughput85},
		{Figure: "envelope verify, ES256K (replay check included)", From: Source{identity, envVerify + "secp256k1", "envelope-ns"}, Ref: "secp256k1-verify", Target: throughput85,
			Note: "the verifier caches the key uncompressed; raw decompresses the DID's 33 bytes each time"},
		{Figure: "raw ed25519 sign of the envelope's signing input", From: Source{identity, envSign + "ed25519", "raw-ns"}, Ref: "ed25519-sign",
			Note: "one primitive in two benchmarks: the gap from 1 is this run's noise"},
		{Figure: "raw ed25519 verify of the envelope's signing input", From: Source{identity, envVerify + "ed25519", "raw-ns"}, Ref: "ed25519-verify",
			Note: "one primitive in two benchmarks: the gap from 1 is this run's noise"},

		{Figure: "GET /v1/info, node's echo stack", From: Source{"api", "BenchmarkInfo", "ns/op"}, Ref: "echo",
			Note: "middleware (log, recover, timeout) and a chain head read"},

		{Figure: "register a card, p50 (10k cards)", From: Source{registry, "BenchmarkRegister", "p50-ms"}, Ref: "sqlite-insert", Target: maxTime("p50 ≤ 2 ms", 0.002)},
		{Figure: "register a card, p99 (10k cards)", From: Source{registry, "BenchmarkRegister", "p99-ms"}, Ref: "sqlite-insert", Target: maxTime("p99 ≤ 10 ms", 0.010)},
		{Figure: "register a card, p50 (100k cards held)", From: Source{registry, "BenchmarkRegisterLarge", "p50-ms"}, Ref: "sqlite-insert",
			Note: "10k staked registrations timed after 100k stored; SURETY_BENCH_REGISTER_HELD sets the 100k"},
		{Figure: "register a card, p99 (100k cards held)", From: Source{registry, "BenchmarkRegisterLarge", "p99-ms"}, Ref: "sqlite-insert", Target: maxTime("p99 ≤ 10 ms", 0.010)},
		{Figure: "a card write judged against the kept answers, worst case", From: Source{registry, "BenchmarkAnswerWrite", "ns/op"}, Ref: "sqlite-insert",
			Note: "held under the kept answers' lock at every card write: 128 kept answers of 32 prefixes that match nothing against an unstaked card of 1,100 terms (a free identity's write); 22.3 ms a write before review 41's binary searches"},
		{Figure: "card registrations over HTTP, 8 clients", From: Source{"node", "BenchmarkRegisterHTTP", "registrations/s"}, Ref: "info-http",
			Target: atLeast("≥ 1,000/s", 1000), Note: "8,000 fresh staked DIDs; the API's middleware and per-address write limit as served (each client sends from 8 loopback addresses); SQLite file, libp2p host attached"},
		{Figure: "search 100k cards, p50 (every kind, both modes)", From: Source{registry, "BenchmarkSearch", "p50-ms"}, Ref: "sqlite-read",
			Note: "100k cards as a node holds them: 90,000 staked, 10,000 unstaked (a node holds at most MaxUnstakedCards, 10,000); earlier tables measured a tenth staked, which no node holds past 11,111 cards (docs/SEARCH.md)"},
		{Figure: "search 100k cards, p99 (every kind, both modes)", From: Source{registry, "BenchmarkSearch", "p99-ms"}, Ref: "sqlite-read", Note: "no target of its own: each kind below has one"},
		{Figure: "search p99, keyword mode, words (OR-ed, ranked)", From: Source{registry, "BenchmarkSearch", "p99-ms/text"}, Ref: "sqlite-read", Target: maxTime("p99 ≤ 5 ms", 0.005)},
		{Figure: "search p99, keyword mode, a natural sentence", From: Source{registry, "BenchmarkSearch", "p99-ms/sentence"}, Ref: "sqlite-read", Target: maxTime("p99 ≤ 5 ms", 0.005)},
		{Figure: "search p99, keyword mode, prefix*", From: Source{registry, "BenchmarkSearch", "p99-ms/prefix"}, Ref: "sqlite-read", Target: maxTime("p99 ≤ 5 ms", 0.005)},
		{Figure: "search p99, keyword mode, \"phrase\"", From: Source{registry, "BenchmarkSearch", "p99-ms/phrase"}, Ref: "sqlite-read", Target: maxTime("p99 ≤ 5 ms", 0.005)},
		{Figure: "search p99, capability (with its hierarchy)", From: Source{registry, "BenchmarkSearch", "p99-ms/cap"}, Ref: "sqlite-read", Target: maxTime("p99 ≤ 5 ms", 0.005)},
		{Figure: "search p99, keyword mode, text + capability", From: Source{registry, "BenchmarkSearch", "p99-ms/text+cap"}, Ref: "sqlite-read", Target: maxTime("p99 ≤ 5 ms", 0.005)},
		{Figure: "search p99, everything (ranked)", From: Source{registry, "BenchmarkSearch", "p99-ms/all"}, Ref: "sqlite-read", Target: maxTime("p99 ≤ 5 ms", 0.005)},
		{Figure: "search p99, keyword mode, a word no staked card holds", From: Source{registry, "BenchmarkSearch", "p99-ms/unstaked"}, Ref: "sqlite-read", Target: maxTime("p99 ≤ 5 ms", 0.005),
			Note: "the stake tier finds no match, so the unstaked cards' postings are scored (about 1,000 of them)"},
		{Figure: "search p99, hybrid mode (the default), words", From: Source{registry, "BenchmarkSearch", "p99-ms/hybrid-text"}, Ref: "sqlite-read", Target: maxTime("p99 ≤ 5 ms", 0.005)},
		{Figure: "search p99, hybrid mode (the default), a natural sentence", From: Source{registry, "BenchmarkSearch", "p99-ms/hybrid-sentence"}, Ref: "sqlite-read", Target: maxTime("p99 ≤ 5 ms", 0.005)},
		{Figure: "search p99, hybrid mode (the default), prefix*", From: Source{registry, "BenchmarkSearch", "p99-ms/hybrid-prefix"}, Ref: "sqlite-read", Target: maxTime("p99 ≤ 5 ms", 0.005)},
		{Figure: "search p99, hybrid mode (the default), \"phrase\"", From: Source{registry, "BenchmarkSearch", "p99-ms/hybrid-phrase"}, Ref: "sqlite-read", Target: maxTime("p99 ≤ 5 ms", 0.005)},
		{Figure: "search p99, hybrid mode (the default), text + capability", From: Source{registry, "BenchmarkSearch", "p99-ms/hybrid-text+cap"}, Ref: "sqlite-read", Target: maxTime("p99 ≤ 5 ms", 0.005)},
		{Figure: "search p99, hybrid mode (the default), a word no staked card holds", From: Source{registry, "BenchmarkSearch", "p99-ms/hybrid-unstaked"}, Ref: "sqlite-read", Target: maxTime("p99 ≤ 5 ms", 0.005)},
		{Figure: "the index's part of a search, hybrid \"phrase\", p99", From: Source{registry, "BenchmarkHybridIndex", "p99-ms/hybrid-phrase"}, Ref: "sqlite-read",
			Note: "BenchmarkHybridIndex: the text and vector indexes alone (no SQLite, no kept answers, no HTTP), the same corpus built in memory; the search rows above include it"},
		{Figure: "the index's part of a search, hybrid text + capability, p99", From: Source{registry, "BenchmarkHybridIndex", "p99-ms/hybrid-text+cap"}, Ref: "sqlite-read",
			Note: "the nearest in meaning among the cards under the capability (docs/SEARCH.md)"},
		{Figure: "the index's part of a search, keyword \"phrase\", p99", From: Source{registry, "BenchmarkHybridIndex", "p99-ms/phrase"}, Ref: "sqlite-read"},
		{Figure: "the index's part of a search, keyword text + capability, p99", From: Source{registry, "BenchmarkHybridIndex", "p99-ms/text+cap"}, Ref: "sqlite-read"},
		{Figure: "search index build, 100k cards from SQLite", From: Source{registry, "BenchmarkIndexBuild", "build-s"}, Ref: "sqlite-read", Target: maxTime("< 60 s", 60)},
		{Figure: "search relevance, nDCG@10 (judged set, all queries)", From: relevance("ndcg10"), Ref: "legacy-ndcg10", Target: atLeast("≥ 0.80", 0.80),
			Note: "Registry.Search on registry/testdata/relevance: 327 cards in ~25 domains with near-misses, 100 queries with graded judgments; reference: the keyword search before issue 30 on the same cards, same run"},
		{Figure: "search relevance, nDCG@10, natural-language queries", From: relevance("ndcg10/natural"), Ref: "legacy-ndcg10/natural", Target: atLeast("≥ 0.70", 0.70),
			Note: "sentences such as \"who can do my German VAT return\""},
		{Figure: "search relevance, nDCG@10, keyword queries", From: relevance("ndcg10/keyword"), Ref: "legacy-ndcg10/keyword"},
		{Figure: "search relevance, nDCG@10, variants and aliases", From: relevance("ndcg10/variant"), Ref: "legacy-ndcg10/variant",
			Note: "\"translator\", \"localisation\", \"pentester\", \"taxes\", \"k8s\""},
		{Figure: "search relevance, nDCG@10, heldout split", From: relevance("ndcg10/heldout"), Ref: "legacy-ndcg10/heldout",
			Note: "half of each kind, never used for tuning: the check that what was tuned on dev carries over"},
		{Figure: "search relevance, recall@10", From: relevance("recall10"), Ref: "legacy-recall10",
			Note: "share of the cards graded ≥ 2 in the top 10, out of at most 10"},
		{Figure: "group thread: the anti-entropy listing of 2,000 posts (~6 KiB each)", From: Source{groups, "BenchmarkPostsSetIDs", "ns/op"}, Ref: "sqlite-read",
			Note: "reads the hashes stored with the posts, not the envelopes"},
		{Figure: "capability search for a tag the node never saw, p99", From: Source{registry, "BenchmarkCapabilitySearchUnseenTag", "p99-ms"}, Ref: "sqlite-read",
			Target: maxTime("p99 ≤ 50 ms", 0.050), Note: "answers from the local index; the provider lookup runs in the background (issue 30)"},
		{Figure: "semantic search 100k cards (query vector + 200 nearest), p50", From: Source{semantic, "BenchmarkSemanticSearch", "p50-ms"}, Ref: "semantic-exact"},
		{Figure: "semantic search 100k cards (query vector + 200 nearest), p99", From: Source{semantic, "BenchmarkSemanticSearch", "p99-ms"}, Ref: "semantic-exact", Target: maxTime("p99 ≤ 20 ms", 0.020),
			Note: "int8 vectors, 128 dimensions: a sign-code prefilter, then the candidates' exact scores; reference: every row compared, same queries, in alternation"},
		{Figure: "semantic search 100k cards, recall@200 against every row compared", From: Source{semantic, "BenchmarkSemanticSearch", "recall200"}, Alone: true,
			Note: "the share of the exact 200 nearest that the prefilter's answer holds, over the benchmark's 12 queries"},
		{Figure: "GET /v1/agents, 8 clients, 100k cards", From: Source{"api", "BenchmarkAgentsThroughput", "agents-req/s"}, Ref: "info-rps", Target: &Target{Text: "≥ 2,000 req/s", Min: 2000},
			Note: "real SQLite, loopback listener, a client a source address; 12 queries of every kind in turn, hybrid and keyword, 100k cards as a node holds them (90,000 staked) while 50 cards a second are written, nine in ten staked (each forgets the kept answers it can change: a staked one every text answer; an unstaked one only those it could rank into, by the rank rule and the prefilter's thresholds, docs/SEARCH.md; a kept answer is sent as the body kept with it, with its Content-Length); the per-address search rate raised out of the way and one search slot per client (capacity, not the public limits: 20/s, burst 300, per address; 2×GOMAXPROCS searches at once); higher is better"},
		{Figure: "GET /v1/agents, 8 clients, 100k cards, no answer kept", From: Source{"api", "BenchmarkAgentsThroughput", "agents-unkept-req/s"}, Ref: "info-rps",
			Note: "the same queries made new each time (trailing spaces): every search computed, the cards it shows may be kept; also the floor under attack, when nothing kept serves (a staked agent re-registering with new words forgets every text answer at each write, and a stream of distinct queries evicts the kept ones); higher is better"},
		{Figure: "GET /v1/agents against GET /v1/info, same run", From: Source{"api", "BenchmarkAgentsThroughput", "agents-req/s"}, Ref: "info-rps", Target: &Target{Text: "≥ 0.5× /v1/info", Min: 0.5, Ratio: true},
			Note: "ratio of the two rates: higher is better"},
		{Figure: "semantic index build, 100k cards (analysis, vectors, index)", From: Source{semantic, "BenchmarkSemanticBuild", "build-s"}, Ref: "sqlite-insert", Target: maxTime("< 60 s", 60),
			Note: "ratio: in single inserts"},
		{Figure: "card reaches 19 peers, p50", From: Source{registry, "BenchmarkPropagation20", "p50-ms"}, Ref: "register-p50"},
		{Figure: "card reaches 19 peers, p99", From: Source{registry, "BenchmarkPropagation20", "p99-ms"}, Ref: "register-p50", Target: maxTime("p99 < 2 s", 2)},

		{Figure: "recompute scores, 100k agents / 1M audits", From: Source{repu, "BenchmarkRecompute", "ns/op"}, Ref: "sqlite-insert", Target: maxTime("≤ 0.5 s", 0.5),
			Note: "ratio: in single inserts"},
		{Figure: "service recomputation at a new score time, 1M audits in memory", From: Source{repu, "BenchmarkReputationQuery", "refresh-s"}, Ref: "recompute", Target: maxTime("≤ 0.3 s", 0.3),
			Note: "every audit's decay summed again: once per clock step; at 1M agents / 10M audits (SURETY_BENCH_AUDITS=10000000) the target is ≤ 5 s"},
		{Figure: "service recomputation at the same score time, 1,000 audits since", From: Source{repu, "BenchmarkReputationQuery", "incremental-s"}, Ref: "recompute", Target: maxTime("≤ 0.3 s", 0.3),
			Note: "incremental: the last recomputation's pair sums carried over, bit for bit a full one's (TestIncrementalMatchesFull); the power iteration runs in full"},
		{Figure: "start: 1M audits read from SQLite into memory", From: Source{repu, "BenchmarkReputationQuery", "load-s"}, Ref: "recompute", Target: maxTime("≤ 1 s per 1M audits", 1),
			Note: "once per start, from a covering index"},
		{Figure: "start: the load and the first computation", From: Source{repu, "BenchmarkReputationQuery", "first-refresh-s"}, Ref: "recompute",
			Note: "until it ends a node answers the scores its last run stored (TestRestartAnswersTheLastScores)"},
		{Figure: "reputation service's peak RSS, 1M audits", From: Source{repu, "BenchmarkReputationQuery", "rss-peak-MB"}, Ref: "repu-heap",
			Note: "VmHWM, reset after the fill: load, three recomputations, 100,000 audits followed; SQLite's page cache included; under the node's memory limit (memlimit, as cmd/surety sets it); the issue's bound, 1.5 GB, is at 1M agents / 10M audits: make bench-large"},
		{Figure: "an accepted audit moves its subject's score", From: Source{repu, "BenchmarkReputationQuery", "follow-ns"}, Ref: "sqlite-insert",
			Note: "added to the audit's own insert"},
		{Figure: "reputation query, p50 (1M audits)", From: Source{repu, "BenchmarkReputationQuery", "p50-ms"}, Ref: "sqlite-read"},
		{Figure: "reputation query, p99 (1M audits)", From: Source{repu, "BenchmarkReputationQuery", "p99-ms"}, Ref: "sqlite-read", Target: maxTime("p99 ≤ 2 ms", 0.002)},

		{Figure: "indexer catch-up, 10k bounty events", From: Source{"escrow", "BenchmarkIndexerCatchUp", "events/s"}, Ref: "sqlite-insert",
			Target: &Target{Text: "10k events < 5 s (≥ 2,000 events/s)", Min: 2000}, Note: "higher is better"},

		{Figure: "POST /v1/bounties on Anvil, p50 (4 clients)", From: Source{"cmd/surety", "BenchmarkPostRoundTrip", "p50-ms"}, Ref: "echo", Target: maxTime("p50 < 50 ms", 0.050),
			Note: "verify, send, receipt, index"},
		{Figure: "POST /v1/bounties on Anvil, p99 (4 clients)", From: Source{"cmd/surety", "BenchmarkPostRoundTrip", "p99-ms"}, Ref: "echo"},

		{Figure: "8 nodes converge after 20 s of churn, p50", From: Source{"testnet/e2e", "BenchmarkChurnConvergence", "p50-s"}, Ref: "propagation-p99",
			Note: "cards, audits, posts, scores, log root; 5 rounds of kills and restarts under writes; the last audits wait for their epoch (2 s) and grace (6 s) to close"},
		{Figure: "8 nodes converge after 20 s of churn, p99", From: Source{"testnet/e2e", "BenchmarkChurnConvergence", "p99-s"}, Ref: "propagation-p99",
			Target: maxTime("within 30 s", 30)},
		{Figure: "6 nodes converge after a 30 s partition heals, p50", From: Source{"testnet/e2e", "BenchmarkPartitionConvergence", "p50-s"}, Ref: "propagation-p99",
			Note: "cards, audits, posts, scores, log heads; 3 rounds; the partition's epochs enter the log once the grace (45 s) passes"},
		{Figure: "6 nodes converge after a 30 s partition heals, p99", From: Source{"testnet/e2e", "BenchmarkPartitionConvergence", "p99-s"}, Ref: "propagation-p99",
			Target: maxTime("within 30 s", 30)},

		{Figure: "public node under attack: node 0's peak RSS (VmHWM)", From: Source{"testnet/e2e", load, "rss-peak-MB"}, Ref: "load-rss-idle",
			Target: &Target{Text: "RSS < 300 MB", Max: 300e6},
			Note:   "10,000 fresh DIDs from 253 source addresses at the write limit (audits, group writes, unstaked cards, junk relays) and 8 peers stalling on sync and flooding gossip, for 90 s, while staked agents write 5 a second"},
		{Figure: "public node under attack: node 0's data dir (SQLite, WAL)", From: Source{"testnet/e2e", load, "db-MB"}, Ref: "load-db-bound",
			Target: &Target{Text: "under the bound the quotas give (ratio ≤ 1)", Max: 1, Ratio: true},
			Note:   "fresh DIDs' audits are refused (audit-no-standing), groups need a bound DID, unstaked cards are capped at 10,000: 64 MiB + 40 MB whatever the attack's length (loadDBBound)"},
		{Figure: "public node under attack: a staked agent's write, p50", From: Source{"testnet/e2e", load, "honest-p50-ms"}, Ref: "load-idle-p50",
			Note: "audits, card updates, group posts from 127.0.0.1; every one must succeed, no answer may be a 5xx, the honest peer must not be penalized (the benchmark fails otherwise)"},
		{Figure: "public node under attack: a staked agent's write, p99", From: Source{"testnet/e2e", load, "honest-p99-ms"}, Ref: "load-idle-p50"},

		{Figure: "a node's registry and reputation at 100k cards and 1M audits: peak RSS", From: Source{"node", "BenchmarkNodeMemory", "peak-MB"}, Ref: "node-empty",
			Note: "a fresh process opens the node's database as the node does at start: registry (search and semantic indexes), reputation through its first computation, one search and one query; VmHWM; make bench-large measures it at 1M cards and 10M audits"},
		{Figure: "same, time to open", From: Source{"node", "BenchmarkNodeMemory", "open-s"}, Ref: "recompute"},

		{Figure: "ETH transfer mined on the embedded chain", From: Source{"internal/chain", "BenchmarkEmbeddedTransfer", "ns/op"}, Ref: "secp256k1-sign",
			Note: "the floor under every node transaction"},
	}
	for _, tok := range []struct{ name, label string }{{"ETH", "ETH"}, {"ERC20", "ERC-20"}, {"ETH-minStake", "ETH, 1 ETH min stake locked by the claim"}} {
		b := gasBench + tok.name
		var target *Target
		switch tok.name {
		case "ETH":
			target = &Target{Text: "≤ 200,000 gas", Max: 200_000}
		case "ETH-minStake":
			target = &Target{Text: "≤ 230,000 gas", Max: 230_000}
		}
		rows = append(rows,
			Row{Figure: "bounty post → claim → submit → accept, " + tok.label, From: Source{"contracts", b, "gas/lifecycle"}, Ref: "erc8004", Target: target,
				Note: "steady state, four transactions"},
			Row{Figure: "same, first bounty of a deployment, " + tok.label, From: Source{"contracts", b, "gas-first"}, Ref: "erc8004", Note: "opens the fee slot"},
			Row{Figure: "post, " + tok.label, From: Source{"contracts", b, "gas-post"}, Ref: "erc8004"},
			Row{Figure: "claim, " + tok.label, From: Source{"contracts", b, "gas-claim"}, Ref: "erc8004"},
			Row{Figure: "submit, " + tok.label, From: Source{"contracts", b, "gas-submit"}, Ref: "erc8004"},
			Row{Figure: "accept (pays worker and fee), " + tok.label, From: Source{"contracts", b, "gas-accept"}, Ref: "erc8004"},
		)
	}
	// ERC-8183 (contracts/jobescrow_gas_test.go): JobEscrow's job lifecycle beside the
	// reference implementation's, in the flow of the reference's own end-to-end test.
	job := func(unit string) Source { return Source{"contracts", "BenchmarkJobLifecycleGas", unit} }
	const step = "one step of the steady-state lifecycle above; the reference's steps are not published, so no ratio"
	rows = append(rows,
		Row{Figure: "ERC-8183 job createJob → setBudget → fund → submit → complete, ERC-20 (JobEscrow)", From: job("gas/lifecycle"), Ref: "erc8183",
			Target: &Target{Text: "≤ 0.5× the reference (247,039 gas)", Max: 0.5, Ratio: true},
			Note:   "steady state (one job done, one funded and open), the reference's end-to-end flow: a 46-byte description, 20 USDC set by the provider, no fees; five transactions; the token is Surety's DevToken, the reference's is OpenZeppelin's MockUSDC (not measured against each other); docs/ERC8183.md shows why storing the job the ERC describes costs more than the target"},
		Row{Figure: "same, first job of a deployment", From: job("gas-first"), Ref: "erc8183-first", Note: "opens the job counter, the escrow's and the provider's balances"},
		// One step each: the reference's figure is the whole lifecycle (its steps are not
		// published), so a step is compared with nothing.
		Row{Figure: "createJob", From: job("gas-createJob"), Alone: true, Note: step},
		Row{Figure: "setBudget", From: job("gas-setBudget"), Alone: true, Note: step},
		Row{Figure: "fund", From: job("gas-fund"), Alone: true, Note: step},
		Row{Figure: "submit", From: job("gas-submit"), Alone: true, Note: step},
		Row{Figure: "complete (pays the provider)", From: job("gas-complete"), Alone: true, Note: step},
	)
	// The Sybil simulation (reputation/sybil_test.go): what the cheapest attack puts in, in
	// ETH, against what the honest top agent put in, in each world it prices attacks in
	// (half, today's and twice the honest stake, padded with 0 to 100,000 junk DIDs).
	for _, stake := range []string{"0.5", "1", "2"} {
		for _, junk := range []struct{ n, label string }{{"0", "no junk"}, {"1000", "1k junk DIDs"}, {"10000", "10k junk DIDs"}, {"100000", "100k junk DIDs"}} {
			bench := "BenchmarkSybilAttackCost/stake=" + stake + "x/junk=" + junk.n
			sybil := func(unit string) Source { return Source{"reputation", bench, unit} }
			world := stake + "× honest stake, " + junk.label
			ref := "honest-top-" + stake + "-" + junk.n
			refs[ref] = Reference{Label: "honest top agent's stake + settled value (simulation, " + world + ")", From: sybil("honest-top-eth")}
			beat := &Target{Text: "more than the honest top agent's stake + settled value (ratio > 1)", Min: 1.000001, Ratio: true}
			rows = append(rows,
				Row{Figure: "Sybil ring, funnel or relay into the top 10: stake + gas + fees (" + world + ")", From: sybil("top10-eth"), Ref: ref, Target: beat,
					Note: "cheapest of the rings (2–12 wallets, one 0.5 ETH or thirty 0.01 ETH bounties per pair), funnels (1–30 leaves into 1–5 hubs) and relays (a hub and 1–10 DIDs of its own, unstaked or staked 5–50% of the hub), 0.1–40 ETH staked per wallet; the stake comes back after unbonding"},
				Row{Figure: "reverse attack, the honest top agent out of the top 10: stake + gas + fees + pay (" + world + ")", From: sybil("reverse-eth"), Ref: ref, Target: beat,
					Note: "backed zero-scores from bounties the honest agent did and was paid for"},
			)
			if junk.n == "0" {
				rows = append(rows, Row{Figure: "Sybil relay mesh into the top 10: stake + gas + fees (" + world + ")", From: sybil("mesh-top10-eth"), Ref: ref, Target: beat,
					Note: "the attack the second review of issue 25 found: a hub feeding 5–40 relays at the minimum stake that settle bounties with each other and the target (backedMesh); junk moves no score, so measured without it"})
			}
			if stake == "1" && junk.n == "0" {
				rows = append(rows,
					Row{Figure: "same, burned (gas + fees) (" + world + ")", From: sybil("top10-burned-eth"), Ref: ref, Note: "at 10 gwei and the dev deployment's 0.5% fee"},
					Row{Figure: "Sybil attack to rank 1: stake + gas + fees (" + world + ")", From: sybil("rank1-eth"), Ref: ref})
			}
		}
	}
	// Surety's ERC-8183 jobs through SuretyHook (contracts.BenchmarkHookPathsGas, from receipts;
	// the forge figures in .gas-snapshot have no intrinsic costs).
	hookPaths := "BenchmarkHookPathsGas/"
	rows = append(rows,
		Row{Figure: "ERC-8183 job through SuretyHook: create → plan → fund → join (1 ETH stake) → submit → approve, ERC-20", From: Source{"contracts", hookPaths + "approve", "gas/path"},
			Ref: "erc8183", Note: "steady state, six transactions: the core's five plus the join's stake lock, and the payout through the pool"},
		Row{Figure: "SuretyHook dispute path: create → plan → fund → join → submit → reject → arbiter's 60/40 split with a 0.5 ETH slash", From: Source{"contracts", hookPaths + "dispute", "gas/path"},
			Ref: "erc8183", Note: "steady state, seven transactions"},
		Row{Figure: "SuretyHook three-milestone job: three linked jobs, each created, planned, funded, joined, submitted, approved", From: Source{"contracts", hookPaths + "milestones3", "gas/path"},
			Ref: "erc8183", Note: "eighteen transactions, a third of it a part"},
		Row{Figure: "SuretyHook dispute path, forge", From: Source{GasSnapshot, "SuretyHookGasTest:test_gas_disputePath()", "gas"}, Alone: true,
			Note: "forge's figure: one test transaction, no intrinsic costs, storage warm across steps; not comparable with the receipts figures above"},
		Row{Figure: "SuretyHook three-milestone job, forge", From: Source{GasSnapshot, "SuretyHookGasTest:test_gas_milestonePath()", "gas"}, Alone: true,
			Note: "forge's figure: one test transaction, no intrinsic costs, storage warm across steps; not comparable with the receipts figures above"},
	)
	rows = append(rows, Row{Figure: "anchor an audit epoch's Merkle root", From: Source{GasSnapshot, "RootAnchorTest:test_anchor_recordsRootAndEmits()", "gas"}, Ref: "erc8004",
		Note: "once per epoch, for any number of audits; ERC-8004 pays per feedback"})
	rows = append(rows, Row{Figure: "ERC-8004 giveFeedback on Surety's registry: an audit (tags, proof URL, leaf hash)", From: Source{GasSnapshot, "ReputationRegistryTest:test_giveFeedback_gasOfAnAudit()", "gas"}, Ref: "erc8004",
		Note: "a client's first feedback to the agent; the snapshot's figure includes the test's own call overhead"})
	return Spec{Module: "github.com/surety-ioa/surety", References: refs, Rows: rows}
}
