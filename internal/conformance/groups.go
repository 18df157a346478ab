package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/surety-ioa/surety/groups"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/sqlite"
)

// Group threads: membership and post envelopes, applied by a node that took the context's
// accepted envelopes first.
func init() {
	Register(Kind{Name: "group", Generate: genGroups, Check: checkGroup})
}

// carol is an agent no wallet binds.
var carol = FixtureKey(identity.Ed25519, "carol")

// groupEnvelope is k's envelope to group id with body, its id and nonce both nonce, issued
// at Now - age.
func groupEnvelope(k *identity.Key, id, nonce string, age int64, state string, body any) string {
	b, err := json.Marshal(body)
	if err != nil {
		panic(err)
	}
	e := identity.Envelope{ID: nonce, GroupID: id, Sender: k.DID.String(), State: state, Body: b,
		IssuedAt: Now - age, Expires: Now - age + 300, Nonce: nonce}
	return signEnvelope(k, e)
}

func membership(k *identity.Key, id, nonce string, age int64, members ...string) string {
	if members == nil {
		members = []string{}
	}
	return groupEnvelope(k, id, nonce, age, "", map[string]any{"kind": groups.MembersKind, "members": members})
}

func post(k *identity.Key, id, nonce, state, text string) string {
	return groupEnvelope(k, id, nonce, 5, state, map[string]any{"text": text})
}

func genGroups() ([]Named, error) {
	var out []Named
	bound := []string{alice.DID.String(), bob.DID.String()}
	add := func(name, desc, input string, accepted []string, want Expect) {
		out = append(out, Named{name, Vector{Kind: "group", Description: desc, Input: jsonString(input),
			Context: &Context{Now: Now, Bound: bound, Accepted: accepted}, Expect: want}})
	}
	a, b, c := alice.DID.String(), bob.DID.String(), carol.DID.String()
	sorted := func(ds ...string) []string { slices.Sort(ds); return ds }
	created := membership(alice, "team-1", "members-1", 20, b, c)
	add("membership-creates", "alice (bound) creates team-1 with bob and carol: the creator is always a member", created, nil,
		Valid(map[string]any{"group": "team-1", "creator": a, "members": sorted(a, b, c)}))
	add("membership-update", "alice, the creator, replaces the members with a newer membership", membership(alice, "team-1", "members-2", 10, b), []string{created},
		Valid(map[string]any{"group": "team-1", "creator": a, "members": sorted(a, b)}))
	add("membership-not-creator", "bob (bound) sets the members of alice's group, after her claim", membership(bob, "team-1", "members-bob", 10, c), []string{created},
		Refused("group-not-creator"))
	add("membership-unbound", "carol, whom no wallet binds, creates a group", membership(carol, "team-2", "members-carol", 10, a), nil, Refused("group-unbound"))
	add("membership-bad-member", "a member that is not a DID", membership(alice, "team-3", "members-bad", 10, "bob"), nil, Refused("group-invalid"))
	var many []string
	for i := range groups.MaxMembers {
		many = append(many, FixtureKey(identity.Ed25519, fmt.Sprintf("member-%d", i)).DID.String())
	}
	add("membership-too-many", fmt.Sprintf("%d members and the creator: at most %d", groups.MaxMembers, groups.MaxMembers), membership(alice, "team-4", "members-many", 10, many...), nil,
		Refused("group-invalid"))
	add("membership-bad-group-id", "a group id with a space (1-64 of A-Z a-z 0-9 - _)", membership(alice, "team 5", "members-space", 10, b), nil, Refused("group-invalid"))

	add("post-member", "bob, a member, posts to alice's group", post(bob, "team-1", "post-bob", "discussion", "hello, team"), []string{created},
		Valid(map[string]any{"group": "team-1", "sender": b, "seq": 1}))
	add("post-unbound-member", "carol, unbound, posts where alice (bound) named her a member", post(carol, "team-1", "post-carol", "", "hi"), []string{created},
		Valid(map[string]any{"group": "team-1", "sender": c, "seq": 1}))
	add("post-not-member", "a post by someone the membership does not name", post(carol, "team-1", "post-carol-out", "discussion", "let me in"),
		[]string{membership(alice, "team-1", "members-1", 20, b)}, Refused("group-not-member"))
	add("post-unknown-group", "a post to a group this node does not know", post(bob, "team-9", "post-nowhere", "discussion", "anyone?"), nil, Refused("unknown-group"))
	add("post-bad-state", "a post whose state is not one of discussion, task_assignment, execution, conclusion",
		post(bob, "team-1", "post-state", "done", "finished"), []string{created}, Refused("group-invalid"))
	add("post-too-large", fmt.Sprintf("a post over %d bytes", groups.MaxPostSize), post(bob, "team-1", "post-large", "discussion", strings.Repeat("x", groups.MaxPostSize)),
		[]string{created}, Refused("group-too-large"))
	first := post(bob, "team-1", "post-dup", "discussion", "once")
	again := signEnvelope(bob, identity.Envelope{ID: "post-dup", GroupID: "team-1", Sender: b, State: "discussion", Body: json.RawMessage(`{"text":"twice"}`),
		IssuedAt: Now - 4, Expires: Now + 296, Nonce: "post-dup-again"})
	add("post-duplicate-id", "a second post by the same sender with the same id (a fresh nonce: not a replay)", again, []string{created, first},
		Refused("group-duplicate"))
	return out, nil
}

// checkGroup applies the context's accepted envelopes and then the input to a fresh group
// service, as the routes do (POST /v1/groups/{id}/members for a membership, .../envelopes
// for a post, the id being the envelope's group_id), each verified first.
func checkGroup(v Vector) (Expect, error) {
	s, err := inputString(v)
	if err != nil {
		return Expect{}, err
	}
	c := ctx(v)
	dir, err := os.MkdirTemp("", "surety-conformance-")
	if err != nil {
		return Expect{}, err
	}
	defer os.RemoveAll(dir)
	db, err := sqlite.Open(filepath.Join(dir, "groups.db"))
	if err != nil {
		return Expect{}, err
	}
	defer db.Close()
	bg := context.Background()
	g, err := groups.New(bg, db, groups.Config{Bound: func(_ context.Context, did string) (bool, error) { return slices.Contains(c.Bound, did), nil }})
	if err != nil {
		return Expect{}, err
	}
	verifier := verifierFor(c)
	apply := func(raw string) (map[string]any, error) {
		ver, err := verifier.Verify(bg, []byte(raw))
		if err != nil {
			return nil, err
		}
		id := ver.Envelope.GroupID
		if groups.IsMembership(ver) {
			grp, err := g.SetMembers(bg, id, ver, []byte(raw))
			if err != nil {
				return nil, err
			}
			return map[string]any{"group": grp.ID, "creator": grp.Creator, "members": grp.Members}, nil
		}
		p, err := g.Post(bg, id, ver, []byte(raw))
		if err != nil {
			return nil, err
		}
		if p.Envelope == nil {
			return nil, errors.New("post not stored")
		}
		return map[string]any{"group": p.Envelope.Group, "sender": p.Envelope.Sender, "seq": p.Envelope.Seq}, nil
	}
	for i, raw := range c.Accepted {
		if _, err := apply(raw); err != nil {
			return Expect{}, fmt.Errorf("accepted envelope %d: %w", i, err)
		}
	}
	facts, err := apply(s)
	if err != nil {
		return refusal(err)
	}
	return Valid(facts), nil
}
