package registry

import (
	"context"
	"encoding/json"
	"math/big"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/surety-ioa/surety/internal/p2p"
	"github.com/surety-ioa/surety/registry/search"
)

// PublishRaw publishes bytes on the card topic without validating them: tests play a
// malicious peer with it.
func PublishRaw(ctx context.Context, r *Registry, _ *p2p.Node, data []byte) error {
	return r.net.topic.Publish(ctx, data)
}

// RegisterQuietly stores a card as a registration does, without gossip or a DHT put: a card
// that only its node's provider records can lead others to.
func RegisterQuietly(ctx context.Context, r *Registry, raw []byte) (*Agent, error) {
	return r.register(ctx, raw, "test", false)
}

// CapabilityCID is the DHT key of a capability's providers.
var CapabilityCID = capabilityCID

// SyncSetWindow is SyncSet listing at most window cards.
func SyncSetWindow(r *Registry, window int) p2p.Set { return r.syncSet(window) }

// SilenceDHT makes n's lookups find no provider and last until their deadline: a DHT whose
// peers never answer.
func SilenceDHT(n *Network) {
	n.prov.mu.Lock()
	defer n.prov.mu.Unlock()
	n.findProviders = func(ctx context.Context, _ cid.Cid, _ int) <-chan peer.AddrInfo {
		ch := make(chan peer.AddrInfo)
		context.AfterFunc(ctx, func() { close(ch) })
		return ch
	}
}

// RunningLookups is how many network lookups hold a slot.
func RunningLookups(n *Network) int { return len(n.prov.lookups) }

// ForgetAnswers empties r's caches of index answers and of cards: the next search computes
// its answer and reads its cards from SQLite. The card cache's map keeps its room, as a
// node's does between searches: made anew each time, its growth was a tenth of what a
// benchmarked search allocated, and no node search does it.
func ForgetAnswers(r *Registry) {
	r.answers.forget()
	r.cards.mu.Lock()
	clear(r.cards.cards)
	r.cards.bytes = 0
	r.cards.mu.Unlock()
}

// StoreBulk stores signed cards, with the stake each holds, as store does but in one
// transaction and without the search index: a benchmark loads a million cards with it, then
// registry.New builds the index from the table as a node does at start.
func StoreBulk(ctx context.Context, r *Registry, cards []*SignedCard, stakes []*big.Int) error {
	tx, err := r.cfg.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for i, sc := range cards {
		cardJSON, _ := json.Marshal(sc.Card)
		staked, weight := r.staked(stakes[i]), r.stakeWeight(stakes[i])
		var serial int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO registry_cards (chain, did, seq, name, wallet, stake, weight, staked, card, jws, received, fts_row)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0) RETURNING rowid`,
			r.cfg.Chain, sc.DID, sc.Seq, sc.Name, sc.Wallet.Hex(), stakes[i].String(), weight, staked, string(cardJSON), sc.JWS, r.cfg.Now().Unix()).Scan(&serial); err != nil {
			return err
		}
		rank := rankRow(staked, weight, serial)
		if _, err := tx.ExecContext(ctx, `UPDATE registry_cards SET fts_row = ? WHERE rowid = ?`, rank, serial); err != nil {
			return err
		}
		for _, c := range sc.Capabilities {
			if _, err := tx.ExecContext(ctx, `INSERT INTO registry_capabilities (chain, capability, did, rank) VALUES (?, ?, ?, ?)`, r.cfg.Chain, c, sc.DID, rank); err != nil {
				return err
			}
		}
	}
	return tx.Commit()
}

// SearchFresh is r.Search with nothing kept: it computes the answer and reads the cards, and
// keeps neither (the answers and cards kept stay as they were).
func SearchFresh(ctx context.Context, r *Registry, q Query) ([]*Agent, error) {
	c := &r.answers
	c.mu.Lock()
	answers, bytes := c.answers, c.bytes
	c.answers, c.bytes = nil, 0
	c.keepNone = true
	c.mu.Unlock()
	r.cards.mu.Lock()
	cards, cardBytes := r.cards.cards, r.cards.bytes
	r.cards.cards, r.cards.bytes = nil, 0
	r.cards.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.answers, c.bytes = answers, bytes
		c.keepNone = false
		c.mu.Unlock()
		r.cards.mu.Lock()
		r.cards.cards, r.cards.bytes = cards, cardBytes
		r.cards.mu.Unlock()
	}()
	return r.Search(ctx, q)
}

// KeptAnswers is how many index answers r keeps, and what they weigh.
func KeptAnswers(r *Registry) (n, bytes int) {
	r.answers.mu.Lock()
	defer r.answers.mu.Unlock()
	return len(r.answers.answers), r.answers.bytes
}

// KeptHits is the index's answer to q that r keeps (nil when none), and the one the index
// gives now.
func KeptHits(ctx context.Context, r *Registry, q Query) (kept, fresh []search.Hit, err error) {
	q.Limit = q.limit()
	iq, _, err := r.indexQueryOf(q)
	if err != nil || iq == nil {
		return nil, nil, err
	}
	if a := r.answers.get(iq.key); a != nil {
		kept = a.hits
	}
	a, err := r.indexHits(ctx, iq)
	if err != nil {
		return nil, nil, err
	}
	return kept, a.hits, nil
}

// SearchAcross computes the index's answer to q, then runs writes, then offers the answer
// to the kept ones as a search that read the indexes before the writes and ended after
// them does.
func SearchAcross(ctx context.Context, r *Registry, q Query, writes func()) error {
	q.Limit = q.limit()
	iq, _, err := r.indexQueryOf(q)
	if err != nil || iq == nil {
		writes()
		return err
	}
	epoch := r.answers.start()
	a, err := r.indexHits(ctx, iq)
	if err != nil {
		return err
	}
	writes()
	r.answers.put(iq.key, epoch, a)
	return nil
}

// HoldSearchSlots takes every search slot of r until release is called: a search then waits
// for one (at most searchWait).
func HoldSearchSlots(r *Registry) (release func()) {
	n := cap(r.searches)
	for range n {
		r.searches <- struct{}{}
	}
	return func() {
		for range n {
			<-r.searches
		}
	}
}

// RankKept is how many times the rank rule for unstaked writes kept an answer a write read.
func RankKept(r *Registry) int {
	r.answers.mu.Lock()
	defer r.answers.mu.Unlock()
	return r.answers.rankKept
}

// HybridMaxText is the divisor of text a hybrid answer to q read back from its hits
// (answer.maxText; 0 when it could not), and the one the same query in keyword mode shows
// (its hits' Text/Relevance: the same text part, ranked without meaning), from its hit with
// the largest relevance.
func HybridMaxText(ctx context.Context, r *Registry, q Query) (hybrid, keyword float64, err error) {
	q.Limit = q.limit()
	iq, _, err := r.indexQueryOf(q)
	if err != nil || iq == nil {
		return 0, 0, err
	}
	a, err := r.indexHits(ctx, iq)
	if err != nil {
		return 0, 0, err
	}
	q.Mode = ModeKeyword
	kq, _, err := r.indexQueryOf(q)
	if err != nil {
		return 0, 0, err
	}
	k, err := r.indexHits(ctx, kq)
	if err != nil {
		return 0, 0, err
	}
	best := 0.0
	for _, h := range k.hits {
		if h.Relevance > best && h.Text > 0 {
			best, keyword = h.Relevance, h.Text/h.Relevance
		}
	}
	return a.maxText, keyword, nil
}

// BenchCard is benchCard: BenchmarkSearch's cards, which benchIndexRegistry builds too.
var BenchCard = benchCard
