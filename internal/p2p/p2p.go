// Package p2p runs a node's libp2p host: TCP and QUIC (loopback by default), a Kademlia DHT in
// server mode under Surety's own protocol prefix with the validators the caller gives, and
// gossipsub with peer scoring, so that a peer whose messages keep failing validation loses
// score and is pruned; Rejoin, which keeps a node connected to the peers it learned; and
// anti-entropy (Syncer), which pulls what gossip did not deliver.
package p2p

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p"
	dht "github.com/libp2p/go-libp2p-kad-dht"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	record "github.com/libp2p/go-libp2p-record"
	"github.com/libp2p/go-libp2p/core/control"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
)

// ProtocolPrefix keeps Surety's DHT apart from the public IPFS one.
const ProtocolPrefix = "/surety"

// DefaultListen are the listen addresses when none are given: loopback, any port.
var DefaultListen = []string{"/ip4/127.0.0.1/tcp/0", "/ip4/127.0.0.1/udp/0/quic-v1"}

// Config sets up a Node.
type Config struct {
	// Key is the host's identity; nil makes a fresh Ed25519 key.
	Key crypto.PrivKey
	// Listen are multiaddrs; nil means DefaultListen.
	Listen []string
	// Bootstrap peers are dialled at start and seed the DHT.
	Bootstrap []peer.AddrInfo
	// Deny are peers refused from the start, before any dial (Node.Deny replaces the list
	// later): a bootstrap peer among them is not connected to even once.
	Deny []peer.ID
	// Validators validate DHT records by namespace (the part of the key between the first
	// two slashes).
	Validators map[string]record.Validator
	// Topics get scoring parameters: invalid messages on them cost the sender.
	Topics []string
	// InspectPeriod is how often the gossip scores that Score reports are read (0: 1 s).
	InspectPeriod time.Duration
	Logger        *slog.Logger
}

// Node is a running libp2p host with its DHT and pubsub.
type Node struct {
	Host   host.Host
	DHT    *dht.IpfsDHT
	PubSub *pubsub.PubSub

	mu        sync.Mutex
	scores    map[peer.ID]float64 // gossip scores as of the last inspection
	penalties map[peer.ID]penalty // what peers lost by sending bad items outside gossip
	deny      *denyList
	topics    []*Topic
	mesh      *meshTracer     // gossipsub's mesh per topic (MeshFormed)
	life      context.Context // ends when the node closes: the context of tasks (Go)
	stop      context.CancelFunc
	stopped   bool
	tasks     sync.WaitGroup
}

// penalty is a peer's penalty as of a time; it halves every penaltyHalfLife.
type penalty struct {
	value float64
	at    time.Time
}

func (p penalty) now(t time.Time) float64 {
	return p.value * math.Pow(0.5, float64(t.Sub(p.at))/float64(penaltyHalfLife))
}

// Penalize lowers peer id's gossip score by amount (decaying over penaltyHalfLife), for a
// misdeed gossipsub cannot see: an item sent by anti-entropy that failed its checks.
func (n *Node) Penalize(id peer.ID, amount float64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	now := time.Now()
	if n.penalties == nil {
		n.penalties = map[peer.ID]penalty{}
	}
	n.penalties[id] = penalty{value: n.penalties[id].now(now) + amount, at: now}
}

// Penalty is peer id's current penalty (0 for none).
func (n *Node) Penalty(id peer.ID) float64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.penalties[id].now(time.Now())
}

// Score is peer id's gossip score as of the last inspection (InspectPeriod); ok is false for
// a peer gossipsub has not scored.
func (n *Node) Score(id peer.ID) (score float64, ok bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	score, ok = n.scores[id]
	return score, ok
}

// GenerateKey makes a new Ed25519 host key.
func GenerateKey() (crypto.PrivKey, error) {
	k, _, err := crypto.GenerateEd25519Key(nil)
	return k, err
}

