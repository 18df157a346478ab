package reputation

import "context"

// PublishRaw publishes bytes on the audit topic without checking them: tests play a
// malicious peer with it.
func PublishRaw(ctx context.Context, s *Service, data []byte) error {
	s.mu.RLock()
	topic := s.topic
	s.mu.RUnlock()
	return topic.Publish(ctx, data)
}

// Follow is what recording audit a does in memory, without the checks and the store.
func Follow(s *Service, a *Audit, backed bool) { s.follow(a, backed) }
