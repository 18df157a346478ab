package reputation

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/reputation/merkle"
)

// The log's contents, for anyone: its leaves with the signed audit envelopes they hash, by
// index range or by subject, each with the head that first included it and the first head
// covering it whose root is anchored on chain. A page is bounded in count and in bytes
// (MaxLeavesPage, MaxLeavesPageBytes) and every query it makes reads an index in log order,
// so a page costs the node what its leaves cost, however long the log or the subject's
// record.

// leavesMigration names each leaf's subject in the log (version 11), so the leaves of one
// subject are read in log order from an index, and indexes the heads that are anchored, so
// the first anchored head after an epoch is one index read however many heads went unanchored.
var leavesMigration = sqlite.Migration{Version: 11, SQL: `
ALTER TABLE reputation_log ADD COLUMN subject TEXT NOT NULL DEFAULT '';
` + backfillSubjects + `;
CREATE INDEX reputation_log_subject ON reputation_log (chain, subject, idx);
CREATE INDEX reputation_heads_anchored ON reputation_heads (chain, epoch) WHERE anchor_tx NOT IN ('', 'superseded');
`}

// backfillSubjects names the subject of each leaf logged before leavesMigration.
const backfillSubjects = `UPDATE reputation_log SET subject = COALESCE((SELECT a.subject FROM reputation_audits a
	WHERE a.chain = reputation_log.chain AND a.leaf = reputation_log.leaf), '')`

// The queries of a page, each a range read of an index in log order (TestLeavesReadIndexes):
// leavesInRange (chain, from, size, limit) of the primary key, leavesOfSubject (chain,
// subject, from, size, limit) and subjectHasMore (chain, subject, from, size) of
// reputation_log_subject, firstAnchored (chain, epoch) of reputation_heads_anchored, whose
// condition it repeats. Without statistics SQLite would read a subject's leaves through
// the primary key's range (every leaf of it), so those name their index.
const (
	leavesColumns   = `SELECT g.idx, g.leaf, g.epoch, a.envelope FROM reputation_log g `
	leavesJoin      = ` LEFT JOIN reputation_audits a ON a.chain = g.chain AND a.leaf = g.leaf`
	leavesInRange   = leavesColumns + leavesJoin + ` WHERE g.chain = ? AND g.idx >= ? AND g.idx < ? ORDER BY g.idx LIMIT ?`
	leavesOfSubject = leavesColumns + `INDEXED BY reputation_log_subject` + leavesJoin +
		` WHERE g.chain = ? AND g.subject = ? AND g.idx >= ? AND g.idx < ? ORDER BY g.idx LIMIT ?`
	subjectHasMore = `SELECT 1 FROM reputation_log INDEXED BY reputation_log_subject WHERE chain = ? AND subject = ? AND idx >= ? AND idx < ? LIMIT 1`
	firstAnchored  = `SELECT epoch FROM reputation_heads WHERE chain = ? AND epoch >= ? AND anchor_tx NOT IN ('', 'superseded') ORDER BY epoch LIMIT 1`
)

// LeafQuery asks for a page of the log's leaves.
type LeafQuery struct {
	// From is the first index the page may hold.
	From uint64
	// Size is the tree the page reads within: leaves below it (0: the latest head's size).
	Size uint64
	// Subject, when set, keeps the leaves whose audit is about this DID.
	Subject string
	// Limit bounds the leaves (0, or more than MaxLeavesPage: MaxLeavesPage).
	Limit int
}

// LoggedLeaf is one leaf of the log with the signed audit envelope it is the hash of.
type LoggedLeaf struct {
	Index uint64      `json:"index"`
	Leaf  merkle.Hash `json:"leaf"`
	// Epoch is the head that first included the leaf (its epoch; the head is in the page's
	// Heads).
	Epoch int64 `json:"epoch"`
	// AnchorEpoch is the first head including the leaf whose root was anchored on chain by
	// its own transaction (absent until one is; the head is in the page's Heads).
	AnchorEpoch *int64 `json:"anchorEpoch,omitempty"`
	// Envelope is the signed audit envelope exactly as logged: SHA-256(0x00 ‖ Envelope) is
	// Leaf. Absent only when this node holds no audit for a leaf it logged.
	Envelope []byte `json:"envelope,omitempty"`
}

// LeafPage is a page of the log's leaves, in log order, with the heads they name.
type LeafPage struct {
	// Size is the tree the page was read within.
	Size   uint64       `json:"size"`
	Leaves []LoggedLeaf `json:"leaves"`
	// Heads are the signed heads the leaves name (Epoch, AnchorEpoch), oldest first.
	Heads []Head `json:"heads"`
	// Next is the From of the next page; absent when the page reached the end.
	Next *uint64 `json:"next,omitempty"`
}

