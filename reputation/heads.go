package reputation

import (
	"context"
	"fmt"
	"math"
)

// headsBefore (chain, before, limit) reads the heads of epochs before one, newest first: a
// range read of the primary key (TestLeavesReadIndexes checks its plan).
const headsBefore = `SELECT epoch, size, root, closed, signed, anchor_tx FROM reputation_heads WHERE chain = ? AND epoch < ? ORDER BY epoch DESC LIMIT ?`

// HeadPage is a page of the log's signed tree heads, newest first (GET /v1/log/heads).
type HeadPage struct {
	Heads []Head `json:"heads"`
	// Next is the before of the next, older page; absent when the page reached the first
	// head.
	Next *int64 `json:"next,omitempty"`
}

// Heads lists the log's signed heads of epochs before before (0 or less: every epoch), newest
// first, at most limit of them (0, or more than MaxHeadsPage: MaxHeadsPage), each with the
// transaction that anchored it on chain (AnchorTx; AnchorSuperseded when a later anchor
// covers it). A page is one range read of at most MaxHeadsPage + 1 rows of the primary key.
func (l *Log) Heads(ctx context.Context, before int64, limit int) (*HeadPage, error) {
	if limit <= 0 || limit > MaxHeadsPage {
		limit = MaxHeadsPage
	}
	if before <= 0 {
		before = math.MaxInt64
	}
	rows, err := l.db.QueryContext(ctx, headsBefore, l.chain, before, limit+1)
	if err != nil {
		return nil, fmt.Errorf("reputation: read heads: %w", err)
	}
	defer rows.Close()
	page := &HeadPage{Heads: []Head{}}
	for rows.Next() {
		var h Head
		var root string
		if err := rows.Scan(&h.Epoch, &h.Size, &root, &h.Closed, &h.Signed, &h.AnchorTx); err != nil {
			return nil, err
		}
		if h.Root, err = parseHash(root); err != nil {
			return nil, err
		}
		page.Heads = append(page.Heads, h)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(page.Heads) > limit {
		page.Heads = page.Heads[:limit]
		next := page.Heads[limit-1].Epoch
		page.Next = &next
	}
	return page, nil
}
