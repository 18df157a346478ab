package registry

import (
	"context"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/surety-ioa/surety/internal/p2p"
)

// PublishRaw publishes bytes on the card topic without validating them: tests play a
// malicious peer with it.
func PublishRaw(ctx context.Context, r *Registry, _ *p2p.Node, data []byte) error {
	return r.net.topic.Publish(ctx, data)
}

// RegisterQuietly stores a card as a registration does, without gossip or a DHT put: a card
// that only its node's provider records can lead others to.
func RegisterQuietly(ctx context.Context, r *Registry, raw []byte) (*Agent, error) {
	return r.register(ctx, raw, "test", false)
}

// CapabilityCID is the DHT key of a capability's providers.
var CapabilityCID = capabilityCID

// SyncSetWindow is SyncSet listing at most window cards.
func SyncSetWindow(r *Registry, window int) p2p.Set { return r.syncSet(window) }

// SilenceDHT makes n's lookups find no provider and last until their deadline: a DHT whose
// peers never answer.
func SilenceDHT(n *Network) {
	n.prov.mu.Lock()
	defer n.prov.mu.Unlock()
	n.findProviders = func(ctx context.Context, _ cid.Cid, _ int) <-chan peer.AddrInfo {
		ch := make(chan peer.AddrInfo)
		context.AfterFunc(ctx, func() { close(ch) })
		return ch
	}
}

// RunningLookups is how many network lookups hold a slot.
func RunningLookups(n *Network) int { return len(n.prov.lookups) }

// ForgetAnswers empties r's caches of index answers and of cards: the next search computes
// its answer and reads its cards from SQLite.
func ForgetAnswers(r *Registry) {
	r.answers.mu.Lock()
	r.answers.answers = nil
	r.answers.mu.Unlock()
	r.cards.mu.Lock()
	r.cards.cards = nil
	r.cards.mu.Unlock()
}
