package reputation_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/p2p"
	"github.com/surety-ioa/surety/reputation"
)

type gossipNode struct {
	*logFixture
	svc  *reputation.Service
	node *p2p.Node
}

func startGossipNode(t *testing.T, f *fakeChain, signer keySigner, bootstrap []peer.AddrInfo) *gossipNode {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	lf := newLogFixture(t, signer)
	svc := reputation.NewService(reputation.ServiceConfig{Store: lf.store, Log: lf.log, Stakes: stakeMap{},
		Rules: &reputation.Rules{Bounties: f, Wallets: f, Agents: f}})
	node, err := p2p.Start(ctx, p2p.Config{Bootstrap: bootstrap, Topics: []string{reputation.AuditTopic}, InspectPeriod: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close() })
	v := identity.NewVerifier(identity.VerifierConfig{Started: time.Now().Add(-time.Minute)})
	if err := svc.Attach(node, v.Verify, nil); err != nil {
		t.Fatal(err)
	}
	return &gossipNode{logFixture: lf, svc: svc, node: node}
}

// TestAuditsSpreadAndConverge: two nodes on loopback, each filed six audits in its own
// order, end with the same twelve audits, the same scores and the same log roots; a forged
// audit is dropped and costs its sender score.
func TestAuditsSpreadAndConverge(t *testing.T) {
	if testing.Short() {
		t.Skip("starts libp2p hosts")
	}
	ctx := context.Background()
	var keys []*identity.Key
	f := &fakeChain{agents: map[string]bool{}}
	for range 6 {
		k, _ := identity.GenerateKey(identity.Ed25519)
		keys = append(keys, k)
		f.agents[k.DID.String()] = true
	}
	nodeKey, _ := identity.GenerateKey(identity.Ed25519)
	a := startGossipNode(t, f, keySigner{nodeKey}, nil)
	b := startGossipNode(t, f, keySigner{nodeKey}, []peer.AddrInfo{a.node.Info()})
	for _, n := range []*p2p.Node{a.node, b.node} { // let the mesh form
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := n.WaitMesh(wctx, reputation.AuditTopic)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}

	var lastJWS string
	vA := identity.NewVerifier(identity.VerifierConfig{Started: time.Now().Add(-time.Minute)})
	vB := identity.NewVerifier(identity.VerifierConfig{Started: time.Now().Add(-time.Minute)})
	for i, auditor := range keys {
		for j, subject := range []*identity.Key{keys[(i+1)%6], keys[(i+2)%6]} {
			target := "m-" + subject.DID.String()[8:16]
			body := `{"body":{"kind":"surety.audit/1","subject":"` + subject.DID.String() + `","envelope":"` + target + `","score":0.` + string(rune('1'+i)) + `,"evidence":{"hash":"` + hash32 + `"}}}`
			filled, _ := identity.FillEnvelope([]byte(body), auditor, time.Now(), time.Minute)
			jws, _ := auditor.SignCompact(filled)
			lastJWS = jws
			at, v := a, vA
			if j == 1 {
				at, v = b, vB
			}
			verified, err := v.Verify(ctx, []byte(jws))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := at.svc.Submit(ctx, verified, []byte(jws)); err != nil {
				t.Fatal(err)
			}
		}
	}
	count := func(n *gossipNode) int {
		g, _, err := n.store.Graph(ctx, time.Now().Unix(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return len(g.Audits)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && (count(a) != 12 || count(b) != 12) {
		time.Sleep(50 * time.Millisecond)
	}
	if count(a) != 12 || count(b) != 12 {
		t.Fatalf("audits after gossip: %d and %d, want 12 on both", count(a), count(b))
	}
	// The same scores, to the bit, and the same log roots.
	for _, n := range []*gossipNode{a, b} {
		if err := n.svc.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range keys {
		ra, _ := a.svc.Reputation(ctx, k.DID.String())
		rb, _ := b.svc.Reputation(ctx, k.DID.String())
		if ra.Score != rb.Score || ra.Confidence != rb.Confidence || ra.Audits != 2 {
			t.Errorf("%s: %v/%v on A, %v/%v on B", k.DID, ra.Score, ra.Confidence, rb.Score, rb.Confidence)
		}
	}
	later := time.Now().Add(3 * time.Hour)
	ha, errA := a.log.CloseEpochs(ctx, later)
	hb, errB := b.log.CloseEpochs(ctx, later)
	if errA != nil || errB != nil || len(ha) == 0 || !slices.EqualFunc(ha, hb, func(x, y reputation.Head) bool { return x.Root == y.Root && x.Size == y.Size }) {
		t.Fatalf("heads %+v and %+v (%v, %v)", ha, hb, errA, errB)
	}

	// A forged audit (an envelope with a signature byte changed) from A is dropped by B and
	// costs A score.
	forged := []byte(lastJWS)
	forged[len(forged)-3] ^= 1
	if err := reputation.PublishRaw(ctx, a.svc, forged); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if s, ok := b.node.Score(a.node.Host.ID()); ok && s < 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if s, _ := b.node.Score(a.node.Host.ID()); s >= 0 {
		t.Errorf("the forger's score on B is %v, want below zero", s)
	}
	if count(b) != 12 {
		t.Errorf("B holds %d audits after the forgery, want 12", count(b))
	}
}

// TestGossipedAuditsSpendTheForwardersBudget: audits gossiped by a peer are counted against
// that peer's ingress budget before any signature is checked (identity's 200, then 20 a
// second), so one peer's flood of freshly keyed audits gets at most its budget checked and
// stored; the rest are ignored, never held against the peer (a budget is load, not a fault).
func TestGossipedAuditsSpendTheForwardersBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("starts libp2p hosts")
	}
	ctx := context.Background()
	f := &fakeChain{agents: map[string]bool{}}
	nodeKey, _ := identity.GenerateKey(identity.Ed25519)
	a := startGossipNode(t, f, keySigner{nodeKey}, nil)
	b := startGossipNode(t, f, keySigner{nodeKey}, []peer.AddrInfo{a.node.Info()})
	for _, n := range []*p2p.Node{a.node, b.node} {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := n.WaitMesh(wctx, reputation.AuditTopic)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	const flood = 400
	raws := signedAudits(t, f, flood) // every one valid, by its own fresh key
	start := time.Now()
	for _, raw := range raws { // 100 a second: gossip keeps up; the budget gives 20
		if err := reputation.PublishRaw(ctx, b.svc, raw); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	count := func() int {
		var n int
		if err := a.db.QueryRow(`SELECT COUNT(*) FROM reputation_audits`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for last, still := -1, 0; still < 10; time.Sleep(100 * time.Millisecond) { // until A takes no more for a second
		if n := count(); n == last {
			still++
		} else {
			last, still = n, 0
		}
	}
	got, most := count(), 200+int(20*time.Since(start).Seconds())+20
	t.Logf("A stored %d of %d in %s", got, flood, time.Since(start).Round(time.Millisecond))
	if got == 0 || got > most || got >= flood {
		t.Errorf("A stored %d of the peer's %d audits, want some and at most its budget (%d over %s)", got, flood, most, time.Since(start).Round(time.Millisecond))
	}
	if s, ok := a.node.Score(b.node.Host.ID()); ok && s < 0 {
		t.Errorf("the peer's score on A is %v: a spent budget cost it", s)
	}
}
