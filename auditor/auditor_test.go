package auditor

import (
	"context"
	"errors"
	"math"
	"math/big"
	"os"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/reputation/merkle"
)

// deployed is an embedded chain with the contracts deployed by dev account 0.
func deployed(t *testing.T) (*chain.Embedded, *contracts.Deployment) {
	t.Helper()
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(4, chain.DefaultDevBalance)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	dep, err := contracts.Deploy(context.Background(), c, chain.DevKey(0), contracts.DeployConfig{FeeBps: contracts.DefaultFeeBps}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c, dep
}

// anchor has dev account i anchor size and root, and returns the block it was mined in.
func anchor(t *testing.T, c *chain.Embedded, dep *contracts.Deployment, i int, size uint64, root merkle.Hash) uint64 {
	t.Helper()
	ra := contracts.NewRootAnchor()
	tx, err := bind.Transact(ra.Instance(c, dep.Contracts.RootAnchor), bind.NewKeyedTransactor(chain.DevKey(i), big.NewInt(chain.EmbeddedChainID)), ra.PackAnchor(size, root))
	if err != nil {
		t.Fatal(err)
	}
	c.Mine()
	r, err := bind.WaitMined(context.Background(), c, tx.Hash())
	if err != nil || r.Status != 1 {
		t.Fatalf("anchor: %v %+v", err, r)
	}
	return r.BlockNumber.Uint64()
}

// TestFirstAnchorIsTheChainsFirst: of several anchors of one size and root, by different
// wallets, FirstAnchor finds the earliest (the block every node and auditor use), names its
// wallet, skips anchors of the same size with another root, and finds none for a root no one
// anchored; a later from skips earlier anchors, as the node's scorer does once it searched them.
func TestFirstAnchorIsTheChainsFirst(t *testing.T) {
	ctx := context.Background()
	c, dep := deployed(t)
	root, other := merkle.Hash{7}, merkle.Hash{8}
	anchor(t, c, dep, 3, 5, other) // the same size, another root: not this log's
	first := anchor(t, c, dep, 1, 5, root)
	second := anchor(t, c, dep, 2, 5, root)
	head, err := c.BlockNumber(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := FirstAnchor(ctx, c, dep, 5, root, 0, head)
	if err != nil || got.Block != first || got.Node != crypto.PubkeyToAddress(chain.DevKey(1).PublicKey) {
		t.Fatalf("first anchor: %+v %v, want block %d by dev account 1", got, err, first)
	}
	if got, err := FirstAnchor(ctx, c, dep, 5, root, first+1, head); err != nil || got.Block != second {
		t.Fatalf("from after the first: %+v %v, want block %d", got, err, second)
	}
	if _, err := FirstAnchor(ctx, c, dep, 5, root, 0, first-1); !errors.Is(err, ErrNotAnchored) {
		t.Fatalf("up to before the first: %v, want ErrNotAnchored", err)
	}
	if _, err := FirstAnchor(ctx, c, dep, 6, root, 0, head); !errors.Is(err, ErrNotAnchored) {
		t.Fatalf("a size no one anchored: %v, want ErrNotAnchored", err)
	}
}

// TestReadFactsIsTheChainAtItsBlock: the facts at a block are the deployment's minimum stake,
// and an escrow and stake index that hold nothing after it.
func TestReadFactsIsTheChainAtItsBlock(t *testing.T) {
	ctx := context.Background()
	c, dep := deployed(t)
	head, err := c.BlockNumber(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ReadFacts(ctx, c, dep, head, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Params.MinStake != 0.1 || f.Stakes.Indexed() != head || f.Escrow.Indexed() != head || f.ERC8004 == nil || f.ERC8004.Indexed() != head {
		t.Fatalf("facts: min stake %v, indexed %d and %d, ERC-8004 %v, want 0.1 and %d", f.Params.MinStake, f.Stakes.Indexed(), f.Escrow.Indexed(), f.ERC8004, head)
	}
	if _, err := ReadFacts(ctx, c, dep, dep.Block-1, t.TempDir()); err == nil {
		t.Error("facts before the deployment")
	}
	// A leaf that is no signed audit is the log's fault, named.
	if _, err := f.Score(ctx, dep, [][]byte{[]byte("not an envelope")}, 100); !errors.Is(err, reputation.ErrBadLeaf) {
		t.Errorf("a leaf that is not an envelope: %v, want ErrBadLeaf", err)
	}
}

// TestReadFactsFailsCleanly: a replay that fails midway (here its context ends, as when the
// node stops during a scorer's pass) returns the error and removes its scratch database; at
// f5bc6db it closed the nil Facts its error return had set and panicked, taking the node down
// (seen as a panic in cmd/surety's tests).
func TestReadFactsFailsCleanly(t *testing.T) {
	c, dep := deployed(t)
	head, err := c.BlockNumber(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	if f, err := ReadFacts(ctx, c, dep, head, dir); err == nil || f != nil {
		t.Fatalf("replay with an ended context: %v, %v; want an error", f, err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("a failed replay left %d entries in its dir", len(left))
	}
}

// TestCompareNamesEveryDifference: compare finds each figure whose bits differ (one ulp, the
// sign of a zero), and an agent on one side only, and nothing when all are equal.
func TestCompareNamesEveryDifference(t *testing.T) {
	mine := []reputation.HeadScore{{DID: "did:key:za", Score: 0.7, Confidence: 0.4, Weight: 1, Standing: 0, Relative: 2}, {DID: "did:key:zb", Score: 0.5}}
	same := func() []wire.HeadScore {
		out := make([]wire.HeadScore, len(mine))
		for i, m := range mine {
			out[i] = wire.HeadScore(m)
		}
		return out
	}
	if got, n := compare(same(), mine); len(got) != 0 || n != 2 {
		t.Fatalf("equal scores: %v over %d", got, n)
	}
	for _, tt := range []struct {
		name  string
		edit  func([]wire.HeadScore) []wire.HeadScore
		did   string
		field string
	}{
		{"a score one ulp up", func(p []wire.HeadScore) []wire.HeadScore { p[0].Score = math.Nextafter(p[0].Score, 1); return p }, "did:key:za", "score"},
		{"a negative zero standing", func(p []wire.HeadScore) []wire.HeadScore { p[0].Standing = math.Copysign(0, -1); return p }, "did:key:za", "standing"},
		{"a relative weight changed", func(p []wire.HeadScore) []wire.HeadScore { p[0].Relative = 2.5; return p }, "did:key:za", "relative"},
		{"an agent left out", func(p []wire.HeadScore) []wire.HeadScore { return p[:1] }, "did:key:zb", "agent"},
		{"an agent made up", func(p []wire.HeadScore) []wire.HeadScore {
			return append(p, wire.HeadScore{DID: "did:key:zc", Score: 0.5})
		}, "did:key:zc", "agent"},
	} {
		got, _ := compare(tt.edit(same()), mine)
		if len(got) != 1 || got[0].DID != tt.did || got[0].Field != tt.field || got[0].String() == "" {
			t.Errorf("%s: %v, want %s's %s", tt.name, got, tt.did, tt.field)
		}
	}
}
