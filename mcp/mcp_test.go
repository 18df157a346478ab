package mcp_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/p2p"
	"github.com/surety-ioa/surety/mcp"
	"github.com/surety-ioa/surety/node"
	"github.com/surety-ioa/surety/registry"
)

// party is an agent: a DID key bound on chain to a dev wallet the node holds.
type party struct {
	key    *identity.Key
	wallet common.Address
}

// testNode starts a node on the embedded chain with dev wallets and a short audit epoch,
// and returns its API client.
func testNode(t *testing.T) (*node.Node, *client.Client, wire.Info) {
	return testNodeWith(t, func(*node.Config) {})
}

// testNodeWith is testNode with its config changed by change.
func testNodeWith(t *testing.T, change func(*node.Config)) (*node.Node, *client.Client, wire.Info) {
	t.Helper()
	cfg := node.Config{DataDir: t.TempDir(), Listen: "127.0.0.1:0", DevAccounts: 5, LogEpoch: 2 * time.Second, LogGrace: time.Second,
		LogQuorum: 1, RegisterNode: "no", P2PListen: p2p.DefaultListen, SyncEvery: node.DefaultSyncEvery, Version: "test"}
	change(&cfg)
	n, err := node.New(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		<-done
		n.Close()
	})
	c, err := client.New(n.APIURL())
	if err != nil {
		t.Fatal(err)
	}
	var info wire.Info
	for range 100 {
		if info, err = c.Info(context.Background()); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	return n, c, info
}

// newParty makes a DID and binds it to dev wallet i through POST /v1/bindings.
func newParty(t *testing.T, c *client.Client, info wire.Info, i int) *party {
	t.Helper()
	k, err := identity.GenerateKey(identity.Ed25519)
	if err != nil {
		t.Fatal(err)
	}
	w := chain.DevKey(i)
	b, err := identity.SignBinding(identity.BindingStatement{DID: k.DID.String(), Wallet: crypto.PubkeyToAddress(w.PublicKey), ChainID: info.Chain.ID,
		Registry: common.HexToAddress(info.Contracts["StakeRegistry"]), IssuedAt: time.Now().Unix(), Nonce: identity.NewNonce()}, k, w)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(b)
	if _, err := c.AddBinding(context.Background(), raw); err != nil {
		t.Fatalf("bind: %v", err)
	}
	return &party{key: k, wallet: crypto.PubkeyToAddress(w.PublicKey)}
}

// connect runs srv on an in-memory transport (as `surety mcp` runs it on stdio) and
// returns a Go SDK client's session to it.
func connect(t *testing.T, srv *sdk.Server) *sdk.ClientSession {
	t.Helper()
	ct, st := sdk.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	return clientSession(t, ct)
}

func clientSession(t *testing.T, tr sdk.Transport) *sdk.ClientSession {
	t.Helper()
	cl := sdk.NewClient(&sdk.Implementation{Name: "surety-test", Version: "1"}, nil)
	cs, err := cl.Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and decodes its structured output into out; a tool error fails the test.
func call(t *testing.T, cs *sdk.ClientSession, name string, args any, out any) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s: tool error: %s", name, resultText(res))
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	answers = append(answers, raw)
	raw, err = json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("%s: structured output %s: %v", name, raw, err)
	}
}

// callError calls a tool that must fail and returns its error text.
func callError(t *testing.T, cs *sdk.ClientSession, name string, args any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return err.Error()
	}
	if !res.IsError {
		t.Fatalf("%s succeeded, want it refused: %s", name, resultText(res))
	}
	return resultText(res)
}

