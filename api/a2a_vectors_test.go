package api_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/a2a"
	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/registry"
)

// The a2a-card conformance vectors (testdata/conformance/a2a-card/*.json, the shared format
// of docs/PROTOCOL.md): A2A Agent Cards as they travel (input: the card's JSON text, a
// string, exactly as POST /v1/agents takes it), the time the verifier takes as now, and the
// verdict: valid with the facts derived, or the problem type the node answers. With
// context.node, the card is one a node serves: valid when a signature by that DID verifies.
// Regenerate with go test ./api -run TestA2ACardVectors -update-a2a.

var updateA2A = flag.Bool("update-a2a", false, "rewrite testdata/conformance/a2a-card from the generator")

// vectorNow is the time the vectors are made and checked at (2025-11-24T16:00:00Z), the same
// as the other kinds'.
const vectorNow int64 = 1764000000

type a2aVector struct {
	Kind        string          `json:"kind"`
	Description string          `json:"description"`
	Input       json.RawMessage `json:"input"`
	Context     *vectorContext  `json:"context,omitempty"`
	Expect      map[string]any  `json:"expect"`
}

// vectorContext is what the verifier is told besides the input, in the field order of the
// shared framework's Context (internal/conformance), so its encoder writes the same bytes.
type vectorContext struct {
	Now  int64  `json:"now,omitempty"`
	Node string `json:"node,omitempty"`
}

// fixtureKey is the did:key key of type t whose seed is SHA-256("surety-conformance/" +
// label), as the other kinds' fixtures are made (alice: Ed25519, bob: secp256k1).
func fixtureKey(t identity.KeyType, label string) *identity.Key {
	h := sha256.Sum256([]byte("surety-conformance/" + label))
	k, err := identity.KeyFromSeed(t, h[:])
	if err != nil {
		panic(err)
	}
	return k
}

func vectorCard(k *identity.Key) registry.Card {
	return registry.Card{DID: k.DID.String(), Name: "Alice the translator", Description: "Translates and summarizes technical text.",
		Capabilities: []string{"translation/fr-en", "summarize"}, Endpoints: []registry.Endpoint{{Kind: "a2a", URL: "https://alice.example/a2a"}, {Kind: "mcp", URL: "https://alice.example/mcp"}},
		Wallet: common.HexToAddress("0x00000000000000000000000000000000000000aa"), Seq: 3, Updated: vectorNow - 60}
}

// signWith signs the card's canonical form with the Ed25519 key k under exactly the
// protected header given.
func signWith(ac *a2a.AgentCard, k *identity.Key, header map[string]string) {
	ac.Signatures = nil
	canon, err := a2a.Canonical(ac)
	if err != nil {
		panic(err)
	}
	h, _ := json.Marshal(header)
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(h) + "." + enc.EncodeToString(canon)
	sig := ed25519.Sign(k.Private.(ed25519.PrivateKey), []byte(input))
	ac.Signatures = []a2a.AgentCardSignature{{Protected: enc.EncodeToString(h), Signature: enc.EncodeToString(sig)}}
}

