package reputation_test

import (
	"cmp"
	"context"
	"errors"
	"math/big"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/p2p"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/reputation/merkle"
)

// TestHeldAuditsAreCountedPerAuditor: the held-audits table is shared by every auditor, so
// it is accounted per auditor: a bound auditor holds at most MaxHeldPerAuditor, the unbound
// ones hold one each and MaxHeldUnbound together. Junk from fresh keys about subjects nobody
// knows (at 409c49a it filled all 1,000 slots, unpenalized) leaves room for a bound
// auditor's audit of a bounty the index has not reached, which counts once it has.
func TestHeldAuditsAreCountedPerAuditor(t *testing.T) {
	ctx := context.Background()
	poster, worker, f := settledBounty()
	facts := f.bounties[7]
	delete(f.bounties, 7)
	flooder, _ := identity.GenerateKey(identity.Ed25519)
	f.wallets[flooder.DID.String()] = common.HexToAddress("0xf1")
	now := time.Now()
	svc := idleService(t, f, stakeMap{poster.DID.String(): 1}, now)
	v := identity.NewVerifier(identity.VerifierConfig{Started: now.Add(-time.Minute)})
	hold := func(by *identity.Key, subject string) {
		t.Helper()
		verified, raw := signedAudit(t, v, by, subject, 7, "0.1")
		if err := reputation.Hold(ctx, svc, verified, raw); err != nil {
			t.Fatal(err)
		}
	}
	unknown := func() string { k, _ := identity.GenerateKey(identity.Ed25519); return k.DID.String() }
	for range 20 { // a bound auditor's flood
		hold(flooder, unknown())
	}
	for range reputation.MaxHeld + 200 { // fresh keys, one audit each
		k, _ := identity.GenerateKey(identity.Ed25519)
		hold(k, unknown())
	}
	honest, raw := signedAudit(t, v, poster, worker.DID.String(), 7, "0.9")
	if err := reputation.Hold(ctx, svc, honest, raw); err != nil {
		t.Fatal(err)
	}

	held, err := reputation.HeldBy(ctx, svc)
	if err != nil {
		t.Fatal(err)
	}
	unbound := 0
	for did, n := range held {
		if _, ok := f.wallets[did]; !ok {
			unbound += n
		}
	}
	if unbound > reputation.MaxHeldUnbound {
		t.Errorf("unbound auditors hold %d audits, want at most %d", unbound, reputation.MaxHeldUnbound)
	}
	if n := held[flooder.DID.String()]; n > reputation.MaxHeldPerAuditor {
		t.Errorf("one bound auditor holds %d audits, want at most %d", n, reputation.MaxHeldPerAuditor)
	}
	if held[poster.DID.String()] != 1 {
		t.Errorf("the honest audit is not held (the table holds %d audits of %d auditors)", sum(held), len(held))
	}

	f.bounties[7] = facts
	if err := svc.Recheck(ctx, nil, []uint64{7}); err != nil {
		t.Fatal(err)
	}
	if r, err := svc.Reputation(ctx, worker.DID.String()); err != nil || len(r.Feeding) != 1 || !r.Feeding[0].Backed {
		t.Errorf("once the bounty is indexed: %+v, %v; want the honest audit, backed", r, err)
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestAuditWindowTakesEachAuditorInTurn: the audits a node offers anti-entropy are bounded
// (maxSyncAudits); auditors bound on chain come first, each auditor's newest in turn, so
// neither fresh keys nor one bound auditor's flood push another's audits out of the window
// before its epoch closes (at 409c49a the window took the newest of all).
func TestAuditWindowTakesEachAuditorInTurn(t *testing.T) {
	ctx := context.Background()
	poster, worker, f := settledBounty()
	flooder, _ := identity.GenerateKey(identity.Ed25519)
	f.wallets[flooder.DID.String()] = common.HexToAddress("0xf1")
	now := time.Now()
	// Nobody staked: every word counts, so fresh keys' audits are taken (where anyone is
	// staked they are refused outright: TestFreeAuditorsHoldNothing) and fill the window.
	svc := idleService(t, f, stakeMap{}, now)
	v := identity.NewVerifier(identity.VerifierConfig{Started: now.Add(-time.Minute)})
	file := func(by *identity.Key, ago int) []byte {
		t.Helper()
		verified, raw := signedAuditAt(t, v, by, worker.DID.String(), 7, "0.5", now.Add(-time.Duration(ago)*time.Second))
		if _, err := svc.Submit(ctx, verified, raw); err != nil {
			t.Fatal(err)
		}
		return raw
	}
	var want [][]byte
	for i := range 3 {
		want = append(want, file(poster, 29-i))
	}
	for i := range 20 {
		file(flooder, 25-i)
	}
	for range 50 {
		k, _ := identity.GenerateKey(identity.Ed25519)
		file(k, 2)
	}
	ids, err := reputation.AuditSetWindow(svc, v.CheckArchived, 10).IDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, raw := range want {
		if !slices.Contains(ids, p2p.ID(merkle.LeafHash(raw))) {
			t.Errorf("the honest auditor's audit %d is not in a window of 10", i)
		}
	}
}

// freshStakes is a stake source that also reads one DID's stake now (as stake.Index does):
// late holds stakes bonded since the last recomputation, which StakedAgents has not given.
type freshStakes struct {
	stakeMap
	late map[string]float64
}

func (s freshStakes) Bonded(_ context.Context, did string) (float64, error) {
	if v, ok := s.late[did]; ok {
		return v, nil
	}
	return s.stakeMap[did], nil
}

// TestFreeAuditorsHoldNothing is issue 25's storage half of "free audits dissolve stake": at
// 5ab6450 any fresh did:key's audit of a known agent was stored (224 junk audits on one live
// node), and would be on every node. Where agents are staked, an unbacked audit by an auditor
// with no stake that counts weighs 0 on every node, so it is refused (ErrNoStanding, not
// stored); a backed one (settled value behind it), one by an auditor staked a block ago, and
// any in a network where nobody is staked yet (every word counts evenly there) are taken.
func TestFreeAuditorsHoldNothing(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	v := identity.NewVerifier(identity.VerifierConfig{Started: now.Add(-time.Minute)})
	fresh := func() *identity.Key { k, _ := identity.GenerateKey(identity.Ed25519); return k }
	tests := []struct {
		name    string
		stakes  func(poster, late *identity.Key) reputation.StakeSource
		auditor func(poster, late *identity.Key) *identity.Key
		refused bool
		bounty  uint64 // 7 (the zero value: 7): 1 ETH settled between poster and worker; 9: 1 wei
		early   bool   // filed before the service's first recomputation
	}{
		{"a fresh DID, agents staked", func(p, _ *identity.Key) reputation.StakeSource { return stakeMap{p.DID.String(): 1} },
			func(_, _ *identity.Key) *identity.Key { return fresh() }, true, 0, false},
		{"an auditor below the minimum stake", func(p, l *identity.Key) reputation.StakeSource {
			return stakeMap{p.DID.String(): 1, l.DID.String(): reputation.DefaultMinStake / 2}
		}, func(_, l *identity.Key) *identity.Key { return l }, true, 0, false},
		{"an auditor staked since the last recomputation", func(p, l *identity.Key) reputation.StakeSource {
			return freshStakes{stakeMap{p.DID.String(): 1}, map[string]float64{l.DID.String(): 0.5}}
		}, func(_, l *identity.Key) *identity.Key { return l }, false, 0, false},
		{"the unstaked poster's audit of the bounty it settled", func(_, _ *identity.Key) reputation.StakeSource { return stakeMap{"did:key:other": 1} },
			func(p, _ *identity.Key) *identity.Key { return p }, false, 0, false},
		// The review's door: a wallet posts itself a 1-wei bounty and settles it; every pair of
		// its DIDs would speak for a side. A settlement below the minimum stake prices nothing.
		{"the unstaked poster's audit of a 1-wei bounty", func(_, _ *identity.Key) reputation.StakeSource { return stakeMap{"did:key:other": 1} },
			func(p, _ *identity.Key) *identity.Key { return p }, true, 9, false},
		{"a fresh DID where nobody is staked", func(_, _ *identity.Key) reputation.StakeSource { return stakeMap{} },
			func(_, _ *identity.Key) *identity.Key { return fresh() }, false, 0, false},
		// The first recomputation has not run: the empty snapshot's everyone fallback says
		// nothing of the chain, which has staked agents.
		{"a fresh DID before the first recomputation", func(p, _ *identity.Key) reputation.StakeSource { return stakeMap{p.DID.String(): 1} },
			func(_, _ *identity.Key) *identity.Key { return fresh() }, true, 0, true},
		{"a staked auditor before the first recomputation", func(p, l *identity.Key) reputation.StakeSource {
			return stakeMap{p.DID.String(): 1, l.DID.String(): 0.5}
		}, func(_, l *identity.Key) *identity.Key { return l }, false, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			poster, worker, f := settledBounty()
			tiny := f.bounties[7]
			tiny.Amount = big.NewInt(1)
			f.bounties[9] = tiny
			late := fresh()
			store := openStore(t)
			svc := reputation.NewService(reputation.ServiceConfig{Store: store, Stakes: tt.stakes(poster, late), Now: func() time.Time { return now },
				Rules: &reputation.Rules{ChainID: 1337, Escrow: common.HexToAddress(escrow), Bounties: f, Wallets: f, Agents: f}})
			if !tt.early {
				if err := svc.Refresh(ctx); err != nil {
					t.Fatal(err)
				}
			}
			by := tt.auditor(poster, late)
			bounty := cmp.Or(tt.bounty, 7) // only the poster speaks for a side of either
			verified, raw := signedAudit(t, v, by, worker.DID.String(), bounty, "0.9")
			_, err := svc.Submit(ctx, verified, raw)
			stored, serr := store.Current(ctx, worker.DID.String())
			if serr != nil {
				t.Fatal(serr)
			}
			switch {
			case tt.refused && !errors.Is(err, reputation.ErrNoStanding):
				t.Fatalf("err = %v; want ErrNoStanding", err)
			case tt.refused && len(stored) != 0:
				t.Fatalf("a refused audit was stored: %d", len(stored))
			case !tt.refused && (err != nil || len(stored) != 1):
				t.Fatalf("err = %v, %d stored; want it taken", err, len(stored))
			}
		})
	}
}

// TestJunkAuditsCostNoChainCatchUp: an audit refused for its auditor's standing is tried again
// after the chain indexes catch up only when a wallet binds the auditor (it may have staked a
// block ago); a fresh key's costs the node no catch-up with the chain (the review of issue 25:
// every junk audit made the node read the chain's head and nudge its indexes).
func TestJunkAuditsCostNoChainCatchUp(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	poster, worker, f := settledBounty()
	bound, _ := identity.GenerateKey(identity.Ed25519)
	f.wallets[bound.DID.String()] = common.HexToAddress("0xb0")
	var catchUps atomic.Int32
	svc := reputation.NewService(reputation.ServiceConfig{Store: openStore(t), Stakes: stakeMap{poster.DID.String(): 1}, Now: func() time.Time { return now },
		Rules:   &reputation.Rules{ChainID: 1337, Escrow: common.HexToAddress(escrow), Bounties: f, Wallets: f, Agents: f},
		CatchUp: func(context.Context) error { catchUps.Add(1); return nil }})
	if err := svc.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	v := identity.NewVerifier(identity.VerifierConfig{Started: now.Add(-time.Minute)})
	for range 20 {
		k, _ := identity.GenerateKey(identity.Ed25519)
		verified, raw := signedAudit(t, v, k, worker.DID.String(), 7, "0.1")
		if _, err := svc.Submit(ctx, verified, raw); !errors.Is(err, reputation.ErrNoStanding) {
			t.Fatalf("a fresh key's audit: %v, want ErrNoStanding", err)
		}
	}
	if n := catchUps.Load(); n != 0 {
		t.Errorf("20 fresh keys' audits caught up with the chain %d times, want none", n)
	}
	verified, raw := signedAudit(t, v, bound, worker.DID.String(), 7, "0.1")
	if _, err := svc.Submit(ctx, verified, raw); !errors.Is(err, reputation.ErrNoStanding) {
		t.Fatalf("a bound, unstaked auditor's audit: %v, want ErrNoStanding", err)
	}
	if n := catchUps.Load(); n != 1 {
		t.Errorf("a bound auditor's refused audit caught up %d times, want once (it may have staked a block ago)", n)
	}
}
