package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/api/wire"
)

// toolNames are the tools FuzzToolArguments calls.
var toolNames = []string{"node_info", "resolve_did", "search_agents", "get_agent", "get_reputation", "get_bounty", "list_jobs", "get_job", "post_bounty",
	"claim_bounty", "submit_bounty", "accept_bounty", "dispute_bounty", "post_to_group", "file_audit"}

// FuzzToolArguments: whatever arguments a client sends, every tool answers (a result or a
// tool error) and the session goes on: the argument checks (wei amounts, addresses, DIDs,
// texts, ids, envelopes) never panic, and a signing server signs only what they let through.
func FuzzToolArguments(f *testing.F) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/info" {
			json.NewEncoder(w).Encode(wire.Info{NodeDID: "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK", Chain: wire.InfoChain{ID: 1337},
				Contracts: map[string]string{"BountyEscrow": "0x5FbDB2315678afecb367f032d93F642f64180aa3"}})
			return
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"type":"https://surety.dev/problems/bad-request","title":"The request is not valid"}`))
	}))
	defer api.Close()
	c, err := client.New(api.URL)
	if err != nil {
		f.Fatal(err)
	}
	srv := New(Config{Node: c, Signer: &Signer{Key: testKey(f), Wallet: common.HexToAddress("0x70997970C51812dc3A010C7d01b50e0d17dc79C8")}})
	ct, st := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		f.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "fuzz", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		f.Fatal(err)
	}
	defer cs.Close()

	for i, args := range []string{`{}`, `{"did":"did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK"}`, `{"query":"x","limit":-5}`,
		`{"did":"did:pkh:eip155:1:0x00"}`, `{"did":""}`, `{"id":18446744073709551615}`,
		`{"amount":"1e18","arbiter":"0x1","task":"\u0000"}`, `{"id":1,"agent":"did:key:zz"}`, `{"id":1,"result":"r"}`, `{"id":0}`,
		`{"id":1,"reason":"` + "\xff" + `"}`, `{"group":"../x","text":"t","state":"nope"}`, `{"subject":"did:key:x","score":2,"evidenceHash":"0x"}`} {
		f.Add(uint8(i), args)
	}
	f.Fuzz(func(t *testing.T, which uint8, args string) {
		if !json.Valid([]byte(args)) {
			return
		}
		name := toolNames[int(which)%len(toolNames)]
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
		if err == nil && res == nil {
			t.Fatalf("%s(%s): no result and no error", name, args)
		}
		if err == nil && res.IsError && len(res.Content) > 0 {
			if text, ok := res.Content[0].(*sdk.TextContent); ok && strings.Contains(text.Text, errPanic.Error()) {
				t.Fatalf("%s(%s) panicked: %s", name, args, text.Text)
			}
		}
		// The session is still up.
		if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "node_info", Arguments: map[string]any{}}); err != nil {
			t.Fatalf("after %s(%s) the session is gone: %v", name, args, err)
		}
	})
}
