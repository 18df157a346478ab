package reputation_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/p2p"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/reputation/merkle"
)

// syncNode is a reputation service with a libp2p host and anti-entropy, but no gossip: what
// it learns from peers, it learns by syncing.
type syncNode struct {
	*logFixture
	svc    *reputation.Service
	node   *p2p.Node
	syncer *p2p.Syncer
}

// syncLater is the clock of sync nodes: three hours on, when the epochs of the audits the
// tests sign now may close (the log's grace has passed).
func syncLater() time.Time { return time.Now().Add(3 * time.Hour) }

func startSyncNode(t *testing.T, f *fakeChain, signer keySigner, bootstrap ...peer.AddrInfo) *syncNode {
	return startSyncNodeAt(t, f, signer, syncLater, bootstrap...)
}

func startSyncNodeAt(t *testing.T, f *fakeChain, signer keySigner, now func() time.Time, bootstrap ...peer.AddrInfo) *syncNode {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	lf := newLogFixture(t, signer)
	quorum := f.quorum
	if quorum == 0 {
		quorum = 1
	}
	svc := reputation.NewService(reputation.ServiceConfig{Store: lf.store, Log: lf.log, Stakes: stakeMap{}, Now: now,
		Nodes: f, Anchors: f, Quorum: quorum,
		Rules: &reputation.Rules{Bounties: f, Wallets: f, Agents: f}})
	node, err := p2p.Start(ctx, p2p.Config{Bootstrap: bootstrap, Listen: []string{"/ip4/127.0.0.1/tcp/0"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close() })
	sy := p2p.NewSyncer(node, p2p.SyncConfig{})
	v := identity.NewVerifier(identity.VerifierConfig{})
	svc.AttachSync(sy, v.CheckArchived)
	return &syncNode{logFixture: lf, svc: svc, node: node, syncer: sy}
}

// signedAudits are n audits among fresh agents (registered in f), signed now.
func signedAudits(t *testing.T, f *fakeChain, n int) [][]byte {
	t.Helper()
	return signedAuditsAt(t, f, n, time.Now())
}

// file files raws as the API would, now.
func (n *syncNode) file(t *testing.T, raws ...[]byte) {
	t.Helper()
	n.fileAt(t, time.Now(), raws...)
}

func (n *syncNode) audits(t *testing.T) int {
	t.Helper()
	var c int
	if err := n.db.QueryRow(`SELECT COUNT(*) FROM reputation_audits`).Scan(&c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestNodesCatchUpOnAuditsAndLogEpochs: B, never gossiped to, gets A's audits of the open
// epoch from anti-entropy; C, which comes after A closed the epoch, adopts the closed epoch
// from A's log leaves; and then all three have the same log root and the same scores.
func TestNodesCatchUpOnAuditsAndLogEpochs(t *testing.T) {
	ctx := context.Background()
	f := &fakeChain{agents: map[string]bool{}}
	nodeKey, _ := identity.GenerateKey(identity.Ed25519)
	a := startSyncNode(t, f, keySigner{nodeKey})
	b := startSyncNode(t, f, keySigner{nodeKey}, a.node.Info())
	a.file(t, signedAudits(t, f, 6)...)

	if st := b.syncer.Round(ctx); st.Fetched[reputation.AuditSet] != 6 || st.Bad != 0 {
		t.Fatalf("B's round: %+v, want 6 audits", st)
	}
	later := syncLater()
	if heads, err := a.log.CloseEpochs(ctx, later); err != nil || len(heads) != 1 || heads[0].Size != 6 {
		t.Fatalf("A closed %+v (%v)", heads, err)
	}

	c := startSyncNode(t, f, keySigner{nodeKey}, a.node.Info())
	if st := c.syncer.Round(ctx); st.Bad != 0 || st.Peers < 1 { // B too, when C has met it through A
		t.Fatalf("C's round: %+v", st)
	}
	if c.audits(t) != 6 || c.log.Head().Root != a.log.Head().Root {
		t.Fatalf("C holds %d audits, root %s; A's root is %s", c.audits(t), c.log.Head().Root, a.log.Head().Root)
	}
	// B had the audits and its epoch open: it adopts A's closing too.
	b.syncer.Round(ctx)
	if b.log.Head().Root != a.log.Head().Root || b.log.Head().Size != 6 {
		t.Fatalf("B's head %+v, A's %+v", b.log.Head(), a.log.Head())
	}
	// Nothing is left to close on B or C, and the same audits give the same scores.
	for _, n := range []*syncNode{a, b, c} {
		if heads, err := n.log.CloseEpochs(ctx, later); err != nil || len(heads) != 0 {
			t.Fatalf("closed again: %+v (%v)", heads, err)
		}
		if err := n.svc.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, top := range a.svc.Top(ctx, 10) {
		for _, n := range []*syncNode{b, c} {
			r, _ := n.svc.Reputation(ctx, top.DID)
			if r.Score != top.Score || r.Confidence != top.Confidence {
				t.Errorf("%s: %v/%v here, %v/%v on A", top.DID, r.Score, r.Confidence, top.Score, top.Confidence)
			}
		}
	}
}

// TestLogCatchUpCatchesALiar: a peer that serves A's real signed heads but swaps one of the
// epoch's audits for another validly signed one is caught by the root, penalized, and nothing
// it sent enters the log or the store.
func TestLogCatchUpCatchesALiar(t *testing.T) {
	ctx := context.Background()
	f := &fakeChain{agents: map[string]bool{}}
	nodeKey, _ := identity.GenerateKey(identity.Ed25519)
	a := startSyncNode(t, f, keySigner{nodeKey})
	a.file(t, signedAudits(t, f, 4)...)
	if _, err := a.log.CloseEpochs(ctx, syncLater()); err != nil {
		t.Fatal(err)
	}
	other := signedAudits(t, f, 1)[0]

	liarCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	liar, err := p2p.Start(liarCtx, p2p.Config{Listen: []string{"/ip4/127.0.0.1/tcp/0"}})
	if err != nil {
		t.Fatal(err)
	}
	defer liar.Close()
	ls := p2p.NewSyncer(liar, p2p.SyncConfig{})
	ls.Handle(reputation.LogHeadsKind, func(ctx context.Context, _ peer.ID, body json.RawMessage) (any, error) {
		return a.log.HeadsFrom(ctx, 0, 64)
	})
	ls.Handle(reputation.LogLeavesKind, func(ctx context.Context, _ peer.ID, body json.RawMessage) (any, error) {
		var r struct{ From, To uint64 }
		_ = json.Unmarshal(body, &r)
		envs, err := a.log.Envelopes(ctx, r.From, r.To)
		if err == nil && len(envs) > 0 {
			envs[len(envs)-1] = other
		}
		return envs, err
	})

	b := startSyncNode(t, f, keySigner{nodeKey}, liar.Info())
	st := b.syncer.Round(ctx)
	if st.Bad != 1 {
		t.Fatalf("round with the liar: %+v, want one bad item", st)
	}
	if got := b.node.Penalty(liar.Host.ID()); got < p2p.BadItemPenalty*0.99 {
		t.Errorf("the liar's penalty is %v, want %v", got, p2p.BadItemPenalty)
	}
	if b.log.Head().Size != 0 || b.audits(t) != 0 {
		t.Errorf("B took the liar's epoch: head %+v, %d audits", b.log.Head(), b.audits(t))
	}
}

// TestAdoptedEpochDropsWhatTheNetworkLeftOut: B took an audit no other node heard of, and
// was away while A and C closed the epoch without it. With a quorum of two, B does not adopt
// the epoch on A's word alone (A could be lying, and B would drop an audit it holds); with C,
// another staked node, there to sign the same head, B adopts it, the audit no longer counts
// on B either, and the nodes give the same scores.
func TestAdoptedEpochDropsWhatTheNetworkLeftOut(t *testing.T) {
	ctx := context.Background()
	keyA, _ := identity.GenerateKey(identity.Ed25519)
	keyB, _ := identity.GenerateKey(identity.Ed25519)
	keyC, _ := identity.GenerateKey(identity.Ed25519)
	f := &fakeChain{agents: map[string]bool{}, quorum: 2,
		nodes: map[string]bool{keyA.DID.String(): true, keyB.DID.String(): true, keyC.DID.String(): true}}
	a := startSyncNode(t, f, keySigner{keyA})
	b := startSyncNode(t, f, keySigner{keyB}, a.node.Info())
	c := startSyncNode(t, f, keySigner{keyC})
	shared := signedAudits(t, f, 3)
	a.file(t, shared...)
	b.file(t, shared...)
	c.file(t, shared...)
	b.file(t, signedAudits(t, f, 1)...) // only B has it
	for _, n := range []*syncNode{a, c} {
		if _, err := n.log.CloseEpochs(ctx, syncLater()); err != nil {
			t.Fatal(err)
		}
	}
	if a.log.Head().Root != c.log.Head().Root {
		t.Fatalf("A and C closed the epoch apart: %+v, %+v", a.log.Head(), c.log.Head())
	}
	if st := b.syncer.Round(ctx); st.Bad != 0 || b.log.Head().Size != 0 || b.audits(t) != 4 {
		t.Fatalf("B adopted, on A's word alone, an epoch that drops one of its audits: %+v, head %+v, %d audits", st, b.log.Head(), b.audits(t))
	}
	if got := b.svc.LogSync(); got.State != reputation.LogAlone || !strings.Contains(got.Detail, "1 staked node(s) signed it of the 2 needed") {
		t.Errorf("B's log sync: %+v", got)
	}
	if err := b.node.Host.Connect(ctx, c.node.Info()); err != nil {
		t.Fatal(err)
	}
	waitPeers(t, b, 2)
	b.syncer.Round(ctx)
	if b.log.Head().Root != a.log.Head().Root || b.audits(t) != 3 {
		t.Fatalf("B: head %+v, %d audits; A: head %+v", b.log.Head(), b.audits(t), a.log.Head())
	}
	if got := b.svc.LogSync(); got.State != reputation.LogInStep {
		t.Errorf("B's log sync after adopting: %+v", got)
	}
	for _, n := range []*syncNode{a, b} {
		if err := n.svc.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
	}
	ta, tb := a.svc.Top(ctx, 10), b.svc.Top(ctx, 10)
	if len(ta) != len(tb) {
		t.Fatalf("top lists of %d and %d", len(ta), len(tb))
	}
	for i := range ta {
		if ta[i].DID != tb[i].DID || ta[i].Score != tb[i].Score || ta[i].Audits != tb[i].Audits {
			t.Errorf("rank %d: %+v on A, %+v on B", i, ta[i], tb[i])
		}
	}
}

// closedPeers starts a sync node for each entry of staked, with its own key (a staked node or
// not, as the entry says) bound to wallet base+i, files audits at each and closes the epoch.
func closedPeers(t *testing.T, f *fakeChain, base int64, staked []bool, audits [][]byte) ([]*syncNode, []peer.AddrInfo) {
	t.Helper()
	var nodes []*syncNode
	var infos []peer.AddrInfo
	for i, st := range staked {
		k, _ := identity.GenerateKey(identity.Ed25519)
		f.nodes[k.DID.String()] = st
		f.wallets[k.DID.String()] = common.BigToAddress(big.NewInt(base + int64(i)))
		n := startSyncNode(t, f, keySigner{k})
		n.file(t, audits...)
		if _, err := n.log.CloseEpochs(context.Background(), syncLater()); err != nil {
			t.Fatal(err)
		}
		nodes, infos = append(nodes, n), append(infos, n.node.Info())
	}
	return nodes, infos
}

// waitPeers waits until n is connected to want peers.
func waitPeers(t *testing.T, n *syncNode, want int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); len(n.node.Host.Network().Peers()) < want; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d peers, want %d", len(n.node.Host.Network().Peers()), want)
		}
	}
}

// TestLiarsAreNotAdopted is the log-head attack of issue 25: an epoch made up by peers that
// are no staked nodes, or by too few of them, is never adopted, however many free DIDs sign
// it and however few honest peers the node can reach. At 5ab6450 a lone liar's epoch was
// adopted (any did:key could sign a head, and silence counted as no objection), and with one
// Sybil confirmer the node dropped the honest audits it held. Each row: honest B holds three
// audits, and is connected to liars only (an eclipse, as after a restart), which closed an
// epoch of their own audits without B's.
func TestLiarsAreNotAdopted(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// liars sign the same made-up head; staked says which of them are staked nodes.
		staked []bool
		// anchor: the first liar anchored its head on chain from its wallet.
		anchor bool
		want   string
	}{
		{name: "a lone liar, not staked", staked: []bool{false}, want: "0 staked node(s) signed it of the 2 needed"},
		{name: "a liar and a Sybil confirmer, neither staked", staked: []bool{false, false}, want: "0 staked node(s) signed it of the 2 needed"},
		{name: "a staked liar and a Sybil confirmer", staked: []bool{true, false}, want: "1 staked node(s) signed it of the 2 needed"},
		{name: "a staked liar alone", staked: []bool{true}, want: "1 staked node(s) signed it of the 2 needed"},
		{name: "an unstaked liar that anchored its head", staked: []bool{false}, anchor: true, want: "0 staked node(s) signed it of the 2 needed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keyB, _ := identity.GenerateKey(identity.Ed25519)
			f := &fakeChain{agents: map[string]bool{}, wallets: map[string]common.Address{}, quorum: 2, nodes: map[string]bool{keyB.DID.String(): true}}
			liars, infos := closedPeers(t, f, 0xbad0, tt.staked, signedAudits(t, f, 3))
			if tt.anchor {
				h := liars[0].log.Head()
				f.anchors = map[common.Address]map[uint64]merkle.Hash{common.BigToAddress(big.NewInt(0xbad0)): {h.Size: h.Root}}
			}
			b := startSyncNode(t, f, keySigner{keyB}, infos...)
			b.file(t, signedAudits(t, f, 3)...)
			waitPeers(t, b, len(liars))
			for range 3 {
				b.syncer.Round(ctx)
			}
			if b.log.Head().Size != 0 || b.audits(t) != 3 {
				t.Fatalf("B adopted the liars' epoch: head %+v, %d audits (want none adopted, its own 3 kept)", b.log.Head(), b.audits(t))
			}
			if got := b.svc.LogSync(); got.State != reputation.LogAlone || !strings.Contains(got.Detail, tt.want) {
				t.Errorf("B's log sync: %+v, want alone, saying %q", got, tt.want)
			}
			// B closes the epoch itself, with its own audits, as it would with no peer at all.
			if _, err := b.log.CloseEpochs(ctx, syncLater()); err != nil || b.log.Head().Size != 3 {
				t.Fatalf("B's own close: %v, head %+v", err, b.log.Head())
			}
		})
	}
}

