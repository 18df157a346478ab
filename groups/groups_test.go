package groups_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/surety-ioa/surety/groups"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/p2p"
	"github.com/surety-ioa/surety/internal/testutil"
)

// groupEnvelope signs a thread or membership envelope for group by k, with the extra payload
// fields, and verifies it as the API would.
func groupEnvelope(t *testing.T, v *identity.Verifier, k *identity.Key, group string, fields map[string]any) (*identity.Verified, []byte) {
	t.Helper()
	m := map[string]any{"group_id": group}
	for f, x := range fields {
		m[f] = x
	}
	payload, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	filled, err := identity.FillEnvelope(payload, k, time.Now(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := k.SignCompact(filled)
	if err != nil {
		t.Fatal(err)
	}
	verified, err := v.Verify(context.Background(), []byte(jws))
	if err != nil {
		t.Fatal(err)
	}
	return verified, []byte(jws)
}

func membersOf(keys ...*identity.Key) map[string]any {
	var dids []string
	for _, k := range keys {
		dids = append(dids, k.DID.String())
	}
	return map[string]any{"body": map[string]any{"kind": groups.MembersKind, "members": dids}}
}

func said(state, text string) map[string]any {
	return map[string]any{"state": state, "body": map[string]any{"text": text}}
}

func newKeys(t *testing.T, n int) []*identity.Key {
	t.Helper()
	keys := make([]*identity.Key, n)
	for i := range keys {
		k, err := identity.GenerateKey(identity.Ed25519)
		if err != nil {
			t.Fatal(err)
		}
		keys[i] = k
	}
	return keys
}

// TestGroupThread: the creator sets the members; members post in order; everything else is
// refused with its reason, and nothing refused reaches the thread.
func TestGroupThread(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	v := identity.NewVerifier(identity.VerifierConfig{Started: now.Add(-time.Minute)})
	k := newKeys(t, 4)
	creator, member, later, outsider := k[0], k[1], k[2], k[3]
	threads := newGroups(t, groups.Config{Bound: bound(creator).Bound})

	if _, err := postAs(t, threads, v, member, "g1", "g1", said("discussion", "hello?")); !errors.Is(err, groups.ErrUnknownGroup) {
		t.Fatalf("post before the group exists: %v", err)
	}
	grp, err := setAs(t, threads, v, creator, "g1", "g1", membersOf(member))
	if err != nil {
		t.Fatal(err)
	}
	if grp.Creator != creator.DID.String() || len(grp.Members) != 2 {
		t.Fatalf("group = %+v", grp)
	}
	watch, stop := threads.Watch("g1")
	defer stop()

	states := []string{"discussion", "task_assignment", "execution", "conclusion"}
	for i, st := range states {
		by := creator
		if i%2 == 1 {
			by = member
		}
		p, err := postAs(t, threads, v, by, "g1", "g1", said(st, "step "+st))
		if err != nil {
			t.Fatalf("%s: %v", st, err)
		}
		if p.Envelope == nil || p.Envelope.Seq != int64(i+1) || p.Envelope.State != st || p.Forwarded {
			t.Fatalf("%s: posted %+v", st, p)
		}
	}
	select {
	case <-watch:
	case <-time.After(time.Second):
		t.Error("the watcher was not told the thread grew")
	}

	dup, dupRaw := groupEnvelope(t, v, member, "g1", said("discussion", "once"))
	if _, err := threads.Post(ctx, "g1", dup, dupRaw); err != nil {
		t.Fatal(err)
	}
	olderMembers, olderRaw := groupEnvelope(t, v, creator, "g1", membersOf(member, later))
	olderMembers.Envelope.IssuedAt = 1 // as if issued long ago
	tests := []struct {
		name string
		post func() error
		want error
	}{
		{"a non-member", func() error {
			_, err := postAs(t, threads, v, outsider, "g1", "g1", said("discussion", "let me in"))
			return err
		}, groups.ErrNotMember},
		{"another group's envelope", func() error { _, err := postAs(t, threads, v, member, "g1", "g2", said("discussion", "x")); return err }, groups.ErrBadGroup},
		{"an unknown state", func() error { _, err := postAs(t, threads, v, member, "g1", "g1", said("done", "x")); return err }, groups.ErrBadGroup},
		{"a bad group id", func() error {
			_, err := postAs(t, threads, v, member, "g 1", "g 1", said("discussion", "x"))
			return err
		}, groups.ErrBadGroup},
		{"a membership envelope as a post", func() error { _, err := postAs(t, threads, v, creator, "g1", "g1", membersOf(member)); return err }, groups.ErrBadGroup},
		{"the same envelope twice", func() error { _, err := threads.Post(ctx, "g1", dup, dupRaw); return err }, groups.ErrDuplicateEnvelope},
		{"members set by a member", func() error {
			later := membersOf(outsider)
			// A second later than the creator's: the same second could be an earlier claim.
			later["iat"], later["exp"] = time.Now().Unix()+1, time.Now().Unix()+60
			_, err := setAs(t, threads, v, member, "g1", "g1", later)
			return err
		}, groups.ErrNotCreator},
		{"an older membership", func() error { _, err := threads.SetMembers(ctx, "g1", olderMembers, olderRaw); return err }, groups.ErrStaleMembers},
		{"a member that is not a DID", func() error {
			_, err := setAs(t, threads, v, creator, "g1", "g1", map[string]any{"body": map[string]any{"kind": groups.MembersKind, "members": []string{"bob"}}})
			return err
		}, groups.ErrBadGroup},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.post()
			var ge *groups.Error
			if !errors.Is(err, tt.want) || !errors.As(err, &ge) || ge.Detail == "" {
				t.Errorf("got %v, want %v with a detail", err, tt.want)
			}
		})
	}

	// The creator lets a new member in and the outsider posts in vain; the thread holds the
	// five accepted envelopes in order, page by page.
	newer := membersOf(member, later)
	newer["iat"], newer["exp"] = time.Now().Unix()+1, time.Now().Unix()+60 // a second later: newer for sure
	if _, err := setAs(t, threads, v, creator, "g1", "g1", newer); err != nil {
		t.Fatal(err)
	}
	if _, err := postAs(t, threads, v, later, "g1", "g1", said("conclusion", "joined")); err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	for after := int64(0); ; {
		page, err := threads.Envelopes(ctx, "g1", after, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, e := range page {
			if _, err := v.Verify(ctx, []byte(e.Envelope)); err == nil || !errors.Is(err, identity.ErrReplayed) {
				t.Errorf("seq %d: the stored envelope should be the one verified (replayed now), got %v", e.Seq, err)
			}
			seqs = append(seqs, e.Seq)
			after = e.Seq
		}
	}
	if fmt.Sprint(seqs) != "[1 2 3 4 5 6]" {
		t.Errorf("thread seqs %v", seqs)
	}
	if grp, _ := threads.Group(ctx, "g1"); grp.Envelopes != 6 || len(grp.Members) != 3 {
		t.Errorf("group now %+v", grp)
	}
}

// postAs posts, into group on g, an envelope k signed for group named (fields added).
// newGroups keeps groups in a fresh SQLite file.
func newGroups(t *testing.T, cfg groups.Config) *groups.Service {
	t.Helper()
	g, err := groups.New(context.Background(), testutil.DB(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func postAs(t *testing.T, g *groups.Service, v *identity.Verifier, k *identity.Key, group, named string, fields map[string]any) (*groups.Posted, error) {
	t.Helper()
	verified, raw := groupEnvelope(t, v, k, named, fields)
	return g.Post(context.Background(), group, verified, raw)
}

// setAs sets group's members on g with an envelope k signed for group named.
func setAs(t *testing.T, g *groups.Service, v *identity.Verifier, k *identity.Key, group, named string, fields map[string]any) (*groups.Group, error) {
	t.Helper()
	verified, raw := groupEnvelope(t, v, k, named, fields)
	return g.SetMembers(context.Background(), group, verified, raw)
}

type groupNode struct {
	groups *groups.Service // the node's
	v      *identity.Verifier
	node   *p2p.Node
}

func startGroupNode(t *testing.T, chain *bindings, bootstrap []peer.AddrInfo) *groupNode {
	t.Helper()
	return startGroupNodeWith(t, chain, bootstrap)
}

func startGroupNodeWith(t *testing.T, chain *bindings, bootstrap []peer.AddrInfo) *groupNode {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	now := time.Now()
	v := identity.NewVerifier(identity.VerifierConfig{Started: now.Add(-time.Minute)})
	g := newGroups(t, groups.Config{Verify: v.Verify, Bound: chain.Bound})
	node, err := p2p.Start(ctx, p2p.Config{Bootstrap: bootstrap, Topics: []string{groups.Topic}, InspectPeriod: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close() })
	if err := g.Attach(node); err != nil {
		t.Fatal(err)
	}
	return &groupNode{groups: g, v: v, node: node}
}

// TestGroupThreadsAcrossNodes: node A's group is learned by B over gossip; envelopes posted
// on either reach both threads, verified again on arrival. Node C joined after the group
// was made, so it does not know it: what its members post there is forwarded to A and B. A
// forged envelope is dropped and costs its sender score.
func TestGroupThreadsAcrossNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts libp2p hosts")
	}
	ctx := context.Background()
	k := newKeys(t, 2)
	creator, member := k[0], k[1]
	chain := bound(creator)
	a := startGroupNode(t, chain, nil)
	b := startGroupNode(t, chain, []peer.AddrInfo{a.node.Info()})
	for _, n := range []*p2p.Node{a.node, b.node} { // let the mesh form
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := n.WaitMesh(wctx, groups.Topic)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := setAs(t, a.groups, a.v, creator, "team", "team", membersOf(member)); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "B learns the group", 10*time.Second, func() bool { g, err := b.groups.Group(ctx, "team"); return err == nil && len(g.Members) == 2 })

	c := startGroupNode(t, chain, []peer.AddrInfo{a.node.Info(), b.node.Info()})
	for _, n := range []*p2p.Node{c.node} { // let the mesh form
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := n.WaitMesh(wctx, groups.Topic)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.groups.Group(ctx, "team"); !errors.Is(err, groups.ErrUnknownGroup) {
		t.Fatalf("C should not know the group: %v", err)
	}

	if p, err := postAs(t, a.groups, a.v, creator, "team", "team", said("discussion", "who takes it?")); err != nil || !p.Forwarded {
		t.Fatalf("post on A: %+v %v", p, err)
	}
	if p, err := postAs(t, b.groups, b.v, member, "team", "team", said("task_assignment", "I do")); err != nil || p.Envelope == nil {
		t.Fatalf("post on B: %+v %v", p, err)
	}
	p, err := postAs(t, c.groups, c.v, member, "team", "team", said("execution", "done, from C"))
	if err != nil || p.Envelope != nil || !p.Forwarded {
		t.Fatalf("post on C, which does not know the group: %+v %v", p, err)
	}
	thread := func(n *groupNode) []string {
		page, err := n.groups.Envelopes(ctx, "team", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var states []string
		for _, e := range page {
			states = append(states, e.State)
		}
		return states
	}
	testutil.Eventually(t, "both threads hold the three envelopes", 10*time.Second, func() bool { return len(thread(a)) == 3 && len(thread(b)) == 3 })
	// Each node keeps its own arrival order; the envelopes are the same.
	ta, tb := thread(a), thread(b)
	slices.Sort(ta)
	slices.Sort(tb)
	if fmt.Sprint(ta) != "[discussion execution task_assignment]" || fmt.Sprint(tb) != fmt.Sprint(ta) {
		t.Errorf("threads: A %v, B %v", thread(a), thread(b))
	}

	// A forged envelope: one of the member's, one byte of its signature changed.
	_, raw := groupEnvelope(t, identity.NewVerifier(identity.VerifierConfig{Started: time.Now().Add(-time.Minute)}), member, "team", said("conclusion", "forged"))
	raw[len(raw)-3] ^= 1
	if err := groups.PublishRaw(ctx, b.groups, raw); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "A scores B down", 10*time.Second, func() bool { s, ok := a.node.Score(b.node.Host.ID()); return ok && s < 0 })
	if n := len(thread(a)); n != 3 {
		t.Errorf("A's thread has %d envelopes after the forgery, want 3", n)
	}
}

// TestDatabasesFromBeforeTheSplitKeepTheirGroups: identity's migration 3 created the group
// tables before groups had a package; New takes such a database as it is, threads included.
func TestDatabasesFromBeforeTheSplitKeepTheirGroups(t *testing.T) {
	ctx := context.Background()
	db := testutil.DB(t)
	old := strings.ReplaceAll(groups.Schema, "IF NOT EXISTS ", "")
	if _, err := db.ExecContext(ctx, old); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO identity_groups (id, creator, members, members_iat, members_id, members_env, created)
		VALUES ('team', 'did:key:zA', '["did:key:zA"]', 1, 'm1', x'00', 1)`); err != nil {
		t.Fatal(err)
	}
	g, err := groups.New(ctx, db, groups.Config{})
	if err != nil {
		t.Fatalf("New on a database from before the split: %v", err)
	}
	grp, err := g.Group(ctx, "team")
	if err != nil || grp.Creator != "did:key:zA" {
		t.Fatalf("the group made before the split: %+v, %v", grp, err)
	}
}
