package identity

import (
	"context"
	"sync"
	"time"
)

// ingressKey carries, in a context, where the envelopes verified under it came from.
type ingressKey struct{}

// WithIngress says that the envelopes verified under ctx came from source: a gossip peer
// ("peer <id>") or a client address ("addr <ip>"). Verify and Check then count them against
// that source's budget (VerifierConfig.IngressRate and IngressBurst) before checking any
// signature, and refuse them with ErrIngressBudget once it is spent. Without a source
// (the node's own calls) nothing is counted.
func WithIngress(ctx context.Context, source string) context.Context {
	return context.WithValue(ctx, ingressKey{}, source)
}

func ingressOf(ctx context.Context) (string, bool) {
	s, ok := ctx.Value(ingressKey{}).(string)
	return s, ok && s != ""
}

// ingressBudget is a token bucket per source, for at most max sources: cheap enough to
// run before anything is parsed.
type ingressBudget struct {
	mu      sync.Mutex
	rate    float64 // tokens a second
	burst   float64
	max     int
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newIngressBudget(rate float64, burst, max int) *ingressBudget {
	return &ingressBudget{rate: rate, burst: float64(burst), max: max, buckets: map[string]*bucket{}}
}

// level is b's tokens at now.
func (g *ingressBudget) level(b *bucket, now time.Time) float64 {
	if elapsed := now.Sub(b.at).Seconds(); elapsed > 0 {
		return min(g.burst, b.tokens+elapsed*g.rate)
	}
	return b.tokens
}

// take spends one of source's tokens, and reports false when it has none.
func (g *ingressBudget) take(source string, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	b, ok := g.buckets[source]
	if !ok {
		if len(g.buckets) >= g.max {
			g.evict(now)
		}
		b = &bucket{tokens: g.burst, at: now}
		g.buckets[source] = b
	}
	b.tokens, b.at = g.level(b, now), now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// evict makes room: it drops every bucket that has refilled (a new one would be the same),
// or else the one idle longest. The caller holds mu.
func (g *ingressBudget) evict(now time.Time) {
	var idlest string
	var since time.Time
	for s, b := range g.buckets {
		if g.level(b, now) >= g.burst {
			delete(g.buckets, s)
			continue
		}
		if idlest == "" || b.at.Before(since) {
			idlest, since = s, b.at
		}
	}
	if len(g.buckets) >= g.max {
		delete(g.buckets, idlest)
	}
}