// TestAnchoredOrConfirmedHeadsAreAdopted: what the quorum takes. A staked node that anchored
// its head on chain from its bound wallet is taken on that alone; two staked nodes signing the
// same head are taken without an anchor.
func TestAnchoredOrConfirmedHeadsAreAdopted(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name   string
		peers  int
		anchor bool
	}{
		{"one staked node that anchored its head", 1, true},
		{"two staked nodes that signed the same head", 2, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			keyB, _ := identity.GenerateKey(identity.Ed25519)
			f := &fakeChain{agents: map[string]bool{}, wallets: map[string]common.Address{}, quorum: 2, nodes: map[string]bool{keyB.DID.String(): true}}
			staked := make([]bool, tt.peers)
			for i := range staked {
				staked[i] = true
			}
			peers, infos := closedPeers(t, f, 0xa0, staked, signedAudits(t, f, 3))
			if tt.anchor {
				h := peers[0].log.Head()
				f.anchors = map[common.Address]map[uint64]merkle.Hash{common.BigToAddress(big.NewInt(0xa0)): {h.Size: h.Root}}
			}
			b := startSyncNode(t, f, keySigner{keyB}, infos...)
			waitPeers(t, b, tt.peers)
			b.syncer.Round(ctx)
			if b.log.Head().Root != peers[0].log.Head().Root || b.audits(t) != 3 {
				t.Fatalf("B: head %+v, %d audits; the peers' %+v", b.log.Head(), b.audits(t), peers[0].log.Head())
			}
		})
	}
}

