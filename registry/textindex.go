package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/surety-ioa/surety/registry/search"
	"github.com/surety-ioa/surety/registry/semantic"
)

// The registry's text search runs on an in-memory index (package search) of the cards in
// registry_cards, keyed by their row id there. New builds it from the table; every write to
// the table (store, evictUnstaked, drop) updates it once the transaction commits, under
// r.mu, so the index holds what the table holds. SQLite's FTS5 table that search used before
// is gone (migration 6).

// indexLogEvery is how often loadIndex reports its progress on a large registry.
const indexLogEvery = 50_000

// loadIndex builds the search index from the cards of the registry's chain.
func (r *Registry) loadIndex(ctx context.Context) error {
	start := time.Now()
	rows, err := r.cfg.DB.QueryContext(ctx, `SELECT rowid, card, staked, weight FROM registry_cards WHERE chain = ?`, r.cfg.Chain)
	if err != nil {
		return fmt.Errorf("registry: build the search index: %w", err)
	}
	defer rows.Close()
	var (
		ids  []int64
		docs []search.Doc
	)
	for rows.Next() {
		var (
			id     int64
			card   []byte
			staked bool
			weight float64
			c      Card
		)
		if err := rows.Scan(&id, &card, &staked, &weight); err != nil {
			return fmt.Errorf("registry: build the search index: %w", err)
		}
		if err := json.Unmarshal(card, &c); err != nil {
			return fmt.Errorf("registry: build the search index: card row %d: %w", id, err)
		}
		ids, docs = append(ids, id), append(docs, indexDoc(&c, staked, weight))
		if len(ids)%indexLogEvery == 0 {
			r.cfg.Logger.Info("registry: reading cards for the search index", "cards", len(ids))
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("registry: build the search index: %w", err)
	}
	r.answers.beginWrite()
	r.index.Build(ids, docs)
	for i, id := range ids {
		r.putVector(id, docs[i], cardVector(docs[i]))
	}
	r.answers.endWrite(nil)
	if len(ids) >= indexLogEvery {
		r.cfg.Logger.Info("registry: search index built", "cards", len(ids), "took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// indexPut indexes card id for both sides of search, text and meaning (vec: cardVector(d)),
// forgets the card kept for search answers (cardCache) and the kept answers the write can
// change (answerCache). Writes run one at a time (under r.mu).
func (r *Registry) indexPut(id int64, d search.Doc, vec semantic.Vector) {
	w := r.beginIndexWrite(id)
	r.cards.forget(id) // an upsert keeps the row id
	r.index.Put(id, d)
	r.putVector(id, d, vec)
	r.endIndexWrite(w)
}

// putVector files card id's vector with the staked cards' or the unstaked ones', keyed by
// its DID (ties at the cut of the nearest go by DID on every node); vec is cardVector(d).
func (r *Registry) putVector(id int64, d search.Doc, vec semantic.Vector) {
	in, out := r.vectors, r.unstakedVectors
	if !d.Staked {
		in, out = out, in
	}
	out.Delete(id)
	in.PutKeyed(id, d.DID, vec)
}

// indexDelete takes card id out of both sides of search, out of cardCache, and forgets the
// kept answers that held it.
func (r *Registry) indexDelete(id int64) {
	w := r.beginIndexWrite(id)
	r.cards.forget(id)
	r.index.Delete(id)
	r.vectors.Delete(id)
	r.unstakedVectors.Delete(id)
	r.endIndexWrite(w)
}

// beginIndexWrite starts a write of card id to the indexes: what the index held of it before,
// and no answer computed from now on is kept until endIndexWrite.
func (r *Registry) beginIndexWrite(id int64) *indexWrite {
	w := &indexWrite{id: id, exactUnstaked: r.unstakedVectors.Exact(), prefBefore: prefilterOf(r.unstakedVectors)}
	if s, ok := r.index.Summary(id); ok {
		w.old = &s
	}
	if c, ok := r.unstakedVectors.Code(id); ok {
		w.codesBefore = append(w.codesBefore, c)
	}
	w.unstakedBefore = r.unstakedVectors.Len()
	r.answers.beginWrite()
	return w
}

// prefilterOf is x's semantic.Index.Prefilter for a search's nearest, as indexWrite keeps it.
func prefilterOf(x *semantic.Index) [2]int {
	on, want := x.Prefilter(semanticCandidates)
	if !on {
		return [2]int{}
	}
	return [2]int{1, want}
}

// endIndexWrite ends w, forgetting the kept answers it changes.
func (r *Registry) endIndexWrite(w *indexWrite) {
	if s, ok := r.index.Summary(w.id); ok {
		w.now = &s
	}
	w.stakedStats = r.index.StakedStats()
	w.exactUnstaked = w.exactUnstaked && r.unstakedVectors.Exact()
	w.prefAfter = prefilterOf(r.unstakedVectors)
	if c, ok := r.unstakedVectors.Code(w.id); ok {
		w.codesAfter = append(w.codesAfter, c)
	}
	// The terms only this card holds now, or held before: the write adds them to the
	// index's terms or takes them out. (A term both versions hold is held before and after.)
	for _, s := range []*search.Summary{w.old, w.now} {
		if s == nil {
			continue
		}
		other := w.now
		if s == w.now {
			other = w.old
		}
		for _, t := range s.Terms {
			if other != nil {
				if _, both := slices.BinarySearch(other.Terms, t); both {
					continue
				}
			}
			if held := r.index.Holders(t); s == w.old && held == 0 || s == w.now && held == 1 {
				w.fresh = append(w.fresh, t)
			}
		}
	}
	w.unstakedScore = func(q semantic.Vector) (float32, bool) { return r.unstakedVectors.Score(w.id, q) }
	r.answers.endWrite(w)
}

// cardVector is a card's vector of meaning: the semantic model's vector of the terms of its
// name, description and capabilities, each distinct term counting once and weighing 1 (no
// corpus statistics: a card's vector is the same on every node, whatever else it holds,
// and its stake plays no part).
func cardVector(d search.Doc) semantic.Vector {
	terms := search.Terms(d.Name)
	terms = append(terms, search.Terms(d.Description)...)
	for _, c := range d.Capabilities {
		terms = append(terms, search.Terms(c)...)
	}
	return semantic.Default().Vector(terms)
}

// semanticCandidates is how many of the staked cards nearest in meaning to a query take
// part in its ranking (search.Options.Semantic), besides the text matches, and as many of
// the unstaked ones: free cards written from a query's own words can fill the unstaked
// places, never the staked ones.
const semanticCandidates = 200

// minSemantic is the least cosine that counts: below it a card is no nearer the query than
// unrelated texts are to each other (random pairs of words reach about 0.13,
// docs/SEMANTIC.md), so it neither matches through meaning alone nor gains from it.
const minSemantic = 0.15

// nearest is the semantic side of a search for text (the registry's semantic hook), one
// side at a time (search.Options.SemanticLater): the cosine of the query's vector and those
// of the semanticCandidates cards of that side (the staked cards' index or the unstaked
// ones') nearest it, among the cards whose row ids the bitmap among holds when it is not nil
// (those that pass the query's filters), by card row id, and a function that scores any
// card the same way (for the best text matches not among them). A cosine under minSemantic
// counts as 0 (one above 1, the int8 rows' rounding, the index counts as 1). A query none
// of whose terms has a vector gives nil: text alone ranks. The query's vector is computed
// at the first call; the calls are made one after another.
func (r *Registry) nearest(text string) func(among []uint64, side search.Side) (map[int64]float64, func(int64) float64) {
	var q semantic.Vector
	read := false
	return func(among []uint64, side search.Side) (map[int64]float64, func(int64) float64) {
		if !read {
			q, read = queryVector(text), true
		}
		if q == nil {
			return nil, nil
		}
		var ids *semantic.IDs
		if among != nil {
			ids = semantic.IDsOf(among)
		}
		x := r.vectors
		if side == search.Unstaked {
			x = r.unstakedVectors
		}
		out := make(map[int64]float64, semanticCandidates)
		for _, h := range x.SearchAmong(q, semanticCandidates, ids) {
			if float64(h.Score) >= minSemantic {
				out[h.ID] = float64(h.Score)
			}
		}
		staked, unstaked := r.vectors.Scorer(q), r.unstakedVectors.Scorer(q)
		of := func(id int64) float64 {
			s, ok := staked(id)
			if !ok {
				s, ok = unstaked(id)
			}
			if ok && float64(s) >= minSemantic {
				return float64(s)
			}
			return 0
		}
		return out, of
	}
}

// queryVector is the vector of meaning of a query's text (nil when none of its terms has one).
func queryVector(text string) semantic.Vector {
	return semantic.Default().Vector(search.Terms(text))
}

// indexDoc is what the search index keeps of a card.
func indexDoc(c *Card, staked bool, weight float64) search.Doc {
	return search.Doc{DID: c.DID, Name: c.Name, Description: c.Description, Capabilities: c.Capabilities, Staked: staked, StakeWeight: weight}
}
