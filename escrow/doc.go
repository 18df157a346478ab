// Package escrow is the Go side of settlement: it drives the BountyEscrow contract through a
// bounty's lifecycle (post, claim or assign, unclaim, submit, accept, dispute and resolve,
// refund, withdraw) from wallets the node holds or transactions an external wallet signed,
// and indexes the contract's events into SQLite, resuming after a crash without losing or
// repeating one. It sends through package txn (nonces, once per Idempotency-Key) and decodes
// the escrow's reverts into its own errors; stake calls are package stake's.
package escrow
