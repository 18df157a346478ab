package registry

import "sync"

// maxKeptCards bounds the cards cardCache keeps (a few kilobytes each, decoded).
const maxKeptCards = 20_000

// cardCache keeps the cards search answers read from registry_cards, decoded, by row id, so
// that a popular card is not read and decoded again for every search that shows it. A row
// changes only through a write that then updates the search index (indexPut, indexDelete),
// which forgets the row here first: a card kept is the row as the index knows it. A read
// that a forget overtook (the row changed while it was being read) is not kept: keep takes
// the generation read before the row was, and refuses when any row was forgotten since.
type cardCache struct {
	mu    sync.Mutex
	gen   uint64 // advanced by every forget
	cards map[int64]Agent
}

// generation is read before the rows are (see keep).
func (c *cardCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// get gives row id's card, if kept, as a copy the caller may set Score on (its slices are
// shared: read only).
func (c *cardCache) get(id int64) (Agent, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.cards[id]
	return a, ok
}

// keep keeps row id's card a, read after generation returned gen, unless a row was forgotten
// since; every card is forgotten when maxKeptCards are kept.
func (c *cardCache) keep(gen uint64, id int64, a Agent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if c.cards == nil || len(c.cards) >= maxKeptCards {
		c.cards = map[int64]Agent{}
	}
	a.Score = 0
	c.cards[id] = a
}

// forget drops row id's card: the row is about to change or has changed.
func (c *cardCache) forget(id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	delete(c.cards, id)
}
