package registry

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/sqlite"
)

// Revocation and rotation. A controller revokes its agent, or rotates it to a new DID, in
// StakeRegistry; the chain is the authority. A node told of it (CheckStatus, from the API)
// reads the agent's on-chain record, drops the card of a revoked or rotated DID, remembers
// the DID so that its card never comes back, and gossips a notice on StatusTopic. Each node
// receiving a notice checks it against the chain the same way: a true notice is applied and
// forwarded, a false one (the agent is still bound) is rejected, which costs the sender score.

// StatusTopic is the gossipsub topic of revocation and rotation notices.
const StatusTopic = "/surety/status/1"

// maxNotice bounds a status notice.
const maxNotice = 512

// ErrRevoked refuses a card whose DID was revoked or rotated away on chain.
var ErrRevoked = errors.New("registry: the agent's DID was revoked or rotated on chain")

// AgentStatus is an agent's record in StakeRegistry under a controller (IStakeRegistry.Status).
type AgentStatus uint8

// Statuses, in the contract's order.
const (
	StatusNone AgentStatus = iota
	StatusBound
	StatusRotated
	StatusRevoked
)

// String names the status as the contract does, in lower case.
func (s AgentStatus) String() string {
	switch s {
	case StatusNone:
		return "none"
	case StatusBound:
		return "bound"
	case StatusRotated:
		return "rotated"
	case StatusRevoked:
		return "revoked"
	}
	return fmt.Sprintf("status(%d)", uint8(s))
}

// MarshalText writes the status by name.
func (s AgentStatus) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a status name.
func (s *AgentStatus) UnmarshalText(b []byte) error {
	for _, v := range []AgentStatus{StatusNone, StatusBound, StatusRotated, StatusRevoked} {
		if string(b) == v.String() {
			*s = v
			return nil
		}
	}
	return fmt.Errorf("unknown agent status %q", b)
}

// gone says whether the DID has left: its card must go and never come back.
func (s AgentStatus) gone() bool { return s == StatusRevoked || s == StatusRotated }

// StatusReader reads an agent's on-chain status under a controller.
type StatusReader interface {
	Status(ctx context.Context, did string, controller common.Address) (AgentStatus, error)
}

var _ StatusReader = (*ChainStakes)(nil)

// Status is the status of keccak256(did) under controller in StakeRegistry.
func (s *ChainStakes) Status(ctx context.Context, did string, controller common.Address) (AgentStatus, error) {
	rec, err := bind.Call(s.registry, &bind.CallOpts{Context: ctx}, s.abi.PackRecordOf(identity.AgentID(did), controller), s.abi.UnpackRecordOf)
	if err != nil {
		return 0, fmt.Errorf("read status of %s: %w", did, err)
	}
	return AgentStatus(rec.Status), nil
}

// statusMigration remembers the DIDs that left (version 3 of the registry tables).
var statusMigration = sqlite.Migration{Version: 3, SQL: `
CREATE TABLE registry_gone (
	chain   INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	did     TEXT    NOT NULL,
	wallet  TEXT    NOT NULL,
	status  TEXT    NOT NULL CHECK (status IN ('revoked', 'rotated')),
	noticed INTEGER NOT NULL,
	PRIMARY KEY (chain, did)
) STRICT;
`}

// StatusNotice is what StatusTopic carries: a DID and the controller whose record to read.
// It is a hint, not a proof: every receiver reads the chain.
type StatusNotice struct {
	DID    string         `json:"did"`
	Wallet common.Address `json:"wallet"`
}