// TestEpochsAreAdoptedOnlyWhenTheyMayClose: a peer's epoch whose grace has not passed by this
// node's clock is not adopted (no honest node closes it so soon, and audits for it may still
// be on their way); once it has, it is.
func TestEpochsAreAdoptedOnlyWhenTheyMayClose(t *testing.T) {
	ctx := context.Background()
	f := &fakeChain{agents: map[string]bool{}}
	nodeKey, _ := identity.GenerateKey(identity.Ed25519)
	a := startSyncNode(t, f, keySigner{nodeKey})
	a.file(t, signedAudits(t, f, 2)...)
	if _, err := a.log.CloseEpochs(ctx, syncLater()); err != nil {
		t.Fatal(err)
	}
	var ahead atomic.Bool
	b := startSyncNodeAt(t, f, keySigner{nodeKey}, func() time.Time {
		if ahead.Load() {
			return syncLater()
		}
		return time.Now()
	}, a.node.Info())
	if st := b.syncer.Round(ctx); st.Bad != 0 || b.log.Head().Size != 0 {
		t.Fatalf("B adopted an epoch still open by its clock: %+v, head %+v", st, b.log.Head())
	}
	ahead.Store(true)
	b.syncer.Round(ctx)
	if b.log.Head().Root != a.log.Head().Root {
		t.Fatalf("B's head %+v, A's %+v", b.log.Head(), a.log.Head())
	}
}

