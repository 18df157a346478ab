package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v3"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/testutil/apitest"
)

// runOK runs a command to completion and fails the test unless it exits 0.
func runOK(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	r := startWithInput(t, stdin, args...)
	if code := r.wait(t); code != exitOK {
		t.Fatalf("surety %s: exit %d\n%s", strings.Join(args, " "), code, r.stderr)
	}
	return r.stdout.String()
}

func TestDIDNewWritesASecretKeyOnce(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "agent.json")
	did := strings.TrimSpace(runOK(t, "", "did", "new", "--type", "secp256k1", "--out", keyFile))
	if !strings.HasPrefix(did, "did:key:zQ3s") {
		t.Fatalf("did new printed %q", did)
	}
	st, err := os.Stat(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", st.Mode().Perm())
	}
	k, err := readKeyFile(keyFile)
	if err != nil || k.DID.String() != did {
		t.Fatalf("key file holds %v (%v), want %s", k, err, did)
	}
	again := start(t, "did", "new", "--out", keyFile)
	if code := again.wait(t); code != exitFailure || !strings.Contains(again.stderr.String(), "not overwriting") {
		t.Errorf("second did new: exit %d, %s", code, again.stderr)
	}
}

// TestSignedEnvelopeVerifiesInJOSELibrary is the acceptance check: an envelope from
// `surety envelope sign` verifies in standard JOSE libraries (jwx's jws.Verify, and go-jose,
// an implementation Surety does not use) given the key from resolving the sender's did:key,
// and any one-byte change makes Surety refuse it.
func TestSignedEnvelopeVerifiesInJOSELibrary(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "agent.json")
	did := strings.TrimSpace(runOK(t, "", "did", "new", "--out", keyFile))
	compact := strings.TrimSpace(runOK(t, `{"state":"discussion","body":{"q":"ready?"},"x_ext":true}`, "envelope", "sign", "--key", keyFile))

	// Resolve the sender's DID as any client would, take the JWK, verify with jwx.
	docJSON := runOK(t, "", "did", "resolve", did, "--format", "jwk")
	start := strings.Index(docJSON, `"publicKeyJwk": `)
	end := strings.Index(docJSON[start:], "}")
	rawJWK := docJSON[start+len(`"publicKeyJwk": `) : start+end+1]
	key, err := jwk.ParseKey([]byte(rawJWK))
	if err != nil {
		t.Fatalf("parse JWK %s: %v", rawJWK, err)
	}
	if _, err := jws.Verify([]byte(compact), jws.WithKey(jwa.EdDSA, key)); err != nil {
		t.Fatalf("jwx refuses the envelope: %v", err)
	}
	// And in a second, independent implementation: go-jose.
	var joseKey jose.JSONWebKey
	if err := joseKey.UnmarshalJSON([]byte(rawJWK)); err != nil {
		t.Fatalf("go-jose reads the JWK %s: %v", rawJWK, err)
	}
	parsed, err := jose.ParseSigned(compact)
	if err != nil {
		t.Fatalf("go-jose parses the envelope: %v", err)
	}
	payload, err := parsed.Verify(joseKey)
	if err != nil || !strings.Contains(string(payload), `"x_ext":true`) {
		t.Fatalf("go-jose refuses the envelope: %v (%s)", err, payload)
	}

	out := runOK(t, compact, "envelope", "verify")
	if !strings.Contains(out, `"x_ext": true`) || !strings.Contains(out, did) {
		t.Errorf("verify output lacks the payload: %s", out)
	}

	// One byte changed anywhere: refused, one line, exit 1.
	for _, i := range []int{0, 10, strings.IndexByte(compact, '.') + 5, len(compact) - 3} {
		b := []byte(compact)
		b[i] ^= 1
		r := startWithInput(t, string(b), "envelope", "verify")
		if code := r.wait(t); code != exitFailure {
			t.Fatalf("changed byte %d: exit %d, want %d", i, code, exitFailure)
		}
		if msg := r.stderr.String(); !strings.Contains(msg, "envelope refused") || strings.Count(msg, "\n") != 1 {
			t.Errorf("changed byte %d: %q", i, msg)
		}
	}
}

func TestNodeIdentityEndToEnd(t *testing.T) {
	waiting.Parallel(t) // a node (or devnet) of its own
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	node := start(t, "node", "--data-dir", data, "--listen", "127.0.0.1:0", "--dev-accounts", "1")
	base := node.apiURL(t)
	nodeDID := apitest.GetInfo(t, base).NodeDID
	if !strings.HasPrefix(nodeDID, "did:key:z6Mk") {
		t.Fatalf("node DID = %q", nodeDID)
	}
	if st, err := os.Stat(filepath.Join(data, "passphrase")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("generated passphrase file: %v %v", st, err)
	}

	keyFile := filepath.Join(dir, "agent.json")
	did := strings.TrimSpace(runOK(t, "", "did", "new", "--out", keyFile))
	out := runOK(t, "", "did", "register", "--node", base, "--key", keyFile)
	if !strings.Contains(out, "registered "+did) {
		t.Fatalf("register printed %q", out)
	}
	cred := strings.TrimSpace(out[strings.Index(out, "credential: ")+len("credential: "):])
	vc, err := identity.VerifyCredential(cred)
	if err != nil || vc.Issuer.ID != nodeDID {
		t.Errorf("credential from register: %v, %v", vc, err)
	}
	again := start(t, "did", "register", "--node", base, "--key", keyFile)
	if code := again.wait(t); code != exitFailure || !strings.Contains(again.stderr.String(), "already registered") {
		t.Errorf("second register: exit %d %s", code, again.stderr)
	}
	res := runOK(t, "", "did", "resolve", "--node", base, did)
	if !strings.Contains(res, `"registration": "registered"`) {
		t.Errorf("resolve through the node: %s", res)
	}

	// Through the node, verifying only checks: it spends no nonce, so the same envelope
	// checks twice (and an unauthenticated caller cannot fill the node's replay cache).
	env := strings.TrimSpace(runOK(t, `{"state":"execution"}`, "envelope", "sign", "--key", keyFile))
	runOK(t, env, "envelope", "verify", "--node", base)
	runOK(t, env, "envelope", "verify", "--node", base)

	// The node's DID survives a restart.
	node.cancel()
	node.wait(t)
	node2 := start(t, "node", "--data-dir", data, "--listen", "127.0.0.1:0", "--dev-accounts", "1")
	if got := apitest.GetInfo(t, node2.apiURL(t)).NodeDID; got != nodeDID {
		t.Errorf("node DID after restart = %s, want %s", got, nodeDID)
	}
}
