package reputation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/reputation/merkle"
)

// Facts arrive late. An audit reaches a node by gossip before the settlement it names has
// reached that node's escrow index, or before the binding that ties its auditor to the
// bounty's poster has reached its stake index. Dropping it, or freezing "unbacked" for good,
// would leave nodes with different audit sets and weights. So an audit whose subject or
// bounty is unknown here is held and retried as the indexes advance, and the backing of the
// audits that count is evaluated again whenever the chain facts behind it change (Recheck):
// what counts is a function of the chain and the audits, not of arrival order.

// heldMigration is the table of audits waiting for facts (version 4 of the reputation tables).
var heldMigration = sqlite.Migration{Version: 4, SQL: `
CREATE TABLE reputation_held (
	chain    INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	leaf     TEXT    NOT NULL,
	envelope BLOB    NOT NULL, -- the signed envelope as received
	payload  TEXT    NOT NULL, -- the verified payload (identity.Envelope)
	held_at  INTEGER NOT NULL,
	PRIMARY KEY (chain, leaf)
) STRICT;
`}

// heldByMigration accounts held audits per auditor (version 8): who filed each, and whether
// a wallet bound it on chain when it was held.
var heldByMigration = sqlite.Migration{Version: 8, SQL: `
ALTER TABLE reputation_held ADD COLUMN auditor TEXT NOT NULL DEFAULT '';
ALTER TABLE reputation_held ADD COLUMN bound INTEGER NOT NULL DEFAULT 0;
UPDATE reputation_held SET auditor = coalesce(json_extract(payload, '$.sender'), '');
CREATE INDEX reputation_held_auditor ON reputation_held (chain, auditor);
CREATE INDEX reputation_held_bound ON reputation_held (chain, bound);
`}

// waitsForFacts says whether a refusal may go away once this node's indexes catch up.
func waitsForFacts(err error) bool {
	return errors.Is(err, ErrUnknownBounty) || errors.Is(err, ErrUnknownSubject)
}

// refusedVerdict is the rules' word (Rules.Check's answer) on an audit the node keeps
// whatever they say (a leaf of an adopted epoch, an audit taken before its facts changed):
// a refusal makes it count 0 (Verdict.Refused); a subject or bounty this node's indexes lack
// makes it count unbacked (gossip would hold it until they catch up); an index that could not
// be read is an error (try again later).
func refusedVerdict(v Verdict, err error) (Verdict, error) {
	var ae *AuditError
	switch {
	case err == nil:
		return v, nil
	case waitsForFacts(err):
		return Verdict{}, nil
	case errors.As(err, &ae):
		return Verdict{Refused: ae.Error()}, nil
	}
	return Verdict{}, err
}

// hold keeps a verified audit that waits for facts, to retry (RetryHeld), within its
// auditor's share of the table: MaxHeldPerAuditor for an auditor bound on chain, one for an
// unbound one, and MaxHeldUnbound for all the unbound together. An audit beyond its share is
// not held; anti-entropy offers it again later.
func (s *Service) hold(ctx context.Context, v *identity.Verified, raw []byte) error {
	payload, err := json.Marshal(v.Envelope)
	if err != nil {
		return err
	}
	auditor := v.Envelope.Sender
	wallets, err := s.cfg.Rules.Wallets.WalletsOf(ctx, auditor)
	if err != nil {
		return fmt.Errorf("reputation: hold audit: %w", err)
	}
	bound := len(wallets) > 0
	share, pool := MaxHeldPerAuditor, MaxHeld
	if !bound {
		share, pool = 1, MaxHeldUnbound
	}
	chain := s.cfg.Store.chain
	_, err = s.cfg.Store.db.ExecContext(ctx, `INSERT INTO reputation_held (chain, leaf, envelope, payload, held_at, auditor, bound)
		SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7
		WHERE (SELECT COUNT(*) FROM reputation_held WHERE chain = ?1) < ?8
		AND (SELECT COUNT(*) FROM reputation_held WHERE chain = ?1 AND auditor = ?6) < ?9
		AND (SELECT COUNT(*) FROM reputation_held WHERE chain = ?1 AND bound = ?7) < ?10
		ON CONFLICT DO NOTHING`,
		chain, hexHash(merkle.LeafHash(raw)), raw, string(payload), s.cfg.Now().Unix(), auditor, bound, MaxHeld, share, pool)
	if err != nil {
		return fmt.Errorf("reputation: hold audit: %w", err)
	}
	return nil
}

