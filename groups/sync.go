package groups

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/p2p"
)

// Names of the groups' sets in anti-entropy: memberships first, so a thread's envelopes find
// their group.
const (
	MembersSet = "group-members"
	PostsSet   = "group-posts"
)

// SyncSets are the groups' part in anti-entropy (p2p.Syncer): the membership envelopes in
// force and the creators' claims, and the thread envelopes of the last SyncPostsWindow, each
// identified by the SHA-256 of its bytes (stored with it). check verifies what a peer sends (Verifier.CheckArchived: an envelope gossip
// carried hours ago has expired since, and is still the one its sender signed); it is then
// applied as gossip would apply it. A forged or malformed envelope costs the peer; one that
// no longer applies (its sender left the group since, a newer membership is in force) does
// not.
func (g *Service) SyncSets(check func(ctx context.Context, raw []byte) (*identity.Verified, error)) (members, posts p2p.Set) {
	return g.syncSets(check, maxSyncGroups, maxSyncPosts)
}

func (g *Service) syncSets(check func(ctx context.Context, raw []byte) (*identity.Verified, error), groupsWindow, postsWindow int) (members, posts p2p.Set) {
	return &groupSet{g: g, check: check, members: true, window: groupsWindow}, &groupSet{g: g, check: check, window: postsWindow}
}

type groupSet struct {
	g       *Service
	check   func(ctx context.Context, raw []byte) (*identity.Verified, error)
	members bool
	window  int // the most groups, or thread envelopes, listed
}

// IDs lists the hashes stored with the envelopes, up to the window, each creator's newest in
// turn: a membership set offers each group's membership in force and its creator's claim (the earliest membership envelope the node
// knows from the creator), which settles who created a group on a node that saw another
// claim first.
func (s *groupSet) IDs(ctx context.Context) ([]p2p.ID, error) {
	// Each creator's newest in turn (the newest of every creator, then the second newest,
	// ...): one creator's flood cannot push another's groups or posts out of the window.
	q, args := `SELECT members_hash, claim_hash FROM (
			SELECT id, members_hash, claim_hash, members_iat, ROW_NUMBER() OVER (PARTITION BY creator ORDER BY members_iat DESC, id) AS turn FROM identity_groups)
		ORDER BY turn, members_iat DESC, id LIMIT ?`, []any{s.window}
	if !s.members {
		q, args = `SELECT hash, NULL FROM (
				SELECT e.hash, e.iat, ROW_NUMBER() OVER (PARTITION BY g.creator ORDER BY e.iat DESC, e.hash) AS turn
				FROM identity_group_envelopes e JOIN identity_groups g ON g.id = e.group_id WHERE e.iat >= ?)
			ORDER BY turn, iat DESC, hash LIMIT ?`,
			[]any{s.g.cfg.Now().Add(-SyncPostsWindow).Unix(), s.window}
	}
	rows, err := s.g.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("groups: list group envelopes: %w", err)
	}
	defer rows.Close()
	var ids []p2p.ID
	for rows.Next() {
		var h, claim []byte
		if err := rows.Scan(&h, &claim); err != nil {
			return nil, err
		}
		ids = append(ids, p2p.ID(h))
		if claim != nil && !bytes.Equal(claim, h) {
			ids = append(ids, p2p.ID(claim))
		}
	}
	return ids, rows.Err()
}

func (s *groupSet) Get(ctx context.Context, ids []p2p.ID) ([][]byte, error) {
	q := `SELECT envelope FROM identity_group_envelopes WHERE hash = ?1`
	if s.members {
		q = `SELECT members_env FROM identity_groups WHERE members_hash = ?1 UNION ALL SELECT claim_env FROM identity_groups WHERE claim_hash = ?1 LIMIT 1`
	}
	var out [][]byte
	for _, id := range ids {
		var raw []byte
		if err := s.g.db.QueryRowContext(ctx, q, id[:]).Scan(&raw); err != nil {
			continue // replaced since
		}
		out = append(out, raw)
	}
	return out, nil
}

func (s *groupSet) Put(ctx context.Context, _ peer.ID, item []byte) error {
	if max := map[bool]int{true: MaxMembersSize, false: MaxPostSize}[s.members]; len(item) > max {
		return fmt.Errorf("%w: a group envelope of %d bytes; at most %d", p2p.ErrBadItem, len(item), max)
	}
	v, err := s.check(ctx, item)
	if err != nil {
		if identity.Forged(err) {
			return fmt.Errorf("%w: %w", p2p.ErrBadItem, err)
		}
		return err
	}
	if IsMembership(v) != s.members {
		return fmt.Errorf("%w: a %s envelope offered as the other kind", p2p.ErrBadItem, map[bool]string{true: "membership", false: "thread"}[IsMembership(v)])
	}
	id := v.Envelope.GroupID
	if s.members {
		_, err = s.g.setMembers(ctx, id, v, item)
	} else {
		_, err = s.g.post(ctx, id, v, item)
	}
	if errors.Is(err, errClaimKept) {
		return nil
	}
	if errors.Is(err, ErrBadGroup) || errors.Is(err, ErrTooLarge) {
		return fmt.Errorf("%w: %w", p2p.ErrBadItem, err)
	}
	return err // over a quota, unbound, not a member: facts and quotas another node may see otherwise
}