// Leaves reads a page of the log: the leaves from q.From below q.Size (all of them, or
// q.Subject's), in log order, at most q.Limit and MaxLeavesPageBytes of envelopes (at least
// one leaf, when there is one). A Size beyond the latest head is ErrNotLogged.
func (l *Log) Leaves(ctx context.Context, q LeafQuery) (*LeafPage, error) {
	head := l.Head()
	if q.Size == 0 {
		q.Size = head.Size
	}
	if q.Size > head.Size {
		return nil, fmt.Errorf("%w: the log's latest head has size %d, not %d", ErrNotLogged, head.Size, q.Size)
	}
	if q.Limit <= 0 || q.Limit > MaxLeavesPage {
		q.Limit = MaxLeavesPage
	}
	page := &LeafPage{Size: q.Size, Leaves: []LoggedLeaf{}, Heads: []Head{}}
	if q.From >= q.Size {
		return page, nil
	}
	var rows *sql.Rows
	var err error
	if q.Subject == "" {
		rows, err = l.db.QueryContext(ctx, leavesInRange, l.chain, q.From, q.Size, q.Limit)
	} else {
		rows, err = l.db.QueryContext(ctx, leavesOfSubject, l.chain, q.Subject, q.From, q.Size, q.Limit)
	}
	if err != nil {
		return nil, fmt.Errorf("reputation: read leaves: %w", err)
	}
	full, bytes := false, 0
	for rows.Next() {
		var x LoggedLeaf
		var leaf string
		if err := rows.Scan(&x.Index, &leaf, &x.Epoch, &x.Envelope); err != nil {
			rows.Close()
			return nil, err
		}
		if len(page.Leaves) > 0 && bytes+len(x.Envelope) > MaxLeavesPageBytes {
			full = true
			break
		}
		if x.Leaf, err = parseHash(leaf); err != nil {
			rows.Close()
			return nil, err
		}
		bytes += len(x.Envelope)
		page.Leaves = append(page.Leaves, x)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reputation: read leaves: %w", err)
	}
	if len(page.Leaves) == 0 {
		return page, nil
	}
	after := page.Leaves[len(page.Leaves)-1].Index + 1
	if !full && after < q.Size {
		// Whether the range holds more: one index read (the subject's next leaf).
		if q.Subject == "" {
			full = true
		} else {
			switch err := l.db.QueryRowContext(ctx, subjectHasMore, l.chain, q.Subject, after, q.Size).Scan(new(int)); {
			case err == nil:
				full = true
			case !errors.Is(err, sql.ErrNoRows):
				return nil, fmt.Errorf("reputation: read leaves: %w", err)
			}
		}
	}
	if full {
		page.Next = &after
	}
	if err := l.pageHeads(ctx, page); err != nil {
		return nil, err
	}
	return page, nil
}

// pageHeads sets each leaf's AnchorEpoch and the page's Heads: per epoch the page's leaves
// name, its head and the first anchored head from it on, each one primary-key or
// reputation_heads_anchored read.
func (l *Log) pageHeads(ctx context.Context, page *LeafPage) error {
	anchors := map[int64]*int64{}
	var epochs []int64
	for i := range page.Leaves {
		e := page.Leaves[i].Epoch
		a, seen := anchors[e]
		if !seen {
			var epoch int64
			switch err := l.db.QueryRowContext(ctx, firstAnchored, l.chain, e).Scan(&epoch); {
			case err == nil:
				a = &epoch
				epochs = append(epochs, epoch)
			case !errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("reputation: read anchored heads: %w", err)
			}
			anchors[e] = a
			epochs = append(epochs, e)
		}
		page.Leaves[i].AnchorEpoch = a
	}
	slices.Sort(epochs)
	for _, e := range slices.Compact(epochs) {
		var h Head
		var root string
		if err := l.db.QueryRowContext(ctx, `SELECT epoch, size, root, closed, signed, anchor_tx FROM reputation_heads WHERE chain = ? AND epoch = ?`,
			l.chain, e).Scan(&h.Epoch, &h.Size, &root, &h.Closed, &h.Signed, &h.AnchorTx); err != nil {
			return fmt.Errorf("reputation: read head of epoch %d: %w", e, err)
		}
		var err error
		if h.Root, err = parseHash(root); err != nil {
			return err
		}
		page.Heads = append(page.Heads, h)
	}
	return nil
}
