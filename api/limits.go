package api

import (
	"time"

	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/groups"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/registry"
)

// Limits and timeouts of the HTTP edge, in one place. A client that is slow or large costs
// the node at most these.
const (
	// maxBody bounds a request body: an envelope at its largest, plus JSON framing.
	maxBody = identity.MaxEnvelopeSize + 4096
	// maxSpecBody bounds PUT /v1/bounties/{id}/spec, a task text.
	maxSpecBody = escrow.MaxSpecBytes
	// maxHeaderBytes bounds a request's header block.
	maxHeaderBytes = 64 << 10
	// maxIdempotencyKey bounds an Idempotency-Key header.
	maxIdempotencyKey = 200

	// defaultReadHeaderTimeout is how long a client has to send its headers.
	defaultReadHeaderTimeout = 10 * time.Second
	// defaultReadTimeout is how long a client has to send a whole request, body included: a
	// slow body holds a connection at most this long.
	defaultReadTimeout = 20 * time.Second
	// defaultIdleTimeout closes a kept-alive connection that sends nothing.
	defaultIdleTimeout = time.Minute
	// defaultRequestTimeout bounds each request's handler (not the event streams, which end
	// when the client leaves or the server shuts down).
	defaultRequestTimeout = 30 * time.Second
	// searchStreamTimeout bounds a search's event stream: the network lookup it follows ends
	// within registry.LookupTimeout; the margin is for the last cards' checks and writes.
	searchStreamTimeout = registry.LookupTimeout + 2*time.Second
	// streamWriteTimeout bounds each event's write to a search's stream: a client that stops
	// reading frees the handler, and the answer it holds, within it.
	streamWriteTimeout = 5 * time.Second

	// defaultWriteRate and defaultWriteBurst bound the writes (POST, PUT) one client address
	// may make: a sustained rate per second, and a burst above it.
	defaultWriteRate  = 50
	defaultWriteBurst = 200
	// defaultRPCRate and defaultRPCBurst bound the JSON-RPC calls (POST /v1/rpc) one client
	// address may make, within its writes.
	defaultRPCRate  = 10
	defaultRPCBurst = 100
	// leafPageRate and leafPageBurst bound the pages of the log's leaves (GET /v1/log/leaves)
	// one client address reads: each is up to 256 leaves and 1 MiB read from SQLite and sent,
	// and anyone may ask. An auditor reading a log of a million leaves at 5 pages a second
	// takes about 13 minutes.
	leafPageRate  = 5
	leafPageBurst = 20
	// searchRate and searchBurst bound the searches (GET /v1/agents) one client address
	// makes: anyone may search, and each costs the node an index scan, up to 1,000 matches
	// ranked, and the cards read. A person, the explorer's search as you type, or a test
	// suite's hundreds of queries stay within them; a loop does not.
	searchRate  = 20
	searchBurst = 300
	// writeLimiterExpiry forgets an address that has not written for this long.
	writeLimiterExpiry = 3 * time.Minute

	// maxOperations bounds the operations held at once (Prefer: respond-async; not on
	// /v1/tx/raw, which always answers synchronously); beyond it writes are answered
	// synchronously. operationKeep is how long a finished one stays
	// readable, operationTimeout bounds one, and operationPoll is how often a stream of a
	// mined one looks for new confirmations.
	maxOperations    = 10_000
	operationKeep    = time.Hour
	operationTimeout = 30 * time.Minute
	operationPoll    = time.Second
	// maxKeptRequest bounds a request kept to run again after a restart, and maxResumes how
	// many restarts an operation is carried on across before it fails as interrupted.
	maxKeptRequest = 64 << 10
	maxResumes     = 3

	// maxInFlightPerAddress bounds the writes one client address has in flight at once that
	// nothing else bounds: the operations it left to the node (Prefer: respond-async), which
	// outlive their request, and its relays (POST /v1/tx/raw), which any funded wallet signs;
	// maxInFlightPerWallet bounds the relays of one wallet. Each holds a body and a receipt
	// poll until its transaction is mined. Past them a write is refused, unsent and its
	// envelope unchecked (429 too-many-in-flight, Retry-After inFlightRetryAfter). A
	// synchronous write from a wallet the node holds is bounded by the request timeout and
	// the write rate, and acts only for a DID bound to that wallet.
	maxInFlightPerAddress = 4
	maxInFlightPerWallet  = 4
	inFlightRetryAfter    = 5 * time.Second
	// rateRetryAfter is the Retry-After of a refusal for going over a rate (writes, JSON-RPC
	// calls, envelopes checked from one address): a token is back within a second.
	rateRetryAfter = time.Second
	// corsMaxAge is how long (seconds) a browser may reuse a preflight's answer before it
	// asks again: ten minutes.
	corsMaxAge = "600"
	// maxRelayBody bounds the bodies of POST /v1/tx/raw and POST /v1/rpc: a signed call of
	// the escrow or the stake registry, in hex, with its JSON framing (a bind with its proof,
	// the largest, is a few KiB).
	maxRelayBody = 64 << 10
	// maxCallAge is how far behind the head eth_call may read through POST /v1/rpc (the
	// state a full node keeps): a wallet reads the head; older blocks are the chain's
	// history, which the node does not serve.
	maxCallAge = 128
	// maxLogRange bounds the blocks one eth_getLogs of POST /v1/rpc spans: the batch of the
	// node's own chain indexers (chainlog.DefaultBatchBlocks), which an auditor's replay uses.
	maxLogRange = 5000
	// maxLogAddresses and maxLogTopicAlternatives bound an eth_getLogs filter: the node's
	// contracts (each once), and a few alternatives per topic.
	maxLogAddresses         = 3
	maxLogTopicAlternatives = 4

	// maxMCPBody bounds a message posted to /mcp (mcp.MaxRequestBody: a tool call carrying
	// an envelope or a task text). maxMCPPerAddress bounds the /mcp requests one client
	// address has in flight (each is a whole stateless MCP session: it holds its body and a
	// tool call's API requests, at most mcp.RequestTimeout); maxMCPRequests bounds them
	// across addresses, counted only once a request's body is read, so that a client that
	// sends no body holds no node-wide slot (503 mcp-busy past it).
	maxMCPBody       = 320 << 10
	maxMCPPerAddress = 4
	maxMCPRequests   = 64
	// maxCachedAgentCards bounds the agents' A2A cards the node keeps signed (one per DID,
	// a few KiB each); past it a new DID takes the place of one held.
	maxCachedAgentCards = 1024
)

// bodyLimits are the routes whose bodies are capped below maxBody: a task text, relayed
// transactions and JSON-RPC, and group envelopes (the groups package refuses larger ones too).
var bodyLimits = map[string]int64{"/v1/bounties/:id/spec": maxSpecBody, "/v1/tx/raw": maxRelayBody, "/v1/rpc": maxRelayBody,
	"/v1/groups/:group_id/members": groups.MaxMembersSize + 4096, "/v1/groups/:group_id/envelopes": groups.MaxPostSize + 4096, "/mcp": maxMCPBody}
