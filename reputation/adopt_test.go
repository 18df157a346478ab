package reputation_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/surety-ioa/surety/identity"
)

// TestAdoptedAuditsPassTheRules: the audits of an epoch a node adopts from a peer go through
// the acceptance rules as the chain stands now, as gossip's do (issue 25: at 5ab6450 adopted
// leaves skipped them). A logged a poster's audit of its worker, backed by bounty 7; B adopts
// A's epoch. Where the facts still hold, the audit is backed on B as on A; where the worker's
// DID was bound to the poster's wallet since (one wallet auditing itself), B keeps the leaf (the
// root needs it) but refused: unbacked, and counting 0 (TestAdoptedLeavesPassTheRules).
func TestAdoptedAuditsPassTheRules(t *testing.T) {
	for _, tt := range []struct {
		name        string
		sameWallet  bool
		wantBacked  int
		wantRefused int
	}{
		{name: "the rules pass", wantBacked: 1},
		{name: "auditor and subject share a wallet since", sameWallet: true, wantBacked: 0, wantRefused: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			poster, worker, f := settledBounty()
			nodeKey, _ := identity.GenerateKey(identity.Ed25519)
			a := startSyncNode(t, f, keySigner{nodeKey})
			raw := syncBackedAudit(t, poster, worker.DID.String(), 7)
			a.file(t, raw)
			if _, err := a.log.CloseEpochs(ctx, syncLater()); err != nil {
				t.Fatal(err)
			}
			if got := a.backed(t); got != 1 {
				t.Fatalf("A holds %d backed audits, want 1", got)
			}
			if tt.sameWallet {
				f.wallets[worker.DID.String()] = f.wallets[poster.DID.String()]
			}
			b := startSyncNode(t, f, keySigner{nodeKey}, a.node.Info())
			if st := b.syncer.Round(ctx); st.Bad != 0 {
				t.Fatalf("round: %+v", st)
			}
			if b.log.Head().Root != a.log.Head().Root || b.audits(t) != 1 {
				t.Fatalf("B: head %+v, %d audits; A: %+v", b.log.Head(), b.audits(t), a.log.Head())
			}
			if got := b.backed(t); got != tt.wantBacked {
				t.Errorf("B holds %d backed audits after adopting A's epoch, want %d", got, tt.wantBacked)
			}
			var refused int
			if err := b.db.QueryRow(`SELECT COUNT(*) FROM reputation_audits WHERE refused != ''`).Scan(&refused); err != nil {
				t.Fatal(err)
			}
			if refused != tt.wantRefused {
				t.Errorf("B holds %d refused audits after adopting A's epoch, want %d", refused, tt.wantRefused)
			}
		})
	}
}

// backed counts the audits n holds that a settlement backs.
func (n *syncNode) backed(t *testing.T) int {
	t.Helper()
	var c int
	if err := n.db.QueryRow(`SELECT COUNT(*) FROM reputation_audits WHERE side != ''`).Scan(&c); err != nil {
		t.Fatal(err)
	}
	return c
}

// syncBackedAudit is k's audit of subject over bounty id, signed now for the sync nodes' rules
// (startSyncNode: chain 0, the zero escrow).
func syncBackedAudit(t *testing.T, k *identity.Key, subject string, id uint64) []byte {
	t.Helper()
	now := time.Now()
	payload := `{"iat":` + strconv.FormatInt(now.Unix(), 10) + `,"bounty":{"chain_id":0,"escrow":"0x0000000000000000000000000000000000000000","id":` +
		strconv.FormatUint(id, 10) + `},"body":{"kind":"surety.audit/1","subject":"` + subject + `","score":0.9,"evidence":{"hash":"` + hash32 + `"}}}`
	filled, err := identity.FillEnvelope([]byte(payload), k, now, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := k.SignCompact(filled)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(jws)
}
