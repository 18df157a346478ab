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
	// defaultCacheSize bounds the caches of parsed keys and resolved documents.
	defaultCacheSize = 4096
	// defaultChallengeTTL is how long a registration challenge can be answered.
	defaultChallengeTTL = 5 * time.Minute
)