// Start starts the host, the DHT and gossipsub, and dials the bootstrap peers.
func Start(ctx context.Context, cfg Config) (*Node, error) {
	if cfg.Key == nil {
		k, err := GenerateKey()
		if err != nil {
			return nil, err
		}
		cfg.Key = k
	}
	if len(cfg.Listen) == 0 {
		cfg.Listen = DefaultListen
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	deny := &denyList{}
	if len(cfg.Deny) > 0 {
		deny.denied = make(map[peer.ID]bool, len(cfg.Deny))
		for _, id := range cfg.Deny {
			deny.denied[id] = true
		}
	}
	h, err := libp2p.New(libp2p.Identity(cfg.Key), libp2p.ListenAddrStrings(cfg.Listen...), libp2p.ConnectionGater(deny))
	if err != nil {
		return nil, fmt.Errorf("p2p: start host: %w", err)
	}
	n := &Node{Host: h, deny: deny}
	n.life, n.stop = context.WithCancel(context.Background())
	fail := func(err error) (*Node, error) {
		n.Close()
		return nil, err
	}
	validator := record.NamespacedValidator{}
	for ns, v := range cfg.Validators {
		validator[ns] = v
	}
	if n.DHT, err = dht.New(h, dht.Mode(dht.ModeServer), dht.ProtocolPrefix(ProtocolPrefix), dht.Validator(validator),
		dht.BootstrapPeers(cfg.Bootstrap...)); err != nil {
		return fail(fmt.Errorf("p2p: start DHT: %w", err))
	}
	period := cfg.InspectPeriod
	if period == 0 {
		period = defaultInspectPeriod
	}
	inspect := func(scores map[peer.ID]float64) {
		n.mu.Lock()
		defer n.mu.Unlock()
		n.scores = scores
	}
	n.mesh = newMeshTracer()
	opts := []pubsub.Option{pubsub.WithPeerScore(scoreParams(cfg.Topics, func(id peer.ID) float64 { return -n.Penalty(id) }), scoreThresholds()),
		pubsub.WithPeerScoreInspect(pubsub.PeerScoreInspectFn(inspect), period), pubsub.WithRawTracer(n.mesh)}
	if n.PubSub, err = pubsub.NewGossipSub(ctx, h, opts...); err != nil {
		return fail(fmt.Errorf("p2p: start gossipsub: %w", err))
	}
	if err := n.Connect(ctx, cfg.Bootstrap); err != nil && len(cfg.Bootstrap) > 0 {
		cfg.Logger.Warn("p2p: no bootstrap peer answered", "err", err)
	}
	if err := n.DHT.Bootstrap(ctx); err != nil {
		return fail(fmt.Errorf("p2p: bootstrap DHT: %w", err))
	}
	return n, nil
}

// Connect dials peers; it fails only when none of them could be reached.
func (n *Node) Connect(ctx context.Context, peers []peer.AddrInfo) error {
	var errs []error
	for _, p := range peers {
		if p.ID == n.Host.ID() {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, connectTimeout)
		err := n.Host.Connect(cctx, p)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.ID, err))
		}
	}
	if len(errs) == len(peers) && len(peers) > 0 {
		return errors.Join(errs...)
	}
	return nil
}

// Addrs are the host's full multiaddrs (with /p2p/<id>), for others to bootstrap from.
func (n *Node) Addrs() []string {
	var out []string
	for _, a := range n.Host.Addrs() {
		out = append(out, a.String()+"/p2p/"+n.Host.ID().String())
	}
	return out
}

// Info is the host's peer.AddrInfo.
func (n *Node) Info() peer.AddrInfo { return peer.AddrInfo{ID: n.Host.ID(), Addrs: n.Host.Addrs()} }

// ParseAddrs turns multiaddr strings with /p2p/<id> into peer.AddrInfo values.
func ParseAddrs(addrs []string) ([]peer.AddrInfo, error) {
	var mas []ma.Multiaddr
	for _, s := range addrs {
		m, err := ma.NewMultiaddr(s)
		if err != nil {
			return nil, fmt.Errorf("p2p: %q: %w", s, err)
		}
		mas = append(mas, m)
	}
	infos, err := peer.AddrInfosFromP2pAddrs(mas...)
	if err != nil {
		return nil, fmt.Errorf("p2p: %w (each address needs /p2p/<peer id>)", err)
	}
	return infos, nil
}

