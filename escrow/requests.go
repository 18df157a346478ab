package escrow

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ethereum/go-ethereum/core/types"

	"github.com/surety-ioa/surety/internal/sqlite"
)

// requestMigration adds the table behind Idempotency-Key (version 2 of the escrow tables).
var requestMigration = sqlite.Migration{Version: 2, SQL: `
CREATE TABLE escrow_requests (
	chain       INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	caller      TEXT    NOT NULL,
	key         TEXT    NOT NULL,
	fingerprint TEXT    NOT NULL,
	state       TEXT    NOT NULL CHECK (state IN ('preparing', 'sent', 'done')),
	wallet      TEXT    NOT NULL DEFAULT '',
	raw_tx      BLOB,
	tx_hash     TEXT    NOT NULL DEFAULT '',
	bounty_id   INTEGER NOT NULL DEFAULT 0,
	response    TEXT    NOT NULL DEFAULT '',
	created     INTEGER NOT NULL DEFAULT (unixepoch()),
	PRIMARY KEY (chain, caller, key)
) STRICT;
`}

// Sentinels of idempotent requests.
var (
	// ErrRequestInProgress: a request with the same Idempotency-Key is being processed.
	ErrRequestInProgress = errors.New("escrow: a request with this Idempotency-Key is in progress")
	// ErrKeyReused: the Idempotency-Key was used for a different request.
	ErrKeyReused = errors.New("escrow: Idempotency-Key reused for a different request")
	// ErrNoSuchRequest: Retry found no earlier request under this Idempotency-Key.
	ErrNoSuchRequest = errors.New("escrow: no earlier request with this Idempotency-Key")
)

// Retry answers a request that was made before under idem, and never starts a new one: the
// stored answer, or, when the node stopped before answering, the outcome of the transaction
// it stored. It returns ErrNoSuchRequest when there is none.
func (s *Service) Retry(ctx context.Context, op Op, idem Idempotency) (*Result, error) {
	prev, err := s.loadRequest(ctx, idem)
	if err != nil {
		return nil, err
	}
	if prev == nil || idem.Key == "" {
		return nil, ErrNoSuchRequest
	}
	return s.Do(ctx, op, idem)
}

// Idempotency names a request so that a retry never sends a second transaction. Caller is
// who asks (a DID), Key the client's Idempotency-Key, Fingerprint a digest of what is asked.
type Idempotency struct {
	Caller, Key, Fingerprint string
}

type requestRow struct {
	fingerprint, state, wallet, txHash, response string
	rawTx                                        []byte
	bountyID                                     uint64
}

func (s *Service) loadRequest(ctx context.Context, idem Idempotency) (*requestRow, error) {
	var r requestRow
	var bountyID int64
	err := s.cfg.Indexer.cfg.DB.QueryRowContext(ctx, `SELECT fingerprint, state, wallet, raw_tx, tx_hash, bounty_id, response FROM escrow_requests
		WHERE chain = ? AND caller = ? AND key = ?`, s.cfg.Indexer.cfg.Chain, idem.Caller, idem.Key).
		Scan(&r.fingerprint, &r.state, &r.wallet, &r.rawTx, &r.txHash, &bountyID, &r.response)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("idempotency: %w", err)
	}
	r.bountyID = uint64(bountyID)
	return &r, nil
}

func (s *Service) execRequest(ctx context.Context, q string, args ...any) error {
	if _, err := s.cfg.Indexer.cfg.DB.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("idempotency: %w", err)
	}
	return nil
}

// Do performs op once per Idempotency (when idem.Key is set): the first request sends the
// transaction, storing it signed before it is broadcast; a retry gets the stored answer, or,
// after a crash, waits for (and if needed re-broadcasts) the very same transaction.
func (s *Service) Do(ctx context.Context, op Op, idem Idempotency) (*Result, error) {
	if idem.Key == "" {
		return s.run(ctx, op, nil)
	}
	chain := s.cfg.Indexer.cfg.Chain
	prev, err := s.loadRequest(ctx, idem)
	if err != nil {
		return nil, err
	}
	if prev == nil {
		res, err := s.cfg.Indexer.cfg.DB.ExecContext(ctx, `INSERT INTO escrow_requests (chain, caller, key, fingerprint, state) VALUES (?, ?, ?, ?, 'preparing')
			ON CONFLICT DO NOTHING`, chain, idem.Caller, idem.Key, idem.Fingerprint)
		if err != nil {
			return nil, fmt.Errorf("idempotency: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return s.run(ctx, op, &idem)
		}
		if prev, err = s.loadRequest(ctx, idem); err != nil || prev == nil {
			return nil, ErrRequestInProgress
		}
	}
	if prev.fingerprint != idem.Fingerprint {
		return nil, ErrKeyReused
	}
	switch prev.state {
	case "done":
		var out Result
		if err := json.Unmarshal([]byte(prev.response), &out); err != nil {
			return nil, fmt.Errorf("idempotency: stored answer: %w", err)
		}
		return &out, nil
	case "sent":
		return s.resume(ctx, op, idem, prev)
	}
	return nil, ErrRequestInProgress
}

// resume finishes a request whose transaction was stored (and perhaps broadcast) before the
// node stopped.
func (s *Service) resume(ctx context.Context, op Op, idem Idempotency, prev *requestRow) (*Result, error) {
	var tx types.Transaction
	if err := tx.UnmarshalBinary(prev.rawTx); err != nil {
		return nil, fmt.Errorf("idempotency: stored transaction: %w", err)
	}
	snd, err := s.sender(op.From)
	if err != nil {
		return nil, err
	}
	stale, err := snd.Rebroadcast(ctx, &tx)
	if err != nil {
		return nil, err
	}
	if stale {
		// Its nonce went to another transaction: it can never be mined, so nothing was done.
		// Start the request over, as a fresh one.
		if err := s.execRequest(ctx, `UPDATE escrow_requests SET state = 'preparing', raw_tx = NULL, tx_hash = '' WHERE chain = ? AND caller = ? AND key = ?`,
			s.cfg.Indexer.cfg.Chain, idem.Caller, idem.Key); err != nil {
			return nil, err
		}
		return s.run(ctx, op, &idem)
	}
	r, err := snd.Wait(ctx, &tx)
	if err != nil {
		return nil, err
	}
	return s.finish(ctx, &idem, prev.bountyID, op, r)
}
