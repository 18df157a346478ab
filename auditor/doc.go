// Package auditor recomputes a node's reputation scores the way an auditor does, trusting
// neither the node nor its chain connection (issue 28): it reads the log's leaves up to a head
// anchored on chain, checks them against the root the chain holds, re-derives the chain facts
// the weights use (wallet bindings, stake, settled bounties) from a JSON-RPC the auditor names,
// by replaying StakeRegistry's and BountyEscrow's events up to the anchor's block with the
// node's own indexers, and computes the scores with reputation's engine. The node publishes
// the scores of each anchored head computed the same way (Scorer), so an auditor compares
// them bit for bit (Check). docs/REPUTATION.md, "Recomputing a score", says what goes in.
package auditor
