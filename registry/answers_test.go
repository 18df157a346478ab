package registry_test

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/registry"
)

// TestKeptAnswersFollowWrites: the registry keeps the index's answers to recent queries
// while no card changes, and the cards it read while their rows do not change. Through registrations, replacements (a card losing or gaining the
// words searched) and stake changes, every search, asked
// twice (the second may be the kept answer), answers what a search with nothing kept
// answers, and a card just stored is found, as stored, by a query asked before it came.
func TestKeptAnswersFollowWrites(t *testing.T) {
	ctx := context.Background()
	st := stakes{}
	r := newRegistry(t, st)
	words := []string{"translate", "audit", "legal", "medical", "review"}
	keys := make([]*identity.Key, 30)
	seq := make([]uint64, len(keys))
	for i := range keys {
		keys[i], _ = identity.GenerateKey(identity.Ed25519)
	}
	queries := []registry.Query{
		{Text: "translate legal"}, {Text: "translate legal", Mode: registry.ModeKeyword}, {Text: "audit"},
		{Capability: "medical"}, {}, {Text: "review", Capability: "audit"}, {Text: "translate legal", Limit: 3},
	}
	ask := func(step int) {
		t.Helper()
		for _, q := range queries {
			first, err := r.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			kept, err := r.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			registry.ForgetAnswers(r)
			fresh, err := r.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, got := range [][]*registry.Agent{first, kept} {
				if diff := cmp.Diff(summary(fresh), summary(got)); diff != "" {
					t.Fatalf("step %d, %+v: kept answer (-fresh +kept):\n%s", step, q, diff)
				}
			}
		}
	}
	rnd := rand.New(rand.NewPCG(4, 4))
	for step := range 120 {
		ask(step)
		i := rnd.IntN(len(keys))
		did := keys[i].DID.String()
		if rnd.IntN(4) == 0 { // the stake moves: the card ranks differently when stored again
			st[did] = big.NewInt(rnd.Int64N(5) * 1e18)
		}
		seq[i]++
		w1, w2 := words[rnd.IntN(len(words))], words[rnd.IntN(len(words))]
		if _, err := r.Register(ctx, card(t, keys[i], seq[i], fmt.Sprintf("%s agent", w1), w1+" and "+w2, w2), "test"); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		// A query asked before the card came finds it now.
		found, err := r.Search(ctx, registry.Query{Capability: w2, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if a := agentOf(found, did); a == nil || a.Seq != seq[i] {
			t.Fatalf("step %d: the card just stored under %q (seq %d) is not found: %+v", step, w2, seq[i], a)
		}
	}
}

// summary is what a search answers: DIDs, scores, sequence numbers, in order.
func summary(list []*registry.Agent) []string {
	var out []string
	for _, a := range list {
		out = append(out, fmt.Sprintf("%s %v %d %s", a.DID, a.Score, a.Seq, a.Description))
	}
	return out
}

func agentOf(list []*registry.Agent, did string) *registry.Agent {
	for _, a := range list {
		if a.DID == did {
			return a
		}
	}
	return nil
}
