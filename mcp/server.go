package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/reputation/merkle"
)

// Signer is who signs the writes of a stdio server: the agent's DID key, and the wallet
// (bound to the DID on chain, held by the node) the node acts from for it.
type Signer struct {
	Key    *identity.Key
	Wallet common.Address
}

// Config assembles a Server.
type Config struct {
	// Node is the node the tools act on.
	Node *client.Client
	// Signer signs writes; without one (the node's /mcp) a write takes the caller's own
	// signed envelope and nothing is signed here.
	Signer *Signer
	// Version is the server's version, told to clients.
	Version string

	// nodeFor, when set, gives the node client for one request (NewHandler: the node's own
	// API in process, under the caller's address).
	nodeFor func(*sdk.RequestExtra) *client.Client
}

// ErrNoKey reports a write without the caller's envelope to a server that holds no key.
var ErrNoKey = errors.New("this MCP server holds no key and signs nothing: sign the write yourself as an envelope (aud and chain_id: node_info's nodeDid and chainId) and pass it as envelope")

// server holds what the tools share.
type server struct {
	cfg Config
}

// New makes the MCP server with Surety's tools and resources.
func New(cfg Config) *sdk.Server {
	s := &server{cfg: cfg}
	out := sdk.NewServer(&sdk.Implementation{Name: "surety", Title: "Surety node", Version: cfg.Version}, &sdk.ServerOptions{
		Instructions: "Surety: DIDs for AI agents, a stake-weighted agent registry, peer-audited reputation with Merkle proofs, and bounties settled in on-chain escrow. " +
			"Reads are free. Writes (post, claim, submit, accept, dispute a bounty; group posts; audits) are signed by the agent's DID: by this server's key when it holds one (node_info names it), else by you, as an envelope argument.",
	})
	s.addTools(out)
	s.addResources(out)
	return out
}

// node is the node client for a request.
func (s *server) node(extra *sdk.RequestExtra) *client.Client {
	if s.cfg.nodeFor != nil {
		return s.cfg.nodeFor(extra)
	}
	return s.cfg.Node
}

// typeSchemas are the JSON Schemas of the wire types whose JSON is not what their Go type
// says: addresses, hashes and raw JSON.
var typeSchemas = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[common.Address]():  {Type: "string", Pattern: "^0x[0-9a-fA-F]{40}$"},
	reflect.TypeFor[common.Hash]():     {Type: "string", Pattern: "^0x[0-9a-fA-F]{64}$"},
	reflect.TypeFor[merkle.Hash]():     {Type: "string"},
	reflect.TypeFor[json.RawMessage](): {Types: []string{"object", "array", "string", "number", "boolean", "null"}},
	reflect.TypeFor[[]byte]():          {Types: []string{"string", "null"}},
	reflect.TypeFor[time.Time]():       {Type: "string"},
}

// schemaFor is T's JSON Schema as the SDK would infer it, with the wire types' own shapes.
// A pointer's is its element's: MCP wants an object schema for a tool's input and output,
// not "null or object" (the TypeScript SDK refuses a tool list with one).
func schemaFor[T any]() *jsonschema.Schema {
	rt := reflect.TypeFor[T]()
	if rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	s, err := jsonschema.ForType(rt, &jsonschema.ForOptions{TypeSchemas: typeSchemas})
	if err != nil {
		panic(fmt.Sprintf("mcp: schema of %T: %v", *new(T), err))
	}
	return s
}

// errPanic reports a tool that panicked: a bug, answered as a tool error instead of taking
// the node down (the SDK runs handlers outside the API's panic recovery).
var errPanic = errors.New("internal error in the tool (a bug: please report it)")

// addTool registers a typed tool with the schemas of In and Out.
func addTool[In, Out any](s *sdk.Server, name, title, description string, readOnly bool, h sdk.ToolHandlerFor[In, Out]) {
	destructive := !readOnly
	safe := func(ctx context.Context, req *sdk.CallToolRequest, in In) (res *sdk.CallToolResult, out Out, err error) {
		defer func() {
			if r := recover(); r != nil {
				var zero Out
				res, out, err = nil, zero, fmt.Errorf("%w: %s: %v", errPanic, name, r)
			}
		}()
		return h(ctx, req, in)
	}
	sdk.AddTool(s, &sdk.Tool{
		Name: name, Title: title, Description: description,
		InputSchema: schemaFor[In](), OutputSchema: schemaFor[Out](),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: readOnly, DestructiveHint: &destructive, IdempotentHint: readOnly},
	}, safe)
}

// info reads the node's /v1/info.
func info(ctx context.Context, c *client.Client) (wire.Info, error) {
	return c.Info(ctx)
}