// TestContradictedEpochIsNotAdopted: two peers closed the same epoch with different audits
// (one of them lies, or a partition outlasted the grace). A node that asks either is told by
// the other that the epoch is not what the first says, adopts neither, and penalizes neither:
// it cannot tell which one lies.
func TestContradictedEpochIsNotAdopted(t *testing.T) {
	ctx := context.Background()
	f := &fakeChain{agents: map[string]bool{}}
	keyA, _ := identity.GenerateKey(identity.Ed25519)
	keyL, _ := identity.GenerateKey(identity.Ed25519)
	a := startSyncNode(t, f, keySigner{keyA})
	l := startSyncNode(t, f, keySigner{keyL})
	a.file(t, signedAudits(t, f, 3)...)
	l.file(t, signedAudits(t, f, 3)...)
	for _, n := range []*syncNode{a, l} {
		if _, err := n.log.CloseEpochs(ctx, syncLater()); err != nil {
			t.Fatal(err)
		}
	}
	if a.log.Head().Epoch != l.log.Head().Epoch || a.log.Head().Root == l.log.Head().Root {
		t.Fatalf("want one epoch, two roots: %+v, %+v", a.log.Head(), l.log.Head())
	}
	v := startSyncNode(t, f, keySigner{keyA}, a.node.Info(), l.node.Info())
	for deadline := time.Now().Add(5 * time.Second); len(v.node.Host.Network().Peers()) < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("V did not connect to both peers")
		}
	}
	for range 3 {
		if st := v.syncer.Round(ctx); st.Bad != 0 {
			t.Fatalf("a round penalized a peer: %+v", st)
		}
	}
	if v.log.Head().Size != 0 {
		t.Fatalf("V adopted a contradicted epoch: %+v", v.log.Head())
	}
	if v.node.Penalty(a.node.Host.ID()) != 0 || v.node.Penalty(l.node.Host.ID()) != 0 {
		t.Error("a peer was penalized for a contradiction")
	}
}

