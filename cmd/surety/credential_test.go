package main

import (
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil/apitest"
)

func credKey(t *testing.T, label string) *identity.Key {
	t.Helper()
	seed := sha256.Sum256([]byte(label))
	k, err := identity.KeyFromSeed(identity.Ed25519, seed[:])
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestCredentialVerify: `surety credential verify` checks the signature, the window and the
// status bit of a node's credential, one line per check; each problem is one "problem:" line
// saying what failed and what to do, with exit status 1.
func TestCredentialVerify(t *testing.T) {
	node, other := credKey(t, "node"), credKey(t, "other")
	agent := credKey(t, "agent").DID.String()
	var revoked atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bits := identity.NewStatusList()
		if revoked.Load() {
			identity.SetStatusBit(bits, 5)
		}
		url := "http://" + r.Host + identity.StatusListPath + "0"
		c, err := identity.StatusListCredential(node.DID.String(), url, bits, time.Now(), time.Hour)
		if err != nil {
			t.Error(err)
		}
		jwt, _ := node.IssueCredential(c)
		w.Header().Set("Content-Type", identity.VCJWTMediaType)
		w.Write([]byte(jwt))
	}))
	defer srv.Close()
	issue := func(k *identity.Key, from, until time.Time, status bool) string {
		c, err := identity.NewCredential(k.DID.String(), []string{identity.RegistrationCredentialType}, from, until,
			identity.RegistrationSubject{ID: agent, RegisteredWith: k.DID.String(), Registration: "registered"})
		if err != nil {
			t.Fatal(err)
		}
		if status {
			c.CredentialStatus = identity.NewStatusEntry(srv.URL+identity.StatusListPath+"0", 5)
		}
		jwt, err := k.IssueCredential(c)
		if err != nil {
			t.Fatal(err)
		}
		return jwt
	}
	now := time.Now()
	good := issue(node, now.Add(-time.Minute), now.Add(time.Hour), true)
	dir := t.TempDir()
	goodFile := filepath.Join(dir, "cred.jwt")
	if err := os.WriteFile(goodFile, []byte(good+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	vc11, err := identity.IssueRegistrationCredential(node, credKey(t, "agent").DID, "registered", now)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(good, ".")
	tampered := parts[0] + "." + parts[1][:10] + "x" + parts[1][11:] + "." + parts[2]

	tests := []struct {
		name     string
		stdin    string
		args     []string
		revoked  bool
		code     int
		want     []string // lines (prefixes) the output must hold
		problems int
	}{
		{"valid, status clear", "", []string{goodFile, "--issuer", node.DID.String()}, false, exitOK,
			[]string{"signature: ok", "window: ok", "status: ok, bit 5 of " + srv.URL + "/v1/status/0 is clear"}, 0},
		{"from stdin", good, []string{"-"}, false, exitOK, []string{"signature: ok", "status: ok"}, 0},
		{"revoked on chain", good, nil, true, exitFailure, []string{"signature: ok", "window: ok", "problem: status: revoked (bit 5"}, 1},
		{"offline skips the status", good, []string{"--offline"}, true, exitOK, []string{"status: not checked (--offline)"}, 0},
		{"expired and revoked", issue(node, now.Add(-3*time.Hour), now.Add(-2*time.Hour), true), nil, true, exitFailure,
			[]string{"signature: ok", "problem: window: expired at", "problem: status: revoked"}, 2},
		{"not yet valid", issue(node, now.Add(time.Hour), now.Add(2*time.Hour), false), nil, false, exitFailure,
			[]string{"problem: window: valid only from", "status: none"}, 1},
		{"tampered", tampered, nil, false, exitFailure, []string{"problem: signature:"}, 1},
		{"another issuer than asked", issue(other, now, now.Add(time.Hour), false), []string{"--issuer", node.DID.String()}, false, exitFailure,
			[]string{"problem: signature: issued by " + other.DID.String()}, 1},
		{"a VC 1.1 VC-JWT", vc11, nil, false, exitOK, []string{"signature: ok, a VC Data Model 1.1 VC-JWT by " + node.DID.String()}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			revoked.Store(tt.revoked)
			r := startWithInput(t, tt.stdin, append([]string{"credential", "verify"}, tt.args...)...)
			code := r.wait(t)
			out := r.stdout.String()
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, out, r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, "\n"+w) && !strings.HasPrefix(out, w) {
					t.Errorf("output lacks a line %q:\n%s", w, out)
				}
			}
			if n := strings.Count(out, "problem: "); n != tt.problems {
				t.Errorf("%d problem lines, want %d:\n%s", n, tt.problems, out)
			}
			if code != exitOK && strings.Count(r.stderr.String(), "\n") != 1 {
				t.Errorf("stderr is not one line: %q", r.stderr)
			}
		})
	}

	revoked.Store(true)
	r := startWithInput(t, good, "credential", "verify", "--json")
	var verdict struct {
		Valid            bool
		Checks, Problems []string
	}
	if code := r.wait(t); code != exitFailure || json.Unmarshal([]byte(r.stdout.String()), &verdict) != nil || verdict.Valid ||
		len(verdict.Problems) != 1 || !strings.HasPrefix(verdict.Problems[0], "problem: status: revoked") || len(verdict.Checks) != 2 {
		t.Errorf("--json of a revoked credential: exit %d %+v\n%s", code, verdict, r.stdout)
	}

	srv.Close()
	r = startWithInput(t, good, "credential", "verify")
	if code := r.wait(t); code != exitFailure || !strings.Contains(r.stdout.String(), "problem: status: cannot fetch the status list") ||
		!strings.Contains(r.stdout.String(), "--offline to skip") {
		t.Errorf("status list unreachable: exit %d\n%s", code, r.stdout)
	}
	help := runOK(t, "", "credential", "verify", "--help")
	for _, w := range []string{"Usage: surety credential verify", "status", "--rpc-url", "--offline", "problem:"} {
		if !strings.Contains(help, w) {
			t.Errorf("help lacks %q:\n%s", w, help)
		}
	}
}

