package reputation

import (
	"context"
	"errors"
	"log/slog"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/p2p"
)

// AuditTopic is the gossipsub topic of audits: each message is a signed audit envelope,
// exactly as filed. Every node checks it as if it were filed there (signature, times, replay,
// revocation, then the audit's own rules) before storing and forwarding it, so all nodes
// hold the same audits and, the log and scores being order-independent, the same roots and
// scores.
const AuditTopic = "/surety/audits/1"

// EnvelopeVerifier verifies a signed envelope (identity.Service.VerifyEnvelope).
type EnvelopeVerifier func(ctx context.Context, raw []byte) (*identity.Verified, error)

// Attach joins AuditTopic on node: audits arriving are verified and submitted here, and
// audits filed here (Submit) go out, until the node closes.
func (s *Service) Attach(node *p2p.Node, verify EnvelopeVerifier, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	topic, err := node.Join(AuditTopic, identity.MaxEnvelopeSize, func(ctx context.Context, from peer.ID, data []byte) pubsub.ValidationResult {
		// Counted against the forwarding peer's ingress budget before any signature is checked.
		v, err := verify(identity.WithIngress(ctx, "peer "+from.String()), data)
		if err != nil {
			if identity.Malformed(err) {
				return pubsub.ValidationReject // forged or malformed: costs the peer
			}
			return pubsub.ValidationIgnore // stale, replayed, closed since, a budget spent, or not checkable
		}
		_, err = s.submit(ctx, v, data)
		switch {
		case err == nil:
			return pubsub.ValidationAccept
		case errors.Is(err, ErrBadAudit), errors.Is(err, ErrSameWallet), errors.Is(err, ErrForeignBounty):
			return pubsub.ValidationReject
		}
		if waitsForFacts(err) {
			// This node's indexes may be behind the chain: hold it and retry as they
			// advance, so every node ends with the same audits whatever the arrival order.
			if herr := s.hold(ctx, v, data); herr != nil {
				log.Warn("reputation: hold gossiped audit", "err", herr)
			}
			return pubsub.ValidationIgnore
		}
		// Duplicate or late: not an attack.
		log.Debug("reputation: gossiped audit not taken", "from", from, "err", err)
		return pubsub.ValidationIgnore
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.topic = topic
	s.mu.Unlock()
	return nil
}

// spread gossips an audit filed here, when the service is attached to a network.
func (s *Service) spread(ctx context.Context, res *Submitted) {
	s.mu.RLock()
	topic := s.topic
	s.mu.RUnlock()
	if topic == nil {
		return
	}
	if err := topic.Publish(ctx, res.Audit.Raw); err != nil {
		s.cfg.Logger.Warn("reputation: gossip audit", "leaf", res.Audit.Leaf, "err", err)
	}
}
