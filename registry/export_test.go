package registry

import (
	"context"

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
