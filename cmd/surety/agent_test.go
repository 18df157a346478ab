package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surety-ioa/surety/internal/testutil/apitest"
	"github.com/surety-ioa/surety/registry"
)

func TestAgentRegistryThroughCLIAndAPI(t *testing.T) {
	waiting.Parallel(t) // a node (or devnet) of its own
	dir := t.TempDir()
	node := start(t, "node", "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0", "--dev-accounts", "1")
	base := node.apiURL(t)
	key := filepath.Join(dir, "agent.json")
	did := strings.TrimSpace(runOK(t, "", "did", "new", "--out", key))
	out := runOK(t, "", "agent", "register", "--node", base, "--key", key, "--name", "Summarizer", "--description", "summarizes research papers",
		"--capability", "summarize", "--capability", "pdf", "--endpoint", "a2a=https://agent.example/a2a")
	if !strings.Contains(out, "registered "+did) || !strings.Contains(out, "card 1") {
		t.Fatalf("register: %s", out)
	}
	// Again: the CLI takes the next sequence number.
	if out := runOK(t, "", "agent", "register", "--node", base, "--key", key, "--name", "Summarizer", "--capability", "summarize"); !strings.Contains(out, "card 2") {
		t.Errorf("second register: %s", out)
	}
	if out := runOK(t, "", "agent", "search", "--node", base, "summarizer"); !strings.Contains(out, did) {
		t.Errorf("search: %s", out)
	}
	if out := runOK(t, "", "agent", "search", "--node", base, "--capability", "pdf"); !strings.Contains(out, "no agents found") {
		t.Errorf("search for a dropped capability: %s", out)
	}
	if out := runOK(t, "", "agent", "show", "--node", base, did); !strings.Contains(out, `"seq": 2`) {
		t.Errorf("show: %s", out)
	}
	// As an A2A card: registered signed by the agent, shown as the node serves it.
	if out := runOK(t, "", "agent", "register", "--a2a", "--node", base, "--key", key, "--name", "Summarizer", "--description", "summarizes research papers",
		"--capability", "summarize/pdf", "--endpoint", "mcp=https://agent.example/mcp"); !strings.Contains(out, "card 3") {
		t.Errorf("register --a2a: %s", out)
	}
	if out := runOK(t, "", "agent", "show", "--a2a", "--node", base, did); !strings.Contains(out, `"https://surety.dev/ext/trust/v1"`) ||
		!strings.Contains(out, `"protocolBinding": "MCP"`) || !strings.Contains(out, `"summarize/pdf",`) || !strings.Contains(out, `"seq": 3`) {
		t.Errorf("show --a2a: %s", out)
	}
	// Status: nothing on chain closed the DID, so it is active and its card stays.
	if out := runOK(t, "", "agent", "status", "--node", base, did); !strings.Contains(out, did+": active; its card here counts stake 0") {
		t.Errorf("status: %s", out)
	}
	for _, tt := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--wallet", "0x01", did}, exitUsage, `flag provided but not defined: -wallet`},
		{[]string{"did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp"}, exitFailure, "No card for this DID"},
		{[]string{"did:nope"}, exitFailure, `invalid DID "did:nope"`},
	} {
		r := start(t, append([]string{"agent", "status", "--node", base}, tt.args...)...)
		if code := r.wait(t); code != tt.code || !strings.Contains(r.stderr.String(), tt.says) || strings.Count(strings.TrimSpace(r.stderr.String()), "\n") != 0 {
			t.Errorf("agent status %v: exit %d, stderr %q", tt.args, code, r.stderr)
		}
	}
	bc := &apitest.Client{T: t, Base: base}
	for _, tt := range []struct {
		body   string
		status int
		says   string
	}{
		{"not a card", http.StatusBadRequest, "Not a valid signed Agent Card"},
		{strings.Repeat("x", registry.MaxCardSize+1), http.StatusRequestEntityTooLarge, "/problems/card-too-large"},
	} {
		code, body := bc.Request("POST", "/v1/agents", []byte(tt.body), nil)
		if code != tt.status || !strings.Contains(string(body), tt.says) {
			t.Errorf("POST %q: %d %s", truncateStr(tt.body, 20), code, body)
		}
	}
	if code, _ := bc.Request("GET", "/v1/agents/did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp", nil, nil); code != http.StatusNotFound {
		t.Errorf("unknown agent: %d", code)
	}
}

func truncateStr(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
