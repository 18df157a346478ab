package registry

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/identity"
)

// Revocation and rotation. A controller revokes its agent, or rotates it to a new DID, in
// StakeRegistry; the chain is the authority, and every node follows it through its own index
// of the registry (package stake), read through Config.Keys. The index tells the registry
// which DIDs its events touched (ChainChanged): a closed DID's card is dropped, and refused
// from then on, on every node alike, with no notice passed between nodes; an open DID's card
// is given the stake the index now counts, so a slash or an unbond re-ranks it everywhere.

// ErrRevoked refuses a card whose DID was revoked or rotated away on chain.
var ErrRevoked = errors.New("registry: the agent's DID was revoked or rotated on chain")

// StatusResult is what CheckStatus found.
type StatusResult struct {
	DID string `json:"did"`
	// Status is the DID's key status on chain: active, revoked or rotated.
	Status    identity.KeyState `json:"status"`
	Successor string            `json:"successor,omitempty"`
	// Wallet is the wallet of the card the node holds, when it holds one.
	Wallet  common.Address `json:"wallet,omitzero"`
	Dropped bool           `json:"dropped"` // the node dropped the DID's card just now
	// Stake is what the node's card of an active DID now counts (base units), when the node
	// holds one; Restaked says it changed just now.
	Stake    string `json:"stake,omitempty"`
	Restaked bool   `json:"restaked,omitempty"`
}

// keyStatus reads did's key status from the index; active when no reader is configured.
func (r *Registry) keyStatus(ctx context.Context, did string) (identity.KeyStatus, error) {
	if r.cfg.Keys == nil {
		return identity.KeyStatus{State: identity.KeyActive}, nil
	}
	st, err := r.cfg.Keys.KeyStatus(ctx, did)
	if err != nil {
		return st, fmt.Errorf("registry: key status of %s: %w", did, err)
	}
	return st, nil
}

// ChainChanged brings the cards of dids in line with the chain's index: called with the DIDs
// whose on-chain records changed. Failures are logged; the next change or CheckStatus
// retries them.
func (r *Registry) ChainChanged(ctx context.Context, dids []string) {
	seen := map[string]bool{}
	for _, did := range dids {
		if seen[did] {
			continue
		}
		seen[did] = true
		if _, err := r.CheckStatus(ctx, did); err != nil && !errors.Is(err, ErrUnknownAgent) {
			r.cfg.Logger.Warn("registry: follow the chain", "did", did, "err", err)
		}
	}
}

// CheckStatus reads did's key status from the chain's index. A revoked or rotated DID's
// card is dropped (and refused from then on); an active DID's card is given its stake as
// the index now counts it (see restake). It returns ErrUnknownAgent when the DID is active
// and the node holds no card of it.
func (r *Registry) CheckStatus(ctx context.Context, did string) (*StatusResult, error) {
	if _, err := identity.ParseDID(did); err != nil {
		return nil, cardErr(did, ErrMalformed, "%v", err)
	}
	st, err := r.keyStatus(ctx, did)
	if err != nil {
		return nil, err
	}
	res := &StatusResult{DID: did, Status: st.State, Successor: st.Successor}
	if !st.Closed() {
		a, err := r.getLocal(ctx, did)
		if err != nil {
			return nil, err
		}
		res.Wallet = a.Wallet
		return res, r.restake(ctx, res, a)
	}
	if err := r.drop(ctx, res); err != nil {
		return nil, err
	}
	return res, nil
}

// drop deletes the card of a closed DID, if the node holds one.
func (r *Registry) drop(ctx context.Context, res *StatusResult) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	tx, err := r.cfg.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	fail := func(err error) error { return fmt.Errorf("registry: drop %s: %w", res.DID, err) }
	var ftsRow, serial int64
	var wallet string
	switch err := tx.QueryRowContext(ctx, `SELECT fts_row, rowid, wallet FROM registry_cards WHERE chain = ? AND did = ?`, r.cfg.Chain, res.DID).Scan(&ftsRow, &serial, &wallet); {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fail(err)
	}
	res.Dropped, res.Wallet = true, common.HexToAddress(wallet)
	if _, err := tx.ExecContext(ctx, `DELETE FROM registry_cards WHERE fts_row = ?`, ftsRow); err != nil {
		return fail(err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM registry_capabilities WHERE chain = ? AND did = ?`, r.cfg.Chain, res.DID); err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	r.indexDelete(serial)
	r.stakesChanged()
	return nil
}

// restake re-reads the stake behind a, the card the node holds for res.DID, and stores the
// card again with it when it changed: a card's stake is read when the card is stored, and
// more stake, unbonding or slashing change it later.
func (r *Registry) restake(ctx context.Context, res *StatusResult, a *Agent) error {
	stake, err := r.cfg.Stakes.StakeOf(ctx, res.DID, a.Wallet)
	if err != nil {
		return err
	}
	res.Stake = stake.String()
	if res.Stake == a.Stake {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// A newer card may have been stored meanwhile: it read its own stake.
	cur, err := r.getLocal(ctx, res.DID)
	if err != nil || cur.Seq != a.Seq {
		return err
	}
	if err := r.store(ctx, &cur.SignedCard, stake, cardVector(indexDoc(&cur.Card, false, 1))); err != nil {
		return err
	}
	res.Restaked = true
	r.stakesChanged()
	return nil
}
