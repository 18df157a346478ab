// Package testnet runs local networks: Anvil on loopback with Surety's dev accounts funded
// and every contract deployed (Start, a Devnet), and N `surety node` processes on it
// (StartNetwork, a Network) that it kills, restarts, partitions through their deny files,
// and waits for. `surety devnet` (and so `make devnet`) runs one, and the multi-node tests
// and the load bench build on it. It runs nodes as processes of the surety binary, so it
// imports no node code.
package testnet
