package identity

import "time"

// Limits and timeouts of identity, in one place: what an envelope, a DID or a key may cost
// the parser, and how long what is signed stays good.
const (
	// MaxEnvelopeSize bounds the envelopes Surety parses.
	MaxEnvelopeSize = 256 << 10
	// maxSigners bounds the signatures of one envelope.
	maxSigners = 16
	// maxDIDLength bounds what the parser looks at; no valid Surety DID is near it.
	maxDIDLength = 512

	// The header cache holds at most maxCachedHeaders headers of at most maxCachedHeader
	// encoded bytes (a did:key kid is under 200 characters): a few MB at most. When full it
	// starts over.
	maxCachedHeaders = 4096
	maxCachedHeader  = 512

	// DefaultSkew is the clock difference an envelope's iat and exp are allowed.
	DefaultSkew = 30 * time.Second
	// DefaultMaxLifetime bounds exp - iat of an envelope.
	DefaultMaxLifetime = 10 * time.Minute
	// defaultMaxNonces bounds the replay cache (nonces seen in their window).
	defaultMaxNonces = 1 << 20
	// defaultNoncesPerSender bounds the replay cache's nonces of one sender.
	defaultNoncesPerSender = 4096
	// replayReserveDiv keeps 1/replayReserveDiv of the replay cache for senders already in
	// it: past the rest, a sender it holds no nonce of is refused (ErrReplayCacheFull).
	replayReserveDiv = 5
	// defaultIngressRate and defaultIngressBurst bound the envelopes one source (a gossip
	// peer, a client address) has checked: a sustained rate per second and a burst above
	// it. A nonce is remembered for one to two replay windows (11 to 22 minutes), so one
	// source holds at most 26,600 of the pool, and filling it up to its reserve takes at
	// least 32 sources.
	defaultIngressRate  = 20
	defaultIngressBurst = 200
	// maxIngressSources bounds the sources whose budgets are tracked; past it the buckets
	// that refilled are dropped first (they are as good as new), then the longest idle.
	maxIngressSources = 4096
	// defaultCacheSize bounds the caches of parsed keys and resolved documents.
	defaultCacheSize = 4096
	// defaultChallengeTTL is how long a registration challenge can be answered.
	defaultChallengeTTL = 5 * time.Minute

	// MaxCredentialSize bounds the vc+jwt credentials (and encodedList strings) Surety
	// parses: a status list of 16 KiB of random bits is about 22 KB encoded.
	MaxCredentialSize = 64 << 10
	// StatusListBits is the size of each status list the node publishes: 131,072 bits
	// (16 KiB), Bitstring Status List's minimum.
	StatusListBits = 1 << 17
	// maxStatusListBytes bounds a decoded bitstring (another issuer's may be longer than
	// the node's): 1 MiB, 8 Mi entries.
	maxStatusListBytes = 1 << 20
	// MaxStatusLists bounds the node's status lists, so at most MaxStatusLists*StatusListBits
	// DIDs (1 Mi) hold an index. An index goes only to a DID staked at the deployment's
	// minimum on chain, and stays with it; past the bound, credentials are issued without
	// credentialStatus and with UnstatusedCredentialLifetime.
	MaxStatusLists = 8
	// StatusCredentialLifetime is how long a credential with a status entry is valid: its
	// status list tells a revocation sooner.
	StatusCredentialLifetime = 30 * 24 * time.Hour
	// UnstatusedCredentialLifetime is how long a credential without a status entry is valid
	// (a DID without stake at the minimum holds no index): short, since only expiry ends it.
	UnstatusedCredentialLifetime = 24 * time.Hour
	// StatusListLifetime is how long a status list credential is valid: a verifier fetches it
	// again after that, so a revocation shows within it even from a copy.
	StatusListLifetime = 10 * time.Minute
	// StatusListCacheTTL is how long the node reuses a status list it computed (reading one
	// costs a key-status lookup per index): a revocation shows in at most this long.
	StatusListCacheTTL = 15 * time.Second
)
