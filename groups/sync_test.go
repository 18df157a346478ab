package groups_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/surety-ioa/surety/groups"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/p2p"
)

// syncGroups are groups on their own host with anti-entropy and no gossip.
func syncGroups(t *testing.T, boot ...peer.AddrInfo) (*groups.Service, *p2p.Node, *p2p.Syncer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	g := newGroups(t, groups.Config{})
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
// membership first, and ends with the same members and thread.
func TestGroupsReconcile(t *testing.T) {
	ctx := context.Background()
	k := newKeys(t, 3)
	creator, member, later := k[0], k[1], k[2]
	a, na, _ := syncGroups(t)
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

	b, _, sb := syncGroups(t, na.Info())
	if _, err := b.Group(ctx, "crew"); !errors.Is(err, groups.ErrUnknownGroup) {
		t.Fatalf("B knows the group before syncing: %v", err)
	}
	st := sb.Round(ctx)
	if st.Bad != 0 || st.Fetched[groups.MembersSet] != 1 || st.Fetched[groups.PostsSet] != 2 {
		t.Fatalf("B's round: %+v", st)
	}
	ga, _ := a.Group(ctx, "crew")
	gb, err := b.Group(ctx, "crew")
	if err != nil || len(gb.Members) != 3 || gb.Updated != ga.Updated || gb.Envelopes != 2 {
		t.Fatalf("B's group %+v (%v), A's %+v", gb, err, ga)
	}
}
