package stake

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/identity"
)

// KeyStatus is what the chain says of a DID's key: Active unless a controller the DID bound
// with a verified proof revoked it or rotated it away.
type KeyStatus string

// Key statuses.
const (
	KeyActive  KeyStatus = "active"
	KeyRevoked KeyStatus = "revoked"
	KeyRotated KeyStatus = "rotated"
)

// KeyState is a DID's key status with where it came from.
type KeyState struct {
	DID    string    `json:"did"`
	Status KeyStatus `json:"status"`
	// Successor is the DID a verified rotation moved to ("" for a revocation, or a rotation
	// whose new proof does not verify).
	Successor string `json:"successor,omitempty"`
	// Controller closed the DID in Block.
	Controller common.Address `json:"controller,omitzero"`
	Block      uint64         `json:"block,omitempty"`
}

// Closed reports whether the DID's key may no longer act.
func (k KeyState) Closed() bool { return k.Status != KeyActive }

var _ identity.KeyStatusReader = (*Index)(nil)

// KeyStatus is KeyState as the identity verifier reads it.
func (ix *Index) KeyStatus(ctx context.Context, did string) (identity.KeyStatus, error) {
	st, err := ix.KeyState(ctx, did)
	if err != nil {
		return identity.KeyStatus{}, err
	}
	return identity.KeyStatus{State: identity.KeyState(st.Status), Successor: st.Successor}, nil
}

// KeyState reads the status of did's key. The first verified record that closed it (in
// chain order) decides; rotations and revocations are final.
func (ix *Index) KeyState(ctx context.Context, did string) (KeyState, error) {
	st := KeyState{DID: did, Status: KeyActive}
	var status, successor, controller string
	err := ix.cfg.DB.QueryRowContext(ctx, `SELECT status, successor, controller, closed_block FROM stake_records
		WHERE chain = ? AND agent_id = ? AND verified = 1 AND did = ? AND status != 'bound'
		ORDER BY closed_block, closed_log LIMIT 1`, ix.cfg.Chain, agentID(did).Hex(), did).Scan(&status, &successor, &controller, &st.Block)
	if errors.Is(err, sql.ErrNoRows) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("stake index: key status of %s: %w", did, err)
	}
	st.Status, st.Successor, st.Controller = KeyRevoked, successor, common.HexToAddress(controller)
	if Status(status) == StatusRotated {
		st.Status = KeyRotated
	}
	return st, nil
}

// Record is one (agent, controller) record as the index projects it. Amounts are in the
// stake token's base unit.
type Record struct {
	AgentID    common.Hash    `json:"agentId"`
	Controller common.Address `json:"controller"`
	// DID is what the verified proof binds; Verified false means the proof failed the rule
	// (ProofError says how) and the record counts for nothing.
	DID        string   `json:"did,omitempty"`
	Verified   bool     `json:"verified"`
	ProofError string   `json:"proofError,omitempty"`
	Status     Status   `json:"status"`
	Staked     *big.Int `json:"staked"`
	Unbonding  *big.Int `json:"unbonding"`
	// Locked is the part of Staked that claimed bounties lock until they end: it cannot be
	// unbonded, and a dispute ruling may slash it.
	Locked     *big.Int `json:"locked"`
	UnlockAt   uint64   `json:"unlockAt,omitempty"`
	Successor  string   `json:"successor,omitempty"`
	BoundBlock uint64   `json:"boundBlock"`
}

// Record reads the record of did under controller; nil when the registry has none.
func (ix *Index) Record(ctx context.Context, did string, controller common.Address) (*Record, error) {
	r, err := ix.load(ctx, ix.cfg.DB, agentID(did), controller)
	if err != nil || r == nil {
		return nil, err
	}
	return r.export(), nil
}

func (r *record) export() *Record {
	return &Record{AgentID: r.agent, Controller: r.controller, DID: r.did, Verified: r.verified, ProofError: r.proofErr,
		Status: r.status, Staked: r.staked, Unbonding: r.unbonding, Locked: r.locked, UnlockAt: r.unlockAt, Successor: r.successor, BoundBlock: r.boundBlock}
}

// Counts reports whether a record acts for its DID now: verified, still bound, and the DID
// not closed by any of its controllers.
func (ix *Index) counts(ctx context.Context, r *record) (bool, error) {
	if r == nil || !r.verified || r.status != StatusBound {
		return false, nil
	}
	st, err := ix.KeyState(ctx, r.did)
	if err != nil {
		return false, err
	}
	return !st.Closed(), nil
}

// StakeOf is the stake that counts for did under controller: the record's bonded stake when
// the record counts (see Bound), zero otherwise.
func (ix *Index) StakeOf(ctx context.Context, did string, controller common.Address) (*big.Int, error) {
	r, err := ix.load(ctx, ix.cfg.DB, agentID(did), controller)
	if err != nil {
		return nil, err
	}
	ok, err := ix.counts(ctx, r)
	if err != nil || !ok || r.did != did {
		return new(big.Int), err
	}
	return r.staked, nil
}

