// Package chain connects a Surety node to an EVM chain: the embedded in-process chain
// (go-ethereum's simulated backend, which mines a block for every transaction, like Anvil's
// automine) or any JSON-RPC endpoint such as Anvil. It also derives the key under which the
// node scopes chain-derived state, and the deterministic dev accounts of the embedded chain.
package chain
