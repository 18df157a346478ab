package txn

import "time"

// Limits and timeouts of sending.
const (
	// DefaultReceiptTimeout bounds the wait for each receipt when the config sets none.
	DefaultReceiptTimeout = 2 * time.Minute
	// rebroadcastEvery is how long Wait waits for a receipt before it sends the transaction
	// again (a node may have dropped it from its pool); a node that still has it says so.
	rebroadcastEvery = 3 * time.Second
	// gasHeadroomDiv adds 1/gasHeadroomDiv to each gas estimate: state can move between the
	// estimate and inclusion.
	gasHeadroomDiv = 5
	// maxChainMessage bounds how much of the chain's own refusal message an error repeats.
	maxChainMessage = 200
)
