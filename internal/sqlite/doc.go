// Package sqlite opens Surety's SQLite database and applies the schema migrations that each
// package owns. The database is a single file in the node's data dir, in WAL mode so that the
// HTTP API can read while the indexers write.
//
// Rows derived from a chain are scoped by the chains table (see EnterChain), keyed by chain
// id, genesis hash and contract addresses, so a node that moves to a new chain, or restarts
// its embedded chain, never reads another chain's rows as its own.
package sqlite
