package identity_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/testutil"
)

var vcNow = time.Unix(1_800_000_000, 0).UTC()

// seededKey is a fixed Ed25519 key, so the credentials below are the same on every run.
func seededKey(t testing.TB, label string) *identity.Key {
	t.Helper()
	seed := sha256.Sum256([]byte(label))
	k, err := identity.KeyFromSeed(identity.Ed25519, seed[:])
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// chainKeys is what the chain's index says of DIDs (package stake tests the real one).
type chainKeys struct {
	mu     sync.Mutex
	closed map[string]identity.KeyState
}

func (c *chainKeys) KeyStatus(_ context.Context, did string) (identity.KeyStatus, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.closed[did]; ok {
		return identity.KeyStatus{State: st}, nil
	}
	return identity.KeyStatus{State: identity.KeyActive}, nil
}

func (c *chainKeys) revoke(did string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed == nil {
		c.closed = map[string]identity.KeyState{}
	}
	c.closed[did] = identity.KeyRevoked
}

func registrationCredential(t *testing.T, issuer *identity.Key, subject string, from, until time.Time, status *identity.StatusEntry) string {
	t.Helper()
	c, err := identity.NewCredential(issuer.DID.String(), []string{identity.RegistrationCredentialType}, from, until,
		identity.RegistrationSubject{ID: subject, RegisteredWith: issuer.DID.String(), Registration: "registered"})
	if err != nil {
		t.Fatal(err)
	}
	c.ID = identity.CredentialID(issuer.DID.String(), subject, c.ValidFrom)
	c.CredentialStatus = status
	jwt, err := issuer.IssueCredential(c)
	if err != nil {
		t.Fatal(err)
	}
	return jwt
}

// resign replaces part i (0 header, 1 payload) of a compact JWS with edit's result and signs
// it again with k: a credential a key other than the issuer's made.
func reencode(jwt string, i int, edit func(map[string]any)) string {
	parts := strings.Split(jwt, ".")
	b, _ := base64.RawURLEncoding.DecodeString(parts[i])
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	edit(m)
	b, _ = json.Marshal(m)
	parts[i] = base64.RawURLEncoding.EncodeToString(b)
	return strings.Join(parts, ".")
}

func TestCredentialV2IssueVerify(t *testing.T) {
	node := seededKey(t, "node")
	other := seededKey(t, "other node")
	agent := seededKey(t, "agent").DID.String()
	good := registrationCredential(t, node, agent, vcNow, vcNow.Add(time.Hour), nil)

	forgedBy := func(k *identity.Key) string {
		// other's signature over a credential that names node as its issuer and kid.
		c, _ := identity.NewCredential(node.DID.String(), []string{identity.RegistrationCredentialType}, vcNow, vcNow.Add(time.Hour),
			identity.RegistrationSubject{ID: agent})
		c.Issuer = k.DID.String()
		jwt, err := k.IssueCredential(c)
		if err != nil {
			t.Fatal(err)
		}
		jwt = reencode(jwt, 0, func(h map[string]any) { h["kid"] = node.DID.KeyID() })
		return reencode(jwt, 1, func(p map[string]any) { p["issuer"], p["iss"] = node.DID.String(), node.DID.String() })
	}
	tamper := func(jwt string) string {
		return reencode(jwt, 1, func(p map[string]any) { p["credentialSubject"].(map[string]any)["registration"] = "hosted" })
	}

	tests := []struct {
		name   string
		jwt    string
		now    time.Time
		issuer string
		want   error
	}{
		{"valid", good, vcNow.Add(time.Minute), node.DID.String(), nil},
		{"valid at validFrom within skew", good, vcNow.Add(-10 * time.Second), "", nil},
		{"expired", good, vcNow.Add(2 * time.Hour), "", identity.ErrCredentialExpired},
		{"not yet valid", good, vcNow.Add(-time.Hour), "", identity.ErrCredentialNotYetValid},
		{"another node issued it", registrationCredential(t, other, agent, vcNow, vcNow.Add(time.Hour), nil), vcNow, node.DID.String(), identity.ErrCredentialWrongIssuer},
		{"signed by a key that is not the issuer's", forgedBy(other), vcNow, node.DID.String(), identity.ErrCredentialBadSignature},
		{"tampered subject", tamper(good), vcNow, "", identity.ErrCredentialBadSignature},
		{"kid of another key", reencode(good, 0, func(h map[string]any) { h["kid"] = other.DID.KeyID() }), vcNow, "", identity.ErrCredentialMalformed},
		{"typ JWT (a VC 1.1 JWT)", reencode(good, 0, func(h map[string]any) { h["typ"] = "JWT" }), vcNow, "", identity.ErrCredentialMalformed},
		{"cty other", reencode(good, 0, func(h map[string]any) { h["cty"] = "json" }), vcNow, "", identity.ErrCredentialMalformed},
		{"alg none", reencode(good, 0, func(h map[string]any) { h["alg"] = "none" }), vcNow, "", identity.ErrCredentialMalformed},
		{"crit", reencode(good, 0, func(h map[string]any) { h["crit"] = []string{"b64"} }), vcNow, "", identity.ErrCredentialMalformed},
		{"VC 1.1 context", reencode(good, 1, func(p map[string]any) { p["@context"] = []string{"https://www.w3.org/2018/credentials/v1"} }), vcNow, "", identity.ErrCredentialMalformed},
		{"not a JWS", "a.b", vcNow, "", identity.ErrCredentialMalformed},
		{"too large", good + strings.Repeat("A", identity.MaxCredentialSize), vcNow, "", identity.ErrCredentialMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := identity.VerifyCredentialJWT(tt.jwt, identity.CredentialCheck{Now: tt.now, Issuer: tt.issuer})
			if !errors.Is(err, tt.want) {
				t.Fatalf("VerifyCredentialJWT = %v, want %v", err, tt.want)
			}
			var ce *identity.CredentialError
			if err != nil && !errors.As(err, &ce) {
				t.Errorf("error %T is not a *CredentialError", err)
			}
			if err == nil {
				var subj identity.RegistrationSubject
				if err := v.Subject(&subj); err != nil || subj.ID != agent || v.Issuer.String() != node.DID.String() {
					t.Errorf("subject %+v issuer %s (%v)", subj, v.Issuer, err)
				}
			}
		})
	}
}

