// Package reputation accepts audits signed by auditors' DIDs, weighs them by the auditor's
// standing and stake, their age and whether a settlement backs them, computes reproducible
// scores, and keeps accepted audits in an append-only Merkle log (RFC 6962) whose signed tree
// heads are anchored on chain, so auditors can check a score's inputs without trusting the node.
package reputation
