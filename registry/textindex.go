package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/surety-ioa/surety/registry/search"
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
	r.index.Build(ids, docs)
	if len(ids) >= indexLogEvery {
		r.cfg.Logger.Info("registry: search index built", "cards", len(ids), "took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// indexDoc is what the search index keeps of a card.
func indexDoc(c *Card, staked bool, weight float64) search.Doc {
	return search.Doc{DID: c.DID, Name: c.Name, Description: c.Description, Capabilities: c.Capabilities, Staked: staked, StakeWeight: weight}
}
