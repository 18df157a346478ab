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
// audits filed here (Submit) go out. It runs until ctx ends.
func (s *Service) Attach(ctx context.Context, node *p2p.Node, verify EnvelopeVerifier, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	self := node.Host.ID()
	if err := node.PubSub.RegisterTopicValidator(AuditTopic, func(ctx context.Context, from peer.ID, msg *pubsub.Message) pubsub.ValidationResult {
		if from == self {
			return pubsub.ValidationAccept // filed here, checked then
		}
		if len(msg.Data) > identity.MaxEnvelopeSize {
			return pubsub.ValidationReject
		}
		v, err := verify(ctx, msg.Data)
		if err != nil {
			return identity.GossipVerdict(err)
		}
		_, err = s.submit(ctx, v, msg.Data)
		switch {
		case err == nil:
			return pubsub.ValidationAccept
		case errors.Is(err, ErrBadAudit), errors.Is(err, ErrSameWallet), errors.Is(err, ErrForeignBounty):
			return pubsub.ValidationReject
		}
		if waitsForFacts(err) {
			// This node's indexes may be behind the chain: hold it and retry as they
			// advance, so every node ends with the same audits whatever the arrival order.
			if herr := s.hold(ctx, v, msg.Data); herr != nil {
				log.Warn("reputation: hold gossiped audit", "err", herr)
			}
			return pubsub.ValidationIgnore
		}
		// Duplicate or late: not an attack.
		log.Debug("reputation: gossiped audit not taken", "from", from, "err", err)
		return pubsub.ValidationIgnore
	}); err != nil {
		return err
	}
	topic, err := node.PubSub.Join(AuditTopic)
	if err != nil {
		return err
	}
	sub, err := topic.Subscribe()
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.topic = topic
	s.mu.Unlock()
	go func() {
		for {
			if _, err := sub.Next(ctx); err != nil {
				return
			}
		}
	}()
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
