package groups_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/surety-ioa/surety/groups"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/testutil"
)

// BenchmarkPostsSetIDs lists the thread envelopes a node offers anti-entropy: 2,000 posts of
// ~6 KiB. The listing reads the hashes stored with them, not the envelopes (at 409c49a it
// read and hashed every one).
func BenchmarkPostsSetIDs(b *testing.B) {
	ctx := context.Background()
	k, err := identity.GenerateKey(identity.Ed25519)
	if err != nil {
		b.Fatal(err)
	}
	chain := &bindings{dids: map[string]bool{k.DID.String(): true}}
	g, err := groups.New(ctx, testutil.DB(b), groups.Config{Bound: chain.Bound, Quotas: groups.Quotas{PostsPerSender: 2000}})
	if err != nil {
		b.Fatal(err)
	}
	v := identity.NewVerifier(identity.VerifierConfig{Started: time.Now().Add(-time.Minute)})
	sign := func(fields map[string]any, group string) (*identity.Verified, []byte) {
		fields["group_id"] = group
		payload, err := json.Marshal(fields)
		if err != nil {
			b.Fatal(err)
		}
		filled, err := identity.FillEnvelope(payload, k, time.Now(), time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		jws, err := k.SignCompact(filled)
		if err != nil {
			b.Fatal(err)
		}
		verified, err := v.Verify(ctx, []byte(jws))
		if err != nil {
			b.Fatal(err)
		}
		return verified, []byte(jws)
	}
	mv, mraw := sign(map[string]any{"body": map[string]any{"kind": groups.MembersKind, "members": []string{}}}, "bench")
	if _, err := g.SetMembers(ctx, "bench", mv, mraw); err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat("a", 4500)
	for i := range 2000 {
		pv, praw := sign(map[string]any{"body": map[string]any{"text": fmt.Sprint(i, text)}}, "bench")
		if _, err := g.Post(ctx, "bench", pv, praw); err != nil {
			b.Fatal(err)
		}
	}
	_, posts := g.SyncSets(v.CheckArchived)
	b.ResetTimer()
	for range b.N {
		ids, err := posts.IDs(ctx)
		if err != nil || len(ids) != 2000 {
			b.Fatalf("%d ids, %v", len(ids), err)
		}
	}
}
