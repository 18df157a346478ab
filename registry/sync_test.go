package registry_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"math/big"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/surety-ioa/surety/internal/p2p"
	"github.com/surety-ioa/surety/registry"
)

// syncedRegistry is a registry on its own host with anti-entropy and no gossip.
func syncedRegistry(t *testing.T, reg *registry.Registry, boot ...peer.AddrInfo) (*p2p.Node, *p2p.Syncer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	node, err := p2p.Start(ctx, p2p.Config{Bootstrap: boot, Listen: []string{"/ip4/127.0.0.1/tcp/0"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close() })
	sy := p2p.NewSyncer(node, p2p.SyncConfig{})
	sy.AddSet(registry.CardSet, reg.SyncSet())
	return node, sy
}

// TestCardsReconcile: cards registered on one node while another was away (no gossip) reach
// it through anti-entropy, staked or not, and a newer card replaces an older one; two cards
// an agent signed with the same sequence number end as the same one on both nodes, whichever
// each had.
func TestCardsReconcile(t *testing.T) {
	ctx := context.Background()
	staked, unstaked, twice := mustKey(t), mustKey(t), mustKey(t)
	st := stakes{staked.DID.String(): big.NewInt(2e18)}
	ra, rb := newRegistry(t, st), newRegistry(t, st)
	register := func(r *registry.Registry, raw []byte) {
		t.Helper()
		if _, err := r.Register(ctx, raw, "api"); err != nil {
			t.Fatal(err)
		}
	}
	register(ra, card(t, staked, 1, "Old", "old card", "translate"))
	register(rb, card(t, staked, 1, "Old", "old card", "translate"))
	register(ra, card(t, staked, 2, "New", "new card", "translate"))
	register(ra, card(t, unstaked, 1, "Unstaked", "no stake", "write"))
	x, y := card(t, twice, 5, "X", "one of two", "a"), card(t, twice, 5, "Y", "the other", "a")
	register(ra, x)
	register(rb, y)

	na, sa := syncedRegistry(t, ra)
	_, sb := syncedRegistry(t, rb, na.Info())
	if st := sb.Round(ctx); st.Bad != 0 || st.Peers != 1 {
		t.Fatalf("B's round: %+v", st)
	}
	sa.Round(ctx)
	for _, r := range []*registry.Registry{ra, rb} {
		if a, err := r.Get(ctx, staked.DID.String()); err != nil || a.Name != "New" {
			t.Fatalf("staked agent: %+v, %v", a, err)
		}
		if a, err := r.Get(ctx, unstaked.DID.String()); err != nil || a.Name != "Unstaked" {
			t.Fatalf("unstaked agent: %+v, %v", a, err)
		}
	}
	// The lower hash of what the agent signed wins (the JWS's header and payload: not its
	// signature, which is not the agent's content to rank by).
	signed := func(jws []byte) [32]byte { return sha256.Sum256(jws[:bytes.LastIndexByte(jws, '.')]) }
	want := "X"
	if hx, hy := signed(x), signed(y); bytes.Compare(hy[:], hx[:]) < 0 {
		want = "Y"
	}
	for _, r := range []*registry.Registry{ra, rb} {
		if a, err := r.Get(ctx, twice.DID.String()); err != nil || a.Name != want {
			t.Fatalf("the agent that signed two cards with one seq: %+v, %v; want %s everywhere", a, err, want)
		}
	}
	if st := sb.Round(ctx); st.Fetched[registry.CardSet] != 0 {
		t.Fatalf("a round with nothing to do fetched %+v", st)
	}
}

// forgedCards offers one card whose signature does not verify.
type forgedCards struct{ raw []byte }

func (f forgedCards) IDs(context.Context) ([]p2p.ID, error) {
	return []p2p.ID{sha256.Sum256(f.raw)}, nil
}
func (f forgedCards) Get(context.Context, []p2p.ID) ([][]byte, error) { return [][]byte{f.raw}, nil }
func (f forgedCards) Put(context.Context, peer.ID, []byte) error      { return nil }

// TestForgedCardCostsThePeer: a card with a broken signature offered by anti-entropy is not
// stored, and the peer that offered it is penalized.
func TestForgedCardCostsThePeer(t *testing.T) {
	ctx := context.Background()
	k := mustKey(t)
	raw := card(t, k, 1, "Forged", "bad signature", "x")
	raw[len(raw)-5] ^= 1
	liarCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	liar, err := p2p.Start(liarCtx, p2p.Config{Listen: []string{"/ip4/127.0.0.1/tcp/0"}})
	if err != nil {
		t.Fatal(err)
	}
	defer liar.Close()
	p2p.NewSyncer(liar, p2p.SyncConfig{}).AddSet(registry.CardSet, forgedCards{raw})

	r := newRegistry(t, stakes{k.DID.String(): big.NewInt(1e18)})
	node, sy := syncedRegistry(t, r, liar.Info())
	if st := sy.Round(ctx); st.Bad != 1 {
		t.Fatalf("round: %+v, want one bad item", st)
	}
	if p := node.Penalty(liar.Host.ID()); p < p2p.BadItemPenalty*0.99 {
		t.Errorf("penalty %v", p)
	}
	if _, err := r.Get(ctx, k.DID.String()); err == nil {
		t.Error("the forged card was stored")
	}
}

// TestDHTSelectKeepsWhatRegistrationKeeps: of the values the DHT holds for a card, Select
// picks the one every node's registration keeps: the highest sequence number, and of two with
// one sequence number the lower hash of what was signed (the JWS's header and payload), in any
// order.
func TestDHTSelectKeepsWhatRegistrationKeeps(t *testing.T) {
	k := mustKey(t)
	x, y, old := card(t, k, 5, "X", "one of two", "a"), card(t, k, 5, "Y", "the other", "a"), card(t, k, 4, "Old", "older", "a")
	signed := func(jws []byte) [32]byte { return sha256.Sum256(jws[:bytes.LastIndexByte(jws, '.')]) }
	lower := x
	if hx, hy := signed(x), signed(y); bytes.Compare(hy[:], hx[:]) < 0 {
		lower = y
	}
	v := newRegistry(t, stakes{}).DHTValidators()[registry.CardNamespace]
	for _, values := range [][][]byte{{x, y, old}, {old, y, x}, {y, old, x}} {
		i, err := v.Select("/"+registry.CardNamespace+"/"+k.DID.String(), values)
		if err != nil || !bytes.Equal(values[i], lower) {
			t.Errorf("Select picked %d (%v) of %d values; want the lower hash of the two seq-5 cards", i, err, len(values))
		}
	}
}
