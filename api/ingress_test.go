package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
)

// junkVerifier is a node on the embedded chain with no write limit that matters, and a
// function that asks it to verify junk from a client address (remote makes the socket's
// peer address of it). Its verifier's clock stands still, so no budget refills between
// requests however slowly a loaded machine sends them (at 20 a second, one did within 200).
func junkVerifier(t *testing.T, remote func(addr string) string) func(addr string) *httptest.ResponseRecorder {
	t.Helper()
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(1, chain.DefaultDevBalance)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	db := testutil.DB(t)
	still := time.Now()
	s, err := api.New(api.Config{Version: "v-test", Chain: api.ChainInfo{ID: chain.EmbeddedChainID, Genesis: common.HexToHash("0x0abc"), Kind: "embedded", Key: "k"},
		Blocks: c, DB: db, Identity: newIdentityVerifying(t, db, identity.VerifierConfig{Now: func() time.Time { return still }, Started: still.Add(-time.Minute)}), WriteRate: 1e9, WriteBurst: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	return func(addr string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/v1/envelopes/verify", strings.NewReader("not a jws"))
		req.Header.Set("Content-Type", "application/jose")
		req.RemoteAddr = remote(addr)
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		return rec
	}
}

// TestEnvelopesAreBudgetedPerAddress: the envelopes one client address has checked are
// counted before any signature is, even within its write limit: past identity's burst (200)
// the address is refused with 429 ingress-budget and Retry-After, junk included, while
// another address is checked as usual.
func TestEnvelopesAreBudgetedPerAddress(t *testing.T) {
	verify := junkVerifier(t, func(addr string) string { return addr + ":40000" })
	for i := range 200 {
		if rec := verify("192.0.2.1"); rec.Code == http.StatusTooManyRequests {
			t.Fatalf("envelope %d from one address: %d %s, want it checked", i, rec.Code, rec.Body)
		}
	}
	rec := verify("192.0.2.1")
	if rec.Code != http.StatusTooManyRequests || !strings.HasSuffix(problemOf(t, rec).Type, "/ingress-budget") || rec.Header().Get("Retry-After") != "1" {
		t.Errorf("the 201st envelope from one address: %d %s (Retry-After %q), want 429 ingress-budget, Retry-After 1", rec.Code, rec.Body, rec.Header().Get("Retry-After"))
	}
	if rec := verify("192.0.2.2"); rec.Code != http.StatusBadRequest || !strings.HasSuffix(problemOf(t, rec).Type, "/envelope-malformed") {
		t.Errorf("junk from another address meanwhile: %d %s, want 400 envelope-malformed", rec.Code, rec.Body)
	}
}

// TestIPv6ClientsAreCountedPerSlash64: a host on IPv6 picks any address of its /64 for free, so
// every per-address quota counts an IPv6 client by its /64. With one address per request, the
// 201st envelope from one /64 is refused (ingress-budget) as from one IPv4 address, while
// another /64 is checked as usual; and the client key itself, per family.
func TestIPv6ClientsAreCountedPerSlash64(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"192.0.2.7", "192.0.2.7"},
		{"::ffff:192.0.2.7", "192.0.2.7"},
		{"2001:db8:1:2::7", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"},
		{"fe80::1%eth0", "fe80::/64"},
		{"not an address", "not an address"},
	} {
		if got := api.ClientKey(tt.in); got != tt.want {
			t.Errorf("ClientKey(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	verify := junkVerifier(t, func(addr string) string { return "[" + addr + "]:40000" })
	for i := range 200 {
		if rec := verify(fmt.Sprintf("2001:db8:1:2::%x", i+1)); rec.Code == http.StatusTooManyRequests {
			t.Fatalf("envelope %d from one /64: %d %s, want it checked", i, rec.Code, rec.Body)
		}
	}
	if rec := verify("2001:db8:1:2:abcd::1"); rec.Code != http.StatusTooManyRequests || !strings.HasSuffix(problemOf(t, rec).Type, "/ingress-budget") {
		t.Errorf("the 201st envelope from one /64, from a fresh address in it: %d %s, want 429 ingress-budget", rec.Code, rec.Body)
	}
	if rec := verify("2001:db8:1:3::1"); rec.Code != http.StatusBadRequest || !strings.HasSuffix(problemOf(t, rec).Type, "/envelope-malformed") {
		t.Errorf("junk from another /64 meanwhile: %d %s, want 400 envelope-malformed", rec.Code, rec.Body)
	}
}
