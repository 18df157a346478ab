package registry_test

import (
	"context"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/p2p"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/registry"
)

// netNode is one real node: its own libp2p host on loopback and its own registry database.
type netNode struct {
	reg  *registry.Registry
	node *p2p.Node
	net  *registry.Network
}

// scoreOf is the gossip score this node gives other (0 until scored).
func (n *netNode) scoreOf(other *netNode) float64 {
	s, _ := n.node.Score(other.node.Host.ID())
	return s
}

func startNetNode(t testing.TB, st registry.StakeReader, bootstrap []peer.AddrInfo) *netNode {
	t.Helper()
	return attachNetNode(t, newRegistry(t, st), bootstrap)
}

// attachNetNode starts a host for a registry that may already hold cards.
func attachNetNode(t testing.TB, reg *registry.Registry, bootstrap []peer.AddrInfo) *netNode {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	n := &netNode{reg: reg}
	node, err := p2p.Start(ctx, p2p.Config{Bootstrap: bootstrap, Validators: n.reg.DHTValidators(), Topics: []string{registry.CardTopic},
		InspectPeriod: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close() })
	n.node = node
	if n.net, err = n.reg.Attach(ctx, node, nil); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCardsSpreadAcrossNodes runs five nodes: a card registered on the first is found on the
// last by DID and by capability; with two nodes stopped, a node that joins later still finds
// it by capability (provider records) and by DID (the DHT).
func TestCardsSpreadAcrossNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts libp2p hosts")
	}
	ctx := context.Background()
	agent, _ := identity.GenerateKey(identity.Ed25519)
	st := stakes{agent.DID.String(): big.NewInt(2e18)}
	first := startNetNode(t, st, nil)
	nodes := []*netNode{first}
	for range 4 {
		nodes = append(nodes, startNetNode(t, st, []peer.AddrInfo{nodes[len(nodes)-1].node.Info(), first.node.Info()}))
	}
	var hosts []*p2p.Node
	for _, n := range nodes {
		hosts = append(hosts, n.node)
	}
	for _, n := range hosts { // let the mesh form
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := n.WaitMesh(wctx, registry.CardTopic)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := first.reg.Register(ctx, card(t, agent, 1, "Translator", "translates legal documents", "translate", "legal"), "api"); err != nil {
		t.Fatal(err)
	}
	last := nodes[4]
	testutil.Eventually(t, "card on the fifth node", 10*time.Second, func() bool {
		res, err := last.reg.Search(ctx, registry.Query{Capability: "legal"})
		return err == nil && len(res) == 1 && res[0].DID == agent.DID.String()
	})
	if a, err := last.reg.Get(ctx, agent.DID.String()); err != nil || a.Name != "Translator" || !a.Staked {
		t.Fatalf("Get on the fifth node = %+v, %v", a, err)
	}
	// Once the DHT put has landed, stop two nodes.
	testutil.Eventually(t, "the first node's DHT put done", 10*time.Second, func() bool { return first.net.PendingPuts() == 0 })
	nodes[0].node.Close()
	nodes[1].node.Close()
	late := startNetNode(t, st, []peer.AddrInfo{nodes[3].node.Info()})
	testutil.Eventually(t, "capability search from a node that joined late", 20*time.Second, func() bool {
		res, err := late.reg.Search(ctx, registry.Query{Capability: "translate"})
		return err == nil && len(res) == 1 && res[0].DID == agent.DID.String()
	})
	testutil.Eventually(t, "DHT lookup from a node that joined late", 20*time.Second, func() bool {
		a, err := late.reg.Get(ctx, agent.DID.String())
		return err == nil && a.DID == agent.DID.String()
	})
}

