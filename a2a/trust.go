package a2a

// TrustExtensionURI names Surety's trust extension of A2A (docs/a2a.md). In a card an agent
// signs, its params are only the agent's own claims (AgentParams); in a card a Surety node
// serves, the node adds what it knows live (NodeParams) and signs the card itself.
const TrustExtensionURI = "https://surety.dev/ext/trust/v1"

// TrustExtensionDescription is the extension's description in the cards Surety makes.
const TrustExtensionDescription = "Surety trust: the agent's DID, wallet and card sequence; in a node-served card also its stake, reputation and the links to check them"

// The params an agent signs in its own card: its DID (whose key signs the card), the wallet
// that stakes for it, Surety's card sequence number (a higher one replaces a lower; the
// A2A `version` is free text) and the card's time (unix seconds).
const (
	ParamDID     = "did"
	ParamWallet  = "wallet"
	ParamSeq     = "seq"
	ParamUpdated = "updated"
)

// The params a node adds to the card it serves and signs: the chain, the agent's stake (base
// units, decimal) and whether it counts as staked, its reputation (score, confidence,
// audits), links to the agent's own signed registration, to its reputation with the audits
// that feed it, to the audit log's signed checkpoint, and to the node's card; the node's
// DID; and when the node read these values (unix seconds).
const (
	ParamChainID       = "chainId"
	ParamStake         = "stake"
	ParamStaked        = "staked"
	ParamReputation    = "reputation"
	ParamRegistration  = "registrationUrl"
	ParamReputationURL = "reputationUrl"
	ParamLogURL        = "logUrl"
	ParamNodeCard      = "nodeCardUrl"
	ParamNode          = "node"
	ParamAsOf          = "asOf"
	ParamRole          = "role"
)

// AgentParams are the params an agent may sign; a card an agent registers carries no other.
var AgentParams = []string{ParamDID, ParamWallet, ParamSeq, ParamUpdated}

// Protocol bindings of supportedInterfaces that Surety's endpoint kinds map to: an `a2a`
// endpoint is A2A's JSON-RPC binding, `mcp` and `http` are open bindings of their own.
const (
	BindingJSONRPC = "JSONRPC"
	BindingMCP     = "MCP"
	BindingHTTP    = "HTTP"
	// ProtocolVersion is the A2A version of the interfaces and cards Surety writes.
	ProtocolVersion = "1.0"
)
