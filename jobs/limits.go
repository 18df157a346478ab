package jobs

import "time"

// Limits of the job index and its queries.
const (
	// CatchUpWait bounds how long a read that finds no job waits for this node's index to
	// reach the chain's confirmed head before it says the job is unknown.
	CatchUpWait = 3 * time.Second

	// DefaultLimit and MaxLimit bound a page of List.
	DefaultLimit = 100
	MaxLimit     = 1000

	// MaxDescription bounds the description the index keeps of a job (bytes): the contract
	// takes any string, the index is no free storage.
	MaxDescription = 16 << 10

	// maxParts bounds the milestone parts a job's answer lists.
	maxParts = 100

	// MaxHistory bounds the events a job's answer lists: the latest ones (a client can add
	// events to its own job with every setBudget while it is open).
	MaxHistory = 1000
)