// Close stops everything: the node's tasks (waiting for them), its topics, the DHT and the
// host.
func (n *Node) Close() error {
	n.mu.Lock()
	already := n.stopped
	n.stopped = true
	topics := n.topics
	n.mu.Unlock()
	if already {
		return nil
	}
	n.stop()
	n.tasks.Wait()
	var err error
	for _, t := range topics {
		err = errors.Join(err, t.Close())
	}
	if n.DHT != nil {
		err = errors.Join(err, n.DHT.Close())
	}
	if n.Host != nil {
		err = errors.Join(err, n.Host.Close())
	}
	return err
}

// scoreParams weigh invalid messages heavily: a peer that keeps sending messages that fail
// validation drops below the graylist threshold within a few of them and is ignored. Peer
// ids cost nothing, so peers are also counted per IP address: beyond colocationThreshold
// from one address each loses colocationWeight × surplus² (gossipsub leaves loopback out:
// the nodes of a devnet share one host). appScore is each peer's score beyond gossip (its
// penalties, negated).
func scoreParams(topics []string, appScore func(peer.ID) float64) *pubsub.PeerScoreParams {
	p := &pubsub.PeerScoreParams{
		Topics:                      map[string]*pubsub.TopicScoreParams{},
		TopicScoreCap:               100,
		AppSpecificScore:            appScore,
		AppSpecificWeight:           1,
		IPColocationFactorWeight:    -colocationWeight,
		IPColocationFactorThreshold: colocationThreshold,
		DecayInterval:               time.Second,
		DecayToZero:                 0.01,
		RetainScore:                 time.Hour,
	}
	for _, t := range topics {
		p.Topics[t] = &pubsub.TopicScoreParams{
			TopicWeight:                     1,
			TimeInMeshWeight:                0.01,
			TimeInMeshQuantum:               time.Second,
			TimeInMeshCap:                   10,
			FirstMessageDeliveriesWeight:    1,
			FirstMessageDeliveriesDecay:     0.9,
			FirstMessageDeliveriesCap:       10,
			InvalidMessageDeliveriesWeight:  -10,
			InvalidMessageDeliveriesDecay:   math.Pow(0.01, 1.0/600), // forgiven over ~10 minutes
			MeshMessageDeliveriesWeight:     0,
			MeshFailurePenaltyWeight:        0,
			MeshMessageDeliveriesDecay:      0.5,
			MeshFailurePenaltyDecay:         0.5,
			MeshMessageDeliveriesCap:        1,
			MeshMessageDeliveriesThreshold:  1,
			MeshMessageDeliveriesWindow:     time.Millisecond,
			MeshMessageDeliveriesActivation: time.Hour,
		}
	}
	return p
}

func scoreThresholds() *pubsub.PeerScoreThresholds {
	return &pubsub.PeerScoreThresholds{
		GossipThreshold:             -10,
		PublishThreshold:            -50,
		GraylistThreshold:           -graylist,
		AcceptPXThreshold:           10,
		OpportunisticGraftThreshold: 5,
	}
}

// Connected lists the peers the host is connected to, with their addresses.
func (n *Node) Connected() []peer.AddrInfo {
	var out []peer.AddrInfo
	for _, id := range n.Host.Network().Peers() {
		out = append(out, n.Host.Peerstore().PeerInfo(id))
	}
	return out
}

// Known lists the peers this node knows how to reach: those it is connected to first, then
// the rest of the DHT's routing table, each with the addresses in the peerstore.
func (n *Node) Known() []peer.AddrInfo {
	out := n.Connected()
	seen := map[peer.ID]bool{n.Host.ID(): true}
	for _, ai := range out {
		seen[ai.ID] = true
	}
	for _, id := range n.DHT.RoutingTable().ListPeers() {
		if seen[id] {
			continue
		}
		seen[id] = true
		if ai := n.Host.Peerstore().PeerInfo(id); len(ai.Addrs) > 0 {
			out = append(out, ai)
		}
	}
	return out
}

// RejoinConfig tunes Rejoin.
type RejoinConfig struct {
	// Every is how often the node checks its connections (0: 5 s).
	Every time.Duration
	// MinPeers is how many connections the node wants; below it, it dials more (0: 4).
	MinPeers int
	// Seeds are dialled when nothing else answers: the bootstrap and remembered peers.
	Seeds  []peer.AddrInfo
	Logger *slog.Logger
}

