package groups_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/surety-ioa/surety/groups"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/p2p"
	"github.com/surety-ioa/surety/internal/testutil"
)

// bindings plays the chain's stake index: the DIDs a wallet binds.
type bindings struct {
	mu   sync.Mutex
	dids map[string]bool
}

func bound(keys ...*identity.Key) *bindings {
	b := &bindings{dids: map[string]bool{}}
	b.bind(keys...)
	return b
}

func (b *bindings) bind(keys ...*identity.Key) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, k := range keys {
		b.dids[k.DID.String()] = true
	}
}

func (b *bindings) unbind(k *identity.Key) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.dids, k.DID.String())
}

func (b *bindings) Bound(_ context.Context, did string) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dids[did], nil
}

func dbSize(t *testing.T, db *sql.DB) int64 {
	t.Helper()
	var pages, size int64
	if err := db.QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`PRAGMA page_size`).Scan(&size); err != nil {
		t.Fatal(err)
	}
	return pages * size
}

// TestJunkGroupsDoNotGrowTheStore is the finding of issue 25 as a test: 200 membership
// envelopes of ~240 KiB from fresh keys grew a node's database from 0.9 MB to 50 MB. Fresh
// keys create nothing now, and a bound DID's oversized envelopes are refused.
func TestJunkGroupsDoNotGrowTheStore(t *testing.T) {
	ctx := context.Background()
	db := testutil.DB(t)
	k := newKeys(t, 1)
	chain := bound(k[0])
	g, err := groups.New(ctx, db, groups.Config{Bound: chain.Bound})
	if err != nil {
		t.Fatal(err)
	}
	v := identity.NewVerifier(identity.VerifierConfig{Started: time.Now().Add(-time.Minute)})
	before := dbSize(t, db)
	pad := strings.Repeat("x", 180<<10) // ~240 KiB signed, under the envelope limit
	junk := func(by *identity.Key, i int) error {
		fields := membersOf()
		fields["body"].(map[string]any)["pad"] = pad
		_, err := setAs(t, g, v, by, fmt.Sprintf("junk-%d", i), fmt.Sprintf("junk-%d", i), fields)
		return err
	}
	stored := 0
	for i := range 200 {
		fresh := newKeys(t, 1)[0]
		if err := junk(fresh, i); err == nil {
			stored++
		} else if !errors.Is(err, groups.ErrUnbound) && !errors.Is(err, groups.ErrTooLarge) {
			t.Fatalf("junk group %d from a fresh key: %v, want ErrUnbound", i, err)
		}
	}
	if stored > 0 {
		t.Errorf("%d of 200 groups from fresh keys stored", stored)
	}
	stored = 0
	for i := range 20 {
		if err := junk(k[0], 1000+i); err == nil {
			stored++
		} else if !errors.Is(err, groups.ErrTooLarge) {
			t.Fatalf("a bound DID's 240 KiB membership %d: %v, want ErrTooLarge", i, err)
		}
	}
	if stored > 0 {
		t.Errorf("%d of a bound DID's 20 memberships of 240 KiB stored", stored)
	}
	if grew := dbSize(t, db) - before; grew > 256<<10 {
		t.Errorf("the database grew by %d bytes from refused envelopes", grew)
	}
}

