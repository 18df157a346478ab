package reputation_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/google/go-cmp/cmp"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/reputation/merkle"
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
	if err != nil || len(r.Feeding) != 1 || r.Feeding[0].Leaf != merkle.LeafHash(raw) || !r.Feeding[0].Backed {
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

// TestOneBackedAuditPerBountyAndSide: five DIDs bound to the poster's wallet all audit the
// worker of one settled bounty; however many they are, and in whichever order they arrive,
// one of them is backed (the same on every node), and the worker's audit of the poster is
// the other side's one.
func TestOneBackedAuditPerBountyAndSide(t *testing.T) {
	ctx := context.Background()
	poster, worker, f := settledBounty()
	posterWallet := f.wallets[poster.DID.String()]
	f.agents[poster.DID.String()] = true
	sybils := []*identity.Key{poster}
	for range 4 {
		k, _ := identity.GenerateKey(identity.Ed25519)
		f.wallets[k.DID.String()] = posterWallet // another DID of the same wallet
		sybils = append(sybils, k)
	}
	v := identity.NewVerifier(identity.VerifierConfig{Started: time.Now().Add(-time.Minute)})
	type filed struct {
		v   *identity.Verified
		raw []byte
	}
	var audits []filed
	for _, k := range sybils {
		verified, raw := signedAudit(t, v, k, worker.DID.String(), 7, "1")
		audits = append(audits, filed{verified, raw})
	}
	back, backRaw := signedAudit(t, v, worker, poster.DID.String(), 7, "0.8") // the other side
	now := time.Now()
	var views []string
	for _, order := range [][]int{{0, 1, 2, 3, 4}, {4, 3, 2, 1, 0}, {2, 0, 4, 1, 3}} {
		svc := idleService(t, f, stakeMap{poster.DID.String(): 1}, now)
		for _, i := range order {
			if _, err := svc.Submit(ctx, audits[i].v, audits[i].raw); err != nil {
				t.Fatal(err)
			}
		}
		if res, err := svc.Submit(ctx, back, backRaw); err != nil || !res.Audit.Backed || res.Audit.Side != reputation.SideWorker {
			t.Fatalf("the worker's audit of the poster: %+v, %v; want backed, side worker", res, err)
		}
		r, err := svc.Reputation(ctx, worker.DID.String())
		if err != nil {
			t.Fatal(err)
		}
		backed := 0
		for _, a := range r.Feeding {
			if a.Backed {
				backed++
			}
		}
		if len(r.Feeding) != 5 || backed != 1 {
			t.Fatalf("order %v: %d audits of the worker, %d backed; want 5, 1", order, len(r.Feeding), backed)
		}
		views = append(views, reputationJSON(t, svc, worker.DID.String()))
	}
	for i := 1; i < len(views); i++ {
		if views[i] != views[0] {
			t.Errorf("arrival order changed the worker's reputation:\n%s\n%s", views[0], views[i])
		}
	}
}

// signedAuditAt signs an audit of subject's bounty id by k, issued at at, and verifies it as
// the API would.
func signedAuditAt(t *testing.T, v *identity.Verifier, k *identity.Key, subject string, id uint64, score string, at time.Time) (*identity.Verified, []byte) {
	t.Helper()
	payload := `{"iat":` + strconv.FormatInt(at.Unix(), 10) + `,"bounty":{"chain_id":1337,"escrow":"` + escrow + `","id":` + strconv.FormatUint(id, 10) +
		`},"body":{"kind":"surety.audit/1","subject":"` + subject + `","score":` + score + `,"evidence":{"hash":"` + hash32 + `"}}}`
	filled, err := identity.FillEnvelope([]byte(payload), k, at, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := k.SignCompact(filled)
	if err != nil {
		t.Fatal(err)
	}
	verified, err := v.Verify(context.Background(), []byte(jws))
	if err != nil {
		t.Fatal(err)
	}
	return verified, []byte(jws)
}

// TestFilingSaysWhatTheAuditCounted: the answer to a filed audit carries its weight and why.
func TestFilingSaysWhatTheAuditCounted(t *testing.T) {
	ctx := context.Background()
	poster, worker, f := settledBounty()
	second, _ := identity.GenerateKey(identity.Ed25519)
	stranger, _ := identity.GenerateKey(identity.Ed25519)
	f.wallets[second.DID.String()] = f.wallets[poster.DID.String()]
	// Bounty 8: the same two wallets, 0.2 ETH and no fee: partly backed.
	small := f.bounties[7]
	small.Amount, small.Fee = big.NewInt(2e17), new(big.Int)
	f.bounties[8] = small
	now := time.Now()
	svc := idleService(t, f, stakeMap{poster.DID.String(): 1}, now)
	v := identity.NewVerifier(identity.VerifierConfig{Started: now.Add(-time.Hour)})
	warm, warmRaw := signedAuditAt(t, v, poster, worker.DID.String(), 7, "0.9", now.Add(-40*time.Second))
	if _, err := svc.Submit(ctx, warm, warmRaw); err != nil {
		t.Fatal(err)
	}
	if err := svc.Refresh(ctx); err != nil { // standings now include the poster's
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		by      *identity.Key
		bounty  uint64
		at      time.Duration // before now
		weighs  bool
		backing float64
		why     []string
	}{
		{"the staked poster's newer audit", poster, 7, 30 * time.Second, true, 1, []string{"backed by the bounty's settlement (poster's side), in full"}},
		{"the poster's second DID, earlier", second, 7, 35 * time.Second, false, 0.1, []string{"your word weighs 0", "a later audit from your side", "no stake of yours that counts"}},
		// A stranger, unstaked, speaks for no side: its word would weigh 0, so it is refused
		// (issue 25: a free identity holds nothing), saying how to gain a word.
		{"a stranger", stranger, 7, 20 * time.Second, false, 0, []string{"has 0 bonded, below the 0.1 that counts", "stake at least that"}},
		{"the poster, of a 0.2 ETH bounty", poster, 8, 10 * time.Second, true, 0.1 + 0.9*0.2, []string{"at 0.28: it settled 0.2 ETH (amount + 200 × fee), and full backing takes 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			verified, raw := signedAuditAt(t, v, tt.by, worker.DID.String(), tt.bounty, "0.5", now.Add(-tt.at))
			res, err := svc.Submit(ctx, verified, raw)
			if tt.backing == 0 {
				if !errors.Is(err, reputation.ErrNoStanding) {
					t.Fatalf("err = %v; want ErrNoStanding", err)
				}
				for _, w := range tt.why {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("refusal %q; want it to say %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := res.Counted
			if (c.Weight > 0) != tt.weighs || math.Abs(c.Backing-tt.backing) > 1e-12 {
				t.Errorf("counted = %+v; want weighing %v, backing %v", c, tt.weighs, tt.backing)
			}
			for _, w := range tt.why {
				if !strings.Contains(c.Why, w) {
					t.Errorf("why = %q; want it to say %q", c.Why, w)
				}
			}
		})
	}
}
