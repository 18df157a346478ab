package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/internal/testutil/apitest"
	"github.com/surety-ioa/surety/registry"
)

// writeKey writes p's key to a key file and returns its path.
func writeKey(t *testing.T, p *apitest.Party) string {
	t.Helper()
	b, err := p.Key.MarshalKeyFile()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "agent.key")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestMCPInteropWithTheTypeScriptSDK: the official TypeScript MCP SDK, from npm, runs
// `surety mcp` (the built binary) on stdio once per agent, each with its own key file and
// wallet: it lists the tools, searches agents, posts a bounty as the poster and claims it as
// the worker, and reads it back as a tool and as a resource (clients/ts/interop/mcp-client.mjs).
func TestMCPInteropWithTheTypeScriptSDK(t *testing.T) {
	waiting.Parallel(t) // a node (or devnet) of its own
	nodeJS, script := testutil.NodeScript(t, "mcp-client.mjs", "@modelcontextprotocol/sdk")
	bin := surety.Path(t)
	n := start(t, "node", "--data-dir", t.TempDir(), "--listen", "127.0.0.1:0", "--dev-accounts", "5")
	base := n.apiURL(t)
	bc := apitest.NewClient(t, base)
	poster, worker := bc.NewParty(1), bc.NewParty(2)
	card, err := registry.Sign(registry.Card{DID: worker.Key.DID.String(), Name: "Summarizer", Capabilities: []string{"summarize"},
		Wallet: worker.Wallet, Seq: 1, Updated: time.Now().Unix()}, worker.Key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := client.New(base)
	if _, err := c.RegisterCard(context.Background(), card.JWS); err != nil {
		t.Fatal(err)
	}

	const task = "Summarize https://example.com/paper.pdf in 200 words"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeJS, script)
	cmd.Env = append(os.Environ(), "SURETY_BIN="+bin, "SURETY_NODE="+base,
		"POSTER_KEY="+writeKey(t, poster), "POSTER_WALLET="+poster.Wallet.Hex(),
		"WORKER_KEY="+writeKey(t, worker), "WORKER_WALLET="+worker.Wallet.Hex(),
		"ARBITER="+crypto.PubkeyToAddress(chain.DevKey(3).PublicKey).Hex(), "TASK="+task)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mcp-client.mjs: %v\n%s", err, stderr.String())
	}
	var got struct {
		Tools  []struct{ Name, Input, Output string }
		Found  []string
		Posted struct {
			ID     uint64
			Status string
		}
		Claimed struct{ Status, Worker string }
		Viewed  struct {
			Status, Task string
			TaskVerified bool
		}
		Resource    string
		SecondClaim struct {
			IsError bool
			Text    string
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("mcp-client.mjs printed %s: %v", out, err)
	}
	var names []string
	for _, tl := range got.Tools {
		names = append(names, tl.Name)
		if tl.Input != "object" || tl.Output != "object" {
			t.Errorf("tool %s: input schema %q, output schema %q, want objects", tl.Name, tl.Input, tl.Output)
		}
	}
	for _, want := range []string{"search_agents", "post_bounty", "claim_bounty", "get_bounty", "get_reputation", "file_audit", "post_to_group"} {
		if !slices.Contains(names, want) {
			t.Errorf("the TypeScript client listed %v, without %s", names, want)
		}
	}
	if !slices.Equal(got.Found, []string{worker.Key.DID.String()}) {
		t.Errorf("search_agents found %v, want the worker", got.Found)
	}
	if got.Posted.ID == 0 || got.Posted.Status != "open" || got.Claimed.Status != "assigned" || !strings.EqualFold(got.Claimed.Worker, worker.Wallet.Hex()) {
		t.Errorf("posted %+v, claimed %+v: want an open bounty claimed by the worker's wallet", got.Posted, got.Claimed)
	}
	if got.Viewed.Status != "assigned" || got.Viewed.Task != task || !got.Viewed.TaskVerified || got.Resource != "assigned" {
		t.Errorf("read back %+v (resource %q), want the assigned bounty with its checked task", got.Viewed, got.Resource)
	}
	if !got.SecondClaim.IsError || !strings.Contains(got.SecondClaim.Text, "node refused") {
		t.Errorf("a second claim through MCP: %+v, want the node's refusal as a tool error", got.SecondClaim)
	}
	// The chain agrees: the bounty is the worker's.
	b, err := c.Bounty(context.Background(), itoa(got.Posted.ID))
	if err != nil || b.Worker != worker.Wallet {
		t.Errorf("the node's index: %+v %v, want the worker's wallet", b, err)
	}
}

