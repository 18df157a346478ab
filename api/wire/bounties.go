package wire

import (
	"encoding/json"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
)

// BountyStatus is a bounty's status, as a node's index shows it.
type BountyStatus string

// The bounty statuses (escrow.Status).
const (
	BountyOpen      BountyStatus = "open"
	BountyAssigned  BountyStatus = "assigned"
	BountySubmitted BountyStatus = "submitted"
	BountyDisputed  BountyStatus = "disputed"
	BountyAccepted  BountyStatus = "accepted"
	BountyReleased  BountyStatus = "released"
	BountyResolved  BountyStatus = "resolved"
	BountyRefunded  BountyStatus = "refunded"
	BountyCancelled BountyStatus = "cancelled"
)

// Terminal says the bounty has ended: no call changes it any more.
func (s BountyStatus) Terminal() bool {
	switch s {
	case BountyAccepted, BountyReleased, BountyResolved, BountyRefunded, BountyCancelled:
		return true
	}
	return false
}

// Bounty is a bounty as a node's index shows it (escrow.Bounty): GET /v1/bounties/{id}.
type Bounty struct {
	ID           uint64         `json:"id"`
	Status       BountyStatus   `json:"status"`
	Poster       common.Address `json:"poster"`
	Worker       common.Address `json:"worker,omitzero"`
	Token        common.Address `json:"token"`
	Amount       string         `json:"amount"`
	Arbiter      common.Address `json:"arbiter"`
	Deadline     uint64         `json:"deadline"`
	ReviewWindow uint32         `json:"reviewWindow"`
	FeeBps       uint16         `json:"feeBps"`
	MinStake     string         `json:"minStake"`
	SpecHash     common.Hash    `json:"specHash"`
	// Spec is the task text, when the node holds it; it always hashes to SpecHash.
	Spec         string `json:"spec,omitempty"`
	ResultHash   string `json:"resultHash,omitempty"`
	Payout       string `json:"payout"`
	Fee          string `json:"fee"`
	PosterRefund string `json:"posterRefund"`
	PostedBlock  uint64 `json:"postedBlock"`
	UpdatedBlock uint64 `json:"updatedBlock"`
	// History is the bounty's events in chain order (GET /v1/bounties/{id} only).
	History []Event `json:"history,omitempty"`
}

// Event is one escrow event as a node's index keeps it (escrow.Event).
type Event struct {
	BountyID uint64          `json:"bountyId,omitempty"`
	Name     string          `json:"name"`
	Block    uint64          `json:"block"`
	TxHash   string          `json:"txHash"`
	LogIndex uint            `json:"logIndex"`
	Data     json.RawMessage `json:"data"`
}

// BountyList is the body of GET /v1/bounties.
type BountyList struct {
	Bounties []*Bounty `json:"bounties"`
}

// BountyResult is what a bounty write (and POST /v1/tx/raw) answers: the bounty as indexed
// after the transaction, and the transaction (escrow.Result).
type BountyResult struct {
	Bounty *Bounty `json:"bounty,omitempty"`
	TxHash string  `json:"txHash"`
	Block  uint64  `json:"block"`
	// GasUsed is what the transaction cost in gas.
	GasUsed uint64 `json:"gasUsed"`
}

// Action is a bounty call after post: the last segment of POST /v1/bounties/{id}/{action}.
type Action string

// The actions (escrow.Action).
const (
	ActionClaim          Action = "claim"
	ActionAssign         Action = "assign"
	ActionSubmit         Action = "submit"
	ActionAccept         Action = "accept"
	ActionReject         Action = "reject"
	ActionDispute        Action = "dispute"
	ActionResolve        Action = "resolve"
	ActionResolveExpired Action = "resolve-expired"
	ActionRelease        Action = "release"
	ActionRefund         Action = "refund"
	ActionCancel         Action = "cancel"
	ActionUnclaim        Action = "unclaim"
)

// PostBody is the envelope body of POST /v1/bounties. Amounts are decimal strings in the
// token's base unit (wei for ETH).
type PostBody struct {
	Wallet       common.Address `json:"wallet"`
	Token        common.Address `json:"token"`
	Amount       string         `json:"amount"`
	Arbiter      common.Address `json:"arbiter"`
	Deadline     uint64         `json:"deadline"`
	ReviewWindow uint32         `json:"reviewWindow"`
	MinStake     string         `json:"minStake"`
	SpecHash     common.Hash    `json:"specHash"`
	// Spec is the task text. The node stores it and serves it with the bounty; it must hash
	// (keccak256) to SpecHash, which it fills in when zero.
	Spec string `json:"spec,omitempty"`
	// Salt makes the bounty id (BountyEscrow.bountyId(wallet, salt)), so the post happens
	// once on chain whichever node it reaches. Zero: the node derives it from the envelope,
	// so the same envelope can never post twice.
	Salt common.Hash `json:"salt"`
}

// ActionBody is the envelope body of POST /v1/bounties/{id}/{action}.
type ActionBody struct {
	Wallet     common.Address `json:"wallet"`
	AgentID    common.Hash    `json:"agentId"`
	Worker     common.Address `json:"worker"`
	ResultHash common.Hash    `json:"resultHash"`
	ReasonHash common.Hash    `json:"reasonHash"`
	WorkerBps  uint16         `json:"workerBps"`
	// Slash is the worker's locked stake the arbiter's ruling takes to the poster, in base
	// units (decimal), at most the bounty's minStake; resolve only.
	Slash string `json:"slash,omitempty"`
}

// WithdrawBody is the envelope body of POST /v1/withdraw.
type WithdrawBody struct {
	Wallet common.Address `json:"wallet"`
	Token  common.Address `json:"token"`
}

// RelayRequest is the body of POST /v1/tx/raw: a transaction an external wallet signed.
type RelayRequest struct {
	RawTx hexutil.Bytes `json:"rawTx"`
}