// TestOneAuditOneLeaf: the same signed audit written another way (trailing whitespace, as a
// peer could pad it to make leaves without end) is the audit already recorded.
func TestOneAuditOneLeaf(t *testing.T) {
	ctx := context.Background()
	f := &fakeChain{agents: map[string]bool{}}
	nodeKey, _ := identity.GenerateKey(identity.Ed25519)
	n := startSyncNode(t, f, keySigner{nodeKey})
	raw := signedAudits(t, f, 1)[0]
	n.file(t, raw)
	v := identity.NewVerifier(identity.VerifierConfig{})
	for _, variant := range [][]byte{append(append([]byte{}, raw...), "\n  \n"...), append([]byte(" \t"), raw...)} {
		verified, err := v.CheckArchived(ctx, variant)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := n.svc.Submit(ctx, verified, variant); !errors.Is(err, reputation.ErrDuplicate) {
			t.Errorf("a padded copy of a recorded audit: %v, want ErrDuplicate", err)
		}
	}
	if n.audits(t) != 1 {
		t.Fatalf("%d audits stored, want 1", n.audits(t))
	}
}

// TestLoggedAuditsWhoseFactsChangedAreAdopted: after the network logged X's audit of Y, X and
// Y bind one wallet and Y leaves the registry, so the audit would now be refused if it were
// filed. A node catching up still adopts the epoch (the audit counts unbacked, as a recheck
// makes it count everywhere), and blames no peer for it: at first such a node penalized
// every honest peer, graylisted them, and never caught up.
func TestLoggedAuditsWhoseFactsChangedAreAdopted(t *testing.T) {
	f := &fakeChain{agents: map[string]bool{}, wallets: map[string]common.Address{}}
	a, nodeKey, audits := loggedAudits(t, f)
	for _, au := range audits {
		f.wallets[au.Auditor] = common.HexToAddress("0xbeef")
		f.wallets[au.Subject] = common.HexToAddress("0xbeef")
		delete(f.agents, au.Subject)
	}
	adoptedFrom(t, f, nodeKey, a)
}

