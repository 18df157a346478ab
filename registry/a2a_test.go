package registry_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/google/go-cmp/cmp"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/surety-ioa/surety/a2a"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/registry"
)

func suretyCard(k *identity.Key, seq uint64) registry.Card {
	return registry.Card{DID: k.DID.String(), Name: "Translator", Description: "translates documents", Capabilities: []string{"translation/fr-en", "summarize"},
		Endpoints: []registry.Endpoint{{Kind: "a2a", URL: "https://agent.example/a2a"}, {Kind: "mcp", URL: "https://agent.example/mcp"}, {Kind: "http", URL: "https://agent.example/"}},
		Wallet:    common.HexToAddress("0x00000000000000000000000000000000000000aa"), Seq: seq, Updated: now.Unix()}
}

func a2aCard(t testing.TB, k *identity.Key, seq uint64) []byte {
	t.Helper()
	_, raw, err := registry.SignA2A(suretyCard(k, seq), k)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestA2AMapsSuretyCardsWithoutLoss: a Surety card → A2A → the same Surety card, with
// capabilities as skills tagged by their hierarchy and endpoints as interfaces.
func TestA2AMapsSuretyCardsWithoutLoss(t *testing.T) {
	k, _ := identity.KeyFromSeed(identity.Ed25519, make([]byte, 32))
	c := suretyCard(k, 7)
	ac := registry.ToA2A(c)
	if err := ac.Validate(); err != nil {
		t.Fatalf("the mapped card is not a valid A2A card: %v", err)
	}
	if diff := cmp.Diff([]string{"translation/fr-en", "translation"}, ac.Skills[0].Tags); diff != "" {
		t.Errorf("tags of translation/fr-en (-want +got):\n%s", diff)
	}
	wantIn := []a2a.AgentInterface{{URL: "https://agent.example/a2a", ProtocolBinding: "JSONRPC", ProtocolVersion: "1.0"}, {URL: "https://agent.example/mcp", ProtocolBinding: "MCP"}, {URL: "https://agent.example/", ProtocolBinding: "HTTP"}}
	if diff := cmp.Diff(wantIn, ac.SupportedInterfaces); diff != "" {
		t.Errorf("interfaces (-want +got):\n%s", diff)
	}
	back, err := registry.FromA2A(ac)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c, back); diff != "" {
		t.Errorf("Surety → A2A → Surety changed the card (-want +got):\n%s", diff)
	}
}

func TestRegisterA2ACard(t *testing.T) {
	ctx := context.Background()
	k, _ := identity.GenerateKey(identity.Ed25519)
	r := newRegistry(t, stakes{})
	raw := a2aCard(t, k, 2)
	a, err := r.Register(ctx, raw, "api")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(suretyCard(k, 2), a.Card); diff != "" {
		t.Errorf("registered card (-want +got):\n%s", diff)
	}
	if !registry.IsA2A(a.JWS) || a.JWS != string(raw) {
		t.Errorf("the stored form is not the signed A2A card as sent:\n%s", a.JWS)
	}
	got, err := r.Get(ctx, k.DID.String())
	if err != nil {
		t.Fatal(err)
	}
	ac, err := got.A2A()
	if err != nil || ac.Name != "Translator" || len(ac.Signatures) != 0 {
		t.Errorf("A2A() = %+v, %v", ac, err)
	}
	// Surety's sequence rule holds across the two forms.
	if _, err := r.Register(ctx, raw, "api"); !errors.Is(err, registry.ErrStale) {
		t.Errorf("the same A2A card again: %v, want ErrStale", err)
	}
	if _, err := r.Register(ctx, card(t, k, 2, "Old", "a"), "api"); !errors.Is(err, registry.ErrStale) && err != nil {
		t.Errorf("a JWS card with the same sequence: %v", err)
	}
	if _, err := r.Register(ctx, card(t, k, 1, "Old", "a"), "api"); !errors.Is(err, registry.ErrStale) {
		t.Errorf("a JWS card with a lower sequence: %v, want ErrStale", err)
	}
	if _, err := r.Register(ctx, a2aCard(t, k, 3), "api"); err != nil {
		t.Errorf("a higher sequence: %v", err)
	}
	// An ES256K agent registers an A2A card too (checked by Surety; jose cannot, see docs/a2a.md).
	sk, _ := identity.GenerateKey(identity.Secp256k1)
	if _, err := r.Register(ctx, a2aCard(t, sk, 1), "api"); err != nil {
		t.Errorf("secp256k1 agent: %v", err)
	}
}

