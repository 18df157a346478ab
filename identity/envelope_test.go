package identity

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	ethcrypto "github.com/ethereum/go-ethereum/crypto"
	"github.com/google/go-cmp/cmp"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
)

var testNow = time.Unix(1_800_000_000, 0)

func testKey(t testing.TB, typ KeyType, seedByte byte) *Key {
	t.Helper()
	seed := make([]byte, 32)
	seed[31] = seedByte
	if typ == Secp256k1 {
		seed[0] = 1 // a valid scalar
	}
	k, err := KeyFromSeed(typ, seed)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func testVerifier(now *time.Time) *Verifier {
	return NewVerifier(VerifierConfig{Started: testNow.Add(-time.Hour), Now: func() time.Time { return *now }})
}

func payloadFor(t testing.TB, k *Key, mutate func(m map[string]any)) []byte {
	t.Helper()
	m := map[string]any{
		"id": NewNonce(), "group_id": "rAGf23", "sender": k.DID.String(), "to": []string{"did:key:z6MkjchhfUsD6mmvni8mCdXHw216Xrm9bQe2mBH1P5RDjVJG"},
		"state": StateTaskAssignment, "task_desc": "summarize the paper", "body": map[string]any{"pages": 12},
		"iat": testNow.Unix(), "exp": testNow.Add(5 * time.Minute).Unix(), "nonce": NewNonce(),
		"x_future_field": map[string]any{"kept": true},
	}
	if mutate != nil {
		mutate(m)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSignAndVerifyCompact(t *testing.T) {
	for _, typ := range []KeyType{Ed25519, Secp256k1} {
		t.Run(string(typ), func(t *testing.T) {
			now := testNow
			v := testVerifier(&now)
			k := testKey(t, typ, 1)
			payload := payloadFor(t, k, nil)
			jwsText, err := k.SignCompact(payload)
			if err != nil {
				t.Fatal(err)
			}
			got, err := v.Verify(context.Background(), []byte(jwsText))
			if err != nil {
				t.Fatal(err)
			}
			if string(got.Payload) != string(payload) {
				t.Errorf("payload changed: %s", got.Payload)
			}
			if got.Envelope.Sender != k.DID.String() || got.Envelope.State != StateTaskAssignment || got.Signers[0] != k.DID.KeyID() {
				t.Errorf("verified = %+v", got)
			}
			var unknown map[string]json.RawMessage
			if err := json.Unmarshal(got.Payload, &unknown); err != nil || string(unknown["x_future_field"]) != `{"kept":true}` {
				t.Errorf("unknown field not kept: %s", got.Payload)
			}
			// The same envelope again is a replay.
			if _, err := v.Verify(context.Background(), []byte(jwsText)); !errors.Is(err, ErrReplayed) {
				t.Errorf("second verify = %v, want ErrReplayed", err)
			}
		})
	}
}

// TestStandardJOSELibraryVerifies checks that an envelope verifies in jwx's own jws.Verify,
// given only the public JWK from the sender's resolved DID document.
func TestStandardJOSELibraryVerifies(t *testing.T) {
	for _, typ := range []KeyType{Ed25519, Secp256k1} {
		t.Run(string(typ), func(t *testing.T) {
			k := testKey(t, typ, 2)
			compact, err := k.SignCompact(payloadFor(t, k, nil))
			if err != nil {
				t.Fatal(err)
			}
			doc, err := k.DID.Document(FormatJWK)
			if err != nil {
				t.Fatal(err)
			}
			rawJWK, _ := json.Marshal(doc.VerificationMethod[0].PublicKeyJwk)
			var key any
			if typ == Ed25519 {
				key, err = jwk.ParseKey(rawJWK)
				if err != nil {
					t.Fatal(err)
				}
			} else {
				// jwx parses secp256k1 JWKs only with its jwx_es256k build tag: build the
				// key from the JWK's coordinates by hand.
				key = ecdsaFromJWK(t, doc.VerificationMethod[0].PublicKeyJwk)
			}
			msg, err := jws.Parse([]byte(compact))
			if err != nil {
				t.Fatal(err)
			}
			if kid := msg.Signatures()[0].ProtectedHeaders().KeyID(); kid != doc.VerificationMethod[0].ID {
				t.Errorf("kid %s, want the document's method %s", kid, doc.VerificationMethod[0].ID)
			}
			alg := jwa.SignatureAlgorithm(msg.Signatures()[0].ProtectedHeaders().Algorithm())
			if _, err := jws.Verify([]byte(compact), jws.WithKey(alg, key)); err != nil {
				t.Fatalf("jws.Verify: %v", err)
			}
		})
	}
}

func ecdsaFromJWK(t *testing.T, m map[string]string) *ecdsa.PublicKey {
	t.Helper()
	x, err1 := base64.RawURLEncoding.DecodeString(m["x"])
	y, err2 := base64.RawURLEncoding.DecodeString(m["y"])
	if err1 != nil || err2 != nil || len(x) != 32 || len(y) != 32 {
		t.Fatal("bad JWK coordinates")
	}
	pub, err := ethcrypto.UnmarshalPubkey(append(append([]byte{4}, x...), y...))
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

func TestVerifyRefusals(t *testing.T) {
	alice := testKey(t, Ed25519, 3)
	bob := testKey(t, Ed25519, 4)
	kbob := testKey(t, Secp256k1, 5)
	sign := func(k *Key, mutate func(m map[string]any)) string {
		s, err := k.SignCompact(payloadFor(t, k, mutate))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// withHeader signs payload under header, with the envelope's typ unless header names
	// one: a refusal must come from the check its case is about, not from the typ check.
	withHeader := func(header map[string]any, k *Key, payload []byte) string {
		if _, ok := header["typ"]; !ok {
			header["typ"] = EnvelopeType
		}
		h, _ := json.Marshal(header)
		input := b64.EncodeToString(h) + "." + b64.EncodeToString(payload)
		var sig []byte
		switch p := k.Private.(type) {
		case ed25519.PrivateKey:
			sig = ed25519.Sign(p, []byte(input))
		default:
			s, err := es256k{}.Sign([]byte(input), p)
			if err != nil {
				t.Fatal(err)
			}
			sig = s
		}
		return input + "." + b64.EncodeToString(sig)
	}
	tests := []struct {
		name   string
		jws    func() string
		reason error
		detail string // what the refusal says, so it is this case's check that refused
	}{
		{"garbage", func() string { return "not a jws" }, ErrMalformed, "three dot-separated parts"},
		{"two parts", func() string { return "eyJhbGciOiJFZERTQSJ9.e30" }, ErrMalformed, "three dot-separated parts"},
		{"payload not an envelope", func() string {
			return withHeader(map[string]any{"alg": "EdDSA", "kid": alice.DID.KeyID()}, alice, []byte(`[1,2]`))
		}, ErrMalformed, "payload is not an envelope"},
		{"missing nonce", func() string { return sign(alice, func(m map[string]any) { delete(m, "nonce") }) }, ErrMalformed, "needs id, sender, iat, exp and nonce"},
		// Members two JSON readers would read two ways (members.go).
		{"aud twice", func() string {
			p := strings.Replace(string(payloadFor(t, alice, func(m map[string]any) { m["aud"] = "did:key:z6MkB" })), `"aud":`, `"aud":"did:key:z6MkA","aud":`, 1)
			return withHeader(map[string]any{"alg": "EdDSA", "kid": alice.DID.KeyID()}, alice, []byte(p))
		}, ErrMalformed, "not I-JSON (RFC 7493): member"},
		{"a duplicate inside the body", func() string {
			p := strings.Replace(string(payloadFor(t, alice, nil)), `"pages":12`, `"pages":12,"pages":13`, 1)
			return withHeader(map[string]any{"alg": "EdDSA", "kid": alice.DID.KeyID()}, alice, []byte(p))
		}, ErrMalformed, "not I-JSON (RFC 7493): member"},
		{"AUD beside aud", func() string {
			return sign(alice, func(m map[string]any) { m["aud"], m["AUD"] = "did:key:z6MkA", "did:key:z6MkB" })
		}, ErrMalformed, `"AUD" is a case variant of "aud"`},
		{"Sender for sender", func() string {
			return sign(alice, func(m map[string]any) { m["Sender"] = m["sender"]; delete(m, "sender") })
		}, ErrMalformed, `"Sender" is a case variant of "sender"`},
		{"ſender (long s) for sender", func() string {
			return sign(alice, func(m map[string]any) { m["ſender"] = m["sender"]; delete(m, "sender") })
		}, ErrMalformed, `is a case variant of "sender"`},
		{"a case variant inside the bounty reference", func() string {
			return sign(alice, func(m map[string]any) {
				m["bounty"] = map[string]any{"chain_id": 1, "escrow": "0x01", "id": 2, "ID": 3}
			})
		}, ErrMalformed, `"ID" is a case variant of "id"`},
		{"sender is someone else", func() string {
			return sign(alice, func(m map[string]any) { m["sender"] = bob.DID.String() })
		}, ErrKidNotSender, "sender is " + bob.DID.String()},
		{"kid of another key", func() string {
			return withHeader(map[string]any{"alg": "EdDSA", "kid": bob.DID.KeyID()}, alice, payloadFor(t, alice, nil))
		}, ErrBadSignature, "(kid " + bob.DID.KeyID() + ")"},
		{"kid with a foreign fragment", func() string {
			return withHeader(map[string]any{"alg": "EdDSA", "kid": alice.DID.String() + "#key-1"}, alice, payloadFor(t, alice, nil))
		}, ErrMalformed, `fragment "key-1" is not this did:key's key`},
		{"no kid", func() string { return withHeader(map[string]any{"alg": "EdDSA"}, alice, payloadFor(t, alice, nil)) }, ErrMalformed, "no kid"},
		{"alg none", func() string {
			return withHeader(map[string]any{"alg": "none", "kid": alice.DID.KeyID()}, alice, payloadFor(t, alice, nil))
		}, ErrUnsupportedAlg, `alg "none"`},
		{"alg HS256", func() string {
			return withHeader(map[string]any{"alg": "HS256", "kid": alice.DID.KeyID()}, alice, payloadFor(t, alice, nil))
		}, ErrUnsupportedAlg, `alg "HS256"`},
		{"ES256K claimed for an Ed25519 key", func() string {
			return withHeader(map[string]any{"alg": "ES256K", "kid": alice.DID.KeyID()}, alice, payloadFor(t, alice, nil))
		}, ErrUnsupportedAlg, "does not fit a ed25519 key"},
		{"critical header", func() string {
			return withHeader(map[string]any{"alg": "EdDSA", "kid": alice.DID.KeyID(), "crit": []string{"exp"}, "exp": 1}, alice, payloadFor(t, alice, nil))
		}, ErrMalformed, "critical headers are not supported"},
		// b64 false (RFC 7797) would have the payload signed as it is; refused even without crit.
		{"b64 false", func() string {
			return withHeader(map[string]any{"alg": "EdDSA", "kid": alice.DID.KeyID(), "b64": false}, alice, payloadFor(t, alice, nil))
		}, ErrMalformed, "critical headers are not supported"},
		{"typ of another document", func() string {
			return withHeader(map[string]any{"alg": "EdDSA", "kid": alice.DID.KeyID(), "typ": "JWT"}, alice, payloadFor(t, alice, nil))
		}, ErrMalformed, `typ "JWT"`},
		{"expired", func() string {
			return sign(alice, func(m map[string]any) {
				m["iat"] = testNow.Add(-10 * time.Minute).Unix()
				m["exp"] = testNow.Add(-2 * time.Minute).Unix()
			})
		}, ErrExpired, "passed 120s ago"},
		{"from the future", func() string {
			return sign(alice, func(m map[string]any) {
				m["iat"] = testNow.Add(2 * time.Minute).Unix()
				m["exp"] = testNow.Add(5 * time.Minute).Unix()
			})
		}, ErrNotYetValid, "120s ahead"},
		{"lives too long", func() string {
			return sign(alice, func(m map[string]any) { m["exp"] = testNow.Add(24 * time.Hour).Unix() })
		}, ErrTooLong, "exp - iat is 86400s"},
		{"exp before iat", func() string {
			return sign(alice, func(m map[string]any) { m["exp"] = testNow.Add(-time.Second).Unix() })
		}, ErrMalformed, "is not after iat"},
		{"issued long ago: lifetime too long", func() string {
			return sign(alice, func(m map[string]any) {
				m["iat"] = testNow.Add(-2 * time.Hour).Unix()
				m["exp"] = testNow.Add(time.Minute).Unix()
			})
		}, ErrTooLong, "exp - iat is 7260s"},
		{"secp256k1 sender, Ed25519 kid", func() string {
			return sign(kbob, func(m map[string]any) { m["sender"] = alice.DID.String() })
		}, ErrKidNotSender, "sender is " + alice.DID.String()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := testNow
			v := testVerifier(&now)
			_, err := v.Verify(context.Background(), []byte(tt.jws()))
			if !errors.Is(err, tt.reason) || !strings.Contains(err.Error(), tt.detail) {
				t.Fatalf("Verify = %v, want %v saying %q", err, tt.reason, tt.detail)
			}
			if !strings.HasPrefix(err.Error(), "envelope refused: ") {
				t.Errorf("error %q does not say the envelope was refused", err)
			}
		})
	}
}

func TestVerifyRefusesEnvelopesFromBeforeStart(t *testing.T) {
	k := testKey(t, Ed25519, 6)
	now := testNow
	v := NewVerifier(VerifierConfig{Started: testNow.Add(time.Second), Now: func() time.Time { return now }})
	s, err := k.SignCompact(payloadFor(t, k, nil))
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Verify(context.Background(), []byte(s))
	var ve *VerifyError
	if !errors.Is(err, ErrIssuedBeforeStart) || !errors.As(err, &ve) || ve.Authentic == nil {
		t.Errorf("Verify = %v, want ErrIssuedBeforeStart, marked authentic", err)
	}
}

// TestVerifyMarksExpiredEnvelopesAuthentic: an expired envelope is refused, but marked as
// signed by its sender, so the API can give it the stored answer of the request it started
// (one the node carried on past the expiry, across a restart): at 13b6ac3 such a write
// failed as expired while its transaction went through, and a re-run paid twice.
func TestVerifyMarksExpiredEnvelopesAuthentic(t *testing.T) {
	k := testKey(t, Ed25519, 7)
	now := testNow
	v := testVerifier(&now)
	s, err := k.SignCompact(payloadFor(t, k, nil))
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	_, err = v.Verify(context.Background(), []byte(s))
	var ve *VerifyError
	if !errors.Is(err, ErrExpired) || !errors.As(err, &ve) || ve.Authentic == nil || ve.Authentic.Envelope.Sender != k.DID.String() {
		t.Errorf("Verify = %v, want ErrExpired, marked authentic by its sender", err)
	}
}

// keyStates is a KeyStatusReader over a fixed map (the chain's index is tested in stake).
type keyStates map[string]KeyStatus

func (m keyStates) KeyStatus(_ context.Context, did string) (KeyStatus, error) {
	if st, ok := m[did]; ok {
		return st, nil
	}
	return KeyStatus{State: KeyActive}, nil
}

func TestVerifyRefusesClosedKeys(t *testing.T) {
	revoked, rotated, active := testKey(t, Ed25519, 7), testKey(t, Secp256k1, 8), testKey(t, Ed25519, 9)
	now := testNow
	v := NewVerifier(VerifierConfig{Started: testNow.Add(-time.Hour), Now: func() time.Time { return now },
		Keys: keyStates{
			revoked.DID.String(): {State: KeyRevoked},
			rotated.DID.String(): {State: KeyRotated, Successor: active.DID.String()},
		}})
	tests := []struct {
		name   string
		key    *Key
		want   error
		detail string
	}{
		{"revoked", revoked, ErrRevoked, "revoked on chain"},
		{"rotated", rotated, ErrRotated, "its successor is " + active.DID.String()},
		{"active", active, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tt.key.SignCompact(payloadFor(t, tt.key, nil))
			if err != nil {
				t.Fatal(err)
			}
			_, err = v.Verify(context.Background(), []byte(s))
			if !errors.Is(err, tt.want) || (tt.want != nil && !strings.Contains(err.Error(), tt.detail)) {
				t.Errorf("Verify = %v, want %v saying %q", err, tt.want, tt.detail)
			}
		})
	}
}

// keysDown is a KeyStatusReader that cannot tell (the chain's index is unreachable) until up.
type keysDown struct{ up *bool }

var errIndexDown = errors.New("stake index unreachable")

func (k keysDown) KeyStatus(context.Context, string) (KeyStatus, error) {
	if *k.up {
		return KeyStatus{State: KeyActive}, nil
	}
	return KeyStatus{}, errIndexDown
}

// TestVerifyRefusesWhenKeyStatusFails: a node that cannot ask the chain whether a signer's
// key was closed refuses the envelope rather than let a revoked key act, whichever way it
// checks it; the refusal is not the sender's fault (not Malformed), and spends no nonce, so
// the same envelope verifies once the index answers. No test refused this at 5ab6450.
func TestVerifyRefusesWhenKeyStatusFails(t *testing.T) {
	k := testKey(t, Ed25519, 12)
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		check func(v *Verifier, raw []byte) error
	}{
		{"Verify", func(v *Verifier, raw []byte) error { _, err := v.Verify(ctx, raw); return err }},
		{"Check", func(v *Verifier, raw []byte) error { _, err := v.Check(ctx, raw); return err }},
		{"CheckArchived", func(v *Verifier, raw []byte) error { _, err := v.CheckArchived(ctx, raw); return err }},
		{"CheckKeys", func(v *Verifier, _ []byte) error { return v.CheckKeys(ctx, k.DID.String()) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			now, up := testNow, false
			v := NewVerifier(VerifierConfig{Started: testNow.Add(-time.Hour), Now: func() time.Time { return now }, Keys: keysDown{&up}})
			s, err := k.SignCompact(payloadFor(t, k, nil))
			if err != nil {
				t.Fatal(err)
			}
			err = tt.check(v, []byte(s))
			if !errors.Is(err, errIndexDown) || Malformed(err) {
				t.Fatalf("with the key-status index down: %v, want a refusal wrapping %v, not Malformed", err, errIndexDown)
			}
			up = true
			if err := tt.check(v, []byte(s)); err != nil {
				t.Errorf("the same envelope once the index answers: %v", err)
			}
		})
	}
}

// TestEveryByteMatters flips each byte of a compact envelope in turn: each change must be
// refused, for a reason that fits the part that changed.
func TestEveryByteMatters(t *testing.T) {
	for _, typ := range []KeyType{Ed25519, Secp256k1} {
		t.Run(string(typ), func(t *testing.T) {
			k := testKey(t, typ, 8)
			s, err := k.SignCompact(payloadFor(t, k, nil))
			if err != nil {
				t.Fatal(err)
			}
			dot1 := strings.IndexByte(s, '.')
			dot2 := dot1 + 1 + strings.IndexByte(s[dot1+1:], '.')
			for i := range len(s) {
				for _, delta := range []byte{1, 0x20} {
					b := []byte(s)
					b[i] ^= delta
					now := testNow
					_, err := testVerifier(&now).Verify(context.Background(), b)
					if err == nil {
						t.Fatalf("changing byte %d (%q→%q) was accepted", i, s[i], b[i])
					}
					allowed := []error{ErrMalformed, ErrBadSignature}
					if i < dot1 {
						allowed = append(allowed, ErrUnsupportedAlg)
					}
					if i == dot1 || i == dot2 {
						allowed = []error{ErrMalformed}
					}
					ok := false
					for _, a := range allowed {
						ok = ok || errors.Is(err, a)
					}
					if !ok {
						t.Fatalf("changing byte %d gave %v, want one of %v", i, err, allowed)
					}
				}
			}
		})
	}
}

func TestSignJSONSeveralSigners(t *testing.T) {
	sender, witness := testKey(t, Ed25519, 9), testKey(t, Secp256k1, 10)
	payload := payloadFor(t, sender, nil)
	raw, err := SignJSON(payload, witness, sender)
	if err != nil {
		t.Fatal(err)
	}
	now := testNow
	got, err := testVerifier(&now).Verify(context.Background(), raw)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{sender.DID.KeyID(), witness.DID.KeyID()}, got.Signers); diff != "" {
		t.Errorf("signers (-want +got):\n%s", diff)
	}
	// One bad signature spoils the envelope, even if the sender's is fine.
	var j map[string]any
	if err := json.Unmarshal(raw, &j); err != nil {
		t.Fatal(err)
	}
	sigs := j["signatures"].([]any)
	first := sigs[0].(map[string]any)
	sig, _ := base64.RawURLEncoding.DecodeString(first["signature"].(string))
	sig[0] ^= 1
	first["signature"] = base64.RawURLEncoding.EncodeToString(sig)
	tampered, _ := json.Marshal(j)
	if _, err := testVerifier(&now).Verify(context.Background(), tampered); !errors.Is(err, ErrBadSignature) {
		t.Errorf("tampered witness signature: %v, want ErrBadSignature", err)
	}
}

func TestFillEnvelope(t *testing.T) {
	k := testKey(t, Ed25519, 11)
	out, err := FillEnvelope([]byte(`{"state":"discussion","body":{"q":"hi"},"custom":[1]}`), k, testNow, 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var e Envelope
	if err := json.Unmarshal(out, &e); err != nil {
		t.Fatal(err)
	}
	if e.Sender != k.DID.String() || e.IssuedAt != testNow.Unix() || e.Expires != testNow.Add(5*time.Minute).Unix() || len(e.Nonce) != 32 || e.ID == "" {
		t.Errorf("filled = %+v", e)
	}
	if !strings.Contains(string(out), `"custom":[1]`) {
		t.Errorf("custom field lost: %s", out)
	}
	if _, err := FillEnvelope([]byte(`{"sender":"did:key:z6MkjchhfUsD6mmvni8mCdXHw216Xrm9bQe2mBH1P5RDjVJG"}`), k, testNow, time.Minute); !errors.Is(err, ErrKidNotSender) {
		t.Errorf("foreign sender: %v", err)
	}
	for _, bad := range []string{`[]`, `null`, `"x"`, `{`} {
		if _, err := FillEnvelope([]byte(bad), k, testNow, time.Minute); !errors.Is(err, ErrMalformed) {
			t.Errorf("FillEnvelope(%s) = %v, want ErrMalformed", bad, err)
		}
	}
}

// TestReplayBudgetIsPerSender: one sender's flood spends its own budget, not the pool. At
// 66f817e one node-wide pool let the unauthenticated verify route fill it, after which every
// signed request was refused for the replay window.
func TestReplayBudgetIsPerSender(t *testing.T) {
	c := newReplayCache(100, 3, time.Minute)
	for i := range 3 {
		if err := c.remember("flooder", fmt.Sprint(i), testNow); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.remember("flooder", "3", testNow); !errors.Is(err, ErrReplayBudget) {
		t.Errorf("the flooder's fourth nonce: %v, want ErrReplayBudget", err)
	}
	if err := c.remember("someone else", "0", testNow); err != nil {
		t.Errorf("another sender, during the flood: %v", err)
	}
	// Once the flooder's nonces age out of both generations, its budget is back.
	if err := c.remember("flooder", "4", testNow.Add(2*time.Minute)); err != nil {
		t.Errorf("the flooder after two windows: %v", err)
	}
}

// TestCheckSpendsNoNonce: Check reports on an envelope without remembering it, so the same
// envelope checks again, and still verifies (once) afterwards; one Verify spent is then seen
// by Check as replayed.
func TestCheckSpendsNoNonce(t *testing.T) {
	now := testNow
	v := testVerifier(&now)
	k := testKey(t, Ed25519, 7)
	jws, err := k.SignCompact(payloadFor(t, k, nil))
	if err != nil {
		t.Fatal(err)
	}
	raw := []byte(jws)
	for i := range 3 {
		if _, err := v.Check(context.Background(), raw); err != nil {
			t.Fatalf("check %d: %v", i, err)
		}
	}
	if _, err := v.Verify(context.Background(), raw); err != nil {
		t.Fatalf("verify after checks: %v", err)
	}
	if _, err := v.Check(context.Background(), raw); !errors.Is(err, ErrReplayed) {
		t.Errorf("check after it was spent: %v, want ErrReplayed", err)
	}
}

func TestReplayCacheIsBounded(t *testing.T) {
	c := newReplayCache(3, 10, time.Minute)
	for i := range 3 {
		if err := c.remember("s", fmt.Sprint(i), testNow); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.remember("s", "3", testNow); !errors.Is(err, ErrReplayCacheFull) {
		t.Errorf("fourth nonce: %v, want ErrReplayCacheFull", err)
	}
	// After one window the first generation is still remembered...
	if err := c.remember("s", "0", testNow.Add(time.Minute)); !errors.Is(err, ErrReplayed) {
		t.Errorf("nonce 0 after one window: %v, want ErrReplayed", err)
	}
	// ...and after two it is forgotten, its envelopes long expired.
	if err := c.remember("s", "x", testNow.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := c.remember("s", "0", testNow.Add(2*time.Minute)); err != nil {
		t.Errorf("nonce 0 after two windows: %v", err)
	}
}

func FuzzVerifyEnvelope(f *testing.F) {
	k, _ := KeyFromSeed(Ed25519, make([]byte, 32))
	p, _ := FillEnvelope([]byte(`{"state":"discussion"}`), k, testNow, time.Minute)
	s, _ := k.SignCompact(p)
	f.Add([]byte(s))
	j, _ := SignJSON(p, k)
	f.Add(j)
	f.Add([]byte("e30.e30.e30"))
	f.Add([]byte(`{"payload":"e30","signatures":[{"protected":"e30","signature":""}]}`))
	f.Add([]byte(hex.EncodeToString([]byte("x"))))
	f.Fuzz(func(t *testing.T, raw []byte) {
		now := testNow
		v := testVerifier(&now)
		got, err := v.Verify(context.Background(), raw)
		if err != nil {
			var ve *VerifyError
			if !errors.As(err, &ve) {
				t.Fatalf("error %v is not a *VerifyError", err)
			}
			return
		}
		if got.Envelope.Sender == "" || len(got.Signers) == 0 {
			t.Fatalf("accepted without a sender: %+v", got)
		}
	})
}

func TestSignDocumentAndVerifyJWS(t *testing.T) {
	k := testKey(t, Secp256k1, 40)
	doc, err := k.SignDocument([]byte(`{"a":1}`), "test-doc+jws")
	if err != nil {
		t.Fatal(err)
	}
	payload, signer, err := VerifyJWS([]byte(doc), "test-doc+jws")
	if err != nil || string(payload) != `{"a":1}` || signer != k.DID.String() {
		t.Fatalf("VerifyJWS = %s, %s, %v", payload, signer, err)
	}
	if _, _, err := VerifyJWS([]byte(doc), "other+jws"); !errors.Is(err, ErrMalformed) {
		t.Errorf("wrong typ: %v", err)
	}
	b := []byte(doc)
	b[len(b)-2] ^= 1
	if _, _, err := VerifyJWS(b, "test-doc+jws"); err == nil {
		t.Error("tampered document verified")
	}
	env, _ := k.SignCompact([]byte(`{"a":1}`))
	if _, _, err := VerifyJWS([]byte(env), "test-doc+jws"); !errors.Is(err, ErrMalformed) {
		t.Errorf("an envelope passed as a document: %v", err)
	}
}

// TestCheckAudience: a state-changing envelope acts only at the node and chain it names.
func TestCheckAudience(t *testing.T) {
	const node, other = "did:key:z6MkNode", "did:key:z6MkOther"
	tests := []struct {
		name    string
		aud     string
		chainID uint64
		want    error
	}{
		{"this node and chain", node, 1337, nil},
		{"no audience", "", 1337, ErrWrongAudience},
		{"another node", other, 1337, ErrWrongAudience},
		{"no chain", node, 0, ErrWrongChain},
		{"another chain", node, 1, ErrWrongChain},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &Envelope{Aud: tt.aud, ChainID: tt.chainID}
			err := e.CheckAudience(node, 1337)
			var ve *VerifyError
			if !errors.Is(err, tt.want) || (tt.want != nil && !errors.As(err, &ve)) {
				t.Errorf("CheckAudience = %v, want %v as a *VerifyError", err, tt.want)
			}
		})
	}
}

// TestTypSeparatesDocumentKinds: each kind of signed document has its typ, and none passes
// for another. At 66f817e a card JWS or a plain JWT verified as an envelope.
func TestTypSeparatesDocumentKinds(t *testing.T) {
	now := testNow
	v := testVerifier(&now)
	k := testKey(t, Ed25519, 9)
	envelope := payloadFor(t, k, nil)
	for _, typ := range []string{"surety-card+jws", "JWT", BindingType, ""} {
		jws, err := k.SignDocument(envelope, typ)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Verify(context.Background(), []byte(jws)); !errors.Is(err, ErrMalformed) {
			t.Errorf("an envelope payload signed as typ %q: %v, want refused as malformed", typ, err)
		}
	}
	// The envelope's own typ still verifies.
	jws, err := k.SignDocument(envelope, EnvelopeType)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), []byte(jws)); err != nil {
		t.Errorf("typ %q: %v", EnvelopeType, err)
	}
	// A binding whose agent JWS is an envelope (or any other kind) is no binding.
	if _, _, err := VerifyJWS([]byte(jws), BindingType); !errors.Is(err, ErrMalformed) {
		t.Errorf("an envelope read as a binding JWS: %v, want refused", err)
	}
}
