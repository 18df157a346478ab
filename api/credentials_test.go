package api_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/stake"
)

// registerAt registers k's DID with node n through the API (challenge, proof of possession).
func registerAt(t *testing.T, n *chainNode, k *identity.Key) {
	t.Helper()
	h := n.api.Handler()
	rec := do(t, h, http.MethodGet, "/v1/challenge", "", nil)
	var ch struct{ Challenge string }
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &ch) != nil {
		t.Fatalf("challenge: %d %s", rec.Code, rec.Body)
	}
	proof := signed(t, k, map[string]any{"to": []string{n.ids.NodeDID()}, "body": map[string]string{"challenge": ch.Challenge}})
	body, _ := json.Marshal(api.RegisterRequest{Proof: string(proof)})
	if rec := do(t, h, http.MethodPost, "/v1/dids/register", "", body); rec.Code != http.StatusCreated && rec.Code != http.StatusOK {
		t.Fatalf("register: %d %s", rec.Code, rec.Body)
	}
}

// getVC GETs a vc+jwt route and checks its media type.
func getVC(t *testing.T, h http.Handler, path string) string {
	t.Helper()
	rec := do(t, h, http.MethodGet, path, "", nil)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != identity.VCJWTMediaType {
		t.Fatalf("GET %s: %d %s %s", path, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	return rec.Body.String()
}

// interopResult is what clients/ts/interop/vc-verify.mjs prints.
type interopResult struct {
	Credential struct {
		Typ, Cty, Kid, Issuer, Subject string
		Context                        []string
	}
	Index    *int
	Revoked  *bool
	ListBits int
	Error    string
}

// verifyWithNPM runs vc-verify.mjs: jose checks both vc+jwt signatures against the node's
// public JWK, and @digitalbazaar/vc-bitstring-status-list reads the credential's bit.
func verifyWithNPM(t *testing.T, nodeDID, credential, statusList string) (interopResult, error) {
	t.Helper()
	nodeJS, script := testutil.NodeScript(t, "vc-verify.mjs", "jose", "@digitalbazaar/vc-bitstring-status-list")
	d, err := identity.ParseDID(nodeDID)
	if err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(map[string]any{"credential": credential, "statusList": statusList,
		"jwk": map[string]string{"kty": "OKP", "crv": "Ed25519", "x": base64.RawURLEncoding.EncodeToString(d.PublicKey)}})
	path := filepath.Join(t.TempDir(), "in.json")
	if err := os.WriteFile(path, in, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, runErr := exec.CommandContext(ctx, nodeJS, script, path).Output()
	var res interopResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("vc-verify.mjs printed %q (%v)", out, runErr)
	}
	if runErr != nil {
		return res, errors.New(res.Error)
	}
	return res, nil
}

// TestCredentialsFollowTheChain: a registered, bound and staked agent gets a VC 2.0
// registration credential and a stake credential (vc+jwt, signed by the node's DID) with a
// status entry; the stake credential's facts hold on the chain at its block; jose and
// vc-bitstring-status-list from npm verify both and read the bit clear; once the agent's
// wallet revokes the DID on chain, the same credentials read revoked there, at the node's
// verify route and in Go, and the node issues the DID nothing more. An unstaked registered
// DID gets a credential without status, and moves no list.
func TestCredentialsFollowTheChain(t *testing.T) {
	ctx := context.Background()
	c, dep := sharedChain(t)
	n := newChainNode(t, c, dep, 1)
	h := n.api.Handler()
	agent, raw := bindingOf(t, dep, 1)
	did := agent.DID.String()
	wallet := crypto.PubkeyToAddress(chain.DevKey(1).PublicKey)
	registerAt(t, n, agent)

	// Registered, not yet staked: no status entry, the short lifetime.
	unstaked := getVC(t, h, "/v1/credentials/"+did+"/registration")
	v, err := identity.VerifyCredentialJWT(unstaked, identity.CredentialCheck{Issuer: n.ids.NodeDID()})
	if err != nil {
		t.Fatal(err)
	}
	if v.Credential.CredentialStatus != nil || v.ValidUntil.Sub(v.ValidFrom) != identity.UnstatusedCredentialLifetime {
		t.Errorf("unstaked: status %+v, lifetime %v", v.Credential.CredentialStatus, v.ValidUntil.Sub(v.ValidFrom))
	}
	if rec := do(t, h, http.MethodGet, "/v1/credentials/"+did+"/stake", "", nil); rec.Code != http.StatusConflict || !strings.HasSuffix(problemOf(t, rec).Type, "/not-staked") {
		t.Errorf("stake credential without stake: %d %s, want 409 not-staked", rec.Code, rec.Body)
	}
	if rec := do(t, h, http.MethodGet, "/v1/status/0", "", nil); rec.Code != http.StatusOK {
		t.Fatalf("status list 0: %d %s", rec.Code, rec.Body)
	}
	if rec := do(t, h, http.MethodGet, "/v1/status/1", "", nil); rec.Code != http.StatusNotFound {
		t.Errorf("status list 1 before anyone holds an index there: %d, want 404", rec.Code)
	}

	// Bind and stake on chain.
	if rec := do(t, h, http.MethodPost, "/v1/bindings", "", raw); rec.Code != http.StatusCreated {
		t.Fatalf("bind: %d %s", rec.Code, rec.Body)
	}
	if rec := do(t, h, http.MethodPost, "/v1/stake", "", envelopeTo(t, n, agent, api.StakeBody{Op: "stake", Wallet: wallet, Amount: "1000000000000000000"})); rec.Code != http.StatusOK {
		t.Fatalf("stake: %d %s", rec.Code, rec.Body)
	}

	reg := getVC(t, h, "/v1/credentials/"+did+"/registration")
	stk := getVC(t, h, "/v1/credentials/"+did+"/stake")
	list := getVC(t, h, "/v1/status/0")
	var entries []identity.StatusEntry
	for _, jwt := range []string{reg, stk} {
		v, err := identity.VerifyCredentialJWT(jwt, identity.CredentialCheck{Issuer: n.ids.NodeDID()})
		if err != nil {
			t.Fatal(err)
		}
		if v.Credential.CredentialStatus == nil {
			t.Fatalf("a staked DID's credential has no status: %s", v.Credential.ID)
		}
		// A stake credential lives an hour: the stake may start unbonding at the next block,
		// which its status bit does not tell (found by review: it lived 30 days).
		if life, want := v.ValidUntil.Sub(v.ValidFrom), identity.StatusCredentialLifetime; jwt == stk {
			if want = identity.StakeCredentialLifetime; life != want {
				t.Errorf("the stake credential lives %v, want %v", life, want)
			}
		} else if life != want {
			t.Errorf("the registration credential lives %v, want %v", life, want)
		}
		entries = append(entries, *v.Credential.CredentialStatus)
	}
	if entries[0] != entries[1] || entries[0].StatusListCredential != "http://example.com/v1/status/0" {
		t.Errorf("status entries %+v: want one entry per DID, under the request's host", entries)
	}
	sv, _ := identity.VerifyCredentialJWT(stk, identity.CredentialCheck{})
	var subj identity.StakeSubject
	if err := sv.Subject(&subj); err != nil {
		t.Fatal(err)
	}
	if subj.ID != did || subj.Wallet != wallet.Hex() || subj.Amount != "1000000000000000000" || subj.ChainID != chain.EmbeddedChainID ||
		subj.Registry != dep.Contracts.StakeRegistry.Hex() || subj.Block == 0 {
		t.Errorf("stake subject %+v", subj)
	}
	if err := stake.CheckStakeSubject(ctx, c, chain.EmbeddedChainID, subj); err != nil {
		t.Errorf("the stake credential's facts on chain: %v", err)
	}
	lie := subj
	lie.Amount = "2000000000000000000"
	if err := stake.CheckStakeSubject(ctx, c, chain.EmbeddedChainID, lie); !errors.Is(err, stake.ErrStakeFacts) {
		t.Errorf("a stake credential stating twice the stake: %v, want ErrStakeFacts", err)
	}
	lie = subj
	lie.BlockHash = "0x" + strings.Repeat("00", 32)
	if err := stake.CheckStakeSubject(ctx, c, chain.EmbeddedChainID, lie); !errors.Is(err, stake.ErrStakeFacts) {
		t.Errorf("a stake credential on another block hash: %v, want ErrStakeFacts", err)
	}

	verifyAt := func(jwt string) (int, api.Problem) {
		rec := do(t, h, http.MethodPost, "/v1/credentials/verify", "", []byte(jwt))
		if rec.Code == http.StatusOK {
			return rec.Code, api.Problem{}
		}
		return rec.Code, problemOf(t, rec)
	}
	if code, p := verifyAt(reg); code != http.StatusOK {
		t.Errorf("verify route before the revocation: %d %+v", code, p)
	}
	res, err := verifyWithNPM(t, n.ids.NodeDID(), reg, list)
	if err != nil {
		t.Fatalf("jose / vc-bitstring-status-list refused the node's credential: %v", err)
	}
	if res.Credential.Typ != "vc+jwt" || res.Credential.Cty != "vc" || res.Credential.Context[0] != identity.CredentialsV2Context ||
		res.Credential.Subject != did || res.ListBits < 131072 || res.Index == nil || *res.Revoked {
		t.Errorf("npm read %+v before the revocation", res)
	}
	tampered := strings.Replace(reg, ".", ".e", 1)
	if _, err := verifyWithNPM(t, n.ids.NodeDID(), tampered, list); err == nil {
		t.Error("jose accepted a credential with a changed payload")
	}

	// The wallet revokes the DID on chain.
	if rec := do(t, h, http.MethodPost, "/v1/dids/revoke", "", envelopeTo(t, n, agent, api.RevokeBody{Op: "revoke", Wallet: wallet})); rec.Code != http.StatusOK {
		t.Fatalf("revoke: %d %s", rec.Code, rec.Body)
	}
	list = getVC(t, h, "/v1/status/0")
	for name, jwt := range map[string]string{"registration": reg, "stake": stk} {
		res, err := verifyWithNPM(t, n.ids.NodeDID(), jwt, list)
		if err != nil || res.Revoked == nil || !*res.Revoked {
			t.Errorf("npm reads the %s credential after the revocation: %+v %v, want revoked", name, res, err)
		}
		if code, p := verifyAt(jwt); code != http.StatusForbidden || p.Type != "https://surety.dev/problems/credential-revoked" {
			t.Errorf("verify route, %s credential after the revocation: %d %+v, want 403 credential-revoked", name, code, p)
		}
	}
	cv, _ := identity.VerifyCredentialJWT(reg, identity.CredentialCheck{})
	lv, _ := identity.VerifyCredentialJWT(list, identity.CredentialCheck{})
	if err := identity.CheckCredentialStatus(cv, lv); !errors.Is(err, identity.ErrCredentialRevoked) {
		t.Errorf("Go reads the registration credential after the revocation: %v, want revoked", err)
	}
	if code, p := verifyAt(unstaked); code != http.StatusOK {
		t.Errorf("the unstaked credential (no status) still verifies until it expires: %d %+v", code, p)
	}
	for _, path := range []string{"/v1/credentials/" + did + "/registration", "/v1/credentials/" + did + "/stake"} {
		rec := do(t, h, http.MethodGet, path, "", nil)
		if p := problemOf(t, rec); rec.Code != http.StatusGone || p.Type != "https://surety.dev/problems/deactivated" {
			t.Errorf("GET %s after the revocation: %d %s, want 410 deactivated", path, rec.Code, rec.Body)
		}
	}
	if rec := do(t, h, http.MethodGet, "/v1/credentials/"+did+"/registration?version=1.1", "", nil); rec.Code != http.StatusGone {
		t.Errorf("VC 1.1 form after the revocation: %d, want 410", rec.Code)
	}
}

// TestCredentialRoutesRefuse: what the credential routes refuse, with the problem each gives.
func TestCredentialRoutesRefuse(t *testing.T) {
	c, dep := sharedChain(t)
	n := newChainNode(t, c, dep, 1)
	h := n.api.Handler()
	agent, _ := identity.GenerateKey(identity.Ed25519)
	registerAt(t, n, agent)
	did := agent.DID.String()
	good := getVC(t, h, "/v1/credentials/"+did+"/registration")
	other, _ := identity.GenerateKey(identity.Ed25519)
	foreign, _ := identity.NewCredential(other.DID.String(), []string{identity.RegistrationCredentialType}, time.Now(), time.Now().Add(time.Hour), identity.RegistrationSubject{ID: did})
	foreignJWT, _ := other.IssueCredential(foreign)
	stranger, _ := identity.GenerateKey(identity.Ed25519)
	parts := strings.Split(good, ".")
	sig := []byte(parts[2])
	// Another base64url letter (flipping a bit could make '_' a '^', not base64 at all: a
	// malformed credential, not a changed signature, and a flaky test).
	if sig[3] = 'A'; parts[2][3] == 'A' {
		sig[3] = 'B'
	}

	for _, tt := range []struct {
		name, method, path string
		body               string
		status             int
		slug               string
	}{
		{"a DID the node does not know", http.MethodGet, "/v1/credentials/" + stranger.DID.String() + "/registration", "", 404, "not-found"},
		{"not a DID", http.MethodGet, "/v1/credentials/did:key:nope/registration", "", 400, "invalid-did"},
		{"an unknown version", http.MethodGet, "/v1/credentials/" + did + "/registration?version=3", "", 400, "bad-request"},
		{"a list out of range", http.MethodGet, "/v1/status/8", "", 404, "not-found"},
		{"a list that is not a number", http.MethodGet, "/v1/status/x", "", 400, "bad-request"},
		{"a wallet that is not an address", http.MethodGet, "/v1/credentials/" + did + "/stake?wallet=0x12", "", 400, "bad-request"},
		{"verify: another issuer", http.MethodPost, "/v1/credentials/verify", foreignJWT, 403, "credential-wrong-issuer"},
		{"verify: a changed signature", http.MethodPost, "/v1/credentials/verify", parts[0] + "." + parts[1] + "." + string(sig), 401, "credential-bad-signature"},
		{"verify: not a credential", http.MethodPost, "/v1/credentials/verify", "hello", 400, "credential-malformed"},
		{"verify: JSON without credential", http.MethodPost, "/v1/credentials/verify", `{"vc": 1}`, 400, "bad-request"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var body []byte
			if tt.body != "" {
				body = []byte(tt.body)
			}
			rec := do(t, h, tt.method, tt.path, "", body)
			if p := problemOf(t, rec); rec.Code != tt.status || p.Type != "https://surety.dev/problems/"+tt.slug {
				t.Errorf("%d %s, want %d %s", rec.Code, rec.Body, tt.status, tt.slug)
			}
		})
	}
	// The typed client reads the same routes, and a refusal is an *Error with the slug.
	cl, err := client.New("http://node.test")
	if err != nil {
		t.Fatal(err)
	}
	cl = cl.WithHTTP(&http.Client{Transport: &handlerTransport{h: h}})
	ctx := context.Background()
	if jwt, err := cl.RegistrationCredential(ctx, did); err != nil || !strings.HasPrefix(jwt, "eyJ") {
		t.Errorf("client.RegistrationCredential: %q %v", jwt, err)
	} else if verdict, err := cl.VerifyCredential(ctx, jwt); err != nil || !verdict.Valid || verdict.Status != "none" || verdict.Issuer != n.ids.NodeDID() {
		t.Errorf("client.VerifyCredential: %+v %v", verdict, err)
	}
	if jwt, err := cl.RegistrationCredentialV1(ctx, did); err != nil || strings.Count(jwt, ".") != 2 {
		t.Errorf("client.RegistrationCredentialV1: %q %v", jwt, err)
	}
	if list, err := cl.StatusList(ctx, 0); err != nil {
		t.Errorf("client.StatusList: %v", err)
	} else if v, err := identity.VerifyCredentialJWT(list, identity.CredentialCheck{Issuer: n.ids.NodeDID()}); err != nil || v.Credential.ID != "http://node.test/v1/status/0" {
		t.Errorf("the list the client read: %v %+v", err, v)
	}
	var ce *client.Error
	if _, err := cl.VerifyCredential(ctx, foreignJWT); !errors.As(err, &ce) || ce.Slug() != "credential-wrong-issuer" {
		t.Errorf("client.VerifyCredential of another issuer's: %v", err)
	}
	if _, err := cl.StakeCredential(ctx, did, common.Address{}); !errors.As(err, &ce) || ce.Slug() != "not-staked" {
		t.Errorf("client.StakeCredential without stake: %v", err)
	}

	// With a public URL, credentials name the lists under it, whatever host was asked.
	pub, err := api.New(api.Config{Blocks: stubBlocks{}, DB: stubDB{}, Identity: n.ids, Credentials: n.ids, PublicURL: "https://node.example/"})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.index.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	nv, _ := identity.VerifyCredentialJWT(getVC(t, pub.Handler(), "/v1/status/0"), identity.CredentialCheck{})
	if nv == nil || nv.Credential.ID != "https://node.example/v1/status/0" {
		t.Errorf("with PublicURL the list is %+v", nv)
	}

	body, _ := json.Marshal(api.CredentialVerifyRequest{Credential: good})
	if rec := do(t, h, http.MethodPost, "/v1/credentials/verify", "", body); rec.Code != http.StatusOK {
		t.Errorf("verify as JSON: %d %s", rec.Code, rec.Body)
	}
	if rec := do(t, h, http.MethodGet, "/v1/credentials/"+did+"/registration?version=1.1", "", nil); rec.Code != http.StatusOK {
		t.Errorf("VC 1.1 form: %d %s", rec.Code, rec.Body)
	} else if vc, err := identity.VerifyCredential(rec.Body.String()); err != nil || vc.Issuer.ID != n.ids.NodeDID() {
		t.Errorf("the VC 1.1 form does not verify with aries-framework-go: %v", err)
	}
}
