package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/google/go-cmp/cmp"

	"github.com/surety-ioa/surety/a2a"
	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/registry"
	"github.com/surety-ioa/surety/reputation"
)

// fixedScores is a reputation stand-in: every DID has the same score (package reputation
// tests the real one).
type fixedScores struct{ rep api.Reputation }

func (f fixedScores) Submit(ctx context.Context, v *identity.Verified, raw []byte) (*reputation.Submitted, error) {
	return f.rep.Submit(ctx, v, raw)
}

func (f fixedScores) Top(ctx context.Context, n int) []*reputation.Reputation {
	return f.rep.Top(ctx, n)
}

func (fixedScores) Reputation(_ context.Context, did string) (*reputation.Reputation, error) {
	return &reputation.Reputation{DID: did, Score: 0.75, Confidence: 0.5, Audits: 3}, nil
}

// someStake: every agent has staked 2 ETH.
type someStake struct{}

func (someStake) StakeOf(context.Context, string, common.Address) (*big.Int, error) {
	return new(big.Int).Mul(big.NewInt(2), big.NewInt(1e18)), nil
}

// a2aNode is an API with a real registry, served on loopback at the URL it names in its cards.
type a2aNode struct {
	url     string
	nodeDID string
	client  *client.Client
	reg     *registry.Registry
}

