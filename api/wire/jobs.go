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
	// Surety is the job's side in SuretyHook, when it is a Surety job (GET /v1/jobs/{id}
	// only).
	Surety *JobSurety `json:"surety,omitempty"`
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

// JobSurety is a job's side in SuretyHook (jobs.Surety): its plan, phase, entries, dispute,
// settlement and milestone parts.
type JobSurety struct {
	// Phase is the hook's: planned, open, disputed or settled.
	Phase string `json:"phase"`
	// Plan is the client's plan as the hook stored it: arbiter, reviewWindow, arbiterTime,
	// maxEntries, maxWinners, minStake, worker, prevPart.
	Plan       json.RawMessage `json:"plan,omitempty"`
	Entries    []JobEntry      `json:"entries,omitempty"`
	Dispute    *JobDispute     `json:"dispute,omitempty"`
	Settlement *JobSettlement  `json:"settlement,omitempty"`
	// Parts are a milestone job's parts (job ids) in order, this one among them.
	Parts []uint64 `json:"parts,omitempty"`
}

// JobEntry is one worker's entry in a Surety job (jobs.Entry).
type JobEntry struct {
	Worker      common.Address `json:"worker"`
	AgentID     string         `json:"agentId"`
	LockID      string         `json:"lockId"`
	Deliverable string         `json:"deliverable,omitempty"`
	Bps         uint64         `json:"bps,omitempty"`
	Amount      string         `json:"amount,omitempty"`
}

// JobDispute is a client's rejection of a Surety job's submissions (jobs.Dispute).
type JobDispute struct {
	By         common.Address `json:"by"`
	ReasonHash string         `json:"reasonHash"`
}

// JobSettlement is how a Surety job ended (jobs.Settlement).
type JobSettlement struct {
	// Outcome: approved, released, resolved, resolved-expired, cancelled or expired.
	Outcome   string `json:"outcome"`
	ToWorkers string `json:"toWorkers"`
	ToClient  string `json:"toClient"`
	Slash     string `json:"slash"`
}
