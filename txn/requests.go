package txn

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/surety-ioa/surety/internal/sqlite"
)

// migrations are the request store's table. It kept its first name, escrow_requests: the
// escrow package created it (its migration 2) before transactions had a package of their own,
// and IF NOT EXISTS keeps such databases as they are. bounty_id is no longer written.
var migrations = []sqlite.Migration{{Version: 1, SQL: `
CREATE TABLE IF NOT EXISTS escrow_requests (
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
`}}

// Idempotency names a request so that a retry never sends a second transaction. Caller is
// who asks (a DID), Key the client's Idempotency-Key, Fingerprint a digest of what is asked.
// The zero value (no Key) makes a request that is not stored.
type Idempotency struct {
	Caller, Key, Fingerprint string
}

// Request is one transaction a client of the package asks for, and what its answer is.
type Request[T any] struct {
	From common.Address
	// Prepare builds the call. It may first send, from snd, what the call needs (an
	// approval, a bind); those are not part of the request's once-only guarantee, so it
	// sends them only when the chain does not have them yet.
	Prepare func(ctx context.Context, snd *Sender) (Call, error)
	// Finish turns the mined receipt into the answer, which is stored for retries (as JSON).
	Finish func(ctx context.Context, r *types.Receipt) (T, error)
}

type requestRow struct {
	fingerprint, state, response string
	rawTx                        []byte
}

func (s *Service) load(ctx context.Context, idem Idempotency) (*requestRow, error) {
	var r requestRow
	err := s.cfg.DB.QueryRowContext(ctx, `SELECT fingerprint, state, raw_tx, response FROM escrow_requests
		WHERE chain = ? AND caller = ? AND key = ?`, s.cfg.Chain, idem.Caller, idem.Key).
		Scan(&r.fingerprint, &r.state, &r.rawTx, &r.response)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("idempotency: %w", err)
	}
	return &r, nil
}

func (s *Service) exec(ctx context.Context, q string, args ...any) error {
	if _, err := s.cfg.DB.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("idempotency: %w", err)
	}
	return nil
}

