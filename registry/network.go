package registry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/ipfs/go-cid"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	record "github.com/libp2p/go-libp2p-record"
	"github.com/libp2p/go-libp2p/core/peer"

	"golang.org/x/time/rate"

	"github.com/surety-ioa/surety/internal/p2p"
)

// CardNamespace is the DHT namespace of Agent Cards: a card lives under /surety-card/<did>.
const CardNamespace = "surety-card"

// CardTopic is the gossipsub topic of new cards.
const CardTopic = "/surety/cards/1"

// ErrUnstaked reports a card without stake offered to the DHT, which stores staked cards only.
var ErrUnstaked = errors.New("registry: the DHT keeps staked cards only")

// cardKey is the DHT key of did's card.
func cardKey(did string) string { return "/" + CardNamespace + "/" + did }

// dhtValidator checks DHT card records: a signed card for the DID in the key, with stake.
type dhtValidator struct{ r *Registry }

var _ record.Validator = dhtValidator{}

// Validate accepts a record only if it is a valid signed card of the key's DID whose agent
// holds stake: forged, stale-by-Select, mismatched and unstaked cards are neither stored
// nor served by this node. A card this node checked and stored lately (the DHT put of a
// card registered here) is not verified a second time (verifiedCards).
func (v dhtValidator) Validate(key string, value []byte) error {
	did, ok := strings.CutPrefix(key, "/"+CardNamespace+"/")
	if !ok {
		return fmt.Errorf("registry: key %q is not a card key", key)
	}
	sc, err := v.r.verified.check(value, v.r.cfg.Now())
	if err != nil {
		return err
	}
	if sc.did != did {
		return cardErr(sc.did, ErrWrongDID, "stored under %s", did)
	}
	ctx, cancel := context.WithTimeout(context.Background(), localReadTimeout)
	defer cancel()
	stake, err := v.r.cfg.Stakes.StakeOf(ctx, sc.did, sc.wallet)
	if err != nil {
		return err
	}
	if !v.r.staked(stake) {
		return cardErr(sc.did, ErrUnstaked, "no stake (or less than the minimum) under wallet %s", sc.wallet.Hex())
	}
	return nil
}

// Select prefers the card that registration keeps (newer): the highest sequence number, so
// an old card never wins, and of two with one sequence number the same one every node keeps.
func (v dhtValidator) Select(_ string, values [][]byte) (int, error) {
	best := -1
	var bestCard verifiedCard
	for i, val := range values {
		sc, err := v.r.verified.check(val, v.r.cfg.Now())
		if err != nil {
			continue
		}
		if best < 0 || newerContent(sc.seq, sc.content, bestCard.seq, bestCard.content) {
			best, bestCard = i, sc
		}
	}
	if best < 0 {
		return 0, errors.New("registry: no valid card among the values")
	}
	return best, nil
}

// DHTValidators are the validators a node's DHT needs for the registry.
func (r *Registry) DHTValidators() map[string]record.Validator {
	return map[string]record.Validator{CardNamespace: dhtValidator{r}}
}

// Network spreads cards between nodes: gossip for every new card, the DHT for staked ones.
type Network struct {
	r     *Registry
	node  *p2p.Node
	topic *p2p.Topic
	log   *slog.Logger
	prov  providing
	// out holds the cards accepted here that are still to be gossiped (and, staked, put in
	// the DHT): spread, a goroutine of the node, sends them off the registration's path, one
	// card per DID, the newest. spreadDone is closed when it stops.
	out        *outbox
	spreadDone chan struct{}
	// life ends when Close is called; tasks are the lookups under way (startDiscovery).
	life  context.Context
	stop  context.CancelFunc
	tasks sync.WaitGroup
	// findProviders is the DHT's FindProvidersAsync (read under prov.mu: a test silences it).
	findProviders func(context.Context, cid.Cid, int) <-chan peer.AddrInfo
}

// Close stops the network lookups under way and waits for them; searches start no new ones.
// The p2p node's Close does the same (the lookups are its tasks too); gossip, provider
// records and AgentsProtocol end with the p2p node.
func (n *Network) Close() {
	n.prov.mu.Lock()
	n.prov.closed = true
	n.prov.mu.Unlock()
	n.stop()
	n.tasks.Wait()
}

// PendingPuts is how many DHT puts of cards are under way: once it is 0, a staked card
// registered here is in the DHT, or its put failed, or it found no room in the outbox within
// spreadWait and is left to anti-entropy (which a full outbox of staked cards alone causes:
// unstaked ones take at most half of it).
func (n *Network) PendingPuts() int { return n.out.pending() }