func mustEncode(ac *a2a.AgentCard) string {
	b, err := a2a.Encode(ac)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// genA2AVectors makes the vectors, deterministically (fixed seeds; Ed25519 and RFC 6979
// ES256K signatures are deterministic). It panics on a fixture that cannot be made, as the
// shared framework's generators do.
func genA2AVectors() map[string]a2aVector {
	alice := fixtureKey(identity.Ed25519, "alice")
	bob := fixtureKey(identity.Secp256k1, "bob")
	carol := fixtureKey(identity.Ed25519, "carol")
	node := fixtureKey(identity.Ed25519, "node")
	out := map[string]a2aVector{}
	at := &vectorContext{Now: vectorNow}
	valid := func(c registry.Card, signer string) map[string]any {
		return map[string]any{"valid": true, "did": c.DID, "name": c.Name, "seq": c.Seq, "wallet": c.Wallet.Hex(), "capabilities": c.Capabilities, "signer": signer}
	}
	refused := func(slug string) map[string]any {
		return map[string]any{"valid": false, "problem": "https://surety.dev/problems/" + slug}
	}
	add := func(name, desc, input string, ctx *vectorContext, expect map[string]any) {
		in, _ := json.Marshal(input)
		out[name] = a2aVector{Kind: "a2a-card", Description: desc, Input: in, Context: ctx, Expect: expect}
	}
	signed := func(c registry.Card, k *identity.Key) string {
		_, raw, err := registry.SignA2A(c, k)
		if err != nil {
			panic(err)
		}
		return string(raw)
	}
	header := func(k *identity.Key, alg string) map[string]string {
		return map[string]string{"alg": alg, "kid": k.DID.KeyID(), "typ": "JOSE"}
	}
	c := vectorCard(alice)
	good := signed(c, alice)
	add("valid-ed25519", "an A2A card signed by the DID its trust extension names (Ed25519, EdDSA), as registry.SignA2A makes it", good, at, valid(c, alice.DID.String()))
	cb := vectorCard(bob)
	cb.Name = "Bob the builder"
	add("valid-es256k", "an A2A card signed by a secp256k1 DID (ES256K): Surety verifies it; jose (the A2A JS SDK's verifier) cannot", signed(cb, bob), at, valid(cb, bob.DID.String()))
	add("one-byte-changed", "the valid card with one byte of its name changed after signing", strings.Replace(good, "Alice the translator", "Alice the translatos", 1), at, refused("card-forged"))
	wk := registry.ToA2A(c)
	signWith(wk, alice, header(carol, "EdDSA"))
	add("wrong-kid", "signed by alice, but the kid names carol's key", mustEncode(wk), at, refused("card-forged"))
	other := registry.ToA2A(c)
	signWith(other, carol, header(carol, "EdDSA"))
	add("signed-by-another-did", "a card naming alice's DID, signed (validly) by carol", mustEncode(other), at, refused("card-wrong-did"))
	nv := registry.ToA2A(c)
	nv.Version = ""
	signWith(nv, alice, header(alice, "EdDSA"))
	add("missing-version", "a signed card without version, which A2A requires", mustEncode(nv), at, refused("card-malformed"))
	ni := registry.ToA2A(c)
	ni.SupportedInterfaces = nil
	signWith(ni, alice, header(alice, "EdDSA"))
	add("missing-interfaces", "a signed card without supportedInterfaces, which A2A requires", mustEncode(ni), at, refused("card-malformed"))
	nt := registry.ToA2A(c)
	nt.Capabilities.Extensions[0].URI = "https://example.com/ext/other"
	signWith(nt, alice, header(alice, "EdDSA"))
	add("no-trust-extension", "a signed card without Surety's trust extension (https://surety.dev/ext/trust/v1)", mustEncode(nt), at, refused("card-malformed"))
	st := registry.ToA2A(c)
	st.Capabilities.Extensions[0].Params["stake"] = "1000000000000000000000"
	signWith(st, alice, header(alice, "EdDSA"))
	add("agent-claims-stake", "an agent signing a stake param: only did, wallet, seq and updated are the agent's to sign", mustEncode(st), at, refused("card-malformed"))
	te := registry.ToA2A(c)
	te.Capabilities.Extensions = append(te.Capabilities.Extensions, a2a.AgentExtension{URI: a2a.TrustExtensionURI, Params: map[string]any{"stake": "1000000000000000000000"}})
	signWith(te, alice, header(alice, "EdDSA"))
	add("two-trust-extensions", "a second trust extension entry carrying a stake the agent signed: one entry only", mustEncode(te), at, refused("card-malformed"))
	wt := registry.ToA2A(c)
	signWith(wt, alice, map[string]string{"alg": "EdDSA", "kid": alice.DID.KeyID(), "typ": "JWT"})
	add("wrong-typ", "the protected header's typ is JWT, not JOSE", mustEncode(wt), at, refused("card-malformed"))
	fu := vectorCard(alice)
	fu.Updated = vectorNow + 3600
	add("updated-in-future", "the trust extension's updated is an hour ahead (5 minutes of skew allowed)", signed(fu, alice), at, refused("card-malformed"))
	add("unsigned", "the valid card with its signatures removed", strings.Replace(good, good[strings.Index(good, `,"signatures"`):strings.Index(good, `,"skills"`)], "", 1), at, refused("card-malformed"))

	// JCS edge cases: what is signed is the canonical form of the card as A2A's SDKs read it,
	// not the bytes that travel.
	var generic map[string]any
	_ = json.Unmarshal([]byte(good), &generic)
	add("jcs-reordered", "the valid card with its members in reverse order, indented, an ASCII letter \\u-escaped and the seq written 3.0E0: the same canonical form",
		reorderedText(generic), at, valid(c, alice.DID.String()))
	uc := vectorCard(alice)
	uc.Description = "Übersetzt € → $, 😀 und \u000f\u007f\u2028 \"quotes\" \\ / </script>"
	uc.Name = "Ålice \ufb33"
	add("jcs-unicode", "names and descriptions with non-ASCII, an emoji (a surrogate pair in UTF-16), controls, U+2028, quotes and a solidus", signed(uc, alice), at, valid(uc, alice.DID.String()))
	ev := registry.ToA2A(c)
	signWith(ev, alice, header(alice, "EdDSA"))
	var withEmpties map[string]any
	_ = json.Unmarshal([]byte(mustEncode(ev)), &withEmpties)
	withEmpties["iconUrl"] = ""
	withEmpties["x-unknown"] = "not in the A2A schema"
	withEmpties["provider"] = map[string]any{}
	ext := withEmpties["capabilities"].(map[string]any)["extensions"].([]any)[0].(map[string]any)
	ext["required"] = false
	withEmpties["skills"].([]any)[0].(map[string]any)["examples"] = []any{}
	b, _ := json.Marshal(withEmpties)
	add("jcs-empty-and-unknown", "the valid card plus an empty iconUrl, an empty provider, required false, empty examples and a member outside the A2A schema: A2A's SDKs drop them all before canonicalizing, so the signature still holds",
		string(b), at, valid(c, alice.DID.String()))
	add("duplicate-member", "the valid card with a second name member (not I-JSON: the verifiers' parsers would disagree)", strings.Replace(good, `{"capabilities"`, `{"name":"Mallory","capabilities"`, 1), at, refused("card-malformed"))
	add("lone-surrogate", "a name holding a lone surrogate escape (no canonical form)", strings.Replace(good, `"Alice the translator"`, `"Alice \ud800"`, 1), at, refused("card-malformed"))
	add("oversize", fmt.Sprintf("a card text over %d bytes", registry.MaxCardSize), strings.Replace(good, `"Translates`, `"`+strings.Repeat("x", registry.MaxCardSize)+` Translates`, 1), at, refused("card-too-large"))

	// A card a node serves: its live params signed by the node.
	live := registry.ToA2A(c)
	live.Capabilities.Extensions[0].Params["stake"] = "2000000000000000000"
	live.Capabilities.Extensions[0].Params["staked"] = true
	live.Capabilities.Extensions[0].Params["node"] = node.DID.String()
	live.Capabilities.Extensions[0].Params["asOf"] = float64(vectorNow)
	live.Capabilities.Extensions[0].Params["reputation"] = map[string]any{"score": 0.75, "confidence": 0.5, "audits": 3.0}
	if err := a2a.Sign(live, func(p []byte) (string, error) { return node.SignDocument(p, a2a.SignatureType) }); err != nil {
		panic(err)
	}
	nodeCtx := &vectorContext{Now: vectorNow, Node: node.DID.String()}
	add("node-served", "an agent's card as a node serves it, live params included, signed by the node (context.node): valid for a client that trusts that node", mustEncode(live), nodeCtx,
		map[string]any{"valid": true, "signer": node.DID.String(), "did": c.DID})
	add("node-served-stake-raised", "the node-served card with its stake param raised after signing", strings.Replace(mustEncode(live), `"2000000000000000000"`, `"9000000000000000000"`, 1), nodeCtx, refused("card-forged"))
	return out
}

// reorderedText writes v with every object's members in reverse order, indented, the first
// 'A' of a string escaped as \u0041 and the trust extension's seq as 3.0E0.
func reorderedText(v any) string {
	var b strings.Builder
	escaped := false
	var write func(v any, indent string)
	write = func(v any, indent string) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Sort(sort.Reverse(sort.StringSlice(keys)))
			b.WriteString("{\n")
			for i, k := range keys {
				if i > 0 {
					b.WriteString(",\n")
				}
				b.WriteString(indent + "  ")
				kb, _ := json.Marshal(k)
				b.Write(kb)
				b.WriteString(": ")
				if k == "seq" {
					b.WriteString("3.0E0")
					continue
				}
				write(x[k], indent+"  ")
			}
			b.WriteString("\n" + indent + "}")
		case []any:
			b.WriteString("[ ")
			for i, e := range x {
				if i > 0 {
					b.WriteString(" , ")
				}
				write(e, indent)
			}
			b.WriteString(" ]")
		case string:
			sb, _ := json.Marshal(x)
			s := string(sb)
			if !escaped && strings.Contains(s, "A") {
				s = strings.Replace(s, "A", `\u0041`, 1)
				escaped = true
			}
			b.WriteString(s)
		default:
			vb, _ := json.Marshal(x)
			b.Write(vb)
		}
	}
	write(v, "")
	return b.String()
}

