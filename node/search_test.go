package node_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/multiformats/go-multihash"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/p2p"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/node"
	"github.com/surety-ioa/surety/registry"
)

// searchNode is a node (in process, on the embedded chain, with its libp2p host on
// loopback) holding one local card, "Local", with the capabilities audit and translate.
type searchNode struct {
	url   string
	peer  peer.AddrInfo
	local string
}

func newSearchNode(t *testing.T) *searchNode {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	n, err := node.New(ctx, devConfig(t.TempDir()), nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		n.Close()
	})
	var info api.Info
	testutil.Eventually(t, "the node's API", 10*time.Second, func() bool { return get(t, n.APIURL()+"/v1/info", &info) })
	if info.Peer == nil || len(info.Peer.Addrs) == 0 {
		t.Fatalf("the node names no peer address: %+v", info.Peer)
	}
	ai, err := peer.AddrInfoFromString(info.Peer.Addrs[0] + "/p2p/" + info.Peer.ID)
	if err != nil {
		t.Fatal(err)
	}
	k := newKey(t)
	resp, err := http.Post(n.APIURL()+"/v1/agents", "application/jose", bytes.NewReader(signCard(t, k, "Local", "audits and translates here", "audit", "translate")))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("registering the local card: %d", resp.StatusCode)
	}
	return &searchNode{url: n.APIURL(), peer: *ai, local: k.DID.String()}
}

func newKey(t *testing.T) *identity.Key {
	t.Helper()
	k, err := identity.GenerateKey(identity.Ed25519)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func signCard(t *testing.T, k *identity.Key, name, desc string, caps ...string) []byte {
	t.Helper()
	sc, err := registry.Sign(registry.Card{DID: k.DID.String(), Name: name, Description: desc, Capabilities: caps,
		Wallet: common.HexToAddress("0x01"), Seq: 1, Updated: time.Now().Unix()}, k)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(sc.JWS)
}

// startProvider is a peer that provides each capability of cards in the DHT and answers
// AgentsProtocol with its card for it after delay, speaking the protocol as docs/PROTOCOL.md
// writes it. The node finds it through the DHT: the provider's own record, if not the copy
// it put on the node.
func startProvider(t *testing.T, bootstrap peer.AddrInfo, delay time.Duration, cards map[string][]byte) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	host, err := p2p.Start(ctx, p2p.Config{Bootstrap: []peer.AddrInfo{bootstrap}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Close() })
	host.Host.SetStreamHandler(registry.AgentsProtocol, func(s network.Stream) {
		defer s.Close()
		var req struct{ Capability string }
		if err := json.NewDecoder(io.LimitReader(s, 1<<10)).Decode(&req); err != nil || cards[req.Capability] == nil {
			_ = s.Reset()
			return
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			_ = s.Reset()
			return
		}
		_ = json.NewEncoder(s).Encode(map[string][]string{"cards": {string(cards[req.Capability])}})
	})
	for c := range cards {
		testutil.Eventually(t, "the provider's announcement of "+c, 10*time.Second, func() bool {
			pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			return host.DHT.Provide(pctx, capabilityCID(t, c), true) == nil
		})
	}
}

// capabilityCID is the DHT key of c's providers, as docs/PROTOCOL.md defines it:
// CIDv1(raw, sha2-256(registry.CapabilityPrefix + c)).
func capabilityCID(t *testing.T, c string) cid.Cid {
	mh, err := multihash.Sum([]byte(registry.CapabilityPrefix+c), multihash.SHA2_256, -1)
	if err != nil {
		t.Fatal(err)
	}
	return cid.NewCidV1(cid.Raw, mh)
}

type sseEvent struct {
	name string
	list wire.AgentList
}

// readEvents reads server-sent events until the stream ends.
func readEvents(t *testing.T, body io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	var ev sseEvent
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 8<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			ev.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.list); err != nil {
				t.Fatalf("event %s: data %q: %v", ev.name, line, err)
			}
		case line == "":
			out = append(out, ev)
			ev = sseEvent{}
		}
	}
	return out
}

func dids(list []*wire.Agent) []string {
	var out []string
	for _, a := range list {
		out = append(out, a.DID)
	}
	return out
}

