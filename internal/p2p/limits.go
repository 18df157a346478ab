package p2p

import "time"

// Limits and timeouts of the p2p layer, in one place.

// Connections and defaults of Config, RejoinConfig and SyncConfig.
const (
	// connectTimeout bounds dialling one bootstrap peer at start.
	connectTimeout = 5 * time.Second
	// defaultInspectPeriod is how often gossip scores are read.
	defaultInspectPeriod = time.Second
	// defaultRejoinEvery is how often Rejoin looks at its connections; below
	// defaultMinPeers it dials known peers, each within rejoinDialTimeout.
	defaultRejoinEvery = 5 * time.Second
	defaultMinPeers    = 4
	rejoinDialTimeout  = 2 * time.Second
	// DefaultSyncEvery is the time between anti-entropy rounds (exported: a node's
	// configuration shows it), defaultSyncPeers how many peers a round asks, and
	// defaultSyncTimeout one peer's part of a round.
	DefaultSyncEvery   = 10 * time.Second
	defaultSyncPeers   = 3
	defaultSyncTimeout = 20 * time.Second
)

// Scoring of peers outside gossip.
const (
	// penaltyHalfLife is how fast a penalty is forgiven.
	penaltyHalfLife = 10 * time.Minute
	// graylist is gossipsub's graylist threshold, negated: a peer penalized this much is
	// ignored.
	graylist = 80
	// colocationThreshold is how many peers one IP address fields before each of them loses
	// colocationWeight × surplus²: the 4th and 5th score -10 and -40 each, from the 6th they
	// are graylisted. Gossipsub leaves loopback addresses out of the count.
	colocationThreshold = 3
	colocationWeight    = 10
)

// Bounds of the sync protocol.
const (
	maxSyncRequest = 64 << 10 // a request: ids to fetch, buckets to list
	maxSyncAnswer  = 8 << 20  // an answer: items, ids, digests
	// MaxSyncBatch is how many items one get request asks for.
	MaxSyncBatch = 128
	// MaxSyncIDs is how many ids one ids answer carries; a set larger than that in the
	// buckets that differ is caught up over several rounds.
	MaxSyncIDs  = 50_000
	syncBuckets = 256
	// maxServing bounds the requests a node answers at once, one per peer; more are refused.
	maxServing = 8
	// syncWriteStall bounds how long an answer may wait on its reader: each chunk of
	// syncWriteChunk bytes must be taken within it (a reader slower than 32 KiB/s), or the
	// stream is reset and the slot freed. StallPenalty is what that costs the reader in
	// gossip score: three stalls within a penalty half-life graylist it (-80), and a
	// graylisted peer is served nothing.
	syncWriteStall = 2 * time.Second
	syncWriteChunk = 64 << 10
	StallPenalty   = 30
	// BadItemPenalty is what one item that fails its checks costs the peer that sent it, in
	// gossip score (the graylist threshold is -80).
	BadItemPenalty = 50
	// idsFresh is how long a set's listing answers peers: however many ask, a set is listed
	// at most once per idsFresh.
	idsFresh = 2 * time.Second
	// requestWait is how long a peer has to send its request once it opened a stream.
	requestWait = 5 * time.Second
	// unsyncedRetry is how soon a round that left the node unsynced is tried again.
	unsyncedRetry = 2 * time.Second
)
