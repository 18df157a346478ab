// Package e2e holds the multi-node tests: networks of `surety node` processes on Anvil
// (testnet.Network) under churn, partitions and lying peers, the public node load bench, and
// the explorer driven in a real browser (TestExplorerInBrowser). It has only tests; they
// build the surety binary once (TestMain) and run in parallel with the other packages'
// tests, cmd/surety's command-line tests among them.
package e2e