// resign replaces the card's signatures with one made by sign over its canonical form, with
// the protected header given.
func resign(t *testing.T, ac *a2a.AgentCard, header map[string]string, priv ed25519.PrivateKey) []byte {
	t.Helper()
	ac.Signatures = nil
	canon, err := a2a.Canonical(ac)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := json.Marshal(header)
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(h) + "." + enc.EncodeToString(canon)
	ac.Signatures = []a2a.AgentCardSignature{{Protected: enc.EncodeToString(h), Signature: enc.EncodeToString(ed25519.Sign(priv, []byte(input)))}}
	raw, err := a2a.Encode(ac)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestRefusedA2ACards(t *testing.T) {
	ctx := context.Background()
	r := newRegistry(t, stakes{})
	k, _ := identity.GenerateKey(identity.Ed25519)
	other, _ := identity.GenerateKey(identity.Ed25519)
	priv := k.Private.(ed25519.PrivateKey)
	good := a2aCard(t, k, 1)
	header := func(kid string) map[string]string {
		return map[string]string{"alg": "EdDSA", "kid": kid, "typ": "JOSE"}
	}
	mutate := func(f func(ac *a2a.AgentCard)) *a2a.AgentCard {
		ac := registry.ToA2A(suretyCard(k, 1))
		f(ac)
		return ac
	}
	otherSigned := func() []byte {
		_, raw, _ := registry.SignA2A(suretyCard(other, 1), other)
		ac, _, _ := a2a.Decode(raw)
		p := ac.Capabilities.Extensions[0].Params
		p["did"] = k.DID.String()
		ac.Signatures = nil
		if err := a2a.Sign(ac, func(b []byte) (string, error) { return other.SignDocument(b, a2a.SignatureType) }); err != nil {
			t.Fatal(err)
		}
		out, _ := a2a.Encode(ac)
		return out
	}()
	fiveSigs := func() []byte {
		ac, _, _ := a2a.Decode(good)
		for range 4 {
			ac.Signatures = append(ac.Signatures, ac.Signatures[0])
		}
		out, _ := a2a.Encode(ac)
		return out
	}()
	tests := []struct {
		name string
		raw  []byte
		want error
	}{
		{"one byte changed", []byte(strings.Replace(string(good), `"Translator"`, `"Translatos"`, 1)), registry.ErrForged},
		{"wrong kid", resign(t, mutate(func(*a2a.AgentCard) {}), header(other.DID.KeyID()), priv), registry.ErrForged},
		{"signed by another DID", otherSigned, registry.ErrWrongDID},
		{"wrong typ", resign(t, mutate(func(*a2a.AgentCard) {}), map[string]string{"alg": "EdDSA", "kid": k.DID.KeyID(), "typ": "JWT"}, priv), registry.ErrMalformed},
		{"missing version", resign(t, mutate(func(ac *a2a.AgentCard) { ac.Version = "" }), header(k.DID.KeyID()), priv), registry.ErrMalformed},
		{"no trust extension", resign(t, mutate(func(ac *a2a.AgentCard) { ac.Capabilities.Extensions[0].URI = "https://example.com/x" }), header(k.DID.KeyID()), priv), registry.ErrMalformed},
		{"agent claims its stake", resign(t, mutate(func(ac *a2a.AgentCard) { ac.Capabilities.Extensions[0].Params["stake"] = "1000000" }), header(k.DID.KeyID()), priv), registry.ErrMalformed},
		{"two trust extensions", resign(t, mutate(func(ac *a2a.AgentCard) {
			ac.Capabilities.Extensions = append(ac.Capabilities.Extensions, a2a.AgentExtension{URI: a2a.TrustExtensionURI, Params: map[string]any{"stake": "1000000"}})
		}), header(k.DID.KeyID()), priv), registry.ErrMalformed},
		{"javascript icon", resign(t, mutate(func(ac *a2a.AgentCard) { ac.IconURL = "javascript:alert(1)" }), header(k.DID.KeyID()), priv), registry.ErrMalformed},
		{"unsigned", func() []byte { ac, _, _ := a2a.Decode(good); ac.Signatures = nil; b, _ := a2a.Encode(ac); return b }(), registry.ErrMalformed},
		{"five signatures", fiveSigs, registry.ErrMalformed},
		{"security schemes", []byte(strings.Replace(string(good), `{"capabilities"`, `{"securitySchemes":{"a":{}},"capabilities"`, 1)), registry.ErrMalformed},
		{"duplicate member", []byte(strings.Replace(string(good), `{"capabilities"`, `{"name":"X","capabilities"`, 1)), registry.ErrMalformed},
		{"oversize", []byte("{" + strings.Repeat(" ", registry.MaxCardSize) + "}"), registry.ErrOversize},
		{"fractional seq", resign(t, mutate(func(ac *a2a.AgentCard) { ac.Capabilities.Extensions[0].Params["seq"] = 1.5 }), header(k.DID.KeyID()), priv), registry.ErrMalformed},
		{"updated in the future", resign(t, mutate(func(ac *a2a.AgentCard) {
			ac.Capabilities.Extensions[0].Params["updated"] = float64(now.Add(time.Hour).Unix())
		}), header(k.DID.KeyID()), priv), registry.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := r.Register(ctx, tt.raw, "api"); !errors.Is(err, tt.want) {
				t.Errorf("Register = %v, want %v", err, tt.want)
			}
		})
	}
	// The guard of each row is what refuses it: the same card signed properly registers.
	if _, err := r.Register(ctx, resign(t, mutate(func(*a2a.AgentCard) {}), header(k.DID.KeyID()), priv), "api"); err != nil {
		t.Errorf("the control card: %v", err)
	}
}

