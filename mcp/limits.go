package mcp

import "time"

// Limits of the MCP server, in one place (docs/ARCHITECTURE.md, "Quotas and bounds").
const (
	// MaxRequestBody bounds one MCP message posted to /mcp: a tool call whose largest
	// argument is an envelope (identity.MaxEnvelopeSize, 256 KiB) or a task text (64 KiB),
	// with JSON-RPC framing. The node's API bounds the route's body the same (api/limits.go).
	MaxRequestBody = 320 << 10
	// RequestTimeout bounds one MCP request over HTTP, tool call included: the session the
	// stateless handler makes for it ends with it.
	RequestTimeout = 30 * time.Second
	// WriteTimeout is how long a write over stdio waits for the node's answer (a transaction
	// and its confirmations on a slow chain).
	WriteTimeout = 5 * time.Minute
	// maxSearch bounds the agents search_agents asks for (the node caps it too).
	maxSearch = 50
	// maxProofs bounds the audits get_reputation fetches an inclusion proof for: one API
	// request each.
	maxProofs = 16
	// maxText bounds a text argument (a post, a result, a reason); a task text is bounded
	// by maxTask, the escrow's own bound.
	maxText = 8 << 10
	maxTask = 64 << 10
	// asyncWait is how long a stdio write waits for the node's answer before following it
	// as an operation.
	asyncWait = 10 * time.Second
	// envelopeLife is the lifetime of an envelope the stdio server signs.
	envelopeLife = 5 * time.Minute
	// maxResourceURI bounds a resource URI parseResourceURI reads.
	maxResourceURI = 512
)
