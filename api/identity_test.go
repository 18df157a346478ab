package api_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
)

// newIdentity builds a real identity service over db: store, node key, verifier.
func newIdentity(t testing.TB, db *sql.DB) *identity.Service {
	t.Helper()
	return newIdentityWith(t, db, nil)
}

// keyStates is the chain's index as a fixed map (package stake tests the real one).
type keyStates map[string]identity.KeyStatus

func (m keyStates) KeyStatus(_ context.Context, did string) (identity.KeyStatus, error) {
	if st, ok := m[did]; ok {
		return st, nil
	}
	return identity.KeyStatus{State: identity.KeyActive}, nil
}

// newIdentityWith is newIdentity whose verifier reads key status from keys.
func newIdentityWith(t testing.TB, db *sql.DB, keys identity.KeyStatusReader) *identity.Service {
	t.Helper()
	return newIdentityVerifying(t, db, identity.VerifierConfig{Started: time.Now().Add(-time.Minute), Keys: keys})
}

// newIdentityVerifying is newIdentity whose verifier is built from cfg.
func newIdentityVerifying(t testing.TB, db *sql.DB, cfg identity.VerifierConfig) *identity.Service {
	t.Helper()
	ctx := context.Background()
	store, err := identity.OpenStore(ctx, db, identity.StoreConfig{Passphrase: []byte("test"), KDF: identity.KDFParams{N: 1 << 10, R: 8, P: 1}})
	if err != nil {
		t.Fatal(err)
	}
	node, _, err := store.NodeKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return identity.NewService(identity.ServiceConfig{Store: store, Node: node, Verifier: identity.NewVerifier(cfg)})
}

func do(t *testing.T, h http.Handler, method, path, accept string, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func problemOf(t *testing.T, rec *httptest.ResponseRecorder) api.Problem {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q (status %d, body %s)", ct, rec.Code, rec.Body)
	}
	var p api.Problem
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func signed(t *testing.T, k *identity.Key, fill map[string]any) []byte {
	t.Helper()
	raw, _ := json.Marshal(fill)
	p, err := identity.FillEnvelope(raw, k, time.Now(), 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	s, err := k.SignCompact(p)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(s)
}

func TestVerifyEnvelopeRoute(t *testing.T) {
	s, _ := newServer(t)
	h := s.Handler()
	alice, _ := identity.GenerateKey(identity.Ed25519)
	bob, _ := identity.GenerateKey(identity.Secp256k1)

	good := signed(t, alice, map[string]any{"state": "discussion", "future": 1})
	rec := do(t, h, http.MethodPost, "/v1/envelopes/verify", "", good)
	if rec.Code != http.StatusOK {
		t.Fatalf("good envelope: %d %s", rec.Code, rec.Body)
	}
	var ok api.VerifyResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &ok); err != nil {
		t.Fatal(err)
	}
	if !ok.Valid || ok.Sender != alice.DID.String() || !strings.Contains(string(ok.Payload), `"future":1`) {
		t.Errorf("verify response = %+v", ok)
	}

	expiredPayload, _ := json.Marshal(map[string]any{"id": "x", "sender": alice.DID.String(), "nonce": "n1",
		"iat": time.Now().Add(-4 * time.Minute).Unix(), "exp": time.Now().Add(-2 * time.Minute).Unix()})
	expired, _ := alice.SignCompact(expiredPayload)
	wrongKid := signed(t, bob, map[string]any{})
	var m map[string]any
	parts := strings.Split(string(wrongKid), ".")
	pl, _ := identityDecode(parts[1])
	_ = json.Unmarshal(pl, &m)
	m["sender"] = alice.DID.String()
	forged, _ := json.Marshal(m)
	wrongKidJWS, _ := bob.SignCompact(forged)

	tests := []struct {
		name   string
		body   []byte
		status int
		reason string
	}{
		{"expired", []byte(expired), http.StatusUnprocessableEntity, "expired"},
		{"wrong kid", []byte(wrongKidJWS), http.StatusUnauthorized, "kid-not-sender"},
		{"garbage", []byte("hello"), http.StatusBadRequest, "malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := do(t, h, http.MethodPost, "/v1/envelopes/verify", "", tt.body)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if p := problemOf(t, rec); p.Reason != tt.reason || !strings.HasPrefix(p.Title, "Envelope refused") {
				t.Errorf("problem = %+v, want reason %q", p, tt.reason)
			}
		})
	}
}

