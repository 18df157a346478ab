package registry

import "sync"

// maxKeptCards bounds the cards cardCache keeps, and maxKeptCardBytes what they weigh: a
// card may be tens of kilobytes, and anyone may register unstaked ones for searches to show,
// so the count alone would let them hold half a gigabyte of every node's memory.
const (
	maxKeptCards     = 20_000
	maxKeptCardBytes = 32 << 20
)

// cardCache keeps the cards search answers read from registry_cards, decoded, by row id, so
// that a popular card is not read and decoded again for every search that shows it. A row
// changes only through a write that then updates the search index (indexPut, indexDelete),
// which forgets the row here first: a card kept is the row as the index knows it. A read
// that a forget overtook (the row changed while it was being read) is not kept: keep takes
// the generation read before the row was, and refuses when any row was forgotten since.
type cardCache struct {
	mu    sync.Mutex
	gen   uint64 // advanced by every forget
	cards map[int64]keptCard
	bytes int // what the kept cards weigh (keptCard.size)
}

// keptCard is a kept card and what it weighs in memory, about: its JWS, and its decoded card
// as large as the JSON it came from.
type keptCard struct {
	agent Agent
	size  int
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
	k, ok := c.cards[id]
	return k.agent, ok
}

// keep keeps row id's card a (its JSON cardJSON bytes long), read after generation returned
// gen, unless a row was forgotten since; every card is forgotten when maxKeptCards are kept or
// they would weigh more than maxKeptCardBytes.
func (c *cardCache) keep(gen uint64, id int64, a Agent, cardJSON int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	size := len(a.JWS) + cardJSON
	if size > maxKeptCardBytes/16 {
		return // one card this large is not worth its room
	}
	if old, ok := c.cards[id]; ok {
		c.bytes -= old.size
	}
	if c.cards == nil || len(c.cards) >= maxKeptCards || c.bytes+size > maxKeptCardBytes {
		c.cards, c.bytes = map[int64]keptCard{}, 0
	}
	a.Score = 0
	c.cards[id] = keptCard{agent: a, size: size}
	c.bytes += size
}

// forget drops row id's card: the row is about to change or has changed.
func (c *cardCache) forget(id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if old, ok := c.cards[id]; ok {
		c.bytes -= old.size
		delete(c.cards, id)
	}
}