// TestGroupWritesNeedABoundDID: only a DID bound on chain creates a group or sets its
// members; the unbound DIDs a bound creator names may post; once the creator is no longer
// bound, only bound members post.
func TestGroupWritesNeedABoundDID(t *testing.T) {
	k := newKeys(t, 5)
	creator, admitted, boundMember, stranger, boundStranger := k[0], k[1], k[2], k[3], k[4]
	chain := bound(creator, boundMember, boundStranger)
	g := newGroups(t, groups.Config{Bound: chain.Bound})
	v := identity.NewVerifier(identity.VerifierConfig{Started: time.Now().Add(-time.Minute)})
	if _, err := setAs(t, g, v, creator, "g", "g", membersOf(admitted, boundMember)); err != nil {
		t.Fatalf("a bound creator: %v", err)
	}
	post := func(by *identity.Key) func() error {
		return func() error { _, err := postAs(t, g, v, by, "g", "g", said("discussion", "hi")); return err }
	}
	tests := []struct {
		name string
		do   func() error
		want error
	}{
		{"an unbound DID creates a group", func() error { _, err := setAs(t, g, v, stranger, "h", "h", membersOf()); return err }, groups.ErrUnbound},
		{"an unbound member the creator admitted posts", post(admitted), nil},
		{"a bound member posts", post(boundMember), nil},
		{"an unbound stranger posts", post(stranger), groups.ErrNotMember},
		{"a bound stranger posts", post(boundStranger), groups.ErrNotMember},
		{"the creator's binding goes", func() error { chain.unbind(creator); return nil }, nil},
		{"then the unbound member posts", post(admitted), groups.ErrUnbound},
		{"then the bound member posts", post(boundMember), nil},
		{"then the creator sets members", func() error {
			fields := membersOf(admitted)
			fields["iat"], fields["exp"] = time.Now().Unix()+1, time.Now().Unix()+60
			_, err := setAs(t, g, v, creator, "g", "g", fields)
			return err
		}, groups.ErrUnbound},
	}
	for _, tt := range tests {
		err := tt.do()
		if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
}

// TestGroupEnvelopesAreSmall: a post is text and a few links (MaxPostSize), a membership a
// list of DIDs (MaxMembersSize, which MaxMembers of them fit); larger ones are refused from a
// client, and from a peer as bad items.
func TestGroupEnvelopesAreSmall(t *testing.T) {
	ctx := context.Background()
	k := newKeys(t, MaxMembersForTest)
	creator := k[0]
	g := newGroups(t, groups.Config{Bound: bound(creator).Bound})
	v := identity.NewVerifier(identity.VerifierConfig{Started: time.Now().Add(-time.Minute)})
	if _, err := setAs(t, g, v, creator, "g", "g", membersOf(k[1:]...)); err != nil {
		t.Fatalf("a membership of %d members: %v", len(k), err)
	}
	if _, err := postAs(t, g, v, k[1], "g", "g", said("discussion", strings.Repeat("a", 5000))); err != nil {
		t.Errorf("a post of 5,000 characters: %v", err)
	}
	if _, err := postAs(t, g, v, k[1], "g", "g", said("discussion", strings.Repeat("a", 7000))); !errors.Is(err, groups.ErrTooLarge) {
		t.Errorf("a post of 7,000 characters: %v, want ErrTooLarge", err)
	}
	fields := membersOf(k[1:]...)
	fields["body"].(map[string]any)["pad"] = strings.Repeat("x", groups.MaxMembersSize)
	fields["iat"], fields["exp"] = time.Now().Unix()+1, time.Now().Unix()+60
	if _, err := setAs(t, g, v, creator, "g", "g", fields); !errors.Is(err, groups.ErrTooLarge) {
		t.Errorf("a padded membership: %v, want ErrTooLarge", err)
	}
	// From a peer, by anti-entropy: a bad item, which costs the peer.
	_, posts := g.SyncSets(identity.NewVerifier(identity.VerifierConfig{}).CheckArchived)
	_, raw := groupEnvelope(t, v, k[2], "g", said("discussion", strings.Repeat("b", 7000)))
	if err := posts.Put(ctx, "", raw); !errors.Is(err, p2p.ErrBadItem) {
		t.Errorf("an oversized post from a peer: %v, want a bad item", err)
	}
}

// MaxMembersForTest is a full group: the creator and MaxMembers-1 others.
const MaxMembersForTest = groups.MaxMembers

// TestGroupQuotas: what one identity stores is bounded: the groups a DID creates, the posts
// a DID makes in one group, and the posts of all the groups a DID created. A peer that sends
// what is over a quota is not penalized: another node may hold it in its own quota.
func TestGroupQuotas(t *testing.T) {
	ctx := context.Background()
	k := newKeys(t, 3)
	creator, member, other := k[0], k[1], k[2]
	g := newGroups(t, groups.Config{Bound: bound(creator).Bound, Quotas: groups.Quotas{GroupsPerCreator: 3, PostsPerSender: 4, PostsPerCreator: 7}})
	v := identity.NewVerifier(identity.VerifierConfig{Started: time.Now().Add(-time.Minute)})
	create := func(id string) func() error {
		return func() error { _, err := setAs(t, g, v, creator, id, id, membersOf(member, other)); return err }
	}
	post := func(by *identity.Key, id string) func() error {
		return func() error { _, err := postAs(t, g, v, by, id, id, said("discussion", "hi")); return err }
	}
	tests := []struct {
		name string
		do   func() error
		want error
	}{
		{"group 1", create("g1"), nil},
		{"group 2", create("g2"), nil},
		{"group 3", create("g3"), nil},
		{"group 4: over GroupsPerCreator", create("g4"), groups.ErrQuota},
		{"post 1 of the member in g1", post(member, "g1"), nil},
		{"post 2", post(member, "g1"), nil},
		{"post 3", post(member, "g1"), nil},
		{"post 4", post(member, "g1"), nil},
		{"post 5: over PostsPerSender", post(member, "g1"), groups.ErrQuota},
		{"another member still posts in g1", post(other, "g1"), nil},
		{"the member posts in g2", post(member, "g2"), nil},
		{"and in g3", post(member, "g3"), nil},
		{"post 8 in the creator's groups: over PostsPerCreator", post(other, "g2"), groups.ErrQuota},
		{"a membership of MaxMembers+1", func() error {
			more := newKeys(t, groups.MaxMembers)
			fields := membersOf(more...)
			fields["iat"], fields["exp"] = time.Now().Unix()+1, time.Now().Unix()+60
			_, err := setAs(t, g, v, creator, "g1", "g1", fields)
			return err
		}, groups.ErrBadGroup},
	}
	for _, tt := range tests {
		err := tt.do()
		if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	// Over a quota by anti-entropy: refused, not a bad item.
	_, posts := g.SyncSets(identity.NewVerifier(identity.VerifierConfig{}).CheckArchived)
	_, raw := groupEnvelope(t, v, other, "g3", said("discussion", "late"))
	if err := posts.Put(ctx, "", raw); !errors.Is(err, groups.ErrQuota) || errors.Is(err, p2p.ErrBadItem) {
		t.Errorf("a post over quota from a peer: %v, want ErrQuota and no penalty", err)
	}
}

// claim is a membership envelope that creates group "name", issued at iat.
func claim(t *testing.T, v *identity.Verifier, by *identity.Key, iat int64, members ...*identity.Key) (*identity.Verified, []byte) {
	t.Helper()
	fields := membersOf(members...)
	fields["iat"], fields["exp"] = iat, iat+300
	return groupEnvelope(t, v, by, "name", fields)
}

type signed struct {
	v   *identity.Verified
	raw []byte
}

func lowerHash(a, b []byte) bool {
	ha, hb := sha256.Sum256(a), sha256.Sum256(b)
	return bytes.Compare(ha[:], hb[:]) < 0
}

// TestTheEarliestClaimCreatesTheGroup: two creators claimed one group name, each first at
// one node. Every node takes the claim issued earliest (then the one whose envelope hashes
// lower) as the group's creation, whichever it saw first: the later-arriving claim takes a
// group over when it is the earlier one, and the posts of members only the loser named go.
func TestTheEarliestClaimCreatesTheGroup(t *testing.T) {
	ctx := context.Background()
	k := newKeys(t, 5)
	alice, bob, common, alicesOwn, bobsOwn := k[0], k[1], k[2], k[3], k[4]
	chain := bound(alice, bob)
	v := identity.NewVerifier(identity.VerifierConfig{Started: time.Now().Add(-time.Hour)})
	now := time.Now().Unix()
	earlyA, earlyRawA := claim(t, v, alice, now-5, common, alicesOwn)
	lateB, lateRawB := claim(t, v, bob, now-3, common, bobsOwn)
	// Two claims of one second: the lower hash wins.
	tieA, tieRawA := claim(t, v, alice, now-2, common, alicesOwn)
	tieB, tieRawB := claim(t, v, bob, now-2, common, bobsOwn)
	tieWinner, tieLoser := signed{tieA, tieRawA}, signed{tieB, tieRawB}
	tieWinnerKey := alice
	if lowerHash(tieRawB, tieRawA) {
		tieWinner, tieLoser, tieWinnerKey = tieLoser, tieWinner, bob
	}
	tests := []struct {
		name          string
		winner, loser signed
		creator       *identity.Key
	}{
		{"earliest iat", signed{earlyA, earlyRawA}, signed{lateB, lateRawB}, alice},
		{"same iat, lowest hash", tieWinner, tieLoser, tieWinnerKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			type thread struct {
				creator string
				members []string
				posts   []string
			}
			var seen []thread
			for _, order := range [][]signed{{tt.winner, tt.loser}, {tt.loser, tt.winner}} {
				g := newGroups(t, groups.Config{Bound: chain.Bound})
				for i, c := range order {
					_, err := g.SetMembers(ctx, "name", c.v, c.raw)
					if i == 1 && bytes.Equal(c.raw, tt.loser.raw) && !errors.Is(err, groups.ErrNotCreator) {
						t.Errorf("the losing claim after the winning one: %v, want ErrNotCreator", err)
					}
					// Posts after each claim: a common member's, and those of the members
					// only one claim names (the other's are refused).
					for _, by := range []*identity.Key{common, alicesOwn, bobsOwn} {
						pv, praw := groupEnvelope(t, v, by, "name", said("discussion", fmt.Sprintf("%s after %d", by.DID, i)))
						g.Post(ctx, "name", pv, praw) //nolint:errcheck // some are refused: members differ
					}
				}
				grp, err := g.Group(ctx, "name")
				if err != nil {
					t.Fatal(err)
				}
				page, err := g.Envelopes(ctx, "name", 0, 0)
				if err != nil {
					t.Fatal(err)
				}
				var posters []string
				for _, e := range page {
					posters = append(posters, e.Sender)
				}
				slices.Sort(posters)
				posters = slices.Compact(posters)
				seen = append(seen, thread{grp.Creator, grp.Members, posters})
				if grp.Creator != tt.creator.DID.String() {
					t.Errorf("order %d: creator %s, want %s", len(seen), grp.Creator, tt.creator.DID)
				}
				var loserOwn *identity.Key = bobsOwn
				if tt.creator == bob {
					loserOwn = alicesOwn
				}
				if slices.Contains(posters, loserOwn.DID.String()) {
					t.Errorf("order %d: the thread holds a post of a member only the losing claim named", len(seen))
				}
			}
			if fmt.Sprint(seen[0].creator, seen[0].members) != fmt.Sprint(seen[1].creator, seen[1].members) {
				t.Errorf("the two orders disagree: %+v and %+v", seen[0], seen[1])
			}
		})
	}
}

// TestClaimsConvergeBySync: two nodes each created "name" for another creator, with posts;
// after anti-entropy both hold the earlier claim's group, the same members and the same
// thread, and neither node was penalized.
func TestClaimsConvergeBySync(t *testing.T) {
	ctx := context.Background()
	k := newKeys(t, 4)
	alice, bob, common, bobsOwn := k[0], k[1], k[2], k[3]
	chain := bound(alice, bob)
	v := identity.NewVerifier(identity.VerifierConfig{Started: time.Now().Add(-time.Hour)})
	now := time.Now().Unix()
	x, nx, sx := syncGroupsBound(t, chain)
	y, ny, sy := syncGroupsBound(t, chain, nx.Info())
	va, ra := claim(t, v, alice, now-5, common)
	vb, rb := claim(t, v, bob, now-3, common, bobsOwn)
	if _, err := x.SetMembers(ctx, "name", va, ra); err != nil {
		t.Fatal(err)
	}
	if _, err := y.SetMembers(ctx, "name", vb, rb); err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		g  *groups.Service
		by *identity.Key
	}{{x, common}, {y, common}, {y, bobsOwn}, {x, alice}} {
		pv, praw := groupEnvelope(t, v, p.by, "name", said("discussion", "from "+p.by.DID.String()))
		if _, err := p.g.Post(ctx, "name", pv, praw); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		for _, s := range []*p2p.Syncer{sx, sy} {
			if st := s.Round(ctx); st.Bad != 0 {
				t.Errorf("a round counted %d bad items", st.Bad)
			}
		}
	}
	state := func(g *groups.Service) string {
		grp, err := g.Group(ctx, "name")
		if err != nil {
			t.Fatal(err)
		}
		page, _ := g.Envelopes(ctx, "name", 0, 0)
		var ids []string
		for _, e := range page {
			ids = append(ids, e.ID)
		}
		slices.Sort(ids)
		return fmt.Sprint(grp.Creator, grp.Members, grp.Updated, ids)
	}
	if sX, sY := state(x), state(y); sX != sY {
		t.Errorf("the nodes disagree after syncing:\nX %s\nY %s", sX, sY)
	}
	if grp, _ := y.Group(ctx, "name"); grp.Creator != alice.DID.String() || grp.Envelopes != 3 {
		t.Errorf("Y's group: %+v, want alice's with 3 posts", grp)
	}
	for _, n := range []*p2p.Node{nx, ny} {
		for _, p := range n.Host.Network().Peers() {
			if pen := n.Penalty(p); pen != 0 {
				t.Errorf("a peer was penalized %v", pen)
			}
		}
	}
}

