package reputation_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/reputation"
)

type stakeMap map[string]float64

func (m stakeMap) StakedAgents(context.Context) (map[string]float64, error) { return m, nil }

// signedAudit signs an audit of subject's bounty id by k and verifies it as the API would.
func signedAudit(t *testing.T, v *identity.Verifier, k *identity.Key, subject string, id uint64, score string) (*identity.Verified, []byte) {
	t.Helper()
	payload := `{"bounty":{"chain_id":1337,"escrow":"` + escrow + `","id":` + strconv.FormatUint(id, 10) + `},"body":{"kind":"surety.audit/1","subject":"` + subject + `","score":` + score + `,"evidence":{"hash":"` + hash32 + `"}}}`
	filled, err := identity.FillEnvelope([]byte(payload), k, time.Now(), time.Minute)
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

func TestServiceScoresSubmittedAudits(t *testing.T) {
	ctx := context.Background()
	poster, _ := identity.GenerateKey(identity.Ed25519)
	worker, _ := identity.GenerateKey(identity.Ed25519)
	posterWallet, workerWallet := common.HexToAddress("0xa1"), common.HexToAddress("0xa3")
	f := &fakeChain{
		bounties: map[uint64]reputation.BountyFacts{7: {Finished: true, Poster: posterWallet, Worker: workerWallet}},
		wallets:  map[string]common.Address{poster.DID.String(): posterWallet, worker.DID.String(): workerWallet},
		agents:   map[string]bool{poster.DID.String(): true, worker.DID.String(): true},
	}
	svc := reputation.NewService(reputation.ServiceConfig{
		Store:  openStore(t),
		Rules:  &reputation.Rules{ChainID: 1337, Escrow: common.HexToAddress(escrow), Bounties: f, Wallets: f, Agents: f},
		Stakes: stakeMap{poster.DID.String(): 1},
		Every:  10 * time.Millisecond,
	})
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = svc.Run(runCtx) }()

	v := identity.NewVerifier(identity.VerifierConfig{Started: time.Now().Add(-time.Minute)})
	verified, raw := signedAudit(t, v, poster, worker.DID.String(), 7, "0.9")
	got, err := svc.Submit(ctx, verified, raw)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Current || !got.Audit.Backed {
		t.Fatalf("submitted %+v", got)
	}
	if _, err := svc.Submit(ctx, verified, raw); !errors.Is(err, reputation.ErrDuplicate) {
		t.Errorf("the same audit again: %v", err)
	}
	// Refused: an unknown bounty.
	bad, badRaw := signedAudit(t, v, poster, worker.DID.String(), 99, "0.9")
	if _, err := svc.Submit(ctx, bad, badRaw); !errors.Is(err, reputation.ErrUnknownBounty) {
		t.Errorf("audit of an unknown bounty: %v", err)
	}

	// Run picks the new audit up.
	deadline := time.Now().Add(5 * time.Second)
	var rep *reputation.Reputation
	for time.Now().Before(deadline) {
		if rep, err = svc.Reputation(ctx, worker.DID.String()); err == nil && rep.Audits == 1 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if rep == nil || rep.Audits != 1 || rep.Score <= 0.6 || rep.Confidence <= 0 || len(rep.Feeding) != 1 || rep.Feeding[0].Leaf != reputation.LeafHash(raw) {
		t.Fatalf("reputation = %+v", rep)
	}
	top := svc.Top(ctx, 10)
	if len(top) != 1 || top[0].DID != worker.DID.String() {
		t.Errorf("top = %+v", top)
	}
	if w, _ := svc.Weight(ctx, worker.DID.String()); w != 2*rep.Score {
		t.Errorf("registry weight %v, want %v", w, 2*rep.Score)
	}
	if w, _ := svc.Weight(ctx, "did:key:zNobody"); w != 1 {
		t.Errorf("an unknown agent weighs %v, want 1", w)
	}
}
