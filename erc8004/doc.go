// Package erc8004 is the node's side of ERC-8004 (Trustless Agents): the Identity,
// Reputation and Validation registries Surety deploys beside its own contracts.
//
// The Indexer follows the three registries' events into SQLite through internal/chainlog, as
// packages escrow and stake follow theirs (crash-safe batches, reorganizations rolled back and
// the agents they touched rebuilt from the stored events), and answers queries: agent id to
// owner, wallet, agentURI and on-chain metadata; the agents that claim a DID; the feedback an
// agent received (value, decimals, tags, client, revoked) and the responses to it; validation
// requests and responses. FeedbackFor is the one reputation reads: for a subject DID, the
// unrevoked feedback of the agents registered for it whose owner or agent wallet is a wallet
// bound to the DID (a claim of the DID alone proves nothing: anyone may write it), in chain
// order.
//
// Registration builds and parses the registration file the agentURI points at (the spec's
// "registration-v1" JSON). Service sends the registry calls through package txn: register an
// agent (agentURI = the node's URL of the file, metadata "did"), set its wallet with the
// wallet's EIP-712 signature, and publish a settled bounty's audit as feedback whose
// feedbackURI is the node's URL of the audit and feedbackHash its leaf hash in the node's log.
package erc8004