// TestSearchAgentsStreamsRemoteProviders: on a running node, GET /v1/agents for a capability
// with fewer cards than the limit answers at once with discovering: true; as server-sent
// events, the local answer first, then the answer with a slow provider's card (a real libp2p
// host on loopback), then done; the typed client follows the same stream; a plain search
// afterwards answers from the index, which now has both.
func TestSearchAgentsStreamsRemoteProviders(t *testing.T) {
	if testing.Short() {
		t.Skip("starts libp2p hosts")
	}
	sn := newSearchNode(t)
	remoteAudit, remoteTranslate := newKey(t), newKey(t)
	startProvider(t, sn.peer, 300*time.Millisecond, map[string][]byte{
		"audit":     signCard(t, remoteAudit, "Remote auditor", "audits there", "audit"),
		"translate": signCard(t, remoteTranslate, "Remote translator", "translates there", "translate"),
	})

	// Plain JSON, a capability nobody provides: the local answer, and the lookup under way.
	start := time.Now()
	resp, err := http.Get(sn.url + "/v1/agents?capability=pdf")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if took := time.Since(start); took > time.Second {
		t.Errorf("GET /v1/agents?capability=pdf took %s", took)
	}
	if resp.StatusCode != http.StatusOK || string(body) != `{"agents":[],"discovering":true}`+"\n" {
		t.Fatalf("GET /v1/agents?capability=pdf = %d %s", resp.StatusCode, body)
	}

	req, _ := http.NewRequest(http.MethodGet, sn.url+"/v1/agents?capability=audit&limit=5", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		t.Fatalf("stream answered %d %s", resp.StatusCode, ct)
	}
	events := readEvents(t, resp.Body)
	if len(events) != 3 || events[0].name != "agents" || events[1].name != "agents" || events[2].name != "done" {
		t.Fatalf("events %+v; want agents, agents, done", events)
	}
	if got := dids(events[0].list.Agents); len(got) != 1 || got[0] != sn.local || !events[0].list.Discovering {
		t.Errorf("first event %v discovering %v; want the local card, discovering", got, events[0].list.Discovering)
	}
	if got := dids(events[1].list.Agents); len(got) != 2 || !strings.Contains(strings.Join(got, " "), remoteAudit.DID.String()) {
		t.Errorf("second event %v; want the local card and the provider's", got)
	}

	// The typed client, on the other capability.
	c, err := client.New(sn.url)
	if err != nil {
		t.Fatal(err)
	}
	var answers [][]string
	err = c.SearchAgentsStream(context.Background(), url.Values{"capability": {"translate"}}, func(l *wire.AgentList) error {
		answers = append(answers, dids(l.Agents))
		return nil
	})
	if err != nil || len(answers) != 2 || len(answers[0]) != 1 || len(answers[1]) != 2 {
		t.Fatalf("SearchAgentsStream: %v, %v; want the local answer, then two cards", answers, err)
	}
	// Looked up a moment ago: a plain search answers from the index, which has both.
	list, err := c.SearchAgents(context.Background(), url.Values{"capability": {"translate"}})
	if err != nil || len(list) != 2 {
		t.Fatalf("SearchAgents after the lookup = %v, %v", dids(list), err)
	}
	// Without a lookup, the stream is the answer and done.
	answers = nil
	if err := c.SearchAgentsStream(context.Background(), url.Values{"q": {"audits"}}, func(l *wire.AgentList) error {
		if l.Discovering {
			t.Error("a text search says discovering")
		}
		answers = append(answers, dids(l.Agents))
		return nil
	}); err != nil || len(answers) != 1 {
		t.Fatalf("SearchAgentsStream of a text search: %v, %v", answers, err)
	}
}

// TestSearchAgentsStreamEndsWhenTheClientLeaves: a client that leaves a search stream while
// the lookup waits on a provider answering after a minute ends the handler at once; an
// error is a problem before any event.
func TestSearchAgentsStreamEndsWhenTheClientLeaves(t *testing.T) {
	if testing.Short() {
		t.Skip("starts libp2p hosts")
	}
	sn := newSearchNode(t)
	startProvider(t, sn.peer, time.Minute, map[string][]byte{"audit": signCard(t, newKey(t), "Late", "answers late", "audit")})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, sn.url+"/v1/agents?capability=audit", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != "event: agents\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	if !running(streamHandler) {
		t.Fatal("no stream handler running")
	}
	cancel()
	resp.Body.Close()
	testutil.Eventually(t, "the stream's handler returned", time.Second, func() bool { return !running(streamHandler) })

	req, _ = http.NewRequest(http.MethodGet, sn.url+"/v1/agents?capability=Not+A+Tag", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusBadRequest || ct != "application/problem+json" {
		t.Errorf("a bad capability as a stream = %d %s, want a 400 problem", resp.StatusCode, ct)
	}
}

// streamHandler is the function that runs for the length of a search stream.
const streamHandler = "api.(*Server).streamAgents"

// running reports whether a goroutine of this process is in fn.
func running(fn string) bool {
	buf := make([]byte, 8<<20)
	return bytes.Contains(buf[:runtime.Stack(buf, true)], []byte(fn))
}
