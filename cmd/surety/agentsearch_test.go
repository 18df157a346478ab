package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/surety-ioa/surety/api/wire"
)

// TestAgentSearchFollowsTheNetworkLookup: for a capability, the CLI prints the node's local
// answer at once, says on stderr that the node is looking further, prints the agents the
// lookup adds as they come and how many; with --json it prints the final answer only. The
// node is a stand-in sending the stream GET /v1/agents documents (node's tests follow the real one).
func TestAgentSearchFollowsTheNetworkLookup(t *testing.T) {
	agent := func(did, name, stake string) *wire.Agent {
		return &wire.Agent{SignedCard: wire.SignedCard{Card: wire.Card{DID: did, Name: name, Capabilities: []string{"audit"}}}, Stake: stake, Staked: stake != "0"}
	}
	local, remote := agent("did:key:local", "Local", "0"), agent("did:key:remote", "Remote", "2000000000000000000")
	var mu sync.Mutex
	var accepts []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		accepts = append(accepts, r.Header.Get("Accept"))
		mu.Unlock()
		if r.URL.Path != "/v1/agents" || r.URL.Query().Get("capability") != "audit" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []struct {
			name string
			data any
		}{
			{"agents", wire.AgentList{Agents: []*wire.Agent{local}, Discovering: true}},
			{"agents", wire.AgentList{Agents: []*wire.Agent{remote, local}, Discovering: true}},
			{"done", struct{}{}},
		} {
			b, _ := json.Marshal(ev.data)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.name, b)
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()

	r := start(t, "agent", "search", "--node", srv.URL, "--capability", "audit")
	if code := r.wait(t); code != exitOK {
		t.Fatalf("exit %d: %s", code, r.stderr)
	}
	out := r.stdout.String()
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "Local") || !strings.HasPrefix(lines[1], "Remote") {
		t.Errorf("stdout:\n%s\nwant the local agent, then the remote one", out)
	}
	if errs := r.stderr.String(); !strings.Contains(errs, "looking for more providers in the network") || !strings.Contains(errs, "found 1 more in the network") {
		t.Errorf("stderr:\n%s", errs)
	}
	mu.Lock()
	if !strings.Contains(accepts[0], "text/event-stream") {
		t.Errorf("the CLI asked with Accept %q", accepts[0])
	}
	mu.Unlock()

	r = start(t, "agent", "search", "--node", srv.URL, "--capability", "audit", "--json")
	if code := r.wait(t); code != exitOK {
		t.Fatalf("--json: exit %d: %s", code, r.stderr)
	}
	var got wire.AgentList
	if err := json.Unmarshal([]byte(r.stdout.String()), &got); err != nil || len(got.Agents) != 2 || got.Agents[0].DID != remote.DID || got.Discovering {
		t.Errorf("--json printed %s (%v); want the final answer only", r.stdout, err)
	}
}
