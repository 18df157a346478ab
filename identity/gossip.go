package identity

import (
	"context"
	"errors"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/surety-ioa/surety/internal/p2p"
)

// GroupTopic is the gossipsub topic of group threads: each message is a membership or thread
// envelope exactly as posted. Every node verifies it again on arrival (signature, times,
// replay, revocation, then membership for the groups it knows) before storing and forwarding
// it. A node that does not know the group forwards a verified envelope without storing it:
// the group lives elsewhere.
const GroupTopic = "/surety/groups/1"

// GossipVerdict is gossipsub's verdict on an envelope that failed verification with err:
// reject, which costs the peer that sent it, when it is forged or malformed; ignore when it
// is only stale, early, replayed or revoked since, or could not be checked.
func GossipVerdict(err error) pubsub.ValidationResult {
	var ve *VerifyError
	switch {
	case !errors.As(err, &ve):
		return pubsub.ValidationIgnore
	case errors.Is(err, ErrReplayed), errors.Is(err, ErrIssuedBeforeStart), errors.Is(err, ErrExpired),
		errors.Is(err, ErrNotYetValid), errors.Is(err, ErrRevoked):
		return pubsub.ValidationIgnore
	}
	return pubsub.ValidationReject
}

// Attach joins GroupTopic on node: envelopes arriving are verified and applied here, and
// those posted here go out, until the node closes.
func (g *Groups) Attach(node *p2p.Node) error {
	topic, err := node.Join(GroupTopic, MaxEnvelopeSize, func(ctx context.Context, from peer.ID, data []byte) pubsub.ValidationResult {
		v, err := g.cfg.Verify(ctx, data)
		if err != nil {
			return GossipVerdict(err)
		}
		id := v.Envelope.GroupID
		if IsMembership(v) {
			_, err = g.setMembers(ctx, id, v, data)
		} else {
			_, err = g.post(ctx, id, v, data)
		}
		switch {
		case err == nil, errors.Is(err, ErrUnknownGroup):
			return pubsub.ValidationAccept // stored, or passed on towards the group's nodes
		case errors.Is(err, ErrBadGroup), errors.Is(err, ErrNotMember), errors.Is(err, ErrNotCreator), errors.Is(err, ErrReservedGroup):
			return pubsub.ValidationReject
		}
		g.cfg.Logger.Debug("identity: gossiped group envelope not taken", "from", from, "group", id, "err", err)
		return pubsub.ValidationIgnore // duplicate, stale membership, or could not store
	})
	if err != nil {
		return err
	}
	g.mu.Lock()
	g.topic = topic
	g.mu.Unlock()
	return nil
}

func (g *Groups) attached() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.topic != nil
}

// spread gossips an envelope posted here and says whether it went out.
func (g *Groups) spread(ctx context.Context, raw []byte) bool {
	g.mu.Lock()
	topic := g.topic
	g.mu.Unlock()
	if topic == nil {
		return false
	}
	if err := topic.Publish(ctx, raw); err != nil {
		g.cfg.Logger.Warn("identity: gossip group envelope", "err", err)
		return false
	}
	return true
}