// loggedAudits starts node A on f, files two audits at it (by X of Y and by Y of Z, fresh
// agents) and closes their epoch; it returns A, its key and the audits.
func loggedAudits(t *testing.T, f *fakeChain) (*syncNode, *identity.Key, []*reputation.Audit) {
	t.Helper()
	ctx := context.Background()
	nodeKey, _ := identity.GenerateKey(identity.Ed25519)
	a := startSyncNode(t, f, keySigner{nodeKey})
	raws := signedAudits(t, f, 2)
	a.file(t, raws...)
	if _, err := a.log.CloseEpochs(ctx, syncLater()); err != nil {
		t.Fatal(err)
	}
	v := identity.NewVerifier(identity.VerifierConfig{})
	var audits []*reputation.Audit
	for _, raw := range raws {
		verified, err := v.CheckArchived(ctx, raw)
		if err != nil {
			t.Fatal(err)
		}
		au, err := reputation.ParseAudit(&verified.Envelope)
		if err != nil {
			t.Fatal(err)
		}
		audits = append(audits, au)
	}
	return a, nodeKey, audits
}

// adoptedFrom starts node B on f (with A's key: nodes are staked alike here) and has it
// catch up from A: B adopts A's epoch whole, with its two audits and its root, and holds
// nothing against A, whatever the facts behind the audits became since A logged them.
func adoptedFrom(t *testing.T, f *fakeChain, nodeKey *identity.Key, a *syncNode) *syncNode {
	t.Helper()
	b := startSyncNode(t, f, keySigner{nodeKey}, a.node.Info())
	if st := b.syncer.Round(context.Background()); st.Bad != 0 {
		t.Fatalf("round: %+v", st)
	}
	if b.log.Head().Root != a.log.Head().Root || b.audits(t) != 2 {
		t.Fatalf("B: head %+v, %d audits; A: %+v", b.log.Head(), b.audits(t), a.log.Head())
	}
	if p := b.node.Penalty(a.node.Host.ID()); p != 0 {
		t.Errorf("A was penalized (%v) for audits whose facts changed after it logged them", p)
	}
	return b
}