// syncGroupsBound is syncGroups with the chain's bindings.
func syncGroupsBound(t *testing.T, chain *bindings, boot ...peer.AddrInfo) (*groups.Service, *p2p.Node, *p2p.Syncer) {
	t.Helper()
	return syncGroupsWith(t, groups.Config{Bound: chain.Bound}, boot...)
}

// TestGossipStoresOnlyWhatAClientCould: a peer that publishes a group from an unbound key,
// or an oversized post, gets neither stored on the nodes it reaches.
func TestGossipStoresOnlyWhatAClientCould(t *testing.T) {
	if testing.Short() {
		t.Skip("starts libp2p hosts")
	}
	ctx := context.Background()
	k := newKeys(t, 3)
	creator, member, fresh := k[0], k[1], k[2]
	chain := bound(creator)
	a := startGroupNodeWith(t, chain, nil)
	b := startGroupNodeWith(t, chain, []peer.AddrInfo{a.node.Info()})
	for _, n := range []*p2p.Node{a.node, b.node} {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := n.WaitMesh(wctx, groups.Topic)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	signer := identity.NewVerifier(identity.VerifierConfig{Started: time.Now().Add(-time.Minute)})
	_, junk := groupEnvelope(t, signer, fresh, "junk", membersOf())
	if err := groups.PublishRaw(ctx, a.groups, junk); err != nil {
		t.Fatal(err)
	}
	if _, err := setAs(t, a.groups, a.v, creator, "team", "team", membersOf(member)); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "B learns the bound creator's group", 10*time.Second, func() bool { _, err := b.groups.Group(ctx, "team"); return err == nil })
	_, big := groupEnvelope(t, signer, member, "team", said("discussion", strings.Repeat("z", 7000)))
	if err := groups.PublishRaw(ctx, a.groups, big); err != nil {
		t.Fatal(err)
	}
	if _, err := postAs(t, a.groups, a.v, member, "team", "team", said("discussion", "small")); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "B takes the small post", 10*time.Second, func() bool { g, err := b.groups.Group(ctx, "team"); return err == nil && g.Envelopes >= 1 })
	if _, err := b.groups.Group(ctx, "junk"); !errors.Is(err, groups.ErrUnknownGroup) {
		t.Errorf("B stored the group of an unbound key: %v", err)
	}
	if g, _ := b.groups.Group(ctx, "team"); g.Envelopes != 1 {
		t.Errorf("B's thread holds %d envelopes, want only the small post", g.Envelopes)
	}
}

