package wire

import (
	"encoding/json"
	"time"
)

// OpState is how far an operation got.
type OpState string

// Operation states, in order; done and failed are final.
const (
	OpPending OpState = "pending" // accepted: being checked and prepared
	OpSent    OpState = "sent"    // the transaction is with the chain
	OpMined   OpState = "mined"   // in a block; confirmations and the index are awaited
	OpDone    OpState = "done"    // answered: Status is 2xx and Result the answer
	OpFailed  OpState = "failed"  // refused or failed: Result is the problem
)

// Operation is GET /v1/operations/{id}: a write the node carries on after 202 Accepted.
type Operation struct {
	ID    string  `json:"id"`
	Route string  `json:"route"`
	State OpState `json:"state"`
	// TxHash and Block are the transaction the write sent, once sent and mined.
	TxHash string `json:"txHash,omitempty"`
	Block  uint64 `json:"block,omitempty"`
	// Confirmations is how many blocks followed Block, of the Want the node's indexes wait
	// for (while mined, on a node that waits for some).
	Confirmations *OpConfirmations `json:"confirmations,omitempty"`
	// Status and Result are the answer the request would have had: its HTTP status and body
	// (the route's JSON, or its problem), once done or failed.
	Status  int             `json:"status,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Created time.Time       `json:"created"`
	Updated time.Time       `json:"updated"`
}

// OpConfirmations counts the blocks after an operation's transaction.
type OpConfirmations struct {
	Have uint64 `json:"have"`
	Want uint64 `json:"want"`
}

// Final says the operation has its answer.
func (o *Operation) Final() bool { return o.State == OpDone || o.State == OpFailed }
