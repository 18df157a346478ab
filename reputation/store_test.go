package reputation_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/reputation"
)

// openChainStore is a fresh database with one chain entered and the reputation tables.
func openChainStore(t testing.TB) (*sql.DB, int64, *reputation.Store) {
	t.Helper()
	ctx := context.Background()
	db := testutil.DB(t)
	row, err := sqlite.EnterChain(ctx, db, sqlite.Chain{Key: "t", ChainID: 1337, Genesis: "g", Contracts: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := reputation.OpenStore(ctx, db, row)
	if err != nil {
		t.Fatal(err)
	}
	return db, row, s
}

func openStore(t *testing.T) *reputation.Store {
	t.Helper()
	_, _, s := openChainStore(t)
	return s
}

// auditAt is an audit of subject's bounty 7 by auditor at time, with the envelope bytes it
// "came in" (distinct per time and score).
func auditAt(auditor string, time int64, score float64) (*reputation.Audit, []byte) {
	a := &reputation.Audit{Auditor: auditor, Subject: subject, Bounty: &identity.BountyRef{ChainID: 1337, Escrow: common.HexToAddress(escrow).Hex(), ID: 7},
		Score: score, Evidence: reputation.Evidence{Hash: common.HexToHash(hash32), URI: "https://audits.example/7"}, Time: time}
	return a, []byte(fmt.Sprintf("envelope %s %d %v", auditor, time, score))
}

// TestLatestAuditCountsWhateverTheOrder: three audits of one target, added in every order,
// leave the latest current and the others superseded by it.
func TestLatestAuditCountsWhateverTheOrder(t *testing.T) {
	ctx := context.Background()
	orders := [][]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}
	for _, order := range orders {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			s := openStore(t)
			times := []int64{100, 200, 300}
			for _, i := range order {
				a, raw := auditAt(auditor, times[i], float64(i)/2)
				var v reputation.Verdict
				if i == 2 {
					v = reputation.Verdict{Side: reputation.SidePoster, Settled: 1}
				}
				if _, err := s.Add(ctx, a, raw, v); err != nil {
					t.Fatal(err)
				}
			}
			probe, _ := auditAt(auditor, 0, 0)
			if err := reputation.SettleSide(ctx, s, probe.Target(), reputation.SidePoster); err != nil {
				t.Fatal(err)
			}
			cur, err := s.Current(ctx, subject)
			if err != nil {
				t.Fatal(err)
			}
			if len(cur) != 1 || cur[0].Time != 300 || cur[0].Score != 1 || !cur[0].Backed {
				t.Fatalf("current = %+v", cur)
			}
			a := cur[0]
			if a.Bounty == nil || a.Bounty.ID != 7 || a.Bounty.ChainID != 1337 || a.Evidence.Hash != common.HexToHash(hash32) || a.Evidence.URI == "" {
				t.Errorf("read back %+v (bounty %+v)", a, a.Bounty)
			}
			g, dids, err := s.Graph(ctx, 400, map[string]float64{auditor: 2})
			if err != nil {
				t.Fatal(err)
			}
			if len(dids) != 2 || len(g.Audits) != 1 || g.Audits[0].Age != 100 || g.Stake[0]+g.Stake[1] != 2 {
				t.Errorf("graph %+v over %v", g, dids)
			}
		})
	}
}

func TestStoreRefusesDuplicatesAndKeepsTargetsApart(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	a, raw := auditAt(auditor, 100, 1)
	if cur, err := s.Add(ctx, a, raw, reputation.Verdict{Side: reputation.SidePoster, Settled: 1}); err != nil || !cur {
		t.Fatalf("first add: %v, %v", cur, err)
	}
	if _, err := s.Add(ctx, a, raw, reputation.Verdict{Side: reputation.SidePoster, Settled: 1}); !errors.Is(err, reputation.ErrDuplicate) {
		t.Errorf("the same envelope again: %v", err)
	}
	// Another target (an envelope), and another auditor: both count too.
	b, rawB := auditAt(auditor, 50, 0.5)
	b.Bounty, b.Envelope = nil, "msg-1"
	c, rawC := auditAt("did:key:z6MkpTHR8VNsBxYAAWHut2Geadd9jSwuBV8xRoAnwWsdvktH", 60, 0.2)
	for _, x := range []struct {
		a   *reputation.Audit
		raw []byte
	}{{b, rawB}, {c, rawC}} {
		if cur, err := s.Add(ctx, x.a, x.raw, reputation.Verdict{}); err != nil || !cur {
			t.Fatalf("add %s: %v, %v", x.a.Target(), cur, err)
		}
	}
	cur, err := s.Current(ctx, subject)
	if err != nil || len(cur) != 3 {
		t.Fatalf("current = %d audits, %v", len(cur), err)
	}
	if cur[2].Envelope != "msg-1" || cur[2].Bounty != nil {
		t.Errorf("the envelope audit read back as %+v", cur[2])
	}
}
