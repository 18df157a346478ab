package node_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/surety-ioa/surety/a2a"
	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/p2p"
	"github.com/surety-ioa/surety/node"
)

func devConfig(dir string) node.Config {
	return node.Config{DataDir: dir, Listen: "127.0.0.1:0", DevAccounts: 2, LogEpoch: node.DefaultLogEpoch, LogGrace: node.DefaultLogGrace,
		LogQuorum: 1, RegisterNode: "no", P2PListen: p2p.DefaultListen, SyncEvery: node.DefaultSyncEvery, Version: "test"}
}

// TestNodeRunsAndCloses: New starts a node on the embedded chain that serves its API, holds
// its data dir against a second node, and stops serving when Run's context ends; Run returns
// nil, and Close (twice) frees the data dir for the next node.
func TestNodeRunsAndCloses(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	n, err := node.New(context.Background(), devConfig(dir), &out)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if !strings.Contains(out.String(), "Surety node ready on "+n.APIURL()) {
		t.Errorf("New printed %q, want the ready line naming %s", out.String(), n.APIURL())
	}
	// The web explorer is on unless Config.NoExplorer, and New says where.
	if want := n.APIURL() + "/explorer/"; n.ExplorerURL() != want || !strings.Contains(out.String(), "explorer: "+want+"\n") {
		t.Errorf("ExplorerURL %q, printed %q: want the explorer at %s named", n.ExplorerURL(), out.String(), want)
	}
	if _, ok := n.Chain().(*chain.Embedded); !ok {
		t.Errorf("Chain() is a %T, want the embedded chain", n.Chain())
	}
	if _, err := node.New(context.Background(), devConfig(dir), nil); err == nil || !strings.Contains(err.Error(), "in use by another surety process") {
		t.Errorf("a second node on the same data dir: %v, want it refused", err)
	}

	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	var info api.Info
	if !get(t, n.APIURL()+"/v1/info", &info) {
		t.Fatal("the API does not answer /v1/info")
	}
	if info.Chain.Kind != "embedded" || info.Chain.ID != chain.EmbeddedChainID || info.Version != "test" {
		t.Errorf("info %+v, want the embedded chain and version test", info)
	}
	if res, err := http.Get(n.ExplorerURL()); err != nil || res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Errorf("GET %s: %v %v, want the explorer's page", n.ExplorerURL(), res, err)
	} else {
		res.Body.Close()
	}
	// The node's A2A card names the API it listens on (no --public-url) and is signed by its DID.
	var card a2a.AgentCard
	if !get(t, n.APIURL()+"/.well-known/agent-card.json", &card) {
		t.Fatal("the API does not answer /.well-known/agent-card.json")
	}
	// ... and its MCP endpoint (on unless --no-mcp: mcp.TestNoMCPServesNone).
	if len(card.SupportedInterfaces) != 2 || card.SupportedInterfaces[0].URL != n.APIURL()+"/v1" ||
		card.SupportedInterfaces[1] != (a2a.AgentInterface{URL: n.APIURL() + "/mcp", ProtocolBinding: a2a.BindingMCP}) {
		t.Errorf("the node's card names %+v, want %s/v1 and its /mcp", card.SupportedInterfaces, n.APIURL())
	}
	if len(card.Signatures) != 1 {
		t.Fatalf("the node's card has %d signatures, want 1", len(card.Signatures))
	}
	if h, err := card.Signatures[0].ProtectedHeader(); err != nil || !strings.HasPrefix(h.Kid, info.NodeDID+"#") {
		t.Errorf("the node's card is signed by %q (%v), want the node's DID %s", h.Kid, err, info.NodeDID)
	}
	// The peer it answers is its own: its DID signed the binding to that peer id.
	if info.Peer == nil {
		t.Error("info has no peer")
	} else if _, err := identity.VerifyPeerBinding([]byte(info.Peer.Binding), info.NodeDID, info.Peer.ID); err != nil {
		t.Errorf("the node's peer binding: %v", err)
	}
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run returned %v once its context ended, want nil", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	n.Close()
	n.Close()

	again, err := node.New(context.Background(), devConfig(dir), nil)
	if err != nil {
		t.Fatalf("a node on the closed node's data dir: %v", err)
	}
	again.Close()
}

// TestNewUndoesAFailedStart: a start that fails at a later stage (the API port is taken)
// releases the data dir it locked.
func TestNewUndoesAFailedStart(t *testing.T) {
	dir := t.TempDir()
	first, err := node.New(context.Background(), devConfig(t.TempDir()), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	cfg := devConfig(dir)
	cfg.Listen = strings.TrimPrefix(first.APIURL(), "http://")
	if _, err := node.New(context.Background(), cfg, nil); err == nil || !strings.Contains(err.Error(), "listen on "+cfg.Listen) {
		t.Fatalf("a node on a taken port: %v, want a listen error", err)
	}
	n, err := node.New(context.Background(), devConfig(dir), nil)
	if err != nil {
		t.Fatalf("the data dir of the failed start: %v", err)
	}
	n.Close()
}

func get(t *testing.T, url string, v any) bool {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Log(err)
		return false
	}
	defer resp.Body.Close()
	return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(v) == nil
}

// TestNoExplorerServesNone: with NoExplorer the node serves no page, / included, and names
// none.
func TestNoExplorerServesNone(t *testing.T) {
	cfg := devConfig(t.TempDir())
	cfg.NoExplorer = true
	var out bytes.Buffer
	n, err := node.New(context.Background(), cfg, &out)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	defer func() { stop(); <-done }()
	if n.ExplorerURL() != "" || strings.Contains(out.String(), "explorer") {
		t.Errorf("ExplorerURL %q, printed %q: want no explorer named", n.ExplorerURL(), out.String())
	}
	for _, p := range []string{"/", "/explorer/"} {
		res, err := http.Get(n.APIURL() + p)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, res.StatusCode)
		}
	}
}
