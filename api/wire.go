package api

import "github.com/surety-ioa/surety/api/wire"

// The bodies the API takes and answers are api/wire's types, which the client imports
// without the server; these names keep the handlers' spelling. The answers that are a node
// package's own type (registry.Agent, escrow.Bounty, ...) have their wire shape there too,
// held to the same JSON by TestWireMirrorsDomainTypes.
type (
	// Info is the body of GET /v1/info.
	Info = wire.Info
	// InfoChain describes the chain in GET /v1/info.
	InfoChain = wire.InfoChain
	// PeerInfo ties the node's DID to its libp2p peer.
	PeerInfo = wire.PeerInfo
	// Health is the body of GET /healthz.
	Health = wire.Health
	// PeerList is the body of GET /v1/peers.
	PeerList = wire.PeerList
	// Mesh is one gossip topic's mesh here.
	Mesh = wire.Mesh
	// Peer is a connected peer, with its gossip score and penalty.
	Peer = wire.Peer
	// RegisterRequest is the body of POST /v1/dids/register.
	RegisterRequest = wire.RegisterRequest
	// VerifyResponse is the body of a successful POST /v1/envelopes/verify.
	VerifyResponse = wire.VerifyResponse
	// CredentialVerifyRequest is the JSON body of POST /v1/credentials/verify.
	CredentialVerifyRequest = wire.CredentialVerifyRequest
	// CredentialVerdict is the answer of POST /v1/credentials/verify.
	CredentialVerdict = wire.CredentialVerdict
	// Operation is GET /v1/operations/{id}: a write the node carries on after 202 Accepted.
	Operation = wire.Operation
	// OpState is how far an operation got.
	OpState = wire.OpState
	// OpConfirmations counts the blocks after an operation's transaction.
	OpConfirmations = wire.OpConfirmations
	// InclusionProof is the answer of GET /v1/log/proof/inclusion.
	InclusionProof = wire.InclusionProof
	// ConsistencyProof is the answer of GET /v1/log/proof/consistency.
	ConsistencyProof = wire.ConsistencyProof
	// GroupPage is a page of a thread.
	GroupPage = wire.GroupPage
	// PostBody is the envelope body of POST /v1/bounties.
	PostBody = wire.PostBody
	// ActionBody is the envelope body of POST /v1/bounties/{id}/{action}.
	ActionBody = wire.ActionBody
	// WithdrawBody is the envelope body of POST /v1/withdraw.
	WithdrawBody = wire.WithdrawBody
	// BindingAnswer says where a binding stands on chain.
	BindingAnswer = wire.BindingAnswer
	// RelayRequest is the body of POST /v1/tx/raw.
	RelayRequest = wire.RelayRequest
	// StakeBody is the envelope body of POST /v1/stake and POST /v1/stake/unbond.
	StakeBody = wire.StakeBody
	// StakeWithdrawBody is the envelope body of POST /v1/stake/withdraw.
	StakeWithdrawBody = wire.StakeWithdrawBody
	// RevokeBody is the envelope body of POST /v1/dids/revoke.
	RevokeBody = wire.RevokeBody
	// RotateBody is the envelope body of POST /v1/dids/rotate.
	RotateBody = wire.RotateBody
)

// Operation states, in order; done and failed are final.
const (
	OpPending = wire.OpPending
	OpSent    = wire.OpSent
	OpMined   = wire.OpMined
	OpDone    = wire.OpDone
	OpFailed  = wire.OpFailed
)
