package wire

import (
	"math/big"

	"github.com/ethereum/go-ethereum/common"
)

// ERC8004Agent is an agent of the ERC-8004 identity registry as a node indexes it
// (erc8004.Agent).
type ERC8004Agent struct {
	ID              uint64         `json:"agentId"`
	Owner           common.Address `json:"owner"`
	Wallet          common.Address `json:"wallet"`
	URI             string         `json:"agentURI"`
	DID             string         `json:"did,omitempty"`
	RegisteredBlock uint64         `json:"registeredBlock"`
	UpdatedBlock    uint64         `json:"updatedBlock"`
}

// ERC8004Feedback is one feedback of the ERC-8004 reputation registry (erc8004.Feedback):
// Value has ValueDecimals decimals.
type ERC8004Feedback struct {
	AgentID       uint64         `json:"agentId"`
	Client        common.Address `json:"clientAddress"`
	FeedbackIndex uint64         `json:"feedbackIndex"`
	Value         *big.Int       `json:"value"`
	ValueDecimals uint8          `json:"valueDecimals"`
	Tag1          string         `json:"tag1"`
	Tag2          string         `json:"tag2"`
	Endpoint      string         `json:"endpoint"`
	FeedbackURI   string         `json:"feedbackURI"`
	FeedbackHash  common.Hash    `json:"feedbackHash"`
	Revoked       bool           `json:"revoked"`
	RevokedBlock  uint64         `json:"revokedBlock,omitempty"`
	Block         uint64         `json:"block"`
	Time          int64          `json:"time"`
	LogIndex      uint           `json:"logIndex"`
	TxHash        string         `json:"txHash"`
}

// ERC8004DID is GET /v1/erc8004/dids/{did}: the agents that are the DID's and those that
// claim it.
type ERC8004DID struct {
	DID      string         `json:"did"`
	Agents   []ERC8004Agent `json:"agents"`
	Claiming []ERC8004Agent `json:"claiming"`
}

// ERC8004FeedbackList is GET /v1/erc8004/agents/{id}/feedback.
type ERC8004FeedbackList struct {
	AgentID  uint64            `json:"agentId"`
	Feedback []ERC8004Feedback `json:"feedback"`
}
