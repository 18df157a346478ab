// Package stake is the StakeRegistry as every Surety node sees it: an index of the
// registry's events (bind, stake, unbond, withdraw, slash, rotate, revoke), followed crash-
// and reorg-safely through internal/chainlog, and the projections the rest of the node reads
// from it: which wallets control a DID, whether a DID's key was revoked or rotated away (and
// to what), and how much stake counts for it.
//
// The chain is the authority and this index is a cache of it. What makes every node give the
// same answer is the proof rule (CheckProof): StakeRegistry records any bind and rotate
// without checking the proof it carries (an Ed25519 JWS cannot be verified cheaply on the
// EVM), so each node checks it the same way when it indexes the event. A record whose proof
// does not verify is kept, marked unverified, and counts for nothing: it cannot revoke or
// rotate the DID, its stake is not the DID's stake, and it binds no wallet to the DID.
// Because the contract keys records by (agent, controller), such a record blocks nobody.
//
// Service sends the stake calls (bind, stake, unbond, withdraw, rotate, revoke) from wallets
// the node holds, through package txn like the bounty calls, refusing before sending what the
// registry would refuse; a client's own wallet runs the same calls (Service.Run).
package stake