// Bound reports whether wallet controls did on chain: a verified binding, still bound, of a
// DID no controller closed.
func (ix *Index) Bound(ctx context.Context, did string, wallet common.Address) (bool, error) {
	r, err := ix.load(ctx, ix.cfg.DB, agentID(did), wallet)
	if err != nil {
		return false, err
	}
	ok, err := ix.counts(ctx, r)
	return ok && r.did == did, err
}

// WalletsOf lists the wallets that control did on chain (see Bound), in address order.
func (ix *Index) WalletsOf(ctx context.Context, did string) ([]common.Address, error) {
	st, err := ix.KeyState(ctx, did)
	if err != nil || st.Closed() {
		return nil, err
	}
	rows, err := ix.cfg.DB.QueryContext(ctx, `SELECT controller FROM stake_records
		WHERE chain = ? AND agent_id = ? AND did = ? AND verified = 1 AND status = 'bound' ORDER BY controller`,
		ix.cfg.Chain, agentID(did).Hex(), did)
	if err != nil {
		return nil, fmt.Errorf("stake index: wallets of %s: %w", did, err)
	}
	defer rows.Close()
	var out []common.Address
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		out = append(out, common.HexToAddress(c))
	}
	return out, rows.Err()
}

// BindingProof returns the verified binding of did to wallet as it was recorded on chain, or
// nil when there is none.
func (ix *Index) BindingProof(ctx context.Context, did string, wallet common.Address) ([]byte, error) {
	r, err := ix.load(ctx, ix.cfg.DB, agentID(did), wallet)
	if err != nil || r == nil || !r.verified {
		return nil, err
	}
	return []byte(r.binding), nil
}

// StakedAgents is the stake, in whole tokens (by Config.Token's decimals), that counts for every
// DID with any: the sum over its controllers of the bonded stake of records that count (see
// Bound). It is the chain's figure, the same on every node at the same block, whatever cards
// a node happens to hold.
func (ix *Index) StakedAgents(ctx context.Context) (map[string]float64, error) {
	return ix.staked(ctx, false, "", ix.cfg.Chain)
}

// Bonded is the stake one DID has bonded, in whole tokens: StakedAgents' figure plus what is
// unbonding (requested out, not yet withdrawable), read by the DID's key; 0 when it has none.
// Unbonding stake weighs nothing, but it is still locked: it is what a stake that was just
// requested out leaves, the same on a node that has indexed the request and one a block
// behind.
func (ix *Index) Bonded(ctx context.Context, did string) (float64, error) {
	m, err := ix.staked(ctx, true, " AND agent_id = ? AND did = ?", ix.cfg.Chain, agentID(did).Hex(), did)
	return m[did], err
}

// staked sums the stake that counts per DID (with what is unbonding too, when unbonding) over
// the records that also match and (a condition on r, with its arguments after the chain's).
func (ix *Index) staked(ctx context.Context, unbonding bool, and string, args ...any) (map[string]float64, error) {
	nonZero := "staked != '0'"
	if unbonding {
		nonZero = "(staked != '0' OR unbonding != '0')"
	}
	rows, err := ix.cfg.DB.QueryContext(ctx, `SELECT did, staked, unbonding FROM stake_records r
		WHERE chain = ? AND verified = 1 AND status = 'bound' AND `+nonZero+and+`
		AND NOT EXISTS (SELECT 1 FROM stake_records c WHERE c.chain = r.chain AND c.agent_id = r.agent_id AND c.did = r.did
			AND c.verified = 1 AND c.status != 'bound')`, args...)
	if err != nil {
		return nil, fmt.Errorf("stake index: staked agents: %w", err)
	}
	defer rows.Close()
	wei := map[string]*big.Int{}
	for rows.Next() {
		var did, staked, out string
		if err := rows.Scan(&did, &staked, &out); err != nil {
			return nil, err
		}
		v, ok := new(big.Int).SetString(staked, 10)
		u, uok := new(big.Int).SetString(out, 10)
		if !ok || !uok {
			return nil, fmt.Errorf("stake index: stake %q (unbonding %q) of %s is not a number", staked, out, did)
		}
		if wei[did] == nil {
			wei[did] = new(big.Int)
		}
		wei[did].Add(wei[did], v)
		if unbonding {
			wei[did].Add(wei[did], u)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make(map[string]float64, len(wei))
	for did, v := range wei {
		out[did] = ix.cfg.Token.Whole(v)
	}
	return out, nil
}

// Node says whether did speaks for a node of the network (reputation.Nodes): bound on chain
// (see Bound) under a wallet that holds at least min of stake for it. It returns the first
// such wallet in address order.
func (ix *Index) Node(ctx context.Context, did string, min *big.Int) (common.Address, bool, error) {
	wallets, err := ix.WalletsOf(ctx, did)
	if err != nil {
		return common.Address{}, false, err
	}
	for _, w := range wallets {
		staked, err := ix.StakeOf(ctx, did, w)
		if err != nil {
			return common.Address{}, false, err
		}
		if staked.Sign() > 0 && staked.Cmp(min) >= 0 {
			return w, true, nil
		}
	}
	return common.Address{}, false, nil
}