// RetryHeld submits the held audits again: those accepted now, or refused for good, or held
// past HeldTTL, leave the table. It reports how many were accepted.
func (s *Service) RetryHeld(ctx context.Context) (int, error) {
	st := s.cfg.Store
	if _, err := st.db.ExecContext(ctx, `DELETE FROM reputation_held WHERE chain = ? AND held_at < ?`, st.chain, s.cfg.Now().Add(-HeldTTL).Unix()); err != nil {
		return 0, fmt.Errorf("reputation: expire held audits: %w", err)
	}
	rows, err := st.db.QueryContext(ctx, `SELECT leaf, envelope, payload FROM reputation_held WHERE chain = ? ORDER BY held_at, leaf`, st.chain)
	if err != nil {
		return 0, fmt.Errorf("reputation: read held audits: %w", err)
	}
	type held struct {
		leaf    string
		raw     []byte
		payload string
	}
	var list []held
	for rows.Next() {
		var h held
		if err := rows.Scan(&h.leaf, &h.raw, &h.payload); err != nil {
			rows.Close()
			return 0, err
		}
		list = append(list, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	accepted := 0
	for _, h := range list {
		var v identity.Verified
		if err := json.Unmarshal([]byte(h.payload), &v.Envelope); err != nil {
			return accepted, fmt.Errorf("reputation: held audit %s: %w", h.leaf, err)
		}
		_, err := s.submit(ctx, &v, h.raw)
		switch {
		case waitsForFacts(err):
			continue
		case err == nil:
			accepted++
		case ctx.Err() != nil:
			return accepted, ctx.Err()
		default:
			var ae *AuditError
			if !errors.As(err, &ae) && !errors.Is(err, ErrDuplicate) && !errors.Is(err, ErrLate) {
				return accepted, err // the store or an index failed: keep it, try again later
			}
		}
		if _, err := st.db.ExecContext(ctx, `DELETE FROM reputation_held WHERE chain = ? AND leaf = ?`, st.chain, h.leaf); err != nil {
			return accepted, err
		}
	}
	return accepted, nil
}

// Recheck evaluates the backing of the audits that count again, where the chain facts behind
// it may have changed: the audits by or about dids (their bindings changed), and the audits
// of bounties (their settlement changed). An audit whose backing changed moves its subject's
// score at once, as a new audit does. Held audits are retried too, whether a wallet binds
// each of dids is recorded with its audits (the anti-entropy window's order), and the scores
// are recomputed at the next tick when dids are named (their stakes may have changed).
func (s *Service) Recheck(ctx context.Context, dids []string, bounties []uint64) error {
	if len(dids) > 0 {
		// Their stakes may have changed too, and standings start from stake: recompute,
		// whether or not the node holds a card of theirs (the registry tells only of those).
		s.markDirty()
	}
	for _, did := range dids {
		wallets, err := s.cfg.Rules.Wallets.WalletsOf(ctx, did)
		if err != nil {
			return err
		}
		if err := s.cfg.Store.setAuditorBound(ctx, did, len(wallets) > 0); err != nil {
			return err
		}
	}
	if len(dids) > 0 || len(bounties) > 0 {
		targets := make([]string, len(bounties))
		for i, id := range bounties {
			a := Audit{Bounty: &identity.BountyRef{ChainID: s.cfg.Rules.ChainID, Escrow: s.cfg.Rules.Escrow.Hex(), ID: id}}
			targets[i] = a.Target()
		}
		var list []*StoredAudit
		for len(dids) > 0 || len(targets) > 0 { // in chunks: SQLite bounds a statement's parameters
			n, m := min(len(dids), recheckChunk), min(len(targets), recheckChunk)
			part, err := s.cfg.Store.touching(ctx, dids[:n], targets[:m])
			if err != nil {
				return err
			}
			list = append(list, part...)
			dids, targets = dids[n:], targets[m:]
		}
		slices.SortFunc(list, func(a, b *StoredAudit) int { return strings.Compare(a.Leaf.String(), b.Leaf.String()) })
		list = slices.CompactFunc(list, func(a, b *StoredAudit) bool { return a.Leaf == b.Leaf })
		type group struct {
			target string
			side   Side
		}
		var groups []group
		seen := map[group]bool{}
		add := func(g group) {
			if !seen[g] {
				seen[g] = true
				groups = append(groups, g)
			}
		}
		for _, c := range list {
			v, err := refusedVerdict(s.cfg.Rules.Check(ctx, &c.Audit)) // refused now: it counts 0
			if err != nil {
				return err
			}
			if c.Backed {
				add(group{c.Target(), c.Side}) // its backing may move to another audit
			}
			if v.Side == c.Side && v.Settled == c.Settled && v.Refused == c.Refused {
				continue
			}
			if err := s.cfg.Store.setVerdict(ctx, c.Leaf, v); err != nil {
				return err
			}
			if (v.Refused == "") != (c.Refused == "") {
				s.reload() // it comes to count, or stops: read the graph again (before any flip follows)
				add(group{c.Target(), c.Side})
				add(group{c.Target(), v.Side})
				continue
			}
			if v.Side == c.Side && c.Backed {
				// Same side, another settled value (the bounty's facts changed): the backed
				// audit stays backed and its weight follows.
				s.follow(&c.Audit, true, v.Settled)
				s.markDirty()
				continue
			}
			add(group{c.Target(), c.Side})
			add(group{c.Target(), v.Side})
		}
		changed := false
		for _, g := range groups {
			flips, err := s.cfg.Store.settleSide(ctx, g.target, g.side)
			if err != nil {
				return err
			}
			for _, f := range flips {
				s.follow(&f.Audit, f.Backed, f.Settled)
				changed = true
			}
		}
		if changed {
			s.markDirty()
		}
	}
	if _, err := s.RetryHeld(ctx); err != nil {
		return err
	}
	return nil
}

// touching lists the audits that count by or about dids, or of targets.
func (s *Store) touching(ctx context.Context, dids, targets []string) ([]*StoredAudit, error) {
	if len(dids) == 0 && len(targets) == 0 {
		return nil, nil
	}
	marks := func(n int) string { return strings.TrimSuffix(strings.Repeat("?,", n), ",") }
	var cond []string
	args := []any{s.chain}
	if len(dids) > 0 {
		cond = append(cond, "auditor IN ("+marks(len(dids))+")", "subject IN ("+marks(len(dids))+")")
		for range 2 {
			for _, d := range dids {
				args = append(args, d)
			}
		}
	}
	if len(targets) > 0 {
		cond = append(cond, "target IN ("+marks(len(targets))+")")
		for _, t := range targets {
			args = append(args, t)
		}
	}
	rows, err := s.db.QueryContext(ctx, `SELECT leaf, auditor, subject, target, score, time, backed, side, settled, refused FROM reputation_audits
		WHERE chain = ? AND superseded_by IS NULL AND (`+strings.Join(cond, " OR ")+`) ORDER BY leaf`, args...)
	if err != nil {
		return nil, fmt.Errorf("reputation: audits to recheck: %w", err)
	}
	defer rows.Close()
	var out []*StoredAudit
	for rows.Next() {
		var a StoredAudit
		var leaf, target, side string
		if err := rows.Scan(&leaf, &a.Auditor, &a.Subject, &target, &a.Score, &a.Time, &a.Backed, &side, &a.Settled, &a.Refused); err != nil {
			return nil, err
		}
		if err := setTarget(&a.Audit, target); err != nil {
			return nil, err
		}
		if a.Leaf, err = parseHash(leaf); err != nil {
			return nil, err
		}
		a.Side = Side(side)
		out = append(out, &a)
	}
	return out, rows.Err()
}

// sideMigration records which side of a settlement each audit speaks for (version 5 of the
// reputation tables): backing goes to one audit per bounty and side.
var sideMigration = sqlite.Migration{Version: 5, SQL: `
ALTER TABLE reputation_audits ADD COLUMN side TEXT NOT NULL DEFAULT '';
UPDATE reputation_audits SET side = 'poster' WHERE backed = 1;
CREATE INDEX reputation_audits_side ON reputation_audits (chain, target, side) WHERE superseded_by IS NULL AND side != '';
`}

// settledMigration records what each audit's bounty settled (version 6 of the reputation
// tables): a backed audit's weight scales with it. Audits that already had a side keep full
// backing (1 ETH, the default FullBacking) until a recheck reads their bounty again.
var settledMigration = sqlite.Migration{Version: 6, SQL: `
ALTER TABLE reputation_audits ADD COLUMN settled REAL NOT NULL DEFAULT 0;
UPDATE reputation_audits SET settled = 1 WHERE side != '';
`}

// setVerdict records an audit's side, settled value and refusal as evaluated again.
func (s *Store) setVerdict(ctx context.Context, leaf merkle.Hash, v Verdict) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE reputation_audits SET side = ?, settled = ?, refused = ? WHERE chain = ? AND leaf = ?`,
		string(v.Side), v.Settled, v.Refused, s.chain, hexHash(leaf)); err != nil {
		return fmt.Errorf("reputation: update side: %w", err)
	}
	return nil
}

// settleSide makes one audit of target's side backed, however many of its side's wallet's
// DIDs filed one: the latest (by time, then leaf hash, so every node picks the same, as for
// one DID's audits of a target) among those that count. It returns the audits whose backing
// changed, with the new one.
func (s *Store) settleSide(ctx context.Context, target string, side Side) ([]*StoredAudit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	// The audits of the target that count: those of this side compete; one of no side that
	// is still marked backed (it lost its side) is unbacked. The other side is settled apart.
	rows, err := tx.QueryContext(ctx, `SELECT leaf, auditor, subject, target, score, time, backed, side, settled FROM reputation_audits
		WHERE chain = ? AND target = ? AND superseded_by IS NULL AND (side = ? OR (side = '' AND backed = 1)) ORDER BY side = ? DESC, time DESC, leaf DESC`,
		s.chain, target, string(side), string(side))
	if err != nil {
		return nil, fmt.Errorf("reputation: settle side: %w", err)
	}
	var changed []*StoredAudit
	first := side != SideNone
	for rows.Next() {
		var a StoredAudit
		var leaf, tgt, sd string
		if err := rows.Scan(&leaf, &a.Auditor, &a.Subject, &tgt, &a.Score, &a.Time, &a.Backed, &sd, &a.Settled); err != nil {
			rows.Close()
			return nil, err
		}
		want := first && Side(sd) == side
		first = first && !want
		if want == a.Backed {
			continue
		}
		if err := setTarget(&a.Audit, tgt); err != nil {
			rows.Close()
			return nil, err
		}
		if a.Leaf, err = parseHash(leaf); err != nil {
			rows.Close()
			return nil, err
		}
		a.Backed, a.Side = want, Side(sd)
		changed = append(changed, &a)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, a := range changed {
		if _, err := tx.ExecContext(ctx, `UPDATE reputation_audits SET backed = ? WHERE chain = ? AND leaf = ?`, a.Backed, s.chain, hexHash(a.Leaf)); err != nil {
			return nil, fmt.Errorf("reputation: update backing: %w", err)
		}
	}
	return changed, tx.Commit()
}