// TestCredentialVerifyAgainstANode: an agent registered, bound and staked on a node gets its
// stake credential; `surety credential verify --node --rpc-url` checks the signature by the
// node's DID, the window, the status bit in the node's list and the stake facts on the chain
// at the credential's block (through the node's own JSON-RPC, which serves calls at recent
// blocks). Once the wallet revokes the DID on chain, the same credential reads revoked.
func TestCredentialVerifyAgainstANode(t *testing.T) {
	waiting.Parallel(t) // a node (or devnet) of its own
	dir := t.TempDir()
	node := start(t, "node", "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0", "--dev-accounts", "3")
	base := node.apiURL(t)
	wallet := crypto.PubkeyToAddress(chain.DevKey(2).PublicKey).Hex()
	key := filepath.Join(dir, "agent.json")
	did := strings.TrimSpace(runOK(t, "", "did", "new", "--out", key))
	runOK(t, "", "did", "register", "--node", base, "--key", key)
	runOK(t, "", "did", "bind", "--node", base, "--key", key, "--dev-wallet", "2")
	runOK(t, "", "stake", "add", "--node", base, "--key", key, "--wallet", wallet, "--amount", "1eth")

	fetch := func(path string) string {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	cred := fetch("/v1/credentials/" + did + "/stake")
	out := runOK(t, cred, "credential", "verify", "--node", base, "--rpc-url", base+"/v1/rpc", "-")
	for _, w := range []string{"signature: ok, VerifiableCredential, SuretyStakeCredential by " + apitest.GetInfo(t, base).NodeDID, "window: ok", "status: ok, bit 0 of " + base + "/v1/status/0 is clear",
		"stake: ok, chain " + strconv.FormatUint(apitest.GetInfo(t, base).Chain.ID, 10) + " at block"} {
		if !strings.Contains(out, w) {
			t.Errorf("verify lacks %q:\n%s", w, out)
		}
	}
	if !strings.Contains(out, did+" bound with 1000000000000000000 staked by "+wallet) {
		t.Errorf("the stake line does not name the facts:\n%s", out)
	}

	runOK(t, "", "did", "revoke", "--node", base, "--key", key, "--wallet", wallet)
	// The node's index tells its status lists as it commits the revocation's block: the
	// revocation answer may come a moment before.
	var code int
	var r *running
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		r = startWithInput(t, cred, "credential", "verify", "--node", base, "-")
		if code = r.wait(t); code != exitOK || time.Now().After(deadline) {
			break
		}
	}
	if code != exitFailure || !strings.Contains(r.stdout.String(), "problem: status: revoked (bit 0 of "+base+"/v1/status/0 is set") {
		t.Errorf("after the revocation: exit %d\n%s%s", code, r.stdout, r.stderr)
	}
}
