package registry

import (
	"sync"

	"github.com/surety-ioa/surety/registry/search"
)

// maxAnswers bounds the index answers the registry keeps (answerCache): each is at most
// maxCandidates hits.
const maxAnswers = 128

// answerKey is what an index answer depends on besides the cards: the query's text and
// capability, whether its meaning is compared (hybrid), and how many hits it asks for.
type answerKey struct {
	text, capability string
	hybrid           bool
	limit            int
}

// indexGens are the generations of the text index and the two vector indexes: equal
// generations held the same cards.
type indexGens [3]uint64

// answerCache keeps the search index's answers (the hits before reputation is read) to
// recent queries, for one generation of the indexes: a card indexed, replaced or dropped
// (any write to either side of search) starts a new generation, and the cache forgets every
// answer of the last. An answer is used only when the indexes are still at the generation
// read before it was computed, so it is the answer the indexes would give again, bit for
// bit. Reputation is read for each search anew, and the cards from SQLite.
type answerCache struct {
	mu      sync.Mutex
	gens    indexGens
	answers map[answerKey][]search.Hit
}

func (r *Registry) indexGens() indexGens {
	return indexGens{r.index.Gen(), r.vectors.Gen(), r.unstakedVectors.Gen()}
}

// get gives the answer kept for k at generations g.
func (c *answerCache) get(k answerKey, g indexGens) ([]search.Hit, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gens != g {
		return nil, false
	}
	hits, ok := c.answers[k]
	return hits, ok
}

// put keeps hits, computed from the indexes at generations g (read before the search), as
// the answer for k; the answers of other generations are forgotten, and all of them when
// maxAnswers are kept.
func (c *answerCache) put(k answerKey, g indexGens, hits []search.Hit) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gens != g || c.answers == nil || len(c.answers) >= maxAnswers {
		c.gens, c.answers = g, map[answerKey][]search.Hit{}
	}
	c.answers[k] = hits
}