// TestOneCreatorCannotFillTheSyncWindows: what a node offers anti-entropy is bounded
// (maxSyncGroups, maxSyncPosts), and one creator's newer groups and posts do not push
// another's out: the windows take each creator's newest in turn (at 409c49a they took the
// newest of all, so a flood of new groups or posts left older ones unoffered).
func TestOneCreatorCannotFillTheSyncWindows(t *testing.T) {
	ctx := context.Background()
	k := newKeys(t, 2)
	honest, flooder := k[0], k[1]
	g := newGroups(t, groups.Config{Bound: bound(honest, flooder).Bound})
	v := identity.NewVerifier(identity.VerifierConfig{Started: time.Now().Add(-time.Hour)})
	now := time.Now().Unix()
	at := func(fields map[string]any, iat int64) map[string]any {
		fields["iat"], fields["exp"] = iat, iat+300
		return fields
	}
	var want []p2p.ID
	for i, id := range []string{"honest-1", "honest-2"} {
		vv, raw := groupEnvelope(t, v, honest, id, at(membersOf(), now-50+int64(i)))
		if _, err := g.SetMembers(ctx, id, vv, raw); err != nil {
			t.Fatal(err)
		}
		want = append(want, sha256.Sum256(raw))
	}
	for i := range 3 {
		vv, raw := groupEnvelope(t, v, honest, "honest-1", at(said("discussion", fmt.Sprint("honest ", i)), now-48+int64(i)))
		if _, err := g.Post(ctx, "honest-1", vv, raw); err != nil {
			t.Fatal(err)
		}
		want = append(want, sha256.Sum256(raw))
	}
	for i := range 10 {
		id := fmt.Sprint("flood-", i)
		vv, raw := groupEnvelope(t, v, flooder, id, at(membersOf(), now-40+int64(i)))
		if _, err := g.SetMembers(ctx, id, vv, raw); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 30 {
		id := fmt.Sprint("flood-", i%10)
		vv, raw := groupEnvelope(t, v, flooder, id, at(said("discussion", fmt.Sprint("flood ", i)), now-30+int64(i)))
		if _, err := g.Post(ctx, id, vv, raw); err != nil {
			t.Fatal(err)
		}
	}
	members, posts := groups.SyncSetsWindow(g, identity.NewVerifier(identity.VerifierConfig{}).CheckArchived, 5, 10)
	var offered []p2p.ID
	for _, set := range []p2p.Set{members, posts} {
		ids, err := set.IDs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		offered = append(offered, ids...)
	}
	for i, id := range want {
		if !slices.Contains(offered, id) {
			t.Errorf("the honest creator's envelope %d is not in the windows (5 groups, 10 posts)", i)
		}
	}
}
