// Package identity issues and resolves the decentralized identifiers (DIDs) of agents and
// wallets (did:key for Ed25519 and secp256k1 keys, did:pkh for EVM wallets), keeps the keys a
// node holds for the agents it hosts, signs and verifies message envelopes (JWS), binds agent
// DIDs to wallets, and issues Verifiable Credentials signed by the node's own DID.
//
// It is the bottom of Surety's import graph: it imports no other Surety package but
// internal/sqlite, and links no network code (group threads, which gossip, are package
// groups).
package identity