func newA2ANode(t *testing.T) *a2aNode {
	t.Helper()
	db := testutil.DB(t)
	ctx := context.Background()
	row, err := sqlite.EnterChain(ctx, db, sqlite.Chain{Key: "t", ChainID: chain.EmbeddedChainID, Genesis: "g", Contracts: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(ctx, registry.Config{DB: db, Chain: row, Stakes: someStake{}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ids := newIdentity(t, db)
	base := "http://" + ln.Addr().String()
	s, err := api.New(api.Config{Version: "v-test", Chain: api.ChainInfo{ID: chain.EmbeddedChainID}, Blocks: stubBlocks{}, DB: db,
		Identity: ids, Agents: reg, Reputation: fixedScores{}, PublicURL: base})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(s.Handler())
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	c, err := client.New(base)
	if err != nil {
		t.Fatal(err)
	}
	return &a2aNode{url: base, nodeDID: ids.NodeDID(), client: c, reg: reg}
}

func testCard(k *identity.Key, seq uint64) registry.Card {
	return registry.Card{DID: k.DID.String(), Name: "Translator", Description: "translates documents", Capabilities: []string{"translation/fr-en"},
		Endpoints: []registry.Endpoint{{Kind: "a2a", URL: "https://agent.example/a2a"}}, Wallet: common.HexToAddress("0xaa"), Seq: seq, Updated: time.Now().Unix() - 10}
}

// verifyBy checks a card as a verifier that trusts only signer would.
func verifyBy(t *testing.T, raw []byte, signer string) (*a2a.AgentCard, error) {
	t.Helper()
	card, canon, err := a2a.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	_, err = a2a.VerifyBy(card, canon, signer, 4, func(compact []byte) (string, error) {
		_, s, err := identity.VerifyJWS(compact, a2a.SignatureType)
		return s, err
	})
	return card, err
}

func getRaw(t *testing.T, url string) []byte {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, res.StatusCode, b)
	}
	return b
}

func TestNodeA2ACard(t *testing.T) {
	n := newA2ANode(t)
	raw := getRaw(t, n.url+"/.well-known/agent-card.json")
	card, err := verifyBy(t, raw, n.nodeDID)
	if err != nil {
		t.Fatalf("the node's card does not verify as signed by the node: %v", err)
	}
	if err := card.Validate(); err != nil {
		t.Errorf("the node's card lacks what A2A requires: %v", err)
	}
	ext := card.Extension(a2a.TrustExtensionURI)
	if ext == nil || ext.Params["did"] != n.nodeDID || ext.Params["role"] != "node" || ext.Params["chainId"] != float64(chain.EmbeddedChainID) {
		t.Errorf("trust extension = %+v", ext)
	}
	if card.SupportedInterfaces[0].URL != n.url+"/v1" {
		t.Errorf("interface = %+v, want the public URL's /v1", card.SupportedInterfaces)
	}
	// A Host header a caller picks does not reach what the node signs.
	req, _ := http.NewRequest(http.MethodGet, n.url+"/.well-known/agent-card.json", nil)
	req.Host = "evil.example"
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if strings.Contains(string(b), "evil.example") {
		t.Errorf("the signed card names the request's Host: %s", b)
	}
	if _, err := verifyBy(t, raw, "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK"); err == nil {
		t.Error("the node's card verifies as another DID's")
	}
}

func TestAgentA2ACards(t *testing.T) {
	n := newA2ANode(t)
	ctx := context.Background()
	k, _ := identity.GenerateKey(identity.Ed25519)
	_, signed, err := registry.SignA2A(testCard(k, 1), k)
	if err != nil {
		t.Fatal(err)
	}
	a, err := n.client.RegisterA2ACard(ctx, signed)
	if err != nil {
		t.Fatal(err)
	}
	if a.DID != k.DID.String() || a.Seq != 1 || !a.Staked {
		t.Errorf("registered %+v", a)
	}
	live := getRaw(t, n.url+"/v1/agents/"+k.DID.String()+"/agent-card.json")
	card, err := verifyBy(t, live, n.nodeDID)
	if err != nil {
		t.Fatalf("the served card does not verify as the node's: %v", err)
	}
	if _, err := verifyBy(t, live, k.DID.String()); err == nil {
		t.Error("the live card verifies as the agent's, though the agent never signed its live params")
	}
	p := card.Extension(a2a.TrustExtensionURI).Params
	want := map[string]any{"did": k.DID.String(), "wallet": common.HexToAddress("0xaa").Hex(), "seq": 1.0, "updated": p["updated"],
		"node": n.nodeDID, "chainId": float64(chain.EmbeddedChainID), "stake": "2000000000000000000", "staked": true,
		"reputation":      map[string]any{"score": 0.75, "confidence": 0.5, "audits": 3.0},
		"registrationUrl": n.url + "/v1/agents/" + k.DID.String() + "/agent-card.json?form=registered",
		"reputationUrl":   n.url + "/v1/reputation/" + k.DID.String(), "nodeCardUrl": n.url + "/.well-known/agent-card.json", "asOf": p["asOf"]}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("trust params (-want +got):\n%s", diff)
	}
	if card.Skills[0].ID != "translation/fr-en" || card.Name != "Translator" {
		t.Errorf("the agent's fields changed: %+v", card)
	}
	// The same content is signed once: a second GET answers the same bytes.
	if again := getRaw(t, n.url+"/v1/agents/"+k.DID.String()+"/agent-card.json"); string(again) != string(live) {
		t.Errorf("a second GET signed again:\n%s\n%s", live, again)
	}
	// The registered form is the agent's own, and verifies as the agent's.
	reg := getRaw(t, n.url+"/v1/agents/"+k.DID.String()+"/agent-card.json?form=registered")
	if string(reg) != string(signed) {
		t.Errorf("registered form:\n%s\nwant\n%s", reg, signed)
	}
	if _, err := verifyBy(t, reg, k.DID.String()); err != nil {
		t.Errorf("the registered form does not verify as the agent's: %v", err)
	}
	// A Surety JWS card is served as A2A too, and has no registered A2A form.
	k2, _ := identity.GenerateKey(identity.Ed25519)
	sc, _ := registry.Sign(testCard(k2, 1), k2)
	if _, err := n.client.RegisterCard(ctx, sc.JWS); err != nil {
		t.Fatal(err)
	}
	c2, err := n.client.AgentA2ACard(ctx, k2.DID.String())
	if err != nil {
		t.Fatal(err)
	}
	if c2.Name != "Translator" || c2.Extension(a2a.TrustExtensionURI).Params["registrationUrl"] != n.url+"/v1/agents/"+k2.DID.String() {
		t.Errorf("JWS-registered agent's A2A card: %+v", c2)
	}
	var ce *client.Error
	res, _ := http.Get(n.url + "/v1/agents/" + k2.DID.String() + "/agent-card.json?form=registered")
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("form=registered of a JWS card: %d, want 404", res.StatusCode)
	}
	if _, err := n.client.AgentA2ACard(ctx, "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK"); !errors.As(err, &ce) || ce.Slug() != "unknown-agent" {
		t.Errorf("unknown agent: %v", err)
	}
	// Refusals come back as problems.
	forged := []byte(strings.Replace(string(signed), `"Translator"`, `"Translatoe"`, 1))
	if _, err := n.client.RegisterA2ACard(ctx, forged); !errors.As(err, &ce) || ce.Slug() != "card-forged" {
		t.Errorf("forged A2A card: %v, want card-forged", err)
	}
	if _, err := n.client.RegisterA2ACard(ctx, signed); !errors.As(err, &ce) || ce.Slug() != "card-stale" {
		t.Errorf("the same A2A card again: %v, want card-stale", err)
	}
}

// nodeScript finds `node` and the npm packages the interop scripts need, or skips.
func nodeScript(t *testing.T, name string) (node, script string) {
	t.Helper()
	return testutil.NodeScript(t, name, "@a2a-js/sdk", "jose")
}

func runNode(t *testing.T, node string, args ...string) ([]map[string]any, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		err = errors.New(err.Error() + ": " + stderr.String() + string(out))
	}
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			lines = append(lines, m)
		}
	}
	return lines, err
}

