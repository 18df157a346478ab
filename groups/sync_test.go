package groups_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/surety-ioa/surety/groups"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/p2p"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
)

// syncGroupsWith are groups on their own host with anti-entropy and no gossip.
func syncGroupsWith(t *testing.T, cfg groups.Config, boot ...peer.AddrInfo) (*groups.Service, *p2p.Node, *p2p.Syncer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	g := newGroups(t, cfg)
	node, err := p2p.Start(ctx, p2p.Config{Bootstrap: boot, Listen: []string{"/ip4/127.0.0.1/tcp/0"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close() })
	sy := p2p.NewSyncer(node, p2p.SyncConfig{})
	members, posts := g.SyncSets(identity.NewVerifier(identity.VerifierConfig{}).CheckArchived)
	sy.AddSet(groups.MembersSet, members)
	sy.AddSet(groups.PostsSet, posts)
	return g, node, sy
}

// TestGroupsReconcile: a node that missed a group's creation, a change of its members and
// its thread (envelopes that expired long ago) gets all of them from anti-entropy, the
// memberships first (the creator's claim and the one in force), and ends with the same
// members and thread.
func TestGroupsReconcile(t *testing.T) {
	ctx := context.Background()
	k := newKeys(t, 3)
	creator, member, later := k[0], k[1], k[2]
	chain := bound(creator)
	a, na, _ := syncGroupsBound(t, chain)
	// Signed an hour ago, valid for a minute: expired now, as after a long absence.
	then := time.Now().Add(-time.Hour)
	past := identity.NewVerifier(identity.VerifierConfig{Now: func() time.Time { return then }, Started: then.Add(-time.Minute)})
	sign := func(fields map[string]any) (*identity.Verified, []byte) {
		t.Helper()
		then = then.Add(time.Second)
		fields["group_id"] = "crew"
		payload, _ := json.Marshal(fields)
		filled, err := identity.FillEnvelope(payload, creator, then, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		jws, err := creator.SignCompact(filled)
		if err != nil {
			t.Fatal(err)
		}
		v, err := past.Verify(ctx, []byte(jws))
		if err != nil {
			t.Fatal(err)
		}
		return v, []byte(jws)
	}
	set := func(fields map[string]any) {
		t.Helper()
		v, raw := sign(fields)
		if _, err := a.SetMembers(ctx, "crew", v, raw); err != nil {
			t.Fatal(err)
		}
	}
	set(membersOf(member))
	for _, text := range []string{"one", "two"} {
		v, raw := sign(said("discussion", text))
		if _, err := a.Post(ctx, "crew", v, raw); err != nil {
			t.Fatal(err)
		}
	}
	set(membersOf(member, later))

	b, _, sb := syncGroupsBound(t, chain, na.Info())
	if _, err := b.Group(ctx, "crew"); !errors.Is(err, groups.ErrUnknownGroup) {
		t.Fatalf("B knows the group before syncing: %v", err)
	}
	st := sb.Round(ctx)
	if st.Bad != 0 || st.Fetched[groups.MembersSet] != 2 || st.Fetched[groups.PostsSet] != 2 {
		t.Fatalf("B's round: %+v", st)
	}
	ga, _ := a.Group(ctx, "crew")
	gb, err := b.Group(ctx, "crew")
	if err != nil || len(gb.Members) != 3 || gb.Updated != ga.Updated || gb.Envelopes != 2 {
		t.Fatalf("B's group %+v (%v), A's %+v", gb, err, ga)
	}
}

// TestSyncIDsAreHashedAtInsert: a set's ids are the SHA-256 of each envelope, kept when the
// envelope is stored, so listing reads no envelope; the rows of a database from before are
// hashed once, when New opens it.
func TestSyncIDsAreHashedAtInsert(t *testing.T) {
	ctx := context.Background()
	db := testutil.DB(t)
	if err := sqlite.Migrate(ctx, db, "groups", []sqlite.Migration{{Version: 1, SQL: groups.Schema}}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	if _, err := db.ExecContext(ctx, `INSERT INTO identity_groups (id, creator, members, members_iat, members_id, members_env, created)
		VALUES ('team', 'did:key:zA', '["did:key:zA"]', ?, 'm1', ?, ?)`, now, []byte("members envelope"), now); err != nil {
		t.Fatal(err)
	}
	for i, env := range []string{"post one", "post two"} {
		if _, err := db.ExecContext(ctx, `INSERT INTO identity_group_envelopes (group_id, seq, id, sender, state, iat, received, envelope)
			VALUES ('team', ?, ?, 'did:key:zA', '', ?, ?, ?)`, i+1, fmt.Sprint(i), now, now, []byte(env)); err != nil {
			t.Fatal(err)
		}
	}
	g, err := groups.New(ctx, db, groups.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var unhashed int
	if err := db.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM identity_group_envelopes WHERE hash IS NULL) + (SELECT COUNT(*) FROM identity_groups WHERE members_hash IS NULL)`).Scan(&unhashed); err != nil {
		t.Fatalf("the stored hashes: %v", err)
	}
	if unhashed != 0 {
		t.Errorf("%d rows without their hash after New", unhashed)
	}
	members, posts := g.SyncSets(identity.NewVerifier(identity.VerifierConfig{}).CheckArchived)
	for _, tt := range []struct {
		set  p2p.Set
		want []string
	}{{members, []string{"members envelope"}}, {posts, []string{"post one", "post two"}}} {
		ids, err := tt.set.IDs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var want []p2p.ID
		for _, w := range tt.want {
			want = append(want, sha256.Sum256([]byte(w)))
		}
		sortIDs := func(x []p2p.ID) { slices.SortFunc(x, func(a, b p2p.ID) int { return bytes.Compare(a[:], b[:]) }) }
		sortIDs(ids)
		sortIDs(want)
		if !slices.Equal(ids, want) {
			t.Errorf("ids %x, want the hashes of %q", ids, tt.want)
		}
		items, err := tt.set.Get(ctx, ids)
		if err != nil || len(items) != len(tt.want) {
			t.Errorf("Get of the listed ids: %d items, %v", len(items), err)
		}
	}
}