// TestAdoptedLeavesPassTheRules (issue 25, point 2): an adopted epoch's leaves pass the same
// acceptance rules as gossip. A logged an audit by X of Y and one by Y of Z; then X and Y came to
// be bound to one wallet (X auditing Y is one party auditing itself, which gossip refuses). B
// adopts A's epoch: the leaf stays (the root is the network's) but X's audit of Y counts 0 on
// B, where at 8ad4263 it counted unbacked; A's recheck of X makes it count 0 there too, so
// both give the same scores; and when the facts change back, it counts again on both.
func TestAdoptedLeavesPassTheRules(t *testing.T) {
	ctx := context.Background()
	f := &fakeChain{agents: map[string]bool{}, wallets: map[string]common.Address{}}
	a, nodeKey, audits := loggedAudits(t, f)
	x, y, z := audits[0].Auditor, audits[0].Subject, audits[1].Subject
	f.wallets[x], f.wallets[y] = common.HexToAddress("0xbeef"), common.HexToAddress("0xbeef")
	b := adoptedFrom(t, f, nodeKey, a)
	counts := func(n *syncNode, did string) int {
		t.Helper()
		if err := n.svc.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		r, err := n.svc.Reputation(ctx, did)
		if err != nil {
			t.Fatal(err)
		}
		return r.Audits
	}
	if got := counts(b, y); got != 0 {
		t.Errorf("B counts %d audits of Y; want 0: X's audit of Y is one party auditing itself now", got)
	}
	if got := counts(b, z); got != 1 {
		t.Errorf("B counts %d audits of Z; want 1", got)
	}
	if err := a.svc.Recheck(ctx, []string{x}, nil); err != nil {
		t.Fatal(err)
	}
	same := func(when string, want int) {
		t.Helper()
		for _, did := range []string{y, z} {
			ra, rb := reputationJSON(t, a.svc, did), reputationJSON(t, b.svc, did)
			if ra != rb {
				t.Errorf("%s: A and B differ on %s:\n%s\n%s", when, did, ra, rb)
			}
		}
		if got := counts(a, y); got != want {
			t.Errorf("%s: A counts %d audits of Y, want %d", when, got, want)
		}
	}
	same("X and Y bound to one wallet", 0)

	f.wallets[x] = common.HexToAddress("0xcafe") // X moves to a wallet of its own: it passes again
	for _, n := range []*syncNode{a, b} {
		if err := n.svc.Recheck(ctx, []string{x}, nil); err != nil {
			t.Fatal(err)
		}
	}
	same("X bound to a wallet of its own again", 1)
}

// TestAnUnstakedPeerVetoesNothing: staked A and C closed an epoch; an unstaked peer S closed
// another. B, which missed half the epoch's audits while away, adopts A and C's epoch: S's head
// is no node's word, for or against. At the first cut of the quorum S's head still counted as a
// contradiction, so B never adopted, closed the epoch itself with half its audits and forked
// for good (the review's veto attack).
func TestAnUnstakedPeerVetoesNothing(t *testing.T) {
	ctx := context.Background()
	keyA, _ := identity.GenerateKey(identity.Ed25519)
	keyB, _ := identity.GenerateKey(identity.Ed25519)
	keyC, _ := identity.GenerateKey(identity.Ed25519)
	keyS, _ := identity.GenerateKey(identity.Ed25519)
	f := &fakeChain{agents: map[string]bool{}, quorum: 2,
		nodes: map[string]bool{keyA.DID.String(): true, keyB.DID.String(): true, keyC.DID.String(): true}}
	a := startSyncNode(t, f, keySigner{keyA})
	c := startSyncNode(t, f, keySigner{keyC})
	s := startSyncNode(t, f, keySigner{keyS})
	shared := signedAudits(t, f, 4)
	a.file(t, shared...)
	c.file(t, shared...)
	s.file(t, signedAudits(t, f, 1)...)
	for _, n := range []*syncNode{a, c, s} {
		if _, err := n.log.CloseEpochs(ctx, syncLater()); err != nil {
			t.Fatal(err)
		}
	}
	b := startSyncNode(t, f, keySigner{keyB}, a.node.Info(), c.node.Info(), s.node.Info())
	b.file(t, shared[:2]...)
	waitPeers(t, b, 3)
	for range 3 {
		b.syncer.Round(ctx)
	}
	if b.log.Head().Root != a.log.Head().Root || b.audits(t) != 4 {
		t.Fatalf("B: head %+v, %d audits; A and C's head %+v; log sync %+v", b.log.Head(), b.audits(t), a.log.Head(), b.svc.LogSync())
	}
}