// TestA2ACardsVerifyWithTheSDK: @a2a-js/sdk fetches the node's card and a registered agent's
// card, parses them, and verifies their signatures with its own verifier and its own JCS; a
// card with one byte changed fails it. The SDK's canonical form is byte for byte ours.
func TestA2ACardsVerifyWithTheSDK(t *testing.T) {
	node, script := nodeScript(t, "a2a-verify.mjs")
	n := newA2ANode(t)
	ctx := context.Background()
	k, _ := identity.GenerateKey(identity.Ed25519)
	_, signed, _ := registry.SignA2A(testCard(k, 1), k)
	if _, err := n.client.RegisterA2ACard(ctx, signed); err != nil {
		t.Fatal(err)
	}
	k2, _ := identity.GenerateKey(identity.Ed25519)
	sc, _ := registry.Sign(testCard(k2, 1), k2)
	if _, err := n.client.RegisterCard(ctx, sc.JWS); err != nil {
		t.Fatal(err)
	}
	paths := []string{"/.well-known/agent-card.json", "/v1/agents/" + k.DID.String() + "/agent-card.json", "/v1/agents/" + k2.DID.String() + "/agent-card.json"}
	check := func(signer string, paths []string) {
		t.Helper()
		lines, err := runNode(t, node, append([]string{script, n.url, signer}, paths...)...)
		if err != nil {
			t.Fatalf("a2a-verify.mjs: %v", err)
		}
		if len(lines) != len(paths) {
			t.Fatalf("a2a-verify.mjs printed %d lines, want %d", len(lines), len(paths))
		}
		for i, l := range lines {
			if l["valid"] != true || l["tamperedValid"] != false {
				t.Errorf("%s: SDK verdicts %v (tampered %v), want true (false)", paths[i], l["valid"], l["tamperedValid"])
			}
			ours, err := a2a.Canonical(func() *a2a.AgentCard { c, _, _ := a2a.Decode(getRaw(t, n.url+paths[i])); return c }())
			if err != nil || l["canonical"] != string(ours) {
				t.Errorf("%s: the SDK's canonical form differs from ours:\nSDK  %v\nours %s", paths[i], l["canonical"], ours)
			}
		}
	}
	check(n.nodeDID, paths)
	// The agent's own signature, on the card it registered, verifies with the SDK too.
	check(k.DID.String(), []string{"/v1/agents/" + k.DID.String() + "/agent-card.json?form=registered"})
	// The SDK refuses a card whose signer is not the one expected (the script pins it).
	if _, err := runNode(t, node, script, n.url, k.DID.String(), "/.well-known/agent-card.json"); err == nil {
		t.Error("the node's card verified as the agent's")
	}
}

// TestA2ACardFromJSRegisters: an agent in JavaScript builds and signs its A2A card with
// jose and @a2a-js/sdk and posts it; the node refuses it with a byte changed and registers
// it as signed.
func TestA2ACardFromJSRegisters(t *testing.T) {
	node, script := nodeScript(t, "a2a-register.mjs")
	n := newA2ANode(t)
	lines, err := runNode(t, node, script, n.url)
	if err != nil {
		t.Fatalf("a2a-register.mjs: %v %v", err, lines)
	}
	if len(lines) != 1 {
		t.Fatalf("a2a-register.mjs printed %v", lines)
	}
	l := lines[0]
	if tp, _ := l["tampered"].(map[string]any); tp["type"] != "https://surety.dev/problems/card-forged" {
		t.Errorf("tampered JS card: %v, want card-forged", tp)
	}
	did, _ := l["did"].(string)
	a, err := n.client.Agent(context.Background(), did)
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != "JS Translator" || !cmp.Equal(a.Capabilities, []string{"translation/fr-en"}) || a.Seq != 1 || len(a.Endpoints) != 1 || a.Endpoints[0].Kind != "a2a" {
		t.Errorf("the JS agent's card as the node holds it: %+v", a.Card)
	}
}

// TestServedCardsSayOnlyTheNodesWords: in the card the node serves and signs, the trust
// extension's words are the node's, whatever the agent wrote there ("Stake verified by the
// Surety node: 1,000,000 ETH" rode under the node's signature at 0d1b1c5, found by review).
func TestServedCardsSayOnlyTheNodesWords(t *testing.T) {
	n := newA2ANode(t)
	k, _ := identity.GenerateKey(identity.Ed25519)
	ac := registry.ToA2A(testCard(k, 1))
	ext := ac.Extension(a2a.TrustExtensionURI)
	ext.Description, ext.Required = "Stake verified by the Surety node: 1,000,000 ETH", true
	if err := a2a.Sign(ac, func(b []byte) (string, error) { return k.SignDocument(b, a2a.SignatureType) }); err != nil {
		t.Fatal(err)
	}
	signed, err := a2a.Encode(ac)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.client.RegisterA2ACard(context.Background(), signed); err != nil {
		t.Fatal(err)
	}
	card, err := verifyBy(t, getRaw(t, n.url+"/v1/agents/"+k.DID.String()+"/agent-card.json"), n.nodeDID)
	if err != nil {
		t.Fatal(err)
	}
	if got := card.Extension(a2a.TrustExtensionURI); got.Description != a2a.TrustExtensionDescription || got.Required {
		t.Errorf("the served trust extension says %q (required %v), want the node's own words", got.Description, got.Required)
	}
	// The registered form keeps what the agent signed.
	reg, err := verifyBy(t, getRaw(t, n.url+"/v1/agents/"+k.DID.String()+"/agent-card.json?form=registered"), k.DID.String())
	if err != nil || reg.Extension(a2a.TrustExtensionURI).Description != ext.Description {
		t.Errorf("the registered form: %v", err)
	}
}
