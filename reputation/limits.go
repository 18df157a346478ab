package reputation

import "time"

// Limits and timeouts of reputation, in one place.

// Defaults of LogConfig and ServiceConfig.
const (
	// DefaultEpoch is how much audit time one log append covers, and DefaultGrace how long
	// after its end an epoch closes (it must exceed the envelope lifetime plus the skew).
	DefaultEpoch = time.Hour
	DefaultGrace = 15 * time.Minute
	// defaultRecomputeEvery is how often scores are recomputed when audits arrived.
	defaultRecomputeEvery = 5 * time.Second
	// defaultClock is the step of the time scores are computed at, without a log.
	defaultClock = time.Minute
	// saveScoresEvery is how often Run stores the latest scores (and at its first
	// recomputation and when it stops), for a restart to answer with until it recomputes.
	saveScoresEvery = 10 * time.Minute
	// storeScoresTimeout bounds storing the scores when Run stops.
	storeScoresTimeout = 10 * time.Second
	// savedScoresPart is the size of one row of the stored scores.
	savedScoresPart = 8 << 20
)

// Scored heads (scored.go).
const (
	// KeepScoredHeads is how many scored heads the node keeps (an agent's score history has
	// at most this many points): a week of hourly epochs. Each holds a row per agent scored.
	KeepScoredHeads = 168
	// KeepScoreInputs is how many of the latest scored heads keep their inputs (every audit
	// that counts, and the stake per DID) for GET /v1/log/scores?inputs=1.
	KeepScoreInputs = 4
	// MaxScoreInputs bounds the audits of the inputs a scored head keeps: beyond it an
	// auditor reads the leaves and recomputes (surety log verify --recompute).
	MaxScoreInputs = 5_000
	// MaxScoresPage bounds the agents' scores of one page of GET /v1/log/scores.
	MaxScoresPage = 1000
)

// Audits and held audits.
const (
	// maxEvidenceURI bounds an audit's evidence URI.
	maxEvidenceURI = 512
	// MaxHeld bounds the audits held at once; more are ignored (their senders' nodes keep
	// gossiping them, and anti-entropy catches up later).
	MaxHeld = 1000
	// MaxHeldPerAuditor bounds the audits one auditor bound on chain holds at once; an
	// auditor bound to no wallet holds one, and all of those together MaxHeldUnbound, so
	// fresh keys cannot fill the table.
	MaxHeldPerAuditor = 4
	MaxHeldUnbound    = 50
	// HeldTTL is how long an audit is held before it is given up: by then its epoch has
	// closed in the log, which would refuse it as late anyway.
	HeldTTL = 30 * time.Minute
	// CatchUpWait bounds how long an audit filed here waits for the chain indexes to catch up
	// before its unknown bounty or subject is refused.
	CatchUpWait = 3 * time.Second
	// recheckChunk bounds the DIDs (and the bounties) one recheck query names.
	recheckChunk = 400
	// tick is how often Run looks for epochs to close, at most.
	tick = 500 * time.Millisecond
)

// The log's catch-up from peers.
const (
	maxHeadsAnswer  = 64
	maxLeavesAnswer = 256
	// maxLeavesBytes bounds a leaves answer: fewer leaves than asked for when they are large.
	maxLeavesBytes = 4 << 20
	// MaxCatchUpLeaves bounds the leaves one round fetches from one peer (past one epoch); a
	// node further behind catches up over several rounds.
	MaxCatchUpLeaves = 20_000
	// MaxEpochLeaves is the largest epoch a node adopts from a peer (it holds the epoch's
	// audits in memory while it checks them against the head).
	MaxEpochLeaves = 100_000
	// maxSyncAudits bounds the audits of open epochs a node offers anti-entropy: bound
	// auditors' first, each auditor's newest in turn.
	maxSyncAudits = 100_000
	// confirmers is how many other peers are asked about a head before its epoch is adopted.
	confirmers = 4
	// DefaultQuorum is how many distinct staked nodes must have signed a head (the peer's
	// and those of the peers asked to confirm it) before a node adopts its epoch, unless
	// the head's signer anchored it on chain.
	DefaultQuorum = 2
)

// The log's contents served to anyone (Log.Leaves, GET /v1/log/leaves).
const (
	// MaxLeavesPage bounds the leaves of one page, and MaxLeavesPageBytes their envelopes
	// (past it the page ends early; an envelope is at most 256 KiB): a page costs the node
	// at most MaxLeavesPage leaf reads, two head reads per epoch it names, and about 1 MiB.
	MaxLeavesPage      = 256
	MaxLeavesPageBytes = 1 << 20
	// MaxHeadsPage bounds the signed heads of one page of Log.Heads (GET /v1/log/heads):
	// one range read of the heads' primary key, each head about 600 bytes.
	MaxHeadsPage = 256
)

// The graph's load (liveGraph.load): the reading goroutine hands rows on in batches of
// loadBatchRows (a batch is about 600 KiB at 150 bytes of DIDs and target a row), with
// loadBatches in all, so one fills while the other is filed into the graph.
const (
	loadBatchRows = 4096
	loadBatches   = 3
)

// maxLoadReaders bounds the goroutines that read the graph's load from SQLite at once (one
// connection each), and a table under splitLoadFrom rows is read by one; the load looks at
// loadSamples rows first (one rowid lookup each, about a millisecond in all).
const (
	maxLoadReaders = 4
	splitLoadFrom  = 100_000
	loadSamples    = 256
)

// What a computation holds at its peak besides its pairs and the last snapshot
// (memlimit.Lend): per pair the matrix can hold (speaking: those of auditors with stake that
// counts), its weight and auditor in the trust matrix (12 bytes, and room);
// per agent, the trust matrix's per-agent arrays (its totals, starts and counts, and each
// part's fill: 24 bytes at two CPUs), the power iteration's six vectors (48) and the scores'
// (Relative, Score, Confidence, Weight, and each part's sums: 64). No more: what the lent
// limit does not hold is collected, and the process grows no higher than it did when the
// collector ran back to back over the same live arrays.
const (
	computePairBytes  = 16
	computeAgentBytes = 128
)