func resultText(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// answers are the tool results call saw (the tests do not run in parallel).
var answers [][]byte

// noKeyIn fails when any answer holds k's private key, in any of the encodings a key file
// or a JWK uses.
func noKeyIn(t *testing.T, k *identity.Key) {
	t.Helper()
	seed := k.Seed()
	for _, enc := range []string{hex.EncodeToString(seed), base64.StdEncoding.EncodeToString(seed), base64.RawURLEncoding.EncodeToString(seed), base64.RawStdEncoding.EncodeToString(seed)} {
		for _, a := range answers {
			if bytes.Contains(a, []byte(enc)) {
				t.Fatalf("a tool answered with the signer's private key: %s", a)
			}
		}
	}
}

var arbiter = crypto.PubkeyToAddress(chain.DevKey(3).PublicKey).Hex()

// TestToolsAgainstANode runs every tool and both resources, signed by each agent's own key
// as `surety mcp --key --wallet` signs, against a node on the embedded chain.
func TestToolsAgainstANode(t *testing.T) {
	n, c, info := testNode(t)
	_ = n
	poster, worker := newParty(t, c, info, 1), newParty(t, c, info, 2)
	ps := connect(t, mcp.New(mcp.Config{Node: c, Signer: &mcp.Signer{Key: poster.key, Wallet: poster.wallet}, Version: "test"}))
	ws := connect(t, mcp.New(mcp.Config{Node: c, Signer: &mcp.Signer{Key: worker.key, Wallet: worker.wallet}, Version: "test"}))

	var ni mcp.NodeInfo
	call(t, ps, "node_info", map[string]any{}, &ni)
	if ni.NodeDID != info.NodeDID || ni.ChainID != info.Chain.ID || ni.Signer != poster.key.DID.String() || ni.Wallet != poster.wallet.Hex() {
		t.Errorf("node_info = %+v, want the node %s and the signer %s", ni, info.NodeDID, poster.key.DID)
	}

	var res mcp.Resolution
	call(t, ps, "resolve_did", map[string]any{"did": worker.key.DID.String()}, &res)
	if res.Document["id"] != worker.key.DID.String() {
		t.Errorf("resolve_did: document %v, want id %s", res.Document, worker.key.DID)
	}
	if msg := callError(t, ps, "resolve_did", map[string]any{"did": "did:web:example.com"}); !strings.Contains(msg, "did") {
		t.Errorf("resolve_did of a did:web: %q", msg)
	}

	card, err := registry.Sign(registry.Card{DID: worker.key.DID.String(), Name: "Summarizer", Description: "summarizes long papers",
		Capabilities: []string{"summarize"}, Wallet: worker.wallet, Seq: 1, Updated: time.Now().Unix()}, worker.key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.RegisterCard(context.Background(), card.JWS); err != nil {
		t.Fatal(err)
	}
	var found mcp.Agents
	call(t, ps, "search_agents", map[string]any{"query": "papers", "capability": "summarize"}, &found)
	if len(found.Agents) != 1 || found.Agents[0].DID != worker.key.DID.String() {
		t.Fatalf("search_agents = %+v, want the worker's card", found.Agents)
	}
	var agent wire.Agent
	call(t, ps, "get_agent", map[string]any{"did": worker.key.DID.String()}, &agent)
	if agent.Name != "Summarizer" || agent.JWS != card.JWS {
		t.Errorf("get_agent = %+v, want the registered card", agent)
	}
	rr, err := ps.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "surety://agents/" + worker.key.DID.String()})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, card.JWS) {
		t.Fatalf("read the card resource: %v %+v", err, rr)
	}

	// Bounty A: post, claim, submit, accept. Bounty B: post, claim, submit, dispute.
	post := func(task string) uint64 {
		var r wire.BountyResult
		call(t, ps, "post_bounty", map[string]any{"amount": "1000000000000000000", "arbiter": arbiter, "task": task}, &r)
		if r.Bounty == nil || r.Bounty.Status != wire.BountyOpen || r.TxHash == "" {
			t.Fatalf("post_bounty = %+v, want an open bounty", r)
		}
		return r.Bounty.ID
	}
	act := func(cs *sdk.ClientSession, tool string, args map[string]any, want wire.BountyStatus) {
		t.Helper()
		var r wire.BountyResult
		call(t, cs, tool, args, &r)
		if r.Bounty == nil || r.Bounty.Status != want {
			t.Fatalf("%s = %+v, want status %s", tool, r.Bounty, want)
		}
	}
	a := post("Summarize the paper at https://example.com/a.pdf")
	var view mcp.BountyView
	call(t, ws, "get_bounty", map[string]any{"id": a}, &view)
	if !view.TaskVerified || view.Task != "Summarize the paper at https://example.com/a.pdf" || view.Bounty.Poster != poster.wallet {
		t.Errorf("get_bounty = %+v, want the checked task and the poster", view)
	}
	rr, err = ws.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "surety://bounties/" + itoa(a)})
	if err != nil || !strings.Contains(rr.Contents[0].Text, `"taskVerified":true`) {
		t.Fatalf("read the bounty resource: %v %+v", err, rr)
	}
	if _, err := ws.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "surety://bounties/0x1"}); err == nil {
		t.Error("a bounty resource with a hex id was read, want not found")
	}
	act(ws, "claim_bounty", map[string]any{"id": a}, wire.BountyAssigned)
	if msg := callError(t, ps, "claim_bounty", map[string]any{"id": a}); !strings.Contains(msg, "node refused") {
		t.Errorf("a second claim: %q, want the node's refusal", msg)
	}
	act(ws, "submit_bounty", map[string]any{"id": a, "result": "the summary"}, wire.BountySubmitted)
	act(ps, "accept_bounty", map[string]any{"id": a}, wire.BountyAccepted)

	b := post("Translate the abstract")
	act(ws, "claim_bounty", map[string]any{"id": b}, wire.BountyAssigned)
	act(ws, "submit_bounty", map[string]any{"id": b, "result": "a bad translation"}, wire.BountySubmitted)
	act(ps, "dispute_bounty", map[string]any{"id": b, "reason": "not a translation"}, wire.BountyDisputed)

	// Group: the poster makes a group with the worker in it; the worker posts through MCP.
	members, err := identity.SignGroupEnvelope(poster.key, "mcp-room", map[string]any{"body": map[string]any{"kind": "surety.group.members/1", "members": []string{worker.key.DID.String()}}}, time.Now(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetGroupMembers(context.Background(), "mcp-room", members); err != nil {
		t.Fatal(err)
	}
	var posted wire.Posted
	call(t, ws, "post_to_group", map[string]any{"group": "mcp-room", "text": "on it", "state": "execution"}, &posted)
	if posted.Envelope == nil || posted.Envelope.Sender != worker.key.DID.String() || posted.Envelope.State != "execution" {
		t.Errorf("post_to_group = %+v, want the worker's execution post", posted)
	}
	if msg := callError(t, ws, "post_to_group", map[string]any{"group": "mcp-room", "text": "x", "state": "gossip"}); !strings.Contains(msg, "state") {
		t.Errorf("a post with an unknown state: %q", msg)
	}

	// Audit of bounty A by its poster, then the worker's reputation with its proof.
	var filed wire.Submitted
	call(t, ps, "file_audit", map[string]any{"subject": worker.key.DID.String(), "bountyId": a, "score": 0.9,
		"evidenceHash": crypto.Keccak256Hash([]byte("the summary")).Hex()}, &filed)
	if filed.Audit == nil || filed.Audit.Subject != worker.key.DID.String() {
		t.Fatalf("file_audit = %+v", filed)
	}
	var rep mcp.ReputationProof
	deadline := time.Now().Add(30 * time.Second)
	for {
		call(t, ws, "get_reputation", map[string]any{"did": worker.key.DID.String()}, &rep)
		if len(rep.Proofs) > 0 && rep.Proofs[0].Included || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if rep.Reputation == nil || rep.Reputation.DID != worker.key.DID.String() || !rep.HeadVerified {
		t.Fatalf("get_reputation = %+v, want the worker's reputation and a head signed by the node", rep)
	}
	if len(rep.Proofs) != 1 || !rep.Proofs[0].Included || rep.Proofs[0].Leaf != filed.Audit.Leaf.String() {
		t.Fatalf("get_reputation proofs = %+v, want the audit's leaf included in the signed head", rep.Proofs)
	}
	if len(answers) < 16 { // every tool call above that succeeded
		t.Fatalf("only %d answers seen", len(answers))
	}
	noKeyIn(t, poster.key)
	noKeyIn(t, worker.key)
}

func itoa(v uint64) string { b, _ := json.Marshal(v); return string(b) }

// TestHTTPEndpoint drives the node's /mcp with the Go SDK's streamable HTTP client: the
// node signs nothing, so a write without the caller's envelope is refused, and a bounty is
// posted and claimed with each party's own envelope. A body over the bound is refused.
func TestHTTPEndpoint(t *testing.T) {
	n, c, info := testNode(t)
	poster, worker := newParty(t, c, info, 1), newParty(t, c, info, 2)
	cs := clientSession(t, &sdk.StreamableClientTransport{Endpoint: n.APIURL() + "/mcp"})

	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range tools.Tools {
		in, _ := tl.InputSchema.(map[string]any)
		out, _ := tl.OutputSchema.(map[string]any)
		names[tl.Name] = in["type"] == "object" && out["type"] == "object"
	}
	for _, want := range []string{"node_info", "resolve_did", "search_agents", "get_agent", "get_reputation", "get_bounty", "list_jobs", "get_job", "post_bounty",
		"claim_bounty", "submit_bounty", "accept_bounty", "dispute_bounty", "post_to_group", "file_audit"} {
		if !names[want] {
			t.Errorf("tools/list has no %s with object schemas for input and output", want)
		}
	}
	var jl mcp.Jobs
	call(t, cs, "list_jobs", map[string]any{"status": "open"}, &jl)
	if jl.Jobs == nil {
		t.Error("list_jobs answered no jobs list")
	}
	var ni mcp.NodeInfo
	call(t, cs, "node_info", map[string]any{}, &ni)
	if ni.Signer != "" || ni.NodeDID != info.NodeDID {
		t.Errorf("node_info over HTTP = %+v, want no signer", ni)
	}
	if msg := callError(t, cs, "post_bounty", map[string]any{"amount": "1", "arbiter": arbiter}); !strings.Contains(msg, "holds no key") {
		t.Errorf("a write without an envelope: %q, want it refused for want of one", msg)
	}

	aud := identity.Audience{Node: ni.NodeDID, ChainID: ni.ChainID, Escrow: ni.Escrow}
	task := "Label 100 images"
	env, err := identity.SignRequest(poster.key, aud, 0, wire.PostBody{Wallet: poster.wallet, Amount: "500000000000000000", Arbiter: common.HexToAddress(arbiter),
		Deadline: uint64(time.Now().Add(time.Hour).Unix()), ReviewWindow: 600, MinStake: "0", SpecHash: crypto.Keccak256Hash([]byte(task)), Spec: task}, time.Now(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var posted wire.BountyResult
	call(t, cs, "post_bounty", map[string]any{"envelope": env, "idempotencyKey": "post-1"}, &posted)
	if posted.Bounty == nil || posted.Bounty.Poster != poster.wallet {
		t.Fatalf("post_bounty with the poster's envelope = %+v", posted)
	}
	id := posted.Bounty.ID

	// An envelope for another node is the node's refusal, passed on.
	other := identity.Audience{Node: worker.key.DID.String(), ChainID: ni.ChainID, Escrow: ni.Escrow}
	wrong, _ := identity.SignRequest(worker.key, other, id, wire.ActionBody{Wallet: worker.wallet, AgentID: identity.AgentID(worker.key.DID.String())}, time.Now(), time.Minute)
	if msg := callError(t, cs, "claim_bounty", map[string]any{"id": id, "envelope": wrong}); !strings.Contains(msg, "aud") {
		t.Errorf("a claim for another node: %q, want the wrong-audience refusal", msg)
	}
	claim, _ := identity.SignRequest(worker.key, aud, id, wire.ActionBody{Wallet: worker.wallet, AgentID: identity.AgentID(worker.key.DID.String())}, time.Now(), time.Minute)
	var claimed wire.BountyResult
	call(t, cs, "claim_bounty", map[string]any{"id": id, "envelope": claim}, &claimed)
	if claimed.Bounty == nil || claimed.Bounty.Status != wire.BountyAssigned || claimed.Bounty.Worker != worker.wallet {
		t.Fatalf("claim_bounty with the worker's envelope = %+v", claimed.Bounty)
	}
	var view mcp.BountyView
	call(t, cs, "get_bounty", map[string]any{"id": id}, &view)
	if view.Bounty.Status != wire.BountyAssigned || view.Task != task {
		t.Errorf("get_bounty = %+v", view)
	}

	big := bytes.Repeat([]byte("a"), mcp.MaxRequestBody+1)
	resp, err := http.Post(n.APIURL()+"/mcp", "application/json", bytes.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a %d-byte body: %d, want 413", len(big), resp.StatusCode)
	}
}

// TestNoMCPServesNone: a node started with NoMCP (surety node --no-mcp) has no /mcp.
func TestNoMCPServesNone(t *testing.T) {
	n, _, _ := testNodeWith(t, func(c *node.Config) { c.NoMCP = true })
	resp, err := http.Post(n.APIURL()+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST /mcp on a node with NoMCP: %d, want 404", resp.StatusCode)
	}
	// Nor does its A2A card name one.
	card, err := http.Get(n.APIURL() + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	defer card.Body.Close()
	if b, _ := io.ReadAll(card.Body); card.StatusCode != http.StatusOK || strings.Contains(string(b), "/mcp") {
		t.Errorf("the card of a node with NoMCP: %d %s", card.StatusCode, b)
	}
}
