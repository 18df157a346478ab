package escrow

import "time"

// Limits and timeouts of the bounty service.
const (
	// CatchUpWait bounds how long a call that finds no bounty waits for this node's index to
	// reach the chain's confirmed head before it says the bounty is unknown.
	CatchUpWait = 3 * time.Second

	// ClaimWindow is BountyEscrow.CLAIM_WINDOW: how long a worker of a bounty without a
	// minimum stake holds it without submitting before the poster may unclaim it, and how
	// long after an unclaim only the poster may assign or cancel it before claims reopen.
	// The contract decides; this copy is for messages and help (a test holds them equal).
	ClaimWindow = time.Hour
)
