package wire

import (
	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/a2a"
)

// Agent is an Agent Card as a node holds it, with the stake it had when the node took it
// (registry.Agent): the answer of POST /v1/agents and GET /v1/agents/{did}.
type Agent struct {
	SignedCard
	Stake  string `json:"stake"`
	Staked bool   `json:"staked"`
	// Score is the search score (search answers only).
	Score float64 `json:"score,omitempty"`
	// ERC8004AgentIDs are the DID's agent ids in the deployment's ERC-8004 identity registry
	// (GET /v1/agents/{did} only; api.AgentAnswer).
	ERC8004AgentIDs []uint64 `json:"erc8004AgentIds,omitempty"`
}

// SignedCard is a card with the JWS it came in (registry.SignedCard).
type SignedCard struct {
	Card
	// JWS is the signed card as the agent signed it: a compact JWS, or a signed A2A card
	// (a JSON object, in canonical form, with the one signature that verified).
	JWS string `json:"jws"`
}

// Card is an Agent Card: who an agent is, what it can do and how to reach it
// (registry.Card). The agent signs it with its DID key.
type Card struct {
	DID          string         `json:"did"`
	Name         string         `json:"name"`
	Description  string         `json:"description,omitempty"`
	Capabilities []string       `json:"capabilities"`
	Endpoints    []Endpoint     `json:"endpoints,omitempty"`
	Wallet       common.Address `json:"wallet"`
	Seq          uint64         `json:"seq"`
	Updated      int64          `json:"updated"`
}

// Endpoint is where an agent can be reached.
type Endpoint struct {
	// Kind is a2a, mcp or http.
	Kind string `json:"kind"`
	URL  string `json:"url"`
}

// AgentList is the body of GET /v1/agents, and the data of its agents events.
type AgentList struct {
	Agents []*Agent `json:"agents"`
	// Discovering says the node is looking the capability up in the network: more agents
	// may come (ask again, or follow the search as server-sent events).
	Discovering bool `json:"discovering,omitempty"`
}

// StatusResult is the answer of POST /v1/agents/{did}/status: what the node found when it
// read the DID's key status from the chain again (registry.StatusResult).
type StatusResult struct {
	DID string `json:"did"`
	// Status is the DID's key status on chain: active, revoked or rotated.
	Status    KeyStatus `json:"status"`
	Successor string    `json:"successor,omitempty"`
	// Wallet is the wallet of the card the node holds, when it holds one.
	Wallet  common.Address `json:"wallet,omitzero"`
	Dropped bool           `json:"dropped"` // the node dropped the DID's card just now
	// Stake is what the node's card of an active DID now counts (base units), when the node
	// holds one; Restaked says it changed just now.
	Stake    string `json:"stake,omitempty"`
	Restaked bool   `json:"restaked,omitempty"`
}

// A2ACard is an A2A v1.0 Agent Card (package a2a): the answer of GET
// /.well-known/agent-card.json and GET /v1/agents/{did}/agent-card.json, and a body of
// POST /v1/agents once signed.
type A2ACard = a2a.AgentCard