// parseNotice reads a notice from a peer.
func parseNotice(data []byte) (StatusNotice, error) {
	var n StatusNotice
	if len(data) > maxNotice {
		return n, fmt.Errorf("notice: %d bytes, at most %d", len(data), maxNotice)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&n); err != nil {
		return n, fmt.Errorf("notice: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return n, errors.New("notice: trailing data")
	}
	if _, err := identity.ParseDID(n.DID); err != nil {
		return n, fmt.Errorf("notice: %w", err)
	}
	if n.Wallet == (common.Address{}) {
		return n, errors.New("notice: no wallet")
	}
	return n, nil
}

// StatusResult is what CheckStatus found.
type StatusResult struct {
	DID     string         `json:"did"`
	Wallet  common.Address `json:"wallet"`
	Status  AgentStatus    `json:"status"`
	Dropped bool           `json:"dropped"` // the node dropped the DID's card just now
	// Stake is what the node's card of a bound DID now counts (base units), when the node
	// holds one under this wallet; Restaked says it changed just now.
	Stake    string `json:"stake,omitempty"`
	Restaked bool   `json:"restaked,omitempty"`
}

// CheckStatus reads did's on-chain status under wallet (the zero address: the wallet of the
// card the node holds). A revoked or rotated DID's card is dropped, the DID is remembered so
// that its card never comes back, and the notice is gossiped when the node has peers. A bound
// DID's card is given its stake as the chain now has it (see restake).
func (r *Registry) CheckStatus(ctx context.Context, did string, wallet common.Address) (*StatusResult, error) {
	if _, err := identity.ParseDID(did); err != nil {
		return nil, cardErr(did, ErrMalformed, "%v", err)
	}
	if wallet == (common.Address{}) {
		a, err := r.getLocal(ctx, did)
		if err != nil {
			return nil, cardErr(did, ErrUnknownAgent, "no card here to take the wallet from: name the wallet")
		}
		wallet = a.Wallet
	}
	res, err := r.applyStatus(ctx, StatusNotice{DID: did, Wallet: wallet})
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	n := r.net
	r.mu.Unlock()
	if res.Status.gone() && n != nil {
		n.publishNotice(ctx, StatusNotice{DID: did, Wallet: wallet})
	}
	return res, nil
}

// applyStatus reads the notice's record on chain and, when the DID is gone, drops its card
// and remembers it.
func (r *Registry) applyStatus(ctx context.Context, n StatusNotice) (*StatusResult, error) {
	if r.cfg.Status == nil {
		return nil, errors.New("registry: no status reader configured")
	}
	st, err := r.cfg.Status.Status(ctx, n.DID, n.Wallet)
	if err != nil {
		return nil, err
	}
	res := &StatusResult{DID: n.DID, Wallet: n.Wallet, Status: st}
	if !st.gone() {
		return res, r.restake(ctx, res)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	tx, err := r.cfg.DB.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	fail := func(err error) (*StatusResult, error) { return nil, fmt.Errorf("registry: drop %s: %w", n.DID, err) }
	var ftsRow int64
	switch err := tx.QueryRowContext(ctx, `SELECT fts_row FROM registry_cards WHERE chain = ? AND did = ?`, r.cfg.Chain, n.DID).Scan(&ftsRow); {
	case err == nil:
		res.Dropped = true
		for _, q := range []string{`DELETE FROM registry_fts WHERE rowid = ?`, `DELETE FROM registry_cards WHERE fts_row = ?`} {
			if _, err := tx.ExecContext(ctx, q, ftsRow); err != nil {
				return fail(err)
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM registry_capabilities WHERE chain = ? AND did = ?`, r.cfg.Chain, n.DID); err != nil {
			return fail(err)
		}
	case !errors.Is(err, sql.ErrNoRows):
		return fail(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO registry_gone (chain, did, wallet, status, noticed) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		r.cfg.Chain, n.DID, n.Wallet.Hex(), st.String(), r.cfg.Now().Unix()); err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	if res.Dropped {
		r.stakesChanged()
	}
	return res, nil
}

// stakeForgetter is a StakeReader that caches (CachedStakes): restake has it drop an entry.
type stakeForgetter interface {
	Forget(did string, controller common.Address)
}

// restake re-reads the stake behind the card the node holds for res.DID, when res.Wallet
// controls it, and stores the card again with it when it changed: a card's stake is read when
// the card is stored, and more stake, unbonding or slashing change it later.
func (r *Registry) restake(ctx context.Context, res *StatusResult) error {
	a, err := r.getLocal(ctx, res.DID)
	if errors.Is(err, ErrUnknownAgent) {
		return nil
	}
	if err != nil {
		return err
	}
	if a.Wallet != res.Wallet {
		return nil
	}
	if f, ok := r.cfg.Stakes.(stakeForgetter); ok {
		f.Forget(res.DID, res.Wallet) // the point is the chain's figure now, not a cached one
	}
	stake, err := r.cfg.Stakes.StakeOf(ctx, res.DID, res.Wallet)
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
	if err := r.store(ctx, &cur.SignedCard, stake); err != nil {
		return err
	}
	res.Restaked = true
	r.stakesChanged()
	return nil
}

// goneStatus says whether did left on chain (as far as this node was told).
func (r *Registry) goneStatus(ctx context.Context, did string) (string, bool, error) {
	var st string
	err := r.cfg.DB.QueryRowContext(ctx, `SELECT status FROM registry_gone WHERE chain = ? AND did = ?`, r.cfg.Chain, did).Scan(&st)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("registry: %w", err)
	}
	return st, true, nil
}

// joinStatus validates and follows StatusTopic: a notice is forwarded only when the chain
// confirms it, and applied here on the way.
func (n *Network) joinStatus(ctx context.Context) error {
	self := n.node.Host.ID()
	if err := n.node.PubSub.RegisterTopicValidator(StatusTopic, func(ctx context.Context, from peer.ID, msg *pubsub.Message) pubsub.ValidationResult {
		if from == self {
			return pubsub.ValidationAccept // applied by CheckStatus before it was published
		}
		notice, err := parseNotice(msg.Data)
		if err != nil {
			return pubsub.ValidationReject
		}
		res, err := n.r.applyStatus(ctx, notice)
		switch {
		case err != nil:
			return pubsub.ValidationIgnore // could not check (chain unreachable): do not punish
		case !res.Status.gone():
			return pubsub.ValidationReject // a false notice: the agent is still bound (or never was)
		}
		return pubsub.ValidationAccept
	}); err != nil {
		return err
	}
	topic, err := n.node.PubSub.Join(StatusTopic)
	if err != nil {
		return err
	}
	sub, err := topic.Subscribe()
	if err != nil {
		return err
	}
	n.status = topic
	go func() {
		for {
			if _, err := sub.Next(ctx); err != nil {
				return
			}
		}
	}()
	return nil
}

// publishNotice gossips a notice this node checked.
func (n *Network) publishNotice(ctx context.Context, notice StatusNotice) {
	if n.status == nil {
		return
	}
	data, _ := json.Marshal(notice)
	if err := n.status.Publish(ctx, data); err != nil {
		n.log.Warn("registry: gossip status notice", "did", notice.DID, "err", err)
	}
}