func TestCreateRegisterAndResolve(t *testing.T) {
	s, _ := newServer(t)
	h := s.Handler()

	// The node no longer makes and keeps keys for anyone who asks: at 66f817e, 48 concurrent
	// POST /v1/dids (a 32 MiB scrypt and a stored key each, unauthenticated) took the node
	// from 90 MB to 1.6 GB. Agents make their own keys and register them.
	if rec := do(t, h, http.MethodPost, "/v1/dids", "", []byte(`{"type":"secp256k1"}`)); rec.Code != http.StatusNotFound && rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /v1/dids: %d %s, want the route gone", rec.Code, rec.Body)
	}

	// An agent registers its own DID with proof of possession, through the typed client.
	ctx := context.Background()
	c := clientOf(t, s)
	ch, err := c.Challenge(ctx)
	if err != nil || ch.Challenge == "" || ch.Expires.Before(time.Now()) {
		t.Fatalf("challenge: %+v, %v", ch, err)
	}
	agent, _ := identity.GenerateKey(identity.Ed25519)
	proof := signed(t, agent, map[string]any{"to": []string{ch.Audience}, "body": map[string]string{"challenge": ch.Challenge}})
	reg, err := c.RegisterDID(ctx, string(proof))
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	vc, err := identity.VerifyCredential(reg.Credential)
	if err != nil || vc.Issuer.ID != ch.Audience {
		t.Errorf("registration credential: issuer %v, err %v", vc, err)
	}
	// The same challenge twice is refused.
	proof2 := signed(t, agent, map[string]any{"to": []string{ch.Audience}, "body": map[string]string{"challenge": ch.Challenge}})
	var refused *client.Error
	if _, err := c.RegisterDID(ctx, string(proof2)); !errors.As(err, &refused) || refused.Status != http.StatusBadRequest || refused.Slug() != "bad-challenge" {
		t.Errorf("reused challenge: %v", err)
	}

	// Resolution, both representations.
	rec := do(t, h, http.MethodGet, "/1.0/identifiers/"+reg.DID, "application/did+ld+json", nil)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/did+ld+json" {
		t.Fatalf("resolve document: %d %s %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	var doc identity.Document
	_ = json.Unmarshal(rec.Body.Bytes(), &doc)
	if doc.ID != reg.DID {
		t.Errorf("document id %s", doc.ID)
	}
	raw, err := c.ResolveDID(ctx, reg.DID, "jwk")
	if err != nil {
		t.Fatalf("resolve result: %v", err)
	}
	var result struct {
		DIDDocument identity.Document         `json:"didDocument"`
		Metadata    identity.DocumentMetadata `json:"didDocumentMetadata"`
	}
	_ = json.Unmarshal(raw, &result)
	if result.Metadata.Registration != "registered" || result.DIDDocument.VerificationMethod[0].Type != "JsonWebKey2020" {
		t.Errorf("resolution = %+v", result)
	}
}

// notFound is the identity service, except that it has no document for one DID (did:key and
// did:pkh documents are derived from the DID, so the real service always finds one; the
// interface allows ErrNotFound, and the route must answer it).
type notFound struct {
	*identity.Service
	did string
}

func (n notFound) Resolve(ctx context.Context, did string, format identity.DocFormat) (*identity.Resolution, error) {
	if did == n.did {
		return nil, fmt.Errorf("%w: %s", identity.ErrNotFound, did)
	}
	return n.Service.Resolve(ctx, did, format)
}