// TestCapabilityProvidersLeadToCards: a card its node never spread (no gossip, no DHT put)
// is still found by capability on another node, through the DHT provider record of the
// capability and the holder's AgentsProtocol answer; so is a card stored before its node
// had peers.
func TestCapabilityProvidersLeadToCards(t *testing.T) {
	if testing.Short() {
		t.Skip("starts libp2p hosts")
	}
	ctx := context.Background()
	agent, _ := identity.GenerateKey(identity.Ed25519)
	st := stakes{agent.DID.String(): big.NewInt(3e18)}
	holder := startNetNode(t, st, nil)
	middle := startNetNode(t, st, []peer.AddrInfo{holder.node.Info()})
	asker := startNetNode(t, st, []peer.AddrInfo{middle.node.Info()})
	if _, err := registry.RegisterQuietly(ctx, holder.reg, card(t, agent, 1, "Auditor", "audits contracts", "audit", "solidity")); err != nil {
		t.Fatal(err)
	}
	// A node that stored its card before it had peers (a restart) announces it on attaching.
	other := mustKey(t)
	st[other.DID.String()] = big.NewInt(1e18)
	offline := newRegistry(t, st)
	if _, err := offline.Register(ctx, card(t, other, 1, "Reviewer", "reviews contracts", "review"), "api"); err != nil {
		t.Fatal(err)
	}
	attachNetNode(t, offline, []peer.AddrInfo{middle.node.Info()})
	if res, err := asker.reg.Search(ctx, registry.Query{Text: "audits"}); err != nil || len(res) != 0 {
		t.Fatalf("the asker has the card before asking the network: %v, %v", res, err)
	}
	testutil.Eventually(t, "the card found by capability through its provider", 20*time.Second, func() bool {
		res, err := asker.reg.Search(ctx, registry.Query{Capability: "solidity"})
		return err == nil && len(res) == 1 && res[0].DID == agent.DID.String() && res[0].Staked
	})
	// Now stored on the asker: its text search finds it without the network.
	if res, err := asker.reg.Search(ctx, registry.Query{Text: "audits contracts"}); err != nil || len(res) != 1 {
		t.Errorf("text search after discovery = %v, %v", res, err)
	}
	testutil.Eventually(t, "the card stored before its node attached, found by capability", 20*time.Second, func() bool {
		res, err := asker.reg.Search(ctx, registry.Query{Capability: "review"})
		return err == nil && len(res) == 1 && res[0].DID == other.DID.String()
	})
}

// TestForgedCardFloodIsDroppedAndScored has a peer flood a node with forged cards: none is
// stored, and the flooder's gossip score falls below zero.
func TestForgedCardFloodIsDroppedAndScored(t *testing.T) {
	if testing.Short() {
		t.Skip("starts libp2p hosts")
	}
	ctx := context.Background()
	honest := startNetNode(t, stakes{}, nil)
	flooder := startNetNode(t, stakes{}, []peer.AddrInfo{honest.node.Info()})
	for _, n := range []*p2p.Node{honest.node, flooder.node} { // let the mesh form
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := n.WaitMesh(wctx, registry.CardTopic)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	// The flooder's own registry would refuse its forgeries, so it publishes around it, on
	// the card topic it joined through Attach.
	victim, _ := identity.GenerateKey(identity.Ed25519)
	good := card(t, victim, 1, "Victim", "v", "x")
	published := 0
	for i := range 30 {
		forged := []byte(string(good[:len(good)-6]) + fmt.Sprintf("%06d", i))
		if err := publishRaw(ctx, flooder, forged); err == nil {
			published++
		}
	}
	if published == 0 {
		t.Fatal("the flooder could not publish")
	}
	testutil.Eventually(t, "flooder's score below zero", 10*time.Second, func() bool { return honest.scoreOf(flooder) < 0 })
	if res, _ := honest.reg.Search(ctx, registry.Query{}); len(res) != 0 {
		t.Errorf("forged cards were stored: %v", res)
	}
}

func mustKey(t *testing.T) *identity.Key {
	t.Helper()
	k, err := identity.GenerateKey(identity.Ed25519)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func publishRaw(ctx context.Context, n *netNode, data []byte) error {
	return registry.PublishRaw(ctx, n.reg, n.node, data)
}
