// Package node assembles a Surety node from a Config and runs it: it listens, connects the
// chain, opens the node's state, follows the chain, joins the network, opens the wallets it
// holds, starts scoring and serves the API (New), serves until its context ends (Run), and
// closes what it opened in the reverse order (Close).
//
// It reads no flags and no environment: `surety node` gathers those into a Config. It does
// own the node's data directory: the database, keys, known peers and held wallets in it.
// Messages name the `surety node` flag a Config field comes from, as operators know them.
package node
