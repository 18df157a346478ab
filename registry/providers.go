package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	"github.com/multiformats/go-multihash"
	"golang.org/x/time/rate"
)

// Capability discovery across nodes. Every node that holds a staked card announces itself in
// the DHT as a provider of each of the card's capabilities; a node asked for a capability it
// has too few cards for finds the providers and fetches their cards over AgentsProtocol,
// checking each exactly as a registration. Nodes that joined after a card was gossiped find it
// this way.

// AgentsProtocol is the stream protocol on which a node answers "your cards with capability
// X": one JSON request ({"capability", "limit"}), then one JSON answer ({"cards": [JWS...]}),
// best ranked first.
const AgentsProtocol = "/surety/agents/1"

// CapabilityPrefix starts the name whose hash is a capability's provider key in the DHT:
// providers of capability c announce themselves under CIDv1(raw, sha2-256(CapabilityPrefix + c)).
const CapabilityPrefix = "/surety-capability/"

// capabilityCID is the DHT key under which providers of capability announce themselves.
func capabilityCID(capability string) cid.Cid {
	mh, err := multihash.Sum([]byte(CapabilityPrefix+capability), multihash.SHA2_256, -1)
	if err != nil {
		panic(err) // SHA2-256 is always available
	}
	return cid.NewCidV1(cid.Raw, mh)
}

type agentsRequest struct {
	Capability string `json:"capability"`
	Limit      int    `json:"limit"`
}

type agentsAnswer struct {
	Cards []string `json:"cards"`
}

// providing remembers when each capability was last announced, and when each may next be
// looked up.
type providing struct {
	mu         sync.Mutex
	provided   map[string]time.Time
	discovered map[string]discovered
	sources    map[string]*rate.Limiter // the lookup budget of each source (Query.Source)
	busy       map[string]int           // the lookups running of each source
	running    map[string]*discovery    // the lookups under way, by capability
	lookups    chan struct{}            // a slot per running lookup
	closed     bool                     // Network.Close was called: no new lookups
}

// discovered is when a capability may next be looked up, and how many lookups in a row
// found no provider for it (the backoff).
type discovered struct {
	next   time.Time
	misses int
}

// remember sets when capability may next be looked up, making room first when the map is
// full: the entries whose time passed go (they hold nothing back), or else the one due
// soonest. A flood of fresh capabilities cannot wipe the others' throttles. The caller
// holds mu.
func (p *providing) remember(capability string, d discovered, now time.Time) {
	if _, ok := p.discovered[capability]; !ok && len(p.discovered) >= maxDiscovered {
		soonest := ""
		for c, x := range p.discovered {
			if !x.next.After(now) {
				delete(p.discovered, c)
			} else if soonest == "" || x.next.Before(p.discovered[soonest].next) {
				soonest = c
			}
		}
		if len(p.discovered) >= maxDiscovered {
			delete(p.discovered, soonest)
		}
	}
	p.discovered[capability] = d
}

// allow spends one of source's lookups, and reports false when it has lookupsPerSource
// running or its budget is spent. The node's own searches (source "") are not counted. The
// caller holds mu.
func (p *providing) allow(source string, now time.Time) bool {
	if source == "" {
		return true
	}
	if p.busy[source] >= lookupsPerSource {
		return false
	}
	lim, ok := p.sources[source]
	if !ok {
		if len(p.sources) >= maxLookupSources {
			for s, l := range p.sources { // the full ones are as new ones
				if l.TokensAt(now) >= lookupSourceBurst {
					delete(p.sources, s)
				}
			}
			if len(p.sources) >= maxLookupSources {
				return false // every source spent its budget within lookupSourceEvery: a flood
			}
		}
		lim = rate.NewLimiter(rate.Every(lookupSourceEvery), lookupSourceBurst)
		p.sources[source] = lim
	}
	return lim.AllowN(now, 1)
}

// release gives back the slot of a lookup source started. The caller holds mu.
func (p *providing) release(source string) {
	<-p.lookups
	if source == "" {
		return
	}
	if p.busy[source]--; p.busy[source] <= 0 {
		delete(p.busy, source)
	}
}

// backoff is how long after a lookup that no provider answered the capability may be looked
// up again: discoverRetry after the first two misses in a row (a node that just joined may
// not reach the providers yet), then doubled for each further one, at most
// discoverBackoffMax.
func backoff(misses int) time.Duration {
	d := discoverRetry
	for i := 2; i < misses && d < discoverBackoffMax; i++ {
		d *= 2
	}
	return min(d, discoverBackoffMax)
}