// TestUnstakedA2ACardsShareTheQuota: an A2A card is no way around the unstaked quota.
func TestUnstakedA2ACardsShareTheQuota(t *testing.T) {
	ctx := context.Background()
	db := testutil.DB(t)
	row, _ := sqlite.EnterChain(ctx, db, sqlite.Chain{Key: "t", ChainID: 1, Genesis: "g", Contracts: "{}"})
	staked, _ := identity.GenerateKey(identity.Ed25519)
	r, err := registry.New(ctx, registry.Config{DB: db, Chain: row, Stakes: stakes{staked.DID.String(): big.NewInt(1)}, Now: func() time.Time { return now }, UnstakedPerMinute: 2})
	requireFTS5(t, err)
	k1, _ := identity.GenerateKey(identity.Ed25519)
	k2, _ := identity.GenerateKey(identity.Ed25519)
	k3, _ := identity.GenerateKey(identity.Ed25519)
	if _, err := r.Register(ctx, card(t, k1, 1, "A", "a"), "flooder"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Register(ctx, a2aCard(t, k2, 1), "flooder"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Register(ctx, a2aCard(t, k3, 1), "flooder"); !errors.Is(err, registry.ErrRateLimited) {
		t.Errorf("third unstaked card (A2A) from one source: %v, want ErrRateLimited", err)
	}
	if _, err := r.Register(ctx, a2aCard(t, staked, 1), "flooder"); err != nil {
		t.Errorf("a staked A2A card is not limited: %v", err)
	}
}

// TestA2ACardsSpreadLikeJWSCards: an A2A card registered on one node reaches the others by
// gossip as the same bytes, and a node that joins later finds it in the DHT: the validators
// of both take the A2A form through the same Parse.
func TestA2ACardsSpreadLikeJWSCards(t *testing.T) {
	if testing.Short() {
		t.Skip("starts libp2p hosts")
	}
	ctx := context.Background()
	agent, _ := identity.GenerateKey(identity.Ed25519)
	st := stakes{agent.DID.String(): big.NewInt(2e18)}
	first := startNetNode(t, st, nil)
	second := startNetNode(t, st, []peer.AddrInfo{first.node.Info()})
	third := startNetNode(t, st, []peer.AddrInfo{second.node.Info(), first.node.Info()})
	for _, n := range []*netNode{first, second, third} {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := n.node.WaitMesh(wctx, registry.CardTopic)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	raw := a2aCard(t, agent, 1)
	if _, err := first.reg.Register(ctx, raw, "api"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "the A2A card on the third node", 10*time.Second, func() bool {
		res, err := third.reg.Search(ctx, registry.Query{Capability: "translation/fr-en"})
		return err == nil && len(res) == 1 && res[0].JWS == string(raw)
	})
	testutil.Eventually(t, "the first node's DHT put done", 10*time.Second, func() bool { return first.net.PendingPuts() == 0 })
	late := startNetNode(t, st, []peer.AddrInfo{third.node.Info()})
	testutil.Eventually(t, "DHT lookup of the A2A card from a node that joined late", 20*time.Second, func() bool {
		a, err := late.reg.Get(ctx, agent.DID.String())
		return err == nil && a.JWS == string(raw) && a.Name == "Translator"
	})
}