// checkA2AVector verifies v's input as the node does (registry.Parse, or with context.node
// the node's signature) and returns the verdict.
func checkA2AVector(t *testing.T, v a2aVector) map[string]any {
	var raw string
	if err := json.Unmarshal(v.Input, &raw); err != nil {
		t.Fatalf("input is not a JSON string: %v", err)
	}
	var now int64
	var node string
	if v.Context != nil {
		now, node = v.Context.Now, v.Context.Node
	}
	if node != "" {
		if len(raw) > registry.MaxCardSize {
			return map[string]any{"valid": false, "problem": api.ProblemTypeOf(registry.ErrOversize)}
		}
		card, canon, err := a2a.Decode([]byte(raw))
		if err != nil {
			return map[string]any{"valid": false, "problem": api.ProblemTypeOf(registry.ErrMalformed)}
		}
		if _, err := a2a.VerifyBy(card, canon, node, 4, func(compact []byte) (string, error) {
			_, s, err := identity.VerifyJWS(compact, a2a.SignatureType)
			return s, err
		}); err != nil {
			return map[string]any{"valid": false, "problem": api.ProblemTypeOf(registry.ErrForged)}
		}
		did, _ := card.Extension(a2a.TrustExtensionURI).Params["did"].(string)
		return map[string]any{"valid": true, "signer": node, "did": did}
	}
	sc, err := registry.Parse([]byte(raw), time.Unix(now, 0))
	if err != nil {
		return map[string]any{"valid": false, "problem": api.ProblemTypeOf(err)}
	}
	stored, _, _ := a2a.Decode([]byte(sc.JWS))
	h, _ := stored.Signatures[0].ProtectedHeader()
	signer, _, _ := strings.Cut(h.Kid, "#")
	return map[string]any{"valid": true, "did": sc.DID, "name": sc.Name, "seq": sc.Seq, "wallet": sc.Wallet.Hex(), "capabilities": sc.Capabilities, "signer": signer}
}

