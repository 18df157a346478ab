package reputation_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/google/go-cmp/cmp"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/reputation"
)

// idleService is a service over f's chain at a fixed clock, not running: the test drives it.
func idleService(t *testing.T, f *fakeChain, stakes reputation.StakeSource, now time.Time) *reputation.Service {
	t.Helper()
	return reputation.NewService(reputation.ServiceConfig{
		Store:  openStore(t),
		Rules:  &reputation.Rules{ChainID: 1337, Escrow: common.HexToAddress(escrow), Bounties: f, Wallets: f, Agents: f},
		Stakes: stakes,
		Now:    func() time.Time { return now },
	})
}

func reputationJSON(t *testing.T, svc *reputation.Service, did string) string {
	t.Helper()
	if err := svc.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	r, err := svc.Reputation(context.Background(), did)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(r)
	return string(b)
}

// TestLateBindingBacksTheAudit: an audit that reached a node before the binding of its
// auditor to the bounty's poster counts unbacked there at first; once the binding is indexed
// (Recheck) the node's scores equal, to the bit, those of a node that had the binding first.
func TestLateBindingBacksTheAudit(t *testing.T) {
	ctx := context.Background()
	poster, worker, chainLate := settledBounty()
	posterWallet := chainLate.wallets[poster.DID.String()]
	delete(chainLate.wallets, poster.DID.String()) // this node has not indexed the binding yet
	_, _, chainFirst := settledBounty()
	chainFirst.wallets = map[string]common.Address{poster.DID.String(): posterWallet, worker.DID.String(): chainLate.wallets[worker.DID.String()]}
	chainFirst.agents = chainLate.agents
	stakes := stakeMap{poster.DID.String(): 1}
	now := time.Now()
	late, first := idleService(t, chainLate, stakes, now), idleService(t, chainFirst, stakes, now)

	v := identity.NewVerifier(identity.VerifierConfig{Started: now.Add(-time.Minute)})
	verified, raw := signedAudit(t, v, poster, worker.DID.String(), 7, "0.9")
	res, err := late.Submit(ctx, verified, raw)
	if err != nil || res.Audit.Backed {
		t.Fatalf("before the binding: %+v, %v; want accepted unbacked", res, err)
	}
	if _, err := first.Submit(ctx, verified, raw); err != nil {
		t.Fatal(err)
	}
	want := reputationJSON(t, first, worker.DID.String())
	if got := reputationJSON(t, late, worker.DID.String()); got == want {
		t.Fatalf("an unbacked audit scored as a backed one: %s", got)
	}

	chainLate.wallets[poster.DID.String()] = posterWallet // the binding is indexed
	// Among many DIDs whose bindings changed (more than one query takes), the poster twice.
	changed := []string{poster.DID.String()}
	for i := range 1500 {
		changed = append(changed, fmt.Sprintf("did:key:zUnrelated%d", i))
	}
	changed = append(changed, poster.DID.String())
	if err := late.Recheck(ctx, changed, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, reputationJSON(t, late, worker.DID.String())); diff != "" {
		t.Errorf("after the recheck the scores differ from the node that had the binding first (-first +late):\n%s", diff)
	}
	// And the same at once, before any recomputation: the recheck moves the score itself.
	r, _ := late.Reputation(ctx, worker.DID.String())
	if len(r.Feeding) != 1 || !r.Feeding[0].Backed {
		t.Errorf("the stored audit is not backed after the recheck: %+v", r.Feeding)
	}
}

// TestHeldAuditCountsOnceItsBountyIsIndexed: an audit gossiped before its bounty reached this
// node's escrow index is held, not dropped, and counts once the bounty is indexed.
func TestHeldAuditCountsOnceItsBountyIsIndexed(t *testing.T) {
	ctx := context.Background()
	poster, worker, f := settledBounty()
	facts := f.bounties[7]
	delete(f.bounties, 7)
	svc := idleService(t, f, stakeMap{poster.DID.String(): 1}, time.Now())
	v := identity.NewVerifier(identity.VerifierConfig{Started: time.Now().Add(-time.Minute)})
	verified, raw := signedAudit(t, v, poster, worker.DID.String(), 7, "0.8")
	if _, err := svc.Submit(ctx, verified, raw); err == nil {
		t.Fatal("an audit of a bounty the index lacks was accepted")
	}
	if err := reputation.Hold(ctx, svc, verified, raw); err != nil {
		t.Fatal(err)
	}
	if n, err := svc.RetryHeld(ctx); err != nil || n != 0 {
		t.Fatalf("RetryHeld before the bounty is indexed = %d, %v; want 0 (still held)", n, err)
	}
	f.bounties[7] = facts
	if err := svc.Recheck(ctx, nil, []uint64{7}); err != nil {
		t.Fatal(err)
	}
	r, err := svc.Reputation(ctx, worker.DID.String())
	if err != nil || len(r.Feeding) != 1 || r.Feeding[0].Leaf != reputation.LeafHash(raw) || !r.Feeding[0].Backed {
		t.Fatalf("after the bounty was indexed: %+v, %v; want the held audit, backed", r, err)
	}
	if n, err := svc.RetryHeld(ctx); err != nil || n != 0 {
		t.Errorf("the audit is still held after it was accepted: %d, %v", n, err)
	}
}

// TestScoresUseTheSharedClock: two nodes that compute at different instants of the same
// clock step report the same scores and computation time.
func TestScoresUseTheSharedClock(t *testing.T) {
	ctx := context.Background()
	poster, worker, f := settledBounty()
	step := time.Now().Truncate(time.Minute)
	a := idleService(t, f, stakeMap{poster.DID.String(): 1}, step.Add(3*time.Second))
	b := idleService(t, f, stakeMap{poster.DID.String(): 1}, step.Add(41*time.Second))
	v := identity.NewVerifier(identity.VerifierConfig{Started: time.Now().Add(-time.Minute)})
	verified, raw := signedAudit(t, v, poster, worker.DID.String(), 7, "0.7")
	for _, svc := range []*reputation.Service{a, b} {
		if _, err := svc.Submit(ctx, verified, raw); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(reputationJSON(t, a, worker.DID.String()), reputationJSON(t, b, worker.DID.String())); diff != "" {
		t.Errorf("the same audits at two instants of one step differ (-a +b):\n%s", diff)
	}
}
