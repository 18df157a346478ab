package p2p

import (
	"context"
	"fmt"
	"sync"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
)

// meshTracer follows gossipsub's mesh (its GRAFTs and PRUNEs) per topic, so that a caller
// can wait for the mesh to form instead of waiting a while.
type meshTracer struct {
	mu   sync.Mutex
	mesh map[string]map[peer.ID]struct{}
}

var _ pubsub.RawTracer = (*meshTracer)(nil)

func newMeshTracer() *meshTracer { return &meshTracer{mesh: map[string]map[peer.ID]struct{}{}} }

// Graft records p joining topic's mesh.
func (m *meshTracer) Graft(p peer.ID, topic string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mesh[topic] == nil {
		m.mesh[topic] = map[peer.ID]struct{}{}
	}
	m.mesh[topic][p] = struct{}{}
}

// Prune records p leaving topic's mesh.
func (m *meshTracer) Prune(p peer.ID, topic string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.mesh[topic], p)
}

// OnClosedOutboundStream records p gone: gossipsub drops a peer whose stream closed (it
// disconnected) from every mesh without tracing a Prune.
func (m *meshTracer) OnClosedOutboundStream(p peer.ID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, peers := range m.mesh {
		delete(peers, p)
	}
}

// Leave forgets a topic this node left.
func (m *meshTracer) Leave(topic string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.mesh, topic)
}

func (m *meshTracer) size(topic string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.mesh[topic])
}

// The rest of RawTracer is not needed here.

func (m *meshTracer) OnNewOutboundStream(peer.ID, protocol.ID) {}
func (m *meshTracer) Join(string)                              {}
func (m *meshTracer) ValidateMessage(*pubsub.Message)          {}
func (m *meshTracer) DeliverMessage(*pubsub.Message)           {}
func (m *meshTracer) RejectMessage(*pubsub.Message, string)    {}
func (m *meshTracer) DuplicateMessage(*pubsub.Message)         {}
func (m *meshTracer) ThrottlePeer(peer.ID)                     {}
func (m *meshTracer) RecvRPC(*pubsub.RPC)                      {}
func (m *meshTracer) SendRPC(*pubsub.RPC, peer.ID)             {}
func (m *meshTracer) DropRPC(*pubsub.RPC, peer.ID)             {}
func (m *meshTracer) UndeliverableMessage(*pubsub.Message)     {}

// MeshFormed reports whether topic's gossip mesh here holds every connected peer that joined
// the topic, or gossipsub's lowest degree (Dlo) of them: a message published now reaches
// every node through the mesh. Tests wait on it instead of a fixed sleep. Gossipsub grafts
// while its mesh has fewer than Dlo and keeps one of Dlo to Dhi as it is, so waiting for its
// target D instead could wait for ever (a mesh of 5 among 19 peers, seen at f7e334f in
// BenchmarkPropagation20).
func (n *Node) MeshFormed(topic string) bool {
	want := min(len(n.PubSub.ListPeers(topic)), pubsub.GossipSubDlo)
	return want > 0 && n.mesh.size(topic) >= want
}

// meshPoll is how often WaitMesh looks at the mesh.
const meshPoll = 20 * time.Millisecond

// WaitMesh returns once topic's mesh has formed here (MeshFormed), or ctx's error.
func (n *Node) WaitMesh(ctx context.Context, topic string) error {
	t := time.NewTicker(meshPoll)
	defer t.Stop()
	for !n.MeshFormed(topic) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("p2p: the %s mesh has %d of %d peers: %w", topic, n.mesh.size(topic), len(n.PubSub.ListPeers(topic)), ctx.Err())
		case <-t.C:
		}
	}
	return nil
}

// Mesh is one topic's gossip mesh as this node sees it.
type Mesh struct {
	Topic string
	// Peers is how many connected peers joined the topic; InMesh how many of them are in this
	// node's mesh for it.
	Peers, InMesh int
	// Formed is MeshFormed: a message published now reaches every node through the mesh.
	Formed bool
}

// Meshes lists the mesh of every topic the node joined, in the order it joined them.
func (n *Node) Meshes() []Mesh {
	n.mu.Lock()
	names := make([]string, 0, len(n.topics))
	for _, t := range n.topics {
		names = append(names, t.name)
	}
	n.mu.Unlock()
	out := make([]Mesh, 0, len(names))
	for _, name := range names {
		out = append(out, Mesh{Topic: name, Peers: len(n.PubSub.ListPeers(name)), InMesh: n.mesh.size(name), Formed: n.MeshFormed(name)})
	}
	return out
}