func TestCredentialV2HeaderAndClaims(t *testing.T) {
	node := seededKey(t, "node")
	jwt := registrationCredential(t, node, "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK", vcNow, vcNow.Add(time.Hour), nil)
	if again := registrationCredential(t, node, "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK", vcNow, vcNow.Add(time.Hour), nil); again != jwt {
		t.Error("the same credential signed twice gives different bytes")
	}
	parts := strings.Split(jwt, ".")
	hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
	var h map[string]string
	if err := json.Unmarshal(hb, &h); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"alg": "EdDSA", "kid": node.DID.KeyID(), "typ": "vc+jwt", "cty": "vc"}
	for k, v := range want {
		if h[k] != v {
			t.Errorf("header %s = %q, want %q", k, h[k], v)
		}
	}
	pb, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var p map[string]any
	if err := json.Unmarshal(pb, &p); err != nil {
		t.Fatal(err)
	}
	if p["vc"] != nil || p["@context"].([]any)[0] != identity.CredentialsV2Context || p["validFrom"] != "2027-01-15T08:00:00Z" ||
		p["exp"].(float64) != float64(vcNow.Add(time.Hour).Unix()) || p["iss"] != node.DID.String() {
		t.Errorf("payload is not the VC 2.0 credential itself with agreeing claims: %s", pb)
	}
	// A claim that disagrees with the credential is refused even when signed.
	c, _ := identity.NewCredential(node.DID.String(), nil, vcNow, vcNow.Add(time.Hour), map[string]string{"id": "x"})
	jwt, _ = node.IssueCredential(c)
	bad := reencode(jwt, 1, func(p map[string]any) { p["exp"] = float64(vcNow.Add(48 * time.Hour).Unix()) })
	parts = strings.Split(bad, ".")
	_ = parts
	if _, err := identity.VerifyCredentialJWT(bad, identity.CredentialCheck{Now: vcNow}); err == nil {
		t.Error("a credential whose exp disagrees with validUntil verified")
	}
}

