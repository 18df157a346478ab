package groups

import (
	"context"
	"errors"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/p2p"
)

// Topic is the gossipsub topic of group threads: each message is a membership or thread
// envelope exactly as posted. Every node verifies it again on arrival (signature, times,
// replay, revocation, then membership for the groups it knows) before storing and forwarding
// it. A node that does not know the group forwards a verified envelope without storing it:
// the group lives elsewhere.
const Topic = "/surety/groups/1"

// Attach joins Topic on node: envelopes arriving are verified and applied here, and
// those posted here go out, until the node closes.
func (g *Service) Attach(node *p2p.Node) error {
	topic, err := node.Join(Topic, MaxMembersSize, func(ctx context.Context, from peer.ID, data []byte) pubsub.ValidationResult {
		// Counted against the forwarding peer's ingress budget before any signature is checked.
		v, err := g.cfg.Verify(identity.WithIngress(ctx, "peer "+from.String()), data)
		if err != nil {
			if identity.Malformed(err) {
				return pubsub.ValidationReject // forged or malformed: costs the peer
			}
			return pubsub.ValidationIgnore // stale, replayed, closed since, a budget spent, or not checkable
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
		case errors.Is(err, ErrBadGroup), errors.Is(err, ErrTooLarge), errors.Is(err, ErrNotMember), errors.Is(err, ErrNotCreator), errors.Is(err, ErrReservedGroup):
			return pubsub.ValidationReject
		}
		g.cfg.Logger.Debug("groups: gossiped group envelope not taken", "from", from, "group", id, "err", err)
		// Duplicate, stale membership, over a quota, a sender this node's chain index does
		// not (yet) show bound, or could not store.
		return pubsub.ValidationIgnore
	})
	if err != nil {
		return err
	}
	g.mu.Lock()
	g.topic = topic
	g.mu.Unlock()
	return nil
}

func (g *Service) attached() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.topic != nil
}

// spread gossips an envelope posted here and says whether it went out.
func (g *Service) spread(ctx context.Context, raw []byte) bool {
	g.mu.Lock()
	topic := g.topic
	g.mu.Unlock()
	if topic == nil {
		return false
	}
	if err := topic.Publish(ctx, raw); err != nil {
		g.cfg.Logger.Warn("groups: gossip group envelope", "err", err)
		return false
	}
	return true
}
