package identity_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
)

// cheapKDF keeps tests fast; production uses identity.DefaultKDF.
var cheapKDF = identity.KDFParams{N: 1 << 10, R: 8, P: 1}

func openStore(t *testing.T, now *time.Time) *identity.Store {
	t.Helper()
	s, err := identity.OpenStore(context.Background(), testutil.DB(t), identity.StoreConfig{
		Passphrase: []byte("correct horse"), KDF: cheapKDF, Now: func() time.Time { return *now },
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNodeKeyIsCreatedOnceAndSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "surety.db")
	open := func(pass string) (*identity.Store, func()) {
		db, err := sqlite.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		s, err := identity.OpenStore(ctx, db, identity.StoreConfig{Passphrase: []byte(pass), KDF: cheapKDF})
		if err != nil {
			t.Fatal(err)
		}
		return s, func() { db.Close() }
	}
	s, closeDB := open("pass-1")
	k1, created, err := s.NodeKey(ctx)
	if err != nil || !created {
		t.Fatalf("first NodeKey: created=%v err=%v", created, err)
	}
	closeDB()

	s, closeDB = open("pass-1")
	k2, created, err := s.NodeKey(ctx)
	if err != nil || created {
		t.Fatalf("second NodeKey: created=%v err=%v", created, err)
	}
	if k1.DID.String() != k2.DID.String() {
		t.Errorf("node DID changed across restarts: %s → %s", k1.DID, k2.DID)
	}
	closeDB()

	s, closeDB = open("wrong")
	defer closeDB()
	if _, _, err := s.NodeKey(ctx); !errors.Is(err, identity.ErrWrongPassphrase) {
		t.Errorf("NodeKey with a wrong passphrase = %v, want ErrWrongPassphrase", err)
	}
}

func TestHostedKeysAndRecords(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	s := openStore(t, &now)
	k, err := identity.GenerateKey(identity.Secp256k1)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutKey(ctx, k, "hosted"); err != nil {
		t.Fatal(err)
	}
	got, err := s.Key(ctx, k.DID.String())
	if err != nil || got.DID.String() != k.DID.String() {
		t.Fatalf("Key = %v, %v", got, err)
	}
	if _, err := s.Key(ctx, "did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp"); !errors.Is(err, identity.ErrNotFound) {
		t.Errorf("unknown key: %v", err)
	}
	rec, err := s.Record(ctx, k.DID.String())
	if err != nil || rec.Kind != "hosted" {
		t.Fatalf("Record = %+v, %v", rec, err)
	}
}

func TestRegisterTwiceIsRefused(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	s := openStore(t, &now)
	d, _ := identity.ParseDID("did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp")
	if err := s.Register(ctx, d); err != nil {
		t.Fatal(err)
	}
	if err := s.Register(ctx, d); !errors.Is(err, identity.ErrAlreadyRegistered) {
		t.Errorf("second Register = %v", err)
	}
}

func TestChallengesAreOneTimeAndExpire(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	s := openStore(t, &now)
	c, err := s.NewChallenge(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.UseChallenge(ctx, c.Challenge); err != nil {
		t.Fatalf("first use: %v", err)
	}
	if err := s.UseChallenge(ctx, c.Challenge); !errors.Is(err, identity.ErrBadChallenge) {
		t.Errorf("second use = %v, want ErrBadChallenge", err)
	}
	late, _ := s.NewChallenge(ctx)
	now = now.Add(6 * time.Minute)
	if err := s.UseChallenge(ctx, late.Challenge); !errors.Is(err, identity.ErrBadChallenge) {
		t.Errorf("expired challenge = %v, want ErrBadChallenge", err)
	}
	if err := s.UseChallenge(ctx, "never issued"); !errors.Is(err, identity.ErrBadChallenge) {
		t.Errorf("unknown challenge = %v", err)
	}
}

func TestOpenStoreNeedsAPassphrase(t *testing.T) {
	_, err := identity.OpenStore(context.Background(), testutil.DB(t), identity.StoreConfig{})
	if err == nil || !strings.Contains(err.Error(), "passphrase") {
		t.Errorf("OpenStore without passphrase = %v", err)
	}
}

func TestRegistrationCredential(t *testing.T) {
	node, err := identity.GenerateKey(identity.Ed25519)
	if err != nil {
		t.Fatal(err)
	}
	agent, _ := identity.GenerateKey(identity.Secp256k1)
	jwt, err := identity.IssueRegistrationCredential(node, agent.DID, "registered", time.Unix(1_800_000_000, 0))
	if err != nil {
		t.Fatal(err)
	}
	vc, err := identity.VerifyCredential(jwt)
	if err != nil {
		t.Fatalf("VerifyCredential: %v", err)
	}
	if vc.Issuer.ID != node.DID.String() || vc.Types[1] != identity.RegistrationCredentialType {
		t.Errorf("credential = issuer %s types %v", vc.Issuer.ID, vc.Types)
	}
	// Flip a byte of the signature: aries must refuse it.
	b := []byte(jwt)
	b[len(b)-5] ^= 1
	if _, err := identity.VerifyCredential(string(b)); !errors.Is(err, identity.ErrBadCredential) {
		t.Errorf("tampered credential = %v, want ErrBadCredential", err)
	}
}