func TestStatusListEncoding(t *testing.T) {
	list := identity.NewStatusList()
	if len(list)*8 != 131072 {
		t.Fatalf("a status list has %d bits, want the spec's minimum 131072", len(list)*8)
	}
	for _, i := range []int{0, 7, 8, 94567, 131071} {
		identity.SetStatusBit(list, i)
	}
	enc, err := identity.EncodeStatusList(list)
	if err != nil {
		t.Fatal(err)
	}
	if enc[0] != 'u' || strings.ContainsAny(enc, "+/=") {
		t.Errorf("encodedList %q… is not multibase base64url without padding", enc[:10])
	}
	got, err := identity.DecodeStatusList(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, list) {
		t.Fatal("decoded list differs")
	}
	for i, want := range map[int]bool{0: true, 1: false, 7: true, 8: true, 9: false, 94567: true, 94568: false, 131071: true, 131072: false} {
		if identity.StatusBit(got, i) != want {
			t.Errorf("bit %d = %v, want %v", i, !want, want)
		}
	}
	if list[0] != 0x81 {
		t.Errorf("first byte %#x: bit 0 must be the most significant bit", list[0])
	}

	gz := func(b []byte) string {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		w.Write(b)
		w.Close()
		return "u" + base64.RawURLEncoding.EncodeToString(buf.Bytes())
	}
	for name, enc := range map[string]string{
		"too short (1 KiB)":     gz(make([]byte, 1024)),
		"gzip bomb (64 MiB)":    gz(make([]byte, 64<<20)),
		"no multibase prefix":   gz(list)[1:],
		"base64 (z prefix)":     "z" + gz(list)[1:],
		"padded":                gz(list) + "==",
		"not gzip":              "u" + base64.RawURLEncoding.EncodeToString(list[:100]),
		"empty":                 "",
		"over the parser limit": "u" + strings.Repeat("A", identity.MaxCredentialSize),
	} {
		if _, err := identity.DecodeStatusList(enc); !errors.Is(err, identity.ErrCredentialStatus) {
			t.Errorf("%s: DecodeStatusList = %v, want ErrCredentialStatus", name, err)
		}
	}
}

// credentialService is a node's identity service on a fresh database, with the chain's word
// on keys from keys, at the time *now.
func credentialService(t *testing.T, now *time.Time, keys *chainKeys) (*identity.Service, *identity.Store, *sql.DB) {
	t.Helper()
	db := testutil.DB(t)
	st, err := identity.OpenStore(context.Background(), db, identity.StoreConfig{Passphrase: []byte("p"), KDF: cheapKDF, Now: func() time.Time { return *now }})
	if err != nil {
		t.Fatal(err)
	}
	clock := func() time.Time { return *now }
	svc := identity.NewService(identity.ServiceConfig{Store: st, Node: seededKey(t, "node"), Now: clock,
		Verifier: identity.NewVerifier(identity.VerifierConfig{Keys: keys, Now: clock})})
	return svc, st, db
}

const base = "https://node.example"

