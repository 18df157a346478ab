package groups

import "context"

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
