package escrow

import "time"

// Limits and timeouts of the bounty service.
const (
	// CatchUpWait bounds how long a call that finds no bounty waits for this node's index to
	// reach the chain's confirmed head before it says the bounty is unknown.
	CatchUpWait = 3 * time.Second
)
