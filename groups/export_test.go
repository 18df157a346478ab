package groups

import (
	"context"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/p2p"
)

// PublishRaw publishes bytes on the group topic without checking them: tests play a
// malicious peer with it.
func PublishRaw(ctx context.Context, g *Service, data []byte) error {
	g.mu.Lock()
	topic := g.topic
	g.mu.Unlock()
	return topic.Publish(ctx, data)
}

// Schema is the groups' tables as the first migration creates them.
var Schema = migrations[0].SQL

// SyncSetsWindow is SyncSets listing at most groups memberships and posts thread envelopes.
func SyncSetsWindow(g *Service, check func(ctx context.Context, raw []byte) (*identity.Verified, error), groups, posts int) (p2p.Set, p2p.Set) {
	return g.syncSets(check, groups, posts)
}