// Do sends req's transaction once per Idempotency (when idem.Key is set): the first request
// sends it, storing it signed before it is broadcast; a retry gets the stored answer, or,
// after a crash, waits for (and if needed re-broadcasts) the very same transaction. Errors:
// ErrKeyReused for the key of another request, ErrRequestInProgress while the first runs.
func Do[T any](ctx context.Context, s *Service, idem Idempotency, req Request[T]) (T, error) {
	var zero T
	if idem.Key == "" {
		return run(ctx, s, nil, req)
	}
	prev, err := s.load(ctx, idem)
	if err != nil {
		return zero, err
	}
	if prev == nil {
		res, err := s.cfg.DB.ExecContext(ctx, `INSERT INTO escrow_requests (chain, caller, key, fingerprint, state) VALUES (?, ?, ?, ?, 'preparing')
			ON CONFLICT DO NOTHING`, s.cfg.Chain, idem.Caller, idem.Key, idem.Fingerprint)
		if err != nil {
			return zero, fmt.Errorf("idempotency: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return run(ctx, s, &idem, req)
		}
		if prev, err = s.load(ctx, idem); err != nil || prev == nil {
			return zero, ErrRequestInProgress
		}
	}
	if prev.fingerprint != idem.Fingerprint {
		return zero, ErrKeyReused
	}
	switch prev.state {
	case "done":
		var out T
		if err := json.Unmarshal([]byte(prev.response), &out); err != nil {
			return zero, fmt.Errorf("idempotency: stored answer: %w", err)
		}
		return out, nil
	case "sent":
		return resume(ctx, s, idem, prev, req)
	}
	return zero, ErrRequestInProgress
}

// Run performs req once from snd's wallet, with no request store: for a client that holds
// its own wallet (the CLI, which journals its commands itself). Calls req.Prepare sends first
// (a bind, an approval) are sent and awaited in order, like the call itself.
func Run[T any](ctx context.Context, snd *Sender, req Request[T]) (T, error) {
	var zero T
	call, err := req.Prepare(ctx, snd)
	if err != nil {
		return zero, err
	}
	r, err := snd.Send(ctx, call)
	if err != nil {
		return zero, err
	}
	return req.Finish(ctx, r)
}

// Retry answers a request that was made before under idem, and never starts a new one: the
// stored answer, or, when the node stopped before answering, the outcome of the transaction
// it stored. It returns ErrNoSuchRequest when there is none.
func Retry[T any](ctx context.Context, s *Service, idem Idempotency, req Request[T]) (T, error) {
	var zero T
	prev, err := s.load(ctx, idem)
	if err != nil {
		return zero, err
	}
	if prev == nil || idem.Key == "" {
		return zero, ErrNoSuchRequest
	}
	return Do(ctx, s, idem, req)
}

// run builds, signs, records (when idem is set), broadcasts and awaits req's transaction.
// A refused request leaves no record, so its retry is judged afresh.
func run[T any](ctx context.Context, s *Service, idem *Idempotency, req Request[T]) (T, error) {
	var zero T
	forget := func() {
		if idem != nil {
			_ = s.exec(context.WithoutCancel(ctx), `DELETE FROM escrow_requests WHERE chain = ? AND caller = ? AND key = ? AND state = 'preparing'`,
				s.cfg.Chain, idem.Caller, idem.Key)
		}
	}
	snd, err := s.Sender(req.From)
	if err != nil {
		forget()
		return zero, err
	}
	call, err := req.Prepare(ctx, snd)
	if err != nil {
		forget()
		return zero, err
	}
	recorded := false
	record := func(tx *types.Transaction) error {
		if idem == nil {
			return nil
		}
		raw, err := tx.MarshalBinary()
		if err != nil {
			return err
		}
		if err := s.exec(ctx, `UPDATE escrow_requests SET state = 'sent', wallet = ?, raw_tx = ?, tx_hash = ? WHERE chain = ? AND caller = ? AND key = ?`,
			req.From.Hex(), raw, tx.Hash().Hex(), s.cfg.Chain, idem.Caller, idem.Key); err != nil {
			return err
		}
		recorded = true
		return nil
	}
	tx, err := snd.SendAsync(ctx, call, record)
	switch {
	case err == nil:
	case !recorded:
		forget() // nothing was sent
		return zero, err
	case errors.Is(err, ErrChainRefused):
		// The chain refused it outright, so it will never be mined: forget the request.
		_ = s.exec(context.WithoutCancel(ctx), `DELETE FROM escrow_requests WHERE chain = ? AND caller = ? AND key = ?`,
			s.cfg.Chain, idem.Caller, idem.Key)
		return zero, err
	default:
		// The chain may have it: the stored transaction stays, and a retry with the same
		// Idempotency-Key waits for it (broadcasting it again) instead of sending another.
		return zero, err
	}
	r, err := snd.Wait(ctx, tx)
	if err != nil {
		return zero, err
	}
	return finish(ctx, s, idem, req, r)
}

// finish makes the answer and, for an idempotent request, stores it.
func finish[T any](ctx context.Context, s *Service, idem *Idempotency, req Request[T], r *types.Receipt) (T, error) {
	var zero T
	out, err := req.Finish(ctx, r)
	if err != nil {
		return zero, err
	}
	if idem != nil {
		b, err := json.Marshal(out)
		if err != nil {
			return zero, fmt.Errorf("idempotency: answer: %w", err)
		}
		if err := s.exec(ctx, `UPDATE escrow_requests SET state = 'done', response = ? WHERE chain = ? AND caller = ? AND key = ?`,
			string(b), s.cfg.Chain, idem.Caller, idem.Key); err != nil {
			return zero, err
		}
	}
	return out, nil
}

// resume finishes a request whose transaction was stored (and perhaps broadcast) before the
// node stopped.
func resume[T any](ctx context.Context, s *Service, idem Idempotency, prev *requestRow, req Request[T]) (T, error) {
	var zero T
	var tx types.Transaction
	if err := tx.UnmarshalBinary(prev.rawTx); err != nil {
		return zero, fmt.Errorf("idempotency: stored transaction: %w", err)
	}
	snd, err := s.Sender(req.From)
	if err != nil {
		return zero, err
	}
	stale, err := snd.Rebroadcast(ctx, &tx)
	if err != nil {
		return zero, err
	}
	if stale {
		// Its nonce went to another transaction: it can never be mined, so nothing was done.
		// Start the request over, as a fresh one.
		if err := s.exec(ctx, `UPDATE escrow_requests SET state = 'preparing', raw_tx = NULL, tx_hash = '' WHERE chain = ? AND caller = ? AND key = ?`,
			s.cfg.Chain, idem.Caller, idem.Key); err != nil {
			return zero, err
		}
		return run(ctx, s, &idem, req)
	}
	r, err := snd.Wait(ctx, &tx)
	if err != nil {
		return zero, err
	}
	return finish(ctx, s, &idem, req, r)
}
