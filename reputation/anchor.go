package reputation

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/reputation/merkle"
)

// Anchoring. After epochs close, the service anchors the latest head on chain (RootAnchor:
// size and root under the node's anchoring wallet), one transaction however many epochs
// closed and however many audits they held. An auditor then checks an inclusion proof
// against the root the chain holds, not one the node says (surety log verify).

var anchorMigration = sqlite.Migration{Version: 3, SQL: `
ALTER TABLE reputation_heads ADD COLUMN anchor_tx TEXT NOT NULL DEFAULT '';
`}

// Anchorer puts a tree head on chain and returns the transaction's hash. It returns an error
// wrapping ErrStaleAnchor when the anchoring wallet already anchored this size or a larger one
// (another node anchoring from the same wallet got there first).
type Anchorer interface {
	Anchor(ctx context.Context, size uint64, root merkle.Hash) (tx string, err error)
}

// ErrStaleAnchor reports a head the chain will not take: the wallet's anchors have already
// reached its size. Logs are the same on every node, so the larger anchor covers it.
var ErrStaleAnchor = errors.New("reputation: the anchoring wallet already anchored this size or a larger one")

// AnchorSuperseded is the AnchorTx of a head a larger anchor from the same wallet covers: it is
// not anchored itself, and not tried again.
const AnchorSuperseded = "superseded"

// anchorLatest anchors the latest head if it is not anchored yet; older unanchored heads are
// covered by it (the contract only moves forward).
func (l *Log) anchorLatest(ctx context.Context, a Anchorer) (*Head, error) {
	l.mu.RLock()
	head := l.head
	l.mu.RUnlock()
	if head.Size == 0 || head.AnchorTx != "" {
		return nil, nil
	}
	tx, err := a.Anchor(ctx, head.Size, head.Root)
	if errors.Is(err, ErrStaleAnchor) {
		// Give up on this head instead of retrying it forever (twice a second, at 66f817e,
		// on every devnet node that anchored from the shared dev wallet).
		tx, err = AnchorSuperseded, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reputation: anchor head of epoch %d: %w", head.Epoch, err)
	}
	if _, err := l.db.ExecContext(ctx, `UPDATE reputation_heads SET anchor_tx = ? WHERE chain = ? AND epoch = ?`, tx, l.chain, head.Epoch); err != nil {
		return nil, fmt.Errorf("reputation: record anchor of epoch %d: %w", head.Epoch, err)
	}
	l.mu.Lock()
	if l.head.Epoch == head.Epoch {
		l.head.AnchorTx = tx
	}
	l.mu.Unlock()
	head.AnchorTx = tx
	return &head, nil
}

// loadAnchor reads the anchor transaction of the latest head.
func (l *Log) loadAnchor(ctx context.Context) error {
	if l.head.Size == 0 {
		return nil
	}
	err := l.db.QueryRowContext(ctx, `SELECT anchor_tx FROM reputation_heads WHERE chain = ? AND epoch = ?`, l.chain, l.head.Epoch).Scan(&l.head.AnchorTx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	return err
}
