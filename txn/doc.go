// Package txn sends the node's transactions. It is the one place that holds wallets (behind
// Signer, which a key the node holds fills today and a user's own signer can fill), hands out
// their nonces, signs, broadcasts, waits for receipts, and keeps the idempotent request store
// that makes a retried request wait for the transaction it already sent instead of sending a
// second one. Contract reverts are decoded through a hook each call brings (Call.Decode), so
// this package knows no contract: bounties (escrow), stake (stake) and the audit-log anchor
// are thin clients of it.
package txn