// provide announces this node as a provider of the capabilities of a staked card it now
// holds, unless it did so recently. It returns at once; the announcements run in the
// background.
func (n *Network) provide(a *Agent) {
	if !a.Staked {
		return
	}
	now := time.Now()
	var due []string
	n.prov.mu.Lock()
	for _, c := range a.Capabilities {
		last, seen := n.prov.provided[c]
		if seen && now.Sub(last) < reprovideEvery || !seen && len(n.prov.provided) >= maxProvided {
			continue
		}
		n.prov.provided[c] = now
		due = append(due, c)
	}
	n.prov.mu.Unlock()
	if len(due) > 0 {
		n.node.Go(func(ctx context.Context) { n.announce(ctx, due) })
	}
}

func (n *Network) announce(ctx context.Context, capabilities []string) {
	for _, c := range capabilities {
		pctx, cancel := context.WithTimeout(ctx, dhtWriteTimeout)
		if err := n.node.DHT.Provide(pctx, capabilityCID(c), true); err != nil {
			n.log.Debug("registry: DHT provide", "capability", c, "err", err)
		}
		cancel()
	}
}

// provideStored announces the capabilities of the staked cards already stored (a node that
// restarts, or attaches after cards arrived), in the background.
func (n *Network) provideStored(ctx context.Context) error {
	rows, err := n.r.cfg.DB.QueryContext(ctx, `SELECT DISTINCT k.capability FROM registry_capabilities k
		JOIN registry_cards c ON c.chain = k.chain AND c.did = k.did WHERE k.chain = ? AND c.staked = 1 LIMIT ?`, n.r.cfg.Chain, maxProvided)
	if err != nil {
		return fmt.Errorf("registry: stored capabilities: %w", err)
	}
	defer rows.Close()
	var caps []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return err
		}
		caps = append(caps, c)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	n.provide(&Agent{SignedCard: SignedCard{Card: Card{Capabilities: caps}}, Staked: true})
	return nil
}

// reprovide announces every provided capability again before the DHT forgets it, until ctx
// ends.
func (n *Network) reprovide(ctx context.Context) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now()
		var due []string
		n.prov.mu.Lock()
		for c, last := range n.prov.provided {
			if now.Sub(last) >= reprovideEvery {
				n.prov.provided[c] = now
				due = append(due, c)
			}
		}
		n.prov.mu.Unlock()
		n.announce(ctx, due)
	}
}

// startDiscovery starts a lookup of capability's providers in the background for source and
// returns it, or returns the lookup of capability already running; nil when the throttles
// hold a lookup back: a capability is looked up again only after a minute (after 5 s when
// no provider answered: providers may still be announcing; from the third miss in a row,
// twice as long for each, up to discoverBackoffMax), at most maxLookups lookups run at
// once, and a source has at most lookupsPerSource running and starts at most
// lookupSourceBurst, then one every lookupSourceEvery, so queries cannot turn the node into
// a DHT flooder nor one client take every slot. The lookup's goroutine is the Network's
// (Close stops and waits for it) and a task of the p2p node (whose Close does too).
func (n *Network) startDiscovery(capability, source string) *discovery {
	now := time.Now()
	n.prov.mu.Lock()
	defer n.prov.mu.Unlock()
	if d := n.prov.running[capability]; d != nil {
		return d
	}
	if n.prov.closed {
		return nil
	}
	last, seen := n.prov.discovered[capability]
	if seen && now.Before(last.next) {
		return nil
	}
	select {
	case n.prov.lookups <- struct{}{}:
	default:
		return nil
	}
	if !n.prov.allow(source, now) {
		<-n.prov.lookups
		return nil
	}
	if source != "" {
		n.prov.busy[source]++
	}
	n.prov.remember(capability, discovered{next: now.Add(discoverTimeout), misses: last.misses}, now)
	d := newDiscovery()
	n.prov.running[capability] = d
	n.tasks.Add(1)
	started := n.node.Go(func(ctx context.Context) {
		defer n.tasks.Done()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(n.life, cancel)()
		n.discover(ctx, capability, source, d)
	})
	if !started { // the p2p node is closing
		n.tasks.Done()
		delete(n.prov.running, capability)
		n.prov.release(source)
		return nil
	}
	return d
}