func itoa(v uint64) string { b, _ := json.Marshal(v); return string(b) }

// TestMCPInteropOverHTTPWithTheTypeScriptSDK: the TypeScript SDK's streamable HTTP client
// against the node's /mcp: it lists the tools, searches, is refused a write it brings no
// envelope for, and posts and claims a bounty with the poster's and the worker's own
// envelopes (signed here; the node signs nothing) (clients/ts/interop/mcp-http-client.mjs).
func TestMCPInteropOverHTTPWithTheTypeScriptSDK(t *testing.T) {
	waiting.Parallel(t) // a node (or devnet) of its own
	nodeJS, script := testutil.NodeScript(t, "mcp-http-client.mjs", "@modelcontextprotocol/sdk")
	n := start(t, "node", "--data-dir", t.TempDir(), "--listen", "127.0.0.1:0", "--dev-accounts", "5")
	base := n.apiURL(t)
	bc := apitest.NewClient(t, base)
	poster, worker := bc.NewParty(1), bc.NewParty(2)
	card, err := registry.Sign(registry.Card{DID: worker.Key.DID.String(), Name: "Reader", Description: "reads papers", Capabilities: []string{"read"},
		Wallet: worker.Wallet, Seq: 1, Updated: time.Now().Unix()}, worker.Key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := client.New(base)
	if _, err := c.RegisterCard(context.Background(), card.JWS); err != nil {
		t.Fatal(err)
	}
	const task = "Read the paper and list its claims"
	arbiter := crypto.PubkeyToAddress(chain.DevKey(3).PublicKey)
	postEnv := bc.Envelope(poster, 0, map[string]any{"wallet": poster.Wallet, "amount": "1000000000000000000", "arbiter": arbiter,
		"deadline": time.Now().Add(time.Hour).Unix(), "reviewWindow": 600, "minStake": "0", "specHash": crypto.Keccak256Hash([]byte(task)), "spec": task})

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeJS, script)
	cmd.Env = append(os.Environ(), "MCP_URL="+base+"/mcp", "POST_ENVELOPE="+string(postEnv), "ARBITER="+arbiter.Hex())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	dec := json.NewDecoder(stdout)
	var posted struct{ ID uint64 }
	if err := dec.Decode(&posted); err != nil || posted.ID == 0 {
		cancel()
		cmd.Wait()
		t.Fatalf("mcp-http-client.mjs posted nothing (%v)\n%s", err, stderr.String())
	}
	claim := bc.Envelope(worker, posted.ID, map[string]any{"wallet": worker.Wallet, "agentId": identity.AgentID(worker.Key.DID.String())})
	if _, err := stdin.Write(append(claim, '\n')); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Tools    int
		Signer   string
		NodeDID  string `json:"nodeDid"`
		Found    []string
		Unsigned struct {
			IsError bool
			Text    string
		}
		Posted  string
		Claimed struct{ Status, Worker string }
		Viewed  struct{ Status, Task string }
	}
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("mcp-http-client.mjs: %v\n%s", err, stderr.String())
	}
	if got.Tools < 13 || got.Signer != "" || got.NodeDID != bc.Info.NodeDID {
		t.Errorf("tools %d, signer %q, node %q: want 13 tools and no signer at %s", got.Tools, got.Signer, got.NodeDID, bc.Info.NodeDID)
	}
	if !slices.Equal(got.Found, []string{worker.Key.DID.String()}) {
		t.Errorf("search found %v, want the worker", got.Found)
	}
	if !got.Unsigned.IsError || !strings.Contains(got.Unsigned.Text, "holds no key") {
		t.Errorf("a write without an envelope: %+v, want it refused", got.Unsigned)
	}
	if got.Posted != "open" || got.Claimed.Status != "assigned" || !strings.EqualFold(got.Claimed.Worker, worker.Wallet.Hex()) || got.Viewed.Task != task {
		t.Errorf("posted %q, claimed %+v, viewed %+v: want the bounty claimed by the worker", got.Posted, got.Claimed, got.Viewed)
	}
}