func encodeVector(v a2aVector) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, bytes.TrimSuffix(buf.Bytes(), []byte("\n")), "", "  "); err != nil {
		panic(err)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// TestA2ACardVectors: the committed vectors are what the generator makes (regenerating gives
// the same bytes), and the node's verifier reaches each one's verdict.
func TestA2ACardVectors(t *testing.T) {
	dir := filepath.Join("..", "testdata", "conformance", "a2a-card")
	gen := genA2AVectors()
	if *updateA2A {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		old, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, f := range old {
			os.Remove(f)
		}
		for name, v := range gen {
			if err := os.WriteFile(filepath.Join(dir, name+".json"), encodeVector(v), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != len(gen) {
		t.Errorf("%d vector files, the generator makes %d (go test ./api -run TestA2ACardVectors -update-a2a)", len(files), len(gen))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if want, ok := gen[name]; !ok || !bytes.Equal(encodeVector(want), b) {
				t.Errorf("%s drifted from the generator (go test ./api -run TestA2ACardVectors -update-a2a)", f)
			}
			var v a2aVector
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&v); err != nil || v.Kind != "a2a-card" {
				t.Fatalf("not an a2a-card vector: %v", err)
			}
			got := checkA2AVector(t, v)
			for k, want := range v.Expect {
				gj, _ := json.Marshal(got[k])
				wj, _ := json.Marshal(want)
				if !reflect.DeepEqual(gj, wj) {
					t.Errorf("%s = %s, want %s", k, gj, wj)
				}
			}
		})
	}
}

// TestA2ACardVectorsWithTheSDK: @a2a-js/sdk's verifier reaches the vectors' signature
// verdicts (valid, forged, another signer) with its own JCS; the rest are Surety's rules.
func TestA2ACardVectorsWithTheSDK(t *testing.T) {
	node, script := nodeScript(t, "a2a-vectors.mjs")
	dir, _ := filepath.Abs(filepath.Join("..", "testdata", "conformance", "a2a-card"))
	lines, err := runNode(t, node, script, dir)
	if err != nil {
		t.Fatalf("a2a-vectors.mjs: %v", err)
	}
	checked := 0
	for _, l := range lines {
		if l["sdk"] != "skipped" {
			checked++
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(lines) != len(files) || checked < 8 {
		t.Errorf("the SDK ran %d of %d vectors, checking %d signatures: %v", len(lines), len(files), checked, lines)
	}
}