// signedAuditsAt are n audits among fresh agents (registered in f), signed at at.
func signedAuditsAt(t *testing.T, f *fakeChain, n int, at time.Time) [][]byte {
	t.Helper()
	var keys []*identity.Key
	for range n + 1 {
		k, _ := identity.GenerateKey(identity.Ed25519)
		keys = append(keys, k)
		f.agents[k.DID.String()] = true
	}
	var out [][]byte
	for i := range n {
		auditor, subject := keys[i], keys[i+1]
		body := fmt.Sprintf(`{"body":{"kind":"surety.audit/1","subject":%q,"envelope":"m-%d","score":0.%d,"evidence":{"hash":%q}}}`,
			subject.DID.String(), i, 1+i%9, hash32)
		filled, err := identity.FillEnvelope([]byte(body), auditor, at, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		jws, err := auditor.SignCompact(filled)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, []byte(jws))
	}
	return out
}

// fileAt files raws as the API would at at. The verifier started a minute before: the tests
// sign audits before they start the nodes that file them.
func (n *syncNode) fileAt(t *testing.T, at time.Time, raws ...[]byte) {
	t.Helper()
	v := identity.NewVerifier(identity.VerifierConfig{Started: at.Add(-time.Minute), Now: func() time.Time { return at.Add(time.Second) }})
	for _, raw := range raws {
		verified, err := v.Verify(context.Background(), raw)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := n.svc.Submit(context.Background(), verified, raw); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAnOmissionVetoesNothing: an unstaked peer S answers for heads with the staked node A's
// own heads, the head of epoch E1 left out. At the first cut of the quorum, "past E1's size
// without E1's head, signed by a staked node" counted as a contradiction, so B, asking S to
// confirm, never adopted A and C's epochs (the second review); what a peer leaves out proves
// nothing, only a signed head contradicts.
func TestAnOmissionVetoesNothing(t *testing.T) {
	ctx := context.Background()
	keyA, _ := identity.GenerateKey(identity.Ed25519)
	keyB, _ := identity.GenerateKey(identity.Ed25519)
	keyC, _ := identity.GenerateKey(identity.Ed25519)
	f := &fakeChain{agents: map[string]bool{}, quorum: 2,
		nodes: map[string]bool{keyA.DID.String(): true, keyB.DID.String(): true, keyC.DID.String(): true}}
	a := startSyncNode(t, f, keySigner{keyA})
	c := startSyncNode(t, f, keySigner{keyC})
	t1, t2 := time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour)
	e1, e2 := signedAuditsAt(t, f, 4, t1), signedAuditsAt(t, f, 4, t2)
	for _, n := range []*syncNode{a, c} {
		n.fileAt(t, t1, e1...)
		n.fileAt(t, t2, e2...)
		if heads, err := n.log.CloseEpochs(ctx, syncLater()); err != nil || len(heads) != 2 {
			t.Fatalf("closed %+v, %v", heads, err)
		}
	}
	if a.log.Head().Root != c.log.Head().Root {
		t.Fatal("A and C differ")
	}
	first, _ := a.log.HeadsFrom(ctx, 0, 10)
	// S: no key that counts, no log; it answers for heads with A's, E1's left out.
	sctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	sn, err := p2p.Start(sctx, p2p.Config{Listen: []string{"/ip4/127.0.0.1/tcp/0"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sn.Close() })
	sy := p2p.NewSyncer(sn, p2p.SyncConfig{})
	sy.Handle("audit-log.heads", func(ctx context.Context, _ peer.ID, body json.RawMessage) (any, error) {
		var r struct {
			From uint64 `json:"from"`
		}
		_ = json.Unmarshal(body, &r)
		hs, err := a.log.HeadsFrom(ctx, r.From, 100)
		var out []reputation.Head
		for _, h := range hs {
			if h.Epoch != first[0].Epoch {
				out = append(out, h)
			}
		}
		return out, err
	})
	b := startSyncNode(t, f, keySigner{keyB}, a.node.Info(), c.node.Info(), sn.Info())
	waitPeers(t, b, 3)
	for range 5 {
		b.syncer.Round(ctx)
	}
	if b.log.Head().Root != a.log.Head().Root {
		t.Errorf("B did not adopt A and C's epochs: an unstaked peer vetoed them with A's own heads (B: head %+v; A's %+v; log sync %+v)",
			b.log.Head(), a.log.Head(), b.svc.LogSync())
	}
}
