package p2p

import (
	"context"
	"errors"
	"fmt"
	"sync"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
)

// TopicValidator checks a message a peer sent on a topic: accept (it is stored and
// forwarded), ignore (dropped, at no cost to the sender) or reject (dropped, and the sender's
// gossip score falls). Messages the node published itself are accepted unchecked: they were
// checked when they were made.
type TopicValidator func(ctx context.Context, from peer.ID, data []byte) pubsub.ValidationResult

// Topic is a gossipsub topic the node takes part in. The validator does the work on each
// message; a goroutine the Topic owns reads the subscription so it keeps flowing, and Close
// (or the node's) stops it and waits for it.
type Topic struct {
	name   string
	node   *Node
	topic  *pubsub.Topic
	sub    *pubsub.Subscription
	stop   context.CancelFunc // ends the reader
	done   chan struct{}
	closed sync.Once
}

// Join joins topic name, checking what peers send with validate and refusing outright any
// message larger than maxSize bytes (0: no bound beyond gossipsub's own).
func (n *Node) Join(name string, maxSize int, validate TopicValidator) (*Topic, error) {
	self := n.Host.ID()
	err := n.PubSub.RegisterTopicValidator(name, func(ctx context.Context, from peer.ID, msg *pubsub.Message) pubsub.ValidationResult {
		switch {
		case from == self:
			return pubsub.ValidationAccept
		case maxSize > 0 && len(msg.Data) > maxSize:
			return pubsub.ValidationReject
		}
		return validate(ctx, from, msg.Data)
	})
	if err != nil {
		return nil, fmt.Errorf("p2p: topic %s: %w", name, err)
	}
	topic, err := n.PubSub.Join(name)
	if err != nil {
		return nil, fmt.Errorf("p2p: join %s: %w", name, err)
	}
	sub, err := topic.Subscribe()
	if err != nil {
		topic.Close()
		return nil, fmt.Errorf("p2p: subscribe to %s: %w", name, err)
	}
	// The reader stops with the node, or Close, even when gossipsub has stopped first and
	// would never end the subscription itself.
	ctx, stop := context.WithCancel(n.life)
	t := &Topic{name: name, node: n, topic: topic, sub: sub, stop: stop, done: make(chan struct{})}
	go func() {
		defer close(t.done)
		for {
			if _, err := sub.Next(ctx); err != nil {
				return
			}
		}
	}()
	n.mu.Lock()
	n.topics = append(n.topics, t)
	n.mu.Unlock()
	return t, nil
}

// Publish sends data to the topic's peers.
func (t *Topic) Publish(ctx context.Context, data []byte) error {
	return t.topic.Publish(ctx, data)
}

// Close leaves the topic and waits for its reader. Once gossipsub itself has stopped, there
// is nothing left to leave.
func (t *Topic) Close() error {
	var err error
	t.closed.Do(func() {
		t.stop()
		t.sub.Cancel()
		<-t.done
		err = errors.Join(t.topic.Close(), t.node.PubSub.UnregisterTopicValidator(t.name))
		if errors.Is(err, context.Canceled) {
			err = nil
		}
	})
	return err
}

// Go runs task on a goroutine the node owns: its context ends when the node closes, and
// Close waits for it. For work that outlives the request that started it (a DHT put, a
// provider announcement). It reports false, running nothing, once the node has closed.
func (n *Node) Go(task func(ctx context.Context)) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopped {
		return false
	}
	n.tasks.Add(1)
	go func() {
		defer n.tasks.Done()
		task(n.life)
	}()
	return true
}
