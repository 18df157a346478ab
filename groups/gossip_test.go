package groups_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/surety-ioa/surety/groups"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/p2p"
	"github.com/surety-ioa/surety/internal/testutil"
)

// rotatedKeys says of the DIDs in it that they were rotated away on chain.
type rotatedKeys map[string]bool

func (r rotatedKeys) KeyStatus(_ context.Context, did string) (identity.KeyStatus, error) {
	if r[did] {
		return identity.KeyStatus{State: identity.KeyRotated}, nil
	}
	return identity.KeyStatus{State: identity.KeyActive}, nil
}

// verifications records what a node's verifier said of each envelope gossip brought it.
type verifications struct {
	mu   sync.Mutex
	errs []error
}

func (r *verifications) wrap(v *identity.Verifier) func(context.Context, []byte) (*identity.Verified, error) {
	return func(ctx context.Context, raw []byte) (*identity.Verified, error) {
		out, err := v.Verify(ctx, raw)
		r.mu.Lock()
		r.errs = append(r.errs, err)
		r.mu.Unlock()
		return out, err
	}
}

func (r *verifications) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.errs)
}

func (r *verifications) last() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.errs[len(r.errs)-1]
}

// startLoadedNode is a group node whose verifier remembers at most maxNonces nonces, and
// perSender of one sender, and knows the rotated keys; rec sees each verification.
func startLoadedNode(t *testing.T, chain *bindings, bootstrap []peer.AddrInfo, maxNonces, perSender int, rotated rotatedKeys, rec *verifications) *groupNode {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	v := identity.NewVerifier(identity.VerifierConfig{Started: time.Now().Add(-time.Minute), MaxNonces: maxNonces, MaxNoncesPerSender: perSender, Keys: rotated})
	g := newGroups(t, groups.Config{Verify: rec.wrap(v), Bound: chain.Bound})
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

// signedPost is a thread envelope k signs for group, unverified.
func signedPost(t *testing.T, k *identity.Key, group, text string) []byte {
	t.Helper()
	payload, err := json.Marshal(map[string]any{"group_id": group, "state": "discussion", "body": map[string]any{"text": text}})
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
	return []byte(jws)
}

// TestLoadCostsTheForwarderNothing: envelopes a node refuses because it is loaded (the
// sender's replay budget spent, the replay pool full) or because its index moved (the key
// rotated away since) are ignored by gossip, never held against the honest peer that
// forwarded them; once the pool is full, a sender already in it still gets through. A forged
// envelope still costs its forwarder, as the last step shows. At 409c49a gossip rejected all
// three kinds, and the forwarder's score fell below zero.
func TestLoadCostsTheForwarderNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts libp2p hosts")
	}
	ctx := context.Background()
	k := newKeys(t, 5)
	seen, flooder, second, newcomer, rotated := k[0], k[1], k[2], k[3], k[4]
	rec := &verifications{}
	chain := bound(k...)
	a := startGroupNode(t, chain, nil)
	// B remembers at most 5 nonces, 2 per sender: a pool small enough to fill by hand.
	b := startLoadedNode(t, chain, []peer.AddrInfo{a.node.Info()}, 5, 2, rotatedKeys{rotated.DID.String(): true}, rec)
	for _, n := range []*p2p.Node{a.node, b.node} {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := n.WaitMesh(wctx, groups.Topic)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name string
		by   *identity.Key
		want error
	}{
		{"a sender's first envelope", seen, nil},
		{"the flooder's first", flooder, nil},
		{"the flooder's second", flooder, nil},
		{"the flooder's third: its budget is spent", flooder, identity.ErrReplayBudget},
		{"a second sender: the pool is full for new senders", second, nil},
		{"a sender the full pool has not seen", newcomer, identity.ErrReplayCacheFull},
		{"the first sender again: it is in the pool", seen, nil},
		{"a key rotated away on chain", rotated, identity.ErrRotated},
	}
	for i, st := range steps {
		// One at a time: gossipsub validates concurrently, and the pool's answers depend on
		// the order.
		if err := groups.PublishRaw(ctx, a.groups, signedPost(t, st.by, "elsewhere", st.name)); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, "B verifies "+st.name, 10*time.Second, func() bool { return rec.count() == i+1 })
		if err := rec.last(); !errors.Is(err, st.want) || (st.want == nil) != (err == nil) {
			t.Errorf("%s: B's verifier said %v, want %v", st.name, err, st.want)
		}
	}
	testutil.Eventually(t, "B scores A", 10*time.Second, func() bool { _, ok := b.node.Score(a.node.Host.ID()); return ok })
	time.Sleep(500 * time.Millisecond) // several inspections after the last refusal
	if s, _ := b.node.Score(a.node.Host.ID()); s < 0 {
		t.Errorf("B scores A %v for forwarding envelopes B was too loaded to take, want no penalty", s)
	}

	// A forgery is still the forwarder's fault.
	forged := signedPost(t, seen, "elsewhere", "forged")
	forged[len(forged)-3] ^= 1
	if err := groups.PublishRaw(ctx, a.groups, forged); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "B scores A down for a forgery", 10*time.Second, func() bool { s, ok := b.node.Score(a.node.Host.ID()); return ok && s < 0 })
}

// TestGossipSpendsTheForwardersBudget: group envelopes a peer gossips are counted against that
// peer's ingress budget (identity's 200, then 20 a second) before any signature is checked:
// past it, B refuses them unchecked (ErrIngressBudget), and does not hold that against A.
func TestGossipSpendsTheForwardersBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("starts libp2p hosts")
	}
	ctx := context.Background()
	k := newKeys(t, 1)
	rec := &verifications{}
	chain := bound(k...)
	a := startGroupNode(t, chain, nil)
	b := startLoadedNode(t, chain, []peer.AddrInfo{a.node.Info()}, 0, 0, rotatedKeys{}, rec)
	for _, n := range []*p2p.Node{a.node, b.node} {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := n.WaitMesh(wctx, groups.Topic)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	const flood = 400
	for i := range flood { // 100 a second: gossip keeps up; the budget gives 20
		if err := groups.PublishRaw(ctx, a.groups, signedPost(t, k[0], "elsewhere", fmt.Sprintf("post %d", i))); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	testutil.Eventually(t, "B verifies what A sent", 10*time.Second, func() bool { return rec.count() >= flood*3/4 })
	time.Sleep(time.Second)
	rec.mu.Lock()
	spent := 0
	for _, err := range rec.errs {
		if errors.Is(err, identity.ErrIngressBudget) {
			spent++
		}
	}
	total := len(rec.errs)
	rec.mu.Unlock()
	if spent < flood/10 {
		t.Errorf("B refused %d of the %d envelopes A forwarded for A's budget, want the ~%d past it", spent, total, flood-300)
	}
	if s, _ := b.node.Score(a.node.Host.ID()); s < 0 {
		t.Errorf("B scores A %v for envelopes past its budget, want no penalty", s)
	}
}