// discover asks the providers of capability for their cards and registers the valid ones,
// telling d's followers as cards are stored, until discoverTimeout or ctx ends; then it
// marks when capability may be looked up again and ends d.
func (n *Network) discover(ctx context.Context, capability, source string, d *discovery) {
	dctx, cancel := context.WithTimeout(ctx, discoverTimeout)
	defer cancel()
	self := n.node.Host.ID()
	answered := 0
	for p := range n.lookupProviders()(dctx, capabilityCID(capability), maxProviders) {
		if p.ID == self {
			continue
		}
		n.node.Host.Peerstore().AddAddrs(p.ID, p.Addrs, peerstore.TempAddrTTL)
		cards, err := n.fetch(dctx, p.ID, capability)
		if err != nil {
			n.log.Debug("registry: fetch cards", "peer", p.ID, "capability", capability, "err", err)
			continue
		}
		answered++
		stored := 0
		for _, raw := range cards {
			if _, err := n.r.register(dctx, []byte(raw), "peer:"+p.ID.String(), false); err == nil {
				stored++
			}
		}
		d.add(stored)
	}
	now := time.Now()
	n.prov.mu.Lock()
	next := discovered{next: now.Add(discoverEvery)}
	if answered == 0 {
		next.misses = n.prov.discovered[capability].misses + 1
		next.next = now.Add(backoff(next.misses))
	}
	n.prov.remember(capability, next, now)
	delete(n.prov.running, capability)
	n.prov.release(source)
	n.prov.mu.Unlock()
	d.end()
}

// lookupProviders is the DHT's provider lookup (a test's silent DHT in its place).
func (n *Network) lookupProviders() func(context.Context, cid.Cid, int) <-chan peer.AddrInfo {
	n.prov.mu.Lock()
	defer n.prov.mu.Unlock()
	return n.findProviders
}

// fetch asks peer p for its cards with capability.
func (n *Network) fetch(ctx context.Context, p peer.ID, capability string) ([]string, error) {
	s, err := n.node.Host.NewStream(ctx, p, AgentsProtocol)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if d, ok := ctx.Deadline(); ok {
		_ = s.SetDeadline(d)
	}
	defer context.AfterFunc(ctx, func() { _ = s.Reset() })() // a node closing does not wait out the deadline
	if err := json.NewEncoder(s).Encode(agentsRequest{Capability: capability, Limit: maxServed}); err != nil {
		return nil, err
	}
	if err := s.CloseWrite(); err != nil {
		return nil, err
	}
	return readAnswer(s)
}

// readAnswer reads an AgentsProtocol answer from a peer: at most maxServed cards of at most
// MaxCardSize each (each card is then checked as any registration).
func readAnswer(r io.Reader) ([]string, error) {
	var ans agentsAnswer
	if err := json.NewDecoder(io.LimitReader(r, maxServed*(MaxCardSize+16)+64)).Decode(&ans); err != nil {
		return nil, fmt.Errorf("answer: %w", err)
	}
	if len(ans.Cards) > maxServed {
		return nil, fmt.Errorf("answer: %d cards, at most %d", len(ans.Cards), maxServed)
	}
	return ans.Cards, nil
}

// readRequest reads an AgentsProtocol request from a peer.
func readRequest(r io.Reader) (agentsRequest, error) {
	var req agentsRequest
	if err := json.NewDecoder(io.LimitReader(r, maxRequest)).Decode(&req); err != nil {
		return req, fmt.Errorf("request: %w", err)
	}
	if !validCapability(req.Capability) {
		return req, fmt.Errorf("request: capability %q: use 1 to %d of a-z 0-9 . - : /", truncateStr(req.Capability, 70), maxCapability)
	}
	req.Limit = min(max(req.Limit, 1), maxServed)
	return req, nil
}

// serveAgents answers one AgentsProtocol request from this node's index.
func (n *Network) serveAgents(s network.Stream) {
	defer s.Close()
	_ = s.SetDeadline(time.Now().Add(serveTimeout))
	req, err := readRequest(s)
	if err != nil {
		n.log.Debug("registry: serve cards", "peer", s.Conn().RemotePeer(), "err", err)
		_ = s.Reset()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), localReadTimeout)
	defer cancel()
	found, err := n.r.searchLocal(ctx, Query{Capability: req.Capability, Limit: req.Limit})
	if errors.Is(err, ErrBusy) {
		n.log.Debug("registry: serve cards", "capability", req.Capability, "err", err)
		_ = s.Reset()
		return
	}
	if err != nil {
		n.log.Warn("registry: serve cards", "capability", req.Capability, "err", err)
		_ = s.Reset()
		return
	}
	ans := agentsAnswer{Cards: make([]string, 0, len(found))}
	for _, a := range found {
		ans.Cards = append(ans.Cards, a.JWS)
	}
	if err := json.NewEncoder(s).Encode(ans); err != nil && !errors.Is(err, network.ErrReset) {
		n.log.Debug("registry: serve cards", "peer", s.Conn().RemotePeer(), "err", err)
	}
}