// Rejoin keeps the node in the network until ctx ends: whenever it has fewer than MinPeers
// connections it dials the peers of its DHT routing table and peerstore, then the seeds, and
// refreshes the routing table through whoever answered. A node whose bootstrap peers died
// finds the network again through any peer it once learned of; one that lost every
// connection (a partition, a sleep) reconnects when any known peer is back.
func (n *Node) Rejoin(ctx context.Context, cfg RejoinConfig) {
	if cfg.Every == 0 {
		cfg.Every = defaultRejoinEvery
	}
	if cfg.MinPeers == 0 {
		cfg.MinPeers = defaultMinPeers
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	t := time.NewTicker(cfg.Every)
	defer t.Stop()
	alone := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		have := len(n.Host.Network().Peers())
		if have >= cfg.MinPeers {
			alone = false
			continue
		}
		dialled, tried := n.dialKnown(ctx, cfg.Seeds, cfg.MinPeers-have)
		switch {
		case dialled > 0:
			if alone {
				cfg.Logger.Info("p2p: rejoined the network", "peers", len(n.Host.Network().Peers()))
			}
			alone = false
			// Learn the network's current shape through the peers that answered.
			rctx, cancel := context.WithTimeout(ctx, cfg.Every)
			select {
			case <-n.DHT.RefreshRoutingTable():
			case <-rctx.Done():
			}
			cancel()
		case have == 0 && tried > 0 && !alone: // a node that knows no peer is alone by design
			alone = true
			cfg.Logger.Warn("p2p: no peer reachable; retrying known peers", "every", cfg.Every)
		}
	}
}

// dialKnown dials up to want peers the node is not connected to, from its peerstore (which
// holds the routing table's and every peer seen) and then seeds, and says how many answered
// and how many it tried.
func (n *Node) dialKnown(ctx context.Context, seeds []peer.AddrInfo, want int) (answered, tried int) {
	self := n.Host.ID()
	seen := map[peer.ID]bool{self: true}
	var candidates []peer.AddrInfo
	add := func(ai peer.AddrInfo) {
		if seen[ai.ID] || len(ai.Addrs) == 0 || n.Host.Network().Connectedness(ai.ID) == network.Connected {
			return
		}
		seen[ai.ID] = true
		candidates = append(candidates, ai)
	}
	for _, id := range n.DHT.RoutingTable().ListPeers() {
		add(n.Host.Peerstore().PeerInfo(id))
	}
	for _, id := range n.Host.Peerstore().PeersWithAddrs() {
		add(n.Host.Peerstore().PeerInfo(id))
	}
	for _, ai := range seeds {
		add(ai)
	}
	for _, ai := range candidates {
		if answered >= want || ctx.Err() != nil {
			break
		}
		tried++
		// Past the swarm's dial backoff: a peer that was down a minute ago may be back.
		cctx, cancel := context.WithTimeout(network.WithForceDirectDial(ctx, "rejoin"), rejoinDialTimeout)
		err := n.Host.Connect(cctx, ai)
		cancel()
		if err == nil {
			answered++
		}
	}
	return answered, tried
}

// denyList is the connection gater of a node: the peers it refuses to connect to, either way.
type denyList struct {
	mu     sync.RWMutex
	denied map[peer.ID]bool
}

func (d *denyList) has(id peer.ID) bool {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.denied[id]
}

func (d *denyList) InterceptPeerDial(p peer.ID) bool                 { return !d.has(p) }
func (d *denyList) InterceptAddrDial(p peer.ID, _ ma.Multiaddr) bool { return !d.has(p) }
func (d *denyList) InterceptAccept(network.ConnMultiaddrs) bool      { return true }
func (d *denyList) InterceptSecured(_ network.Direction, p peer.ID, _ network.ConnMultiaddrs) bool {
	return !d.has(p)
}
func (d *denyList) InterceptUpgraded(network.Conn) (bool, control.DisconnectReason) { return true, 0 }

// Deny makes the node refuse connections with ids, either way, and drops those it has; it
// replaces the previous list (an empty one lifts every refusal). Operators use it to keep out
// peers that misbehave; tests use it to cut a network in two.
func (n *Node) Deny(ids []peer.ID) {
	set := make(map[peer.ID]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	n.deny.mu.Lock()
	n.deny.denied = set
	n.deny.mu.Unlock()
	for id := range set {
		_ = n.Host.Network().ClosePeer(id)
	}
}