// TestResolveFollowsTheDIDResolutionBinding holds GET /1.0/identifiers/{did} to the HTTP(S)
// binding of W3C DID Resolution v1 (Candidate Recommendation Snapshot, 23 July 2026; editor's
// draft at w3c/did-resolution 77571c5): each Accept value gets its representation (the
// resolution result, or the bare document as application/did, did+ld+json or did+json) or
// 406; each outcome its status; and every error is a resolution result with no document
// whose didResolutionMetadata.error is an RFC 9457 problem of the spec's type. No Accept, or
// */*, gets the resolution result, as the Universal Resolver answers.
func TestResolveFollowsTheDIDResolutionBinding(t *testing.T) {
	const (
		found      = "did:key:z6MkjchhfUsD6mmvni8mCdXHw216Xrm9bQe2mBH1P5RDjVJG"
		secp       = "did:key:zQ3shokFTS3brHcDQrn82RUDfCZESWL1ZdCEJwekUDPQiYBme"
		pkh        = "did:pkh:eip155:1:0xb9c5714089478a327f09197987f16f9e5d936e8a"
		revoked    = "did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp"
		rotated    = "did:key:z6MknGc3ocHs3zdPiJbnaaqDi58NGb4pk1Sp9WxWufuXSdxf"
		successor  = found
		missing    = "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK"
		p256       = "did:key:zDnaerDaTF5BXEavCrfRZEk316dpbLsfPDZ3WJ5hRTPFU2169"
		didNS      = "https://www.w3.org/ns/did#"
		resolution = "application/did-resolution"
		legacy     = `application/ld+json;profile="https://w3id.org/did-resolution"`
	)
	db := testutil.DB(t)
	ids := newIdentityWith(t, db, keyStates{
		revoked: {State: identity.KeyRevoked},
		rotated: {State: identity.KeyRotated, Successor: successor},
	})
	s, err := api.New(api.Config{Version: "v-test", Chain: api.ChainInfo{ID: chain.EmbeddedChainID}, Blocks: stubBlocks{}, DB: db,
		Identity: notFound{ids, missing}})
	if err != nil {
		t.Fatal(err)
	}

	// What a request asks for, by its Accept header: the answer's Content-Type and form
	// ("result", "document" with @context, "json" without), or 406.
	type want struct{ contentType, form string }
	accepts := []struct {
		accept string
		want   want
	}{
		{"", want{resolution, "result"}},
		{"*/*", want{resolution, "result"}},
		{"application/*", want{resolution, "result"}},
		{resolution, want{resolution, "result"}},
		{"Application/DID-Resolution; charset=utf-8", want{resolution, "result"}},
		{legacy, want{legacy, "result"}},
		{"application/did", want{"application/did", "document"}},
		{"application/did+ld+json", want{"application/did+ld+json", "document"}},
		{"application/did+json", want{"application/did+json", "json"}},
		{"application/ld+json", want{"application/ld+json", "document"}},
		{"text/html, */*;q=0.1", want{resolution, "result"}},
		{"application/did-resolution;q=0, application/did", want{"application/did", "document"}},
		{"application/did+json;q=0.5, application/did+ld+json", want{"application/did+ld+json", "document"}},
		{"application/did+json, application/did;q=0.9", want{"application/did+json", "json"}},
		{"text/html", want{form: "406"}},
		{"application/json", want{form: "406"}},
		{"application/xml, text/plain;q=0.5", want{form: "406"}},
		{"application/did;q=0", want{form: "406"}},
		{"*/*;q=0", want{form: "406"}},
		{"application/x-unsupported-did-representation-99999", want{form: "406"}},
		{"\xff", want{form: "406"}},
	}
	// Each outcome: the path, and the answer for an Accept the node can answer. An error
	// (a W3C DID error type) comes before the representation when it is about the DID
	// itself, and after it otherwise (the spec checks the DID, then the options, then
	// resolves).
	outcomes := []struct {
		name, path string
		status     int
		errType    string // "" for none
		beforeRepr bool   // the error comes before a 406
	}{
		{"found", "/1.0/identifiers/" + found, http.StatusOK, "", false},
		{"found: secp256k1", "/1.0/identifiers/" + secp, http.StatusOK, "", false},
		{"found: did:pkh", "/1.0/identifiers/" + pkh, http.StatusOK, "", false},
		{"found: percent-encoded", "/1.0/identifiers/" + url.QueryEscape(found), http.StatusOK, "", false},
		{"found: jwk", "/1.0/identifiers/" + found + "?format=jwk", http.StatusOK, "", false},
		{"invalid", "/1.0/identifiers/not-a-did", http.StatusBadRequest, "INVALID_DID", true},
		{"invalid: no method-specific id", "/1.0/identifiers/did:example", http.StatusBadRequest, "INVALID_DID", true},
		{"invalid: cut short", "/1.0/identifiers/did:key:z6MkmnW9JG9y9", http.StatusBadRequest, "INVALID_DID", true},
		{"invalid: a DID URL", "/1.0/identifiers/" + found + "%23key-1", http.StatusBadRequest, "INVALID_DID", true},
		{"not found", "/1.0/identifiers/" + missing, http.StatusNotFound, "NOT_FOUND", false},
		{"deactivated: revoked", "/1.0/identifiers/" + revoked, http.StatusGone, "", false},
		{"deactivated: rotated", "/1.0/identifiers/" + rotated, http.StatusGone, "", false},
		{"unsupported method", "/1.0/identifiers/did:unsupported:123456789abcdefghi", http.StatusNotImplemented, "METHOD_NOT_SUPPORTED", true},
		{"unsupported key type", "/1.0/identifiers/" + p256, http.StatusNotImplemented, "FEATURE_NOT_SUPPORTED", true},
		{"invalid option", "/1.0/identifiers/" + found + "?format=xml", http.StatusBadRequest, "INVALID_OPTIONS", false},
		{"unsupported option", "/1.0/identifiers/" + found + "?versionId=1", http.StatusNotImplemented, "FEATURE_NOT_SUPPORTED", false},
	}
	for _, o := range outcomes {
		for _, a := range accepts {
			t.Run(o.name+"/"+a.accept, func(t *testing.T) {
				rec := do(t, s.Handler(), http.MethodGet, o.path, a.accept, nil)
				status, errType, w := o.status, o.errType, a.want
				if w.form == "406" && !o.beforeRepr {
					status, errType = http.StatusNotAcceptable, "REPRESENTATION_NOT_SUPPORTED"
				}
				if errType != "" || status == http.StatusGone {
					w = want{resolution, "result"} // errors and deactivation are told in the result
				}
				if rec.Code != status {
					t.Fatalf("status %d, want %d: %s", rec.Code, status, rec.Body)
				}
				if ct := rec.Header().Get("Content-Type"); ct != w.contentType {
					t.Errorf("Content-Type %q, want %q", ct, w.contentType)
				}
				var body map[string]any
				if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
					t.Fatalf("body is not JSON: %v: %s", err, rec.Body)
				}
				doc, isResult := body, w.form == "result"
				if isResult {
					for _, k := range []string{"didDocument", "didResolutionMetadata", "didDocumentMetadata"} {
						if _, ok := body[k]; !ok {
							t.Errorf("the resolution result has no %s: %s", k, rec.Body)
						}
					}
					doc, _ = body["didDocument"].(map[string]any)
				} else if _, ok := body["didResolutionMetadata"]; ok {
					t.Errorf("a bare document has didResolutionMetadata: %s", rec.Body)
				}
				resMeta, _ := body["didResolutionMetadata"].(map[string]any)
				docMeta, _ := body["didDocumentMetadata"].(map[string]any)
				switch {
				case errType != "":
					p, _ := resMeta["error"].(map[string]any)
					if p["type"] != didNS+errType || p["status"] != float64(status) || p["title"] == "" || p["title"] == nil {
						t.Errorf("didResolutionMetadata.error = %v, want type %s%s, status %d and a title", p, didNS, errType, status)
					}
					if body["didDocument"] != nil || len(docMeta) != 0 {
						t.Errorf("an error result with a document or its metadata: %s", rec.Body)
					}
				case status == http.StatusGone:
					if body["didDocument"] != nil || docMeta["deactivated"] != true || resMeta["error"] != nil {
						t.Errorf("deactivated: %s, want no document, deactivated metadata and no error", rec.Body)
					}
					if o.name == "deactivated: rotated" && docMeta["successor"] != successor {
						t.Errorf("rotated: %s, want its successor named", rec.Body)
					}
				default:
					want := strings.TrimPrefix(strings.Split(o.path, "?")[0], "/1.0/identifiers/")
					want, _ = url.PathUnescape(want)
					if doc["id"] != want {
						t.Errorf("document id %v, want %s: %s", doc["id"], want, rec.Body)
					}
					if _, ok := doc["@context"]; ok == (w.form == "json") {
						t.Errorf("%s: @context present %v: %s", w.contentType, ok, rec.Body)
					}
					if isResult && (resMeta["contentType"] != "application/did" || resMeta["error"] != nil || docMeta == nil) {
						t.Errorf("resolution metadata %v, document metadata %v: want contentType application/did, no error", resMeta, docMeta)
					}
				}
			})
		}
	}
}

func identityDecode(seg string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(seg)
}
