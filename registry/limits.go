package registry

import "time"

// Limits and timeouts of the registry, in one place.

// MaxCardSize bounds a signed card, in bytes (either form, as received and as stored).
const MaxCardSize = 16 << 10

// maxCardSignatures bounds the signatures of an A2A card a node tries: each costs a
// signature check, and a free DID may send the card.
const maxCardSignatures = 4

// MaxQueryText bounds a search's text, in characters (search.ParseQuery keeps the first
// search.MaxQueryTerms terms of it).
const MaxQueryText = 500

// Searches.
const (
	// searchWait is how long a search waits for room when Config.MaxSearches run already,
	// before it fails with ErrBusy: a burst passes, a flood is refused.
	searchWait = 250 * time.Millisecond
	// minCandidates and maxCandidates bound the matches a search ranks in full (10 × its
	// limit, within them): each is a reputation read and, in hybrid mode, a vector compared.
	minCandidates = 200
	maxCandidates = 1000
)

// Limits on a card's fields.
const (
	maxName         = 100
	maxDescription  = 2000
	maxCapabilities = 32
	maxCapability   = 64
	maxEndpoints    = 8
	// defaultUnstakedPerMinute bounds unstaked registrations per DID and per source.
	defaultUnstakedPerMinute = 6
	// MaxUnstakedCards bounds the unstaked cards a node holds (Config.MaxUnstaked): a DID
	// costs nothing, so beyond it each new unstaked card replaces the one received longest
	// ago. Staked cards are not counted: each stands on stake.
	MaxUnstakedCards = 10_000
	// maxCardAhead is how far in the future a card's updated time may be (clock skew).
	maxCardAhead = 5 * time.Minute
)

// Network: capability discovery, the DHT, anti-entropy.
const (
	// reprovideEvery is how often a node announces again what it provides: the DHT forgets
	// provider records after 48 hours.
	reprovideEvery = 22 * time.Hour
	// maxProvided bounds the capabilities a node announces (each costs DHT traffic).
	maxProvided = 10_000
	// discoverEvery bounds how often one capability is looked up in the network, and
	// discoverRetry how soon a lookup that reached no provider may run again.
	discoverEvery = time.Minute
	discoverRetry = 5 * time.Second
	// discoverBackoffMax caps the wait before a capability that no provider answered for is
	// looked up again: discoverRetry twice, then doubled for each such lookup in a row.
	discoverBackoffMax = 5 * time.Minute
	// maxDiscovered bounds the capabilities whose next lookup time is remembered; past it
	// the entries whose time passed are forgotten, or else the one due soonest.
	maxDiscovered = 10_000
	// maxLookups bounds the network lookups running at once.
	maxLookups = 4
	// lookupsPerSource bounds the lookups one source (a client address, Query.Source) has
	// running, so that no client holds every slot; lookupSourceEvery and lookupSourceBurst
	// bound the lookups it starts: 5, then one every 10 s. A search over them answers from
	// the index alone; joining a running lookup is free. maxLookupSources bounds the sources
	// remembered (those with a full budget are forgotten first).
	lookupsPerSource  = 2
	lookupSourceEvery = 10 * time.Second
	lookupSourceBurst = 5
	maxLookupSources  = 10_000
	// discoverTimeout bounds a network lookup, providers and fetches together.
	discoverTimeout = 3 * time.Second
	// maxSharedAnswers bounds the distinct queries whose answers a lookup keeps for their
	// followers (one search per query and change); past it a new query's followers search
	// each for themselves.
	maxSharedAnswers = 64
	// maxProviders is how many providers one lookup asks.
	maxProviders = 5
	// maxServed is how many cards one answer carries.
	maxServed = 100
	// maxRequest bounds a request on AgentsProtocol.
	maxRequest = 1 << 10
	// maxSyncCards bounds the cards a node offers to anti-entropy: every staked card first,
	// then the most recently received.
	maxSyncCards = 100_000
	// spreadQueue bounds the DIDs whose cards accepted here wait to be gossiped and put in
	// the DHT (Network.spread; one card per DID waits, the newest).
	spreadQueue = 1024
	// spreadWait bounds how long a staked card's registration waits for room in a full
	// outbox; past it the card (stored) is left to anti-entropy.
	spreadWait = 5 * time.Millisecond
	// spreadWarnEvery bounds how often the log says staked cards were left to anti-entropy.
	spreadWarnEvery = 10 * time.Second
	// maxUnstakedSpread bounds what the cards waiting in the outbox weigh (their JWS bytes)
	// when an unstaked card is added: anyone may register unstaked cards, so past it (or
	// with the outbox full) an unstaked card is stored and not queued, left to anti-entropy,
	// and its registrant never waits for room. A staked card waits at most spreadWait.
	maxUnstakedSpread = 4 << 20
	// verifiedCardsKept bounds the cards whose check the DHT's validator remembers
	// (verifiedCards): more than spreadQueue, so that a card still has its entry when its
	// DHT put starts.
	verifiedCardsKept = 4 * spreadQueue
	// dhtWriteTimeout bounds a DHT put or provider announcement; dhtLookupTimeout a lookup.
	dhtWriteTimeout  = 30 * time.Second
	dhtLookupTimeout = 10 * time.Second
	// serveTimeout bounds answering one AgentsProtocol request.
	serveTimeout = 10 * time.Second
	// localReadTimeout bounds a read of this node's own index or stake for a peer's request.
	localReadTimeout = 5 * time.Second
)

// Kept answers (answers.go).

// maxAnswers bounds the index answers the registry keeps (answerCache), and maxAnswerBytes
// what they weigh with the bodies kept with them: an answer is at most maxCandidates hits,
// a body up to 100 cards of up to MaxCardSize (and the cards may be anyone's, free ones
// too), so the count alone would not bound the memory. An answer that would weigh more than
// maxAnswerBytes/16 is not kept (nor a body that would make it so).
const (
	maxAnswers     = 128
	maxAnswerBytes = 16 << 20
)

// maxJudged bounds the rules that read the indexes per endWrite or put: review 41's
// concern, a free identity's write must not hold the answers' lock for tens of ms.
const maxJudged = 16
