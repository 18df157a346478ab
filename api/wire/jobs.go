package wire

import (
	"encoding/json"

	"github.com/ethereum/go-ethereum/common"
)

// JobStatus is an ERC-8183 job's status (the standard's JobStatus), as a node's index shows
// it.
type JobStatus string

// The job statuses (jobs.Status).
const (
	JobOpen      JobStatus = "open"
	JobFunded    JobStatus = "funded"
	JobSubmitted JobStatus = "submitted"
	JobCompleted JobStatus = "completed"
	JobRejected  JobStatus = "rejected"
	JobExpired   JobStatus = "expired"
)

// Terminal says the job has ended: no call changes it any more.
func (s JobStatus) Terminal() bool {
	return s == JobCompleted || s == JobRejected || s == JobExpired
}

// Job is an ERC-8183 job as a node's index shows it (jobs.Job): GET /v1/jobs/{id}.
type Job struct {
	ID              uint64           `json:"id"`
	Status          JobStatus        `json:"status"`
	Client          common.Address   `json:"client"`
	Provider        common.Address   `json:"provider"`
	Evaluator       common.Address   `json:"evaluator"`
	Hook            common.Address   `json:"hook"`
	ExpiredAt       uint64           `json:"expiredAt"`
	Description     string           `json:"description"`
	ProviderAgentID string           `json:"providerAgentId"`
	Token           common.Address   `json:"token"`
	Budget          string           `json:"budget"`
	Deliverable     string           `json:"deliverable,omitempty"`
	Reason          string           `json:"reason,omitempty"`
	RejectedBy      common.Address   `json:"rejectedBy,omitzero"`
	Payout          string           `json:"payout"`
	PlatformFee     string           `json:"platformFee"`
	EvaluatorFee    string           `json:"evaluatorFee"`
	Refund          string           `json:"refund"`
	CreatedBlock    uint64           `json:"createdBlock"`
	UpdatedBlock    uint64           `json:"updatedBlock"`
	Workers         []common.Address `json:"workers,omitempty"`
	// History is the job's events in chain order (GET /v1/jobs/{id} only).
	History []JobEvent `json:"history,omitempty"`
}

// JobEvent is one event of JobEscrow or SuretyHook as a node's index keeps it (jobs.Event).
type JobEvent struct {
	JobID    uint64          `json:"jobId,omitempty"`
	Contract string          `json:"contract"`
	Name     string          `json:"name"`
	Block    uint64          `json:"block"`
	TxHash   string          `json:"txHash"`
	LogIndex uint            `json:"logIndex"`
	Data     json.RawMessage `json:"data"`
}

// JobList is the body of GET /v1/jobs.
type JobList struct {
	Jobs []*Job `json:"jobs"`
}