// Attach connects the registry to a p2p node (whose DHT was started with DHTValidators):
// cards arriving by gossip are validated (and stored) by the registry; a peer whose cards are
// forged or malformed is rejected, which lowers its gossip score. The node announces the
// capabilities of the staked cards it holds as DHT provider records and answers
// AgentsProtocol, until the node closes (ctx bounds reading the stored cards).
func (r *Registry) Attach(ctx context.Context, node *p2p.Node, log *slog.Logger) (*Network, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	n := &Network{r: r, node: node, log: log, prov: providing{provided: map[string]time.Time{}, discovered: map[string]discovered{}, sources: map[string]*rate.Limiter{}, busy: map[string]int{},
		running: map[string]*discovery{}, lookups: make(chan struct{}, maxLookups)}}
	n.findProviders = node.DHT.FindProvidersAsync
	n.life, n.stop = context.WithCancel(context.Background())
	n.out, n.spreadDone = newOutbox(spreadQueue), make(chan struct{})
	topic, err := node.Join(CardTopic, 0, func(ctx context.Context, from peer.ID, data []byte) pubsub.ValidationResult {
		_, err := r.register(ctx, data, "peer:"+from.String(), false)
		switch {
		case err == nil:
			return pubsub.ValidationAccept
		case errors.Is(err, ErrStale), errors.Is(err, ErrRateLimited), errors.Is(err, ErrRevoked):
			return pubsub.ValidationIgnore // not worth forwarding, but not an attack
		case errors.Is(err, ErrForged), errors.Is(err, ErrMalformed), errors.Is(err, ErrWrongDID), errors.Is(err, ErrOversize):
			return pubsub.ValidationReject // costs the sender score
		}
		return pubsub.ValidationIgnore // could not check (chain unreachable): do not punish
	})
	if err != nil {
		return nil, err
	}
	n.topic = topic
	node.Host.SetStreamHandler(AgentsProtocol, n.serveAgents)
	if err := n.provideStored(ctx); err != nil {
		return nil, err
	}
	node.Go(n.reprovide)
	if !node.Go(n.spread) {
		n.stopSpreading()
	}
	r.mu.Lock()
	r.net = n
	r.mu.Unlock()
	return n, nil
}

// publish hands a card this node accepted to spread, without making its registrant wait:
// a card whose DID has one waiting takes its place (only the newest card of a DID waits);
// an unstaked card is queued only while there is room and the waiting cards weigh less than
// maxUnstakedSpread, a staked one waits at most spreadWait for room. A card not queued is
// stored all the same, and anti-entropy carries it.
func (n *Network) publish(ctx context.Context, a *Agent) {
	if n.out.put(ctx, a) != left || !a.Staked || ctx.Err() != nil {
		return
	}
	if count, due := n.out.leftWarning(time.Now()); due {
		n.log.Warn("registry: staked cards stored, not spread now: the gossip queue is full (anti-entropy carries them)", "cards", count, "last", a.DID)
	}
}

// spread sends the cards of the outbox, one at a time, the oldest waiting first, until the
// node closes: gossip always (gossipsub signs each message with the host's key), the DHT
// when the card is staked (a put of its own, which outlives this loop's turn).
func (n *Network) spread(ctx context.Context) {
	defer n.stopSpreading()
	for ctx.Err() == nil {
		if a, ok := n.out.take(); ok {
			n.send(ctx, a)
			continue
		}
		select {
		case <-n.out.ready:
		case <-ctx.Done():
			return
		}
	}
}

// stopSpreading refuses the cards that come after and forgets those in the outbox (stored,
// not spread: anti-entropy carries them).
func (n *Network) stopSpreading() {
	close(n.spreadDone)
	n.out.close()
}

// send gossips a card and starts its DHT put when it is staked (counted in the outbox's
// putting already).
func (n *Network) send(ctx context.Context, a *Agent) {
	if err := n.topic.Publish(ctx, []byte(a.JWS)); err != nil {
		n.log.Warn("registry: gossip card", "did", a.DID, "err", err)
	}
	if !a.Staked {
		return
	}
	started := n.node.Go(func(ctx context.Context) {
		defer n.out.done()
		pctx, cancel := context.WithTimeout(ctx, dhtWriteTimeout)
		defer cancel()
		if err := n.node.DHT.PutValue(pctx, cardKey(a.DID), []byte(a.JWS)); err != nil {
			n.log.Debug("registry: DHT put", "did", a.DID, "err", err)
		}
	})
	if !started {
		n.out.done()
	}
}

// lookup asks the DHT for did's card and stores what it finds.
func (n *Network) lookup(ctx context.Context, did string) (*Agent, error) {
	lctx, cancel := context.WithTimeout(ctx, dhtLookupTimeout)
	defer cancel()
	val, err := n.node.DHT.GetValue(lctx, cardKey(did))
	if err != nil {
		return nil, cardErr(did, ErrUnknownAgent, "not here and not in the DHT")
	}
	a, err := n.r.register(ctx, val, "dht", false)
	if errors.Is(err, ErrStale) {
		return n.r.getLocal(ctx, did)
	}
	return a, err
}
