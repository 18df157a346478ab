// Package verify is what an auditor links to check a Surety node's audit log without trusting
// the node: a signed tree head (a JWS by the node's DID), an audit's inclusion proof and the
// consistency of two heads (RFC 6962/9162 proofs), and the log's C2SP checkpoints (signed
// notes, the format of Go's sumdb, rekor and trillian-tessera).
//
// It links the standard library, reputation/merkle and a pure-Go secp256k1 and nothing of the
// node: no libp2p, no SQLite (no cgo), no HTTP server, no chain client
// (internal/repotest.TestVerifierLinksOnlyItself). Fetching what it checks is the caller's:
// GET /v1/log/head, /v1/log/proof/inclusion, /v1/log/proof/consistency and /v1/log/checkpoint
// of any node, and the root a node anchored on chain (RootAnchor.rootAt), which is what
// `surety log verify` compares with.
package verify
