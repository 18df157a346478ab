package groups

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"

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
// force, and the thread envelopes of the last SyncPostsWindow, each identified by the SHA-256
// of its bytes. check verifies what a peer sends (Verifier.CheckArchived: an envelope gossip
// carried hours ago has expired since, and is still the one its sender signed); it is then
// applied as gossip would apply it. A forged or malformed envelope costs the peer; one that
// no longer applies (its sender left the group since, a newer membership is in force) does
// not.
func (g *Service) SyncSets(check func(ctx context.Context, raw []byte) (*identity.Verified, error)) (members, posts p2p.Set) {
	return &groupSet{g: g, check: check, members: true}, &groupSet{g: g, check: check}
}

type groupSet struct {
	g       *Service
	check   func(ctx context.Context, raw []byte) (*identity.Verified, error)
	members bool

	mu   sync.Mutex
	keys map[p2p.ID][2]string // of the last IDs call, for Get: group and envelope id
}

func (s *groupSet) IDs(ctx context.Context) ([]p2p.ID, error) {
	q, args := `SELECT id, '', members_env FROM identity_groups ORDER BY members_iat DESC LIMIT ?`, []any{maxSyncGroups}
	if !s.members {
		q, args = `SELECT group_id, sender || ' ' || id, envelope FROM identity_group_envelopes WHERE iat >= ? ORDER BY iat DESC LIMIT ?`,
			[]any{s.g.cfg.Now().Add(-SyncPostsWindow).Unix(), maxSyncPosts}
	}
	rows, err := s.g.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("groups: list group envelopes: %w", err)
	}
	defer rows.Close()
	var ids []p2p.ID
	keys := map[p2p.ID][2]string{}
	for rows.Next() {
		var group, key string
		var raw []byte
		if err := rows.Scan(&group, &key, &raw); err != nil {
			return nil, err
		}
		id := p2p.ID(sha256.Sum256(raw))
		ids = append(ids, id)
		keys[id] = [2]string{group, key}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.keys = keys
	s.mu.Unlock()
	return ids, nil
}

func (s *groupSet) Get(ctx context.Context, ids []p2p.ID) ([][]byte, error) {
	s.mu.Lock()
	keys := s.keys
	s.mu.Unlock()
	var out [][]byte
	for _, id := range ids {
		k, ok := keys[id]
		if !ok {
			continue
		}
		var raw []byte
		var err error
		if s.members {
			err = s.g.db.QueryRowContext(ctx, `SELECT members_env FROM identity_groups WHERE id = ?`, k[0]).Scan(&raw)
		} else {
			err = s.g.db.QueryRowContext(ctx, `SELECT envelope FROM identity_group_envelopes WHERE group_id = ? AND sender || ' ' || id = ?`, k[0], k[1]).Scan(&raw)
		}
		if err != nil || sha256.Sum256(raw) != id {
			continue // replaced since
		}
		out = append(out, raw)
	}
	return out, nil
}

func (s *groupSet) Put(ctx context.Context, _ peer.ID, item []byte) error {
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
	if errors.Is(err, ErrBadGroup) {
		return fmt.Errorf("%w: %w", p2p.ErrBadItem, err)
	}
	return err
}