func TestStatusListShowsRevocation(t *testing.T) {
	ctx := context.Background()
	now := vcNow
	keys := &chainKeys{}
	svc, st, _ := credentialService(t, &now, keys)
	staked, unstaked := seededKey(t, "staked agent").DID, seededKey(t, "unstaked agent").DID
	for _, d := range []identity.DID{staked, unstaked} {
		if err := st.Register(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	check := identity.CredentialCheck{Now: now, Issuer: svc.NodeDID()}
	issue := func(d identity.DID, staked bool) *identity.VerifiedCredential {
		t.Helper()
		jwt, err := svc.RegistrationCredential(ctx, d.String(), base, staked)
		if err != nil {
			t.Fatal(err)
		}
		v, err := identity.VerifyCredentialJWT(jwt, check)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	list := func() *identity.VerifiedCredential {
		t.Helper()
		jwt, err := svc.StatusList(ctx, 0, base)
		if err != nil {
			t.Fatal(err)
		}
		v, err := identity.VerifyCredentialJWT(jwt, identity.CredentialCheck{Now: now, Issuer: svc.NodeDID()})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	u := issue(unstaked, false)
	if u.Credential.CredentialStatus != nil || u.ValidUntil.Sub(u.ValidFrom) != identity.UnstatusedCredentialLifetime {
		t.Errorf("an unstaked DID's credential has status %+v and lifetime %v; want none and %v",
			u.Credential.CredentialStatus, u.ValidUntil.Sub(u.ValidFrom), identity.UnstatusedCredentialLifetime)
	}
	s1 := issue(staked, true)
	entry := s1.Credential.CredentialStatus
	if entry == nil || entry.StatusListCredential != base+"/v1/status/0" || entry.StatusListIndex != "0" || entry.StatusPurpose != "revocation" {
		t.Fatalf("staked DID's status entry %+v", entry)
	}
	if s2 := issue(staked, true); *s2.Credential.CredentialStatus != *entry {
		t.Errorf("a second credential of the DID got another index: %+v, want %+v", s2.Credential.CredentialStatus, entry)
	}
	if err := identity.CheckCredentialStatus(s1, list()); err != nil {
		t.Fatalf("before the revocation: %v", err)
	}

	keys.revoke(staked.String())
	// The list is reused for StatusListCacheTTL, then computed again from the chain.
	now = now.Add(identity.StatusListCacheTTL)
	if err := identity.CheckCredentialStatus(s1, list()); !errors.Is(err, identity.ErrCredentialRevoked) {
		t.Fatalf("after the revocation: CheckCredentialStatus = %v, want ErrCredentialRevoked", err)
	}
	if _, err := svc.RegistrationCredential(ctx, staked.String(), base, true); !errors.Is(err, identity.ErrDeactivated) {
		t.Errorf("credential for a revoked DID: %v, want ErrDeactivated", err)
	}
	if _, err := svc.RegistrationCredential(ctx, seededKey(t, "stranger").DID.String(), base, true); !errors.Is(err, identity.ErrNotFound) {
		t.Errorf("credential for a DID the node does not know: %v, want ErrNotFound", err)
	}
	if _, err := svc.StatusList(ctx, 1, base); !errors.Is(err, identity.ErrNotFound) {
		t.Errorf("status list 1 (unused): %v, want ErrNotFound", err)
	}

	// Another list's credential, or one by another issuer, is not the credential's list.
	other := seededKey(t, "other node")
	forged, _ := identity.StatusListCredential(other.DID.String(), base+"/v1/status/0", identity.NewStatusList(), now, time.Hour)
	fj, _ := other.IssueCredential(forged)
	fv, err := identity.VerifyCredentialJWT(fj, identity.CredentialCheck{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if err := identity.CheckCredentialStatus(s1, fv); !errors.Is(err, identity.ErrCredentialStatus) {
		t.Errorf("a list by another issuer: %v, want ErrCredentialStatus", err)
	}
}

// TestStatusListsAreBounded: the node gives out at most MaxStatusLists lists of indexes; past
// them a staked DID's credential has no status and the short lifetime, and no list grows.
func TestStatusListsAreBounded(t *testing.T) {
	ctx := context.Background()
	now := vcNow
	svc, st, db := credentialService(t, &now, &chainKeys{})
	total := identity.MaxStatusLists * identity.StatusListBits
	// Fill all but the last index, as a million staked DIDs would have.
	if _, err := db.ExecContext(ctx, `WITH RECURSIVE n(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM n WHERE x < ?)
		INSERT INTO identity_status (pos, did, created) SELECT x, 'did:example:' || x, 0 FROM n`, total-2); err != nil {
		t.Fatal(err)
	}
	last, after := seededKey(t, "last").DID, seededKey(t, "after").DID
	for _, d := range []identity.DID{last, after} {
		if err := st.Register(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	pos, err := st.StatusPosition(ctx, last.String())
	if err != nil || pos != int64(total-1) {
		t.Fatalf("last index: %d, %v; want %d", pos, err, total-1)
	}
	if _, err := st.StatusPosition(ctx, after.String()); !errors.Is(err, identity.ErrStatusListsFull) {
		t.Fatalf("past the bound: %v, want ErrStatusListsFull", err)
	}
	jwt, err := svc.RegistrationCredential(ctx, after.String(), base, true)
	if err != nil {
		t.Fatal(err)
	}
	v, err := identity.VerifyCredentialJWT(jwt, identity.CredentialCheck{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if v.Credential.CredentialStatus != nil || v.ValidUntil.Sub(v.ValidFrom) != identity.UnstatusedCredentialLifetime {
		t.Errorf("past the bound the credential has status %+v, lifetime %v", v.Credential.CredentialStatus, v.ValidUntil.Sub(v.ValidFrom))
	}
	if _, err := svc.StatusList(ctx, identity.MaxStatusLists, base); !errors.Is(err, identity.ErrNotFound) {
		t.Errorf("list %d: %v, want ErrNotFound", identity.MaxStatusLists, err)
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM identity_status`).Scan(&n); err != nil || n != total {
		t.Errorf("%d indexes given out, want %d", n, total)
	}
}

func FuzzParseCredentialJWT(f *testing.F) {
	node := seededKey(f, "node")
	c, _ := identity.NewCredential(node.DID.String(), []string{identity.RegistrationCredentialType}, vcNow, vcNow.Add(time.Hour),
		identity.RegistrationSubject{ID: "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK"})
	c.CredentialStatus = identity.NewStatusEntry(base+"/v1/status/0", 3)
	good, _ := node.IssueCredential(c)
	f.Add(good)
	f.Add(good[:len(good)-3])
	f.Add("eyJhbGciOiJub25lIn0.e30.")
	f.Add("..")
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := identity.VerifyCredentialJWT(raw, identity.CredentialCheck{Now: vcNow})
		if err != nil {
			var ce *identity.CredentialError
			if !errors.As(err, &ce) {
				t.Fatalf("error %T is not a *CredentialError: %v", err, err)
			}
			return
		}
		if v.Credential.Issuer != v.Issuer.String() {
			t.Fatalf("verified with issuer %s but the credential names %s", v.Issuer, v.Credential.Issuer)
		}
		// Whatever a verified credential says, reading its status neither panics nor passes a
		// list that is not one.
		if st := v.Credential.CredentialStatus; st != nil {
			identity.SplitStatusListURL(st.StatusListCredential)
			if err := identity.CheckCredentialStatus(v, v); err == nil && !v.Credential.HasType(identity.StatusListCredentialType) {
				t.Fatal("a credential passed as its own status list")
			}
		}
	})
}

func FuzzDecodeStatusList(f *testing.F) {
	l := identity.NewStatusList()
	identity.SetStatusBit(l, 5)
	enc, _ := identity.EncodeStatusList(l)
	f.Add(enc)
	f.Add("u")
	f.Add("uH4sIAAAAAAAA")
	f.Fuzz(func(t *testing.T, enc string) {
		bits, err := identity.DecodeStatusList(enc)
		if err != nil {
			if !errors.Is(err, identity.ErrCredentialStatus) {
				t.Fatalf("error is not ErrCredentialStatus: %v", err)
			}
			return
		}
		if len(bits) < identity.StatusListBits/8 || len(bits) > 1<<20 {
			t.Fatalf("decoded %d bytes, outside the bounds", len(bits))
		}
	})
}

func TestSplitStatusListURL(t *testing.T) {
	for _, tt := range []struct {
		url  string
		base string
		n    int
		ok   bool
	}{
		{"https://node.example/v1/status/3", "https://node.example", 3, true},
		{identity.StatusListURL("http://127.0.0.1:7746", 0), "http://127.0.0.1:7746", 0, true},
		{"x", "", 0, false},
		{"", "", 0, false},
		{"https://node.example/v1/status/", "", 0, false},
		{"https://node.example/v1/status/-1", "", 0, false},
		{"https://node.example/v1/status/8", "", 0, false},
		{"https://node.example/v1/status/1x", "", 0, false},
	} {
		base, n, ok := identity.SplitStatusListURL(tt.url)
		if base != tt.base || n != tt.n || ok != tt.ok {
			t.Errorf("SplitStatusListURL(%q) = %q, %d, %v; want %q, %d, %v", tt.url, base, n, ok, tt.base, tt.n, tt.ok)
		}
	}
}

// TestStatusListSignedOncePerComputation: anyone may fetch a status list, so a request costs
// the node no gzip and no signature while the list's bits are current: the list credential is
// signed once per computation of the bits and base URL, and signed again after the bits are
// computed again (StatusListCacheTTL later) or for another base URL.
func TestStatusListSignedOncePerComputation(t *testing.T) {
	ctx := context.Background()
	now := vcNow
	svc, st, _ := credentialService(t, &now, &chainKeys{})
	staked := seededKey(t, "staked agent").DID
	if err := st.Register(ctx, staked); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.RegistrationCredential(ctx, staked.String(), base, true); err != nil {
		t.Fatal(err)
	}
	first, err := svc.StatusList(ctx, 0, base)
	if err != nil {
		t.Fatal(err)
	}
	gen, held := svc.HeldStatusList(0)
	if held != first {
		t.Fatalf("the signed list is not held: %q", held)
	}
	// What is held is what a request gets: no new signature.
	svc.ReplaceHeldStatusList(0, "held")
	now = now.Add(identity.StatusListCacheTTL / 2)
	if again, err := svc.StatusList(ctx, 0, base); err != nil || again != "held" {
		t.Errorf("within the cache's life: %v, a list signed again instead of the one held", err)
	}
	if g, _ := svc.HeldStatusList(0); g != gen {
		t.Errorf("the bits were computed again within their life (%d → %d)", gen, g)
	}
	other, err := svc.StatusList(ctx, 0, "https://other.example")
	if err != nil || other == "held" || !strings.Contains(mustPayload(t, other), "https://other.example/v1/status/0") {
		t.Errorf("under another base URL: %v", err)
	}
	now = now.Add(identity.StatusListCacheTTL)
	later, err := svc.StatusList(ctx, 0, base)
	if g, _ := svc.HeldStatusList(0); err != nil || g == gen || later == "held" {
		t.Errorf("after the cache's life: %v, computation %d (was %d), same list %v", err, g, gen, later == first)
	}
}

// mustPayload is a compact JWS's payload, decoded.
func mustPayload(t *testing.T, jws string) string {
	t.Helper()
	parts := strings.Split(jws, ".")
	if len(parts) != 3 {
		t.Fatalf("not a compact JWS: %q", jws)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
