package reputation_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/reputation"
)

const (
	auditor = "did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp"
	subject = "did:key:z6MkjchhfUsD6mmvni8mCdXHw216Xrm9bQe2mBH1P5RDjVJG"
	escrow  = "0x19bc4da49efbe7bbf77d0f12c0ec5fa163e0528e"
	hash32  = "0x0101010101010101010101010101010101010101010101010101010101010101"
)

func envelopeWith(body string, bounty *identity.BountyRef) *identity.Envelope {
	return &identity.Envelope{ID: "e1", Sender: auditor, Bounty: bounty, Body: json.RawMessage(body), IssuedAt: 1700000000, Expires: 1700000600, Nonce: "n"}
}

func TestParseAudit(t *testing.T) {
	bounty := &identity.BountyRef{ChainID: 1337, Escrow: escrow, ID: 7}
	valid := `{"kind":"surety.audit/1","subject":"` + subject + `","score":0.75,"evidence":{"hash":"` + hash32 + `","uri":"https://audits.example/7"}}`
	a, err := reputation.ParseAudit(envelopeWith(valid, bounty))
	if err != nil {
		t.Fatal(err)
	}
	if a.Auditor != auditor || a.Subject != subject || a.Score != 0.75 || a.Time != 1700000000 || a.Evidence.URI != "https://audits.example/7" ||
		a.Target() != "bounty:1337:0x19bc4da49efbe7bbf77d0f12c0ec5fa163e0528e:7" {
		t.Errorf("parsed %+v, target %s", a, a.Target())
	}
	onEnvelope := `{"kind":"surety.audit/1","subject":"` + subject + `","envelope":"abc","score":0,"evidence":{"hash":"` + hash32 + `"}}`
	if a, err := reputation.ParseAudit(envelopeWith(onEnvelope, nil)); err != nil || a.Target() != "envelope:abc" {
		t.Errorf("audit of an envelope: %+v, %v", a, err)
	}

	body := func(replace ...string) string { return strings.NewReplacer(replace...).Replace(valid) }
	tests := []struct {
		name   string
		body   string
		bounty *identity.BountyRef
		says   string
	}{
		{"no body", "", bounty, "no body"},
		{"not JSON", "{", bounty, "body:"},
		{"trailing data", valid + " {}", bounty, "data after"},
		{"unknown field", body(`"score"`, `"extra":1,"score"`), bounty, "unknown field"},
		{"wrong kind", body("surety.audit/1", "surety.audit/9"), bounty, "kind"},
		{"subject not a DID", body(subject, "bob"), bounty, "subject"},
		{"self-audit", body(subject, auditor), bounty, "itself"},
		{"no target", valid, nil, "name what was audited"},
		{"two targets", body(`"score"`, `"envelope":"x","score"`), bounty, "not both"},
		{"bad escrow", valid, &identity.BountyRef{ChainID: 1, Escrow: "nope", ID: 1}, "not an address"},
		{"score above 1", body("0.75", "1.5"), bounty, "score"},
		{"score below 0", body("0.75", "-0.1"), bounty, "score"},
		{"no score", body(`"score":0.75,`, ""), bounty, "score"},
		{"no evidence", body(`,"evidence":{"hash":"`+hash32+`","uri":"https://audits.example/7"}`, ""), bounty, "evidence is missing"},
		{"short hash", body(hash32, "0x0101"), bounty, "32 bytes"},
		{"hash without 0x", body(hash32, strings.TrimPrefix(hash32, "0x")), bounty, "32 bytes"},
		{"ftp evidence", body("https://audits.example/7", "ftp://audits.example/7"), bounty, "http(s)"},
		{"long URI", body("https://audits.example/7", "https://a.example/"+strings.Repeat("a", 600)), bounty, "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := reputation.ParseAudit(envelopeWith(tt.body, tt.bounty))
			var ae *reputation.AuditError
			if !errors.Is(err, reputation.ErrBadAudit) || !errors.As(err, &ae) || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("ParseAudit = %v, want ErrBadAudit saying %q", err, tt.says)
			}
		})
	}
}

// TestAuditFromASignedEnvelope: an audit signed with a real key passes the identity verifier
// and parses, its auditor the key's DID.
func TestAuditFromASignedEnvelope(t *testing.T) {
	k, err := identity.GenerateKey(identity.Ed25519)
	if err != nil {
		t.Fatal(err)
	}
	payload := `{"bounty":{"chain_id":1337,"escrow":"` + escrow + `","id":3},"body":{"kind":"surety.audit/1","subject":"` + subject + `","score":1,"evidence":{"hash":"` + hash32 + `"}}}`
	filled, err := identity.FillEnvelope([]byte(payload), k, time.Now(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := k.SignCompact(filled)
	if err != nil {
		t.Fatal(err)
	}
	v, err := identity.NewVerifier(identity.VerifierConfig{Started: time.Now().Add(-time.Minute)}).Verify(context.Background(), []byte(jws))
	if err != nil {
		t.Fatal(err)
	}
	a, err := reputation.ParseAudit(&v.Envelope)
	if err != nil {
		t.Fatal(err)
	}
	if a.Auditor != k.DID.String() || a.Bounty == nil || a.Bounty.ID != 3 || a.Score != 1 {
		t.Errorf("audit = %+v", a)
	}
}

// FuzzParseAudit: any body either parses into an audit that keeps the rules, or is refused
// with ErrBadAudit; nothing panics.
func FuzzParseAudit(f *testing.F) {
	f.Add([]byte(`{"kind":"surety.audit/1","subject":"`+subject+`","envelope":"abc","score":0.5,"evidence":{"hash":"`+hash32+`"}}`), false)
	f.Add([]byte(`{"kind":"surety.audit/1","subject":"`+subject+`","score":1e400,"evidence":{"hash":"`+hash32+`"}}`), true)
	f.Add([]byte(`{"kind":"surety.audit/1","evidence":null}`), true)
	f.Fuzz(func(t *testing.T, body []byte, withBounty bool) {
		var bounty *identity.BountyRef
		if withBounty {
			bounty = &identity.BountyRef{ChainID: 1, Escrow: escrow, ID: 1}
		}
		a, err := reputation.ParseAudit(envelopeWith(string(body), bounty))
		if err != nil {
			if !errors.Is(err, reputation.ErrBadAudit) {
				t.Fatalf("refused without ErrBadAudit: %v", err)
			}
			return
		}
		if a.Score < 0 || a.Score > 1 || a.Subject == a.Auditor || (a.Bounty == nil) == (a.Envelope == "") {
			t.Fatalf("audit taken against the rules: %+v", a)
		}
	})
}
