package conformance

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/a2a"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/registry"
)

// a2a-card: A2A v1.0 Agent Cards signed as A2A §8.4 says (docs/a2a.md). The input is the
// card's JSON text, a string, exactly as POST /v1/agents takes it (a duplicate member or a
// lone surrogate exists only in the text). With context.node the card is one a node serves:
// valid when a signature by that DID verifies over its canonical form.
func init() {
	Register(Kind{Name: "a2a-card", Generate: genA2ACards, Check: checkA2ACard})
}

func a2aCardOf(k *identity.Key) registry.Card {
	return registry.Card{DID: k.DID.String(), Name: "Alice the translator", Description: "Translates and summarizes technical text.",
		Capabilities: []string{"translation/fr-en", "summarize"}, Endpoints: []registry.Endpoint{{Kind: "a2a", URL: "https://alice.example/a2a"}, {Kind: "mcp", URL: "https://alice.example/mcp"}},
		Wallet: common.HexToAddress("0x00000000000000000000000000000000000000aa"), Seq: 3, Updated: Now - 60}
}

// signA2AWith signs the card's canonical form with the Ed25519 key k under exactly the
// protected header given.
func signA2AWith(ac *a2a.AgentCard, k *identity.Key, header map[string]string) {
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

func encodeA2A(ac *a2a.AgentCard) string {
	b, err := a2a.Encode(ac)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func a2aFacts(c registry.Card, signer string) Expect {
	return Valid(map[string]any{"did": c.DID, "name": c.Name, "seq": c.Seq, "wallet": c.Wallet.Hex(), "capabilities": c.Capabilities, "signer": signer})
}

func genA2ACards() ([]Named, error) {
	var out []Named
	at := &Context{Now: Now}
	add := func(name, desc, input string, c *Context, want Expect) {
		out = append(out, Named{name, Vector{Kind: "a2a-card", Description: desc, Input: jsonString(input), Context: c, Expect: want}})
	}
	signed := func(c registry.Card, k *identity.Key) string {
		_, raw, err := registry.SignA2A(c, k)
		if err != nil {
			panic(err)
		}
		return string(raw)
	}
	header := func(k *identity.Key) map[string]string {
		return map[string]string{"alg": "EdDSA", "kid": k.DID.KeyID(), "typ": "JOSE"}
	}
	resigned := func(c registry.Card, change func(*a2a.AgentCard), k *identity.Key, h map[string]string) string {
		ac := registry.ToA2A(c)
		change(ac)
		signA2AWith(ac, k, h)
		return encodeA2A(ac)
	}
	same := func(*a2a.AgentCard) {}
	c := a2aCardOf(alice)
	good := signed(c, alice)
	add("valid-ed25519", "an A2A card signed by the DID its trust extension names (Ed25519, EdDSA), as registry.SignA2A makes it", good, at, a2aFacts(c, alice.DID.String()))
	cb := a2aCardOf(bob)
	cb.Name = "Bob the builder"
	add("valid-es256k", "an A2A card signed by a secp256k1 DID (ES256K): Surety verifies it; jose (the A2A JS SDK's verifier) cannot", signed(cb, bob), at, a2aFacts(cb, bob.DID.String()))
	add("one-byte-changed", "the valid card with one byte of its name changed after signing", strings.Replace(good, "Alice the translator", "Alice the translatos", 1), at, Refused("card-forged"))
	add("wrong-kid", "signed by alice, but the kid names carol's key", resigned(c, same, alice, header(carol)), at, Refused("card-forged"))
	add("signed-by-another-did", "a card naming alice's DID, signed (validly) by carol", resigned(c, same, carol, header(carol)), at, Refused("card-wrong-did"))
	add("missing-version", "a signed card without version, which A2A requires", resigned(c, func(ac *a2a.AgentCard) { ac.Version = "" }, alice, header(alice)), at, Refused("card-malformed"))
	add("missing-interfaces", "a signed card without supportedInterfaces, which A2A requires", resigned(c, func(ac *a2a.AgentCard) { ac.SupportedInterfaces = nil }, alice, header(alice)), at, Refused("card-malformed"))
	add("no-trust-extension", "a signed card without Surety's trust extension (https://surety.dev/ext/trust/v1)",
		resigned(c, func(ac *a2a.AgentCard) { ac.Capabilities.Extensions[0].URI = "https://example.com/ext/other" }, alice, header(alice)), at, Refused("card-malformed"))
	add("agent-claims-stake", "an agent signing a stake param: only did, wallet, seq and updated are the agent's to sign",
		resigned(c, func(ac *a2a.AgentCard) { ac.Capabilities.Extensions[0].Params["stake"] = "1000000000000000000000" }, alice, header(alice)), at, Refused("card-malformed"))
	add("two-trust-extensions", "a second trust extension entry carrying a stake the agent signed: one entry only",
		resigned(c, func(ac *a2a.AgentCard) {
			ac.Capabilities.Extensions = append(ac.Capabilities.Extensions, a2a.AgentExtension{URI: a2a.TrustExtensionURI, Params: map[string]any{"stake": "1000000000000000000000"}})
		}, alice, header(alice)), at, Refused("card-malformed"))
	add("trust-look-alike", "a second extension whose URI is the trust extension's with a trailing slash, carrying a stake: no extension under surety.dev but the trust extension itself",
		resigned(c, func(ac *a2a.AgentCard) {
			ac.Capabilities.Extensions = append(ac.Capabilities.Extensions, a2a.AgentExtension{URI: a2a.TrustExtensionURI + "/", Params: map[string]any{"staked": true}})
		}, alice, header(alice)), at, Refused("card-malformed"))
	add("wrong-typ", "the protected header's typ is JWT, not JOSE", resigned(c, same, alice, map[string]string{"alg": "EdDSA", "kid": alice.DID.KeyID(), "typ": "JWT"}), at, Refused("card-malformed"))
	fu := a2aCardOf(alice)
	fu.Updated = Now + 3600
	add("updated-in-future", "the trust extension's updated is an hour ahead (5 minutes of skew allowed)", signed(fu, alice), at, Refused("card-malformed"))
	add("unsigned", "the valid card with its signatures removed", strings.Replace(good, good[strings.Index(good, `,"signatures"`):strings.Index(good, `,"skills"`)], "", 1), at, Refused("card-malformed"))

	// JCS edge cases: what is signed is the canonical form of the card as A2A's SDKs read it,
	// not the bytes that travel.
	var generic map[string]any
	if err := json.Unmarshal([]byte(good), &generic); err != nil {
		return nil, err
	}
	add("jcs-reordered", "the valid card with its members in reverse order, indented, an ASCII letter \\u-escaped and the seq written 3.0E0: the same canonical form",
		reorderedText(generic), at, a2aFacts(c, alice.DID.String()))
	uc := a2aCardOf(alice)
	uc.Description = "Übersetzt € → $, 😀 und \u000f\u007f\u2028 \"quotes\" \\ / </script>"
	uc.Name = "Ålice \ufb33"
	add("jcs-unicode", "names and descriptions with non-ASCII, an emoji (a surrogate pair in UTF-16), controls, U+2028, quotes and a solidus", signed(uc, alice), at, a2aFacts(uc, alice.DID.String()))
	ev := registry.ToA2A(c)
	signA2AWith(ev, alice, header(alice))
	var withEmpties map[string]any
	if err := json.Unmarshal([]byte(encodeA2A(ev)), &withEmpties); err != nil {
		return nil, err
	}
	withEmpties["iconUrl"] = ""
	withEmpties["x-unknown"] = "not in the A2A schema"
	withEmpties["provider"] = map[string]any{}
	withEmpties["capabilities"].(map[string]any)["extensions"].([]any)[0].(map[string]any)["required"] = false
	withEmpties["skills"].([]any)[0].(map[string]any)["examples"] = []any{}
	b, err := marshal(withEmpties)
	if err != nil {
		return nil, err
	}
	add("jcs-empty-and-unknown", "the valid card plus an empty iconUrl, an empty provider, required false, empty examples and a member outside the A2A schema: A2A's SDKs drop them all before canonicalizing, so the signature still holds",
		string(b), at, a2aFacts(c, alice.DID.String()))
	add("duplicate-member", "the valid card with a second name member (not I-JSON: the verifiers' parsers would disagree)", strings.Replace(good, `{"capabilities"`, `{"name":"Mallory","capabilities"`, 1), at, Refused("card-malformed"))
	add("lone-surrogate", "a name holding a lone surrogate escape (no canonical form)", strings.Replace(good, `"Alice the translator"`, `"Alice \ud800"`, 1), at, Refused("card-malformed"))
	add("oversize", fmt.Sprintf("a card text over %d bytes", registry.MaxCardSize), strings.Replace(good, `"Translates`, `"`+strings.Repeat("x", registry.MaxCardSize)+` Translates`, 1), at, Refused("card-too-large"))

	// A card a node serves: its live params signed by the node.
	live := registry.ToA2A(c)
	p := live.Capabilities.Extensions[0].Params
	p["stake"], p["staked"], p["node"], p["asOf"] = "2000000000000000000", true, nodeKey.DID.String(), float64(Now)
	p["reputation"] = map[string]any{"score": 0.75, "confidence": 0.5, "audits": 3.0}
	if err := a2a.Sign(live, func(b []byte) (string, error) { return nodeKey.SignDocument(b, a2a.SignatureType) }); err != nil {
		return nil, err
	}
	nodeCtx := &Context{Now: Now, Node: nodeKey.DID.String()}
	add("node-served", "an agent's card as a node serves it, live params included, signed by the node (context.node): valid for a client that trusts that node", encodeA2A(live), nodeCtx,
		Valid(map[string]any{"signer": nodeKey.DID.String(), "did": c.DID}))
	add("node-served-stake-raised", "the node-served card with its stake param raised after signing", strings.Replace(encodeA2A(live), `"2000000000000000000"`, `"9000000000000000000"`, 1), nodeCtx, Refused("card-forged"))
	return out, nil
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

// checkA2ACard verifies the card as a node does (registry.Parse), or with context.node as a
// client of that node checks a served card.
func checkA2ACard(v Vector) (Expect, error) {
	raw, err := inputString(v)
	if err != nil {
		return Expect{}, err
	}
	cx := ctx(v)
	if cx.Node != "" {
		if len(raw) > registry.MaxCardSize {
			return refusal(registry.ErrOversize)
		}
		card, canon, err := a2a.Decode([]byte(raw))
		if err != nil {
			return refusal(registry.ErrMalformed)
		}
		if _, err := a2a.VerifyBy(card, canon, cx.Node, 4, func(compact []byte) (string, error) {
			_, s, err := identity.VerifyJWS(compact, a2a.SignatureType)
			return s, err
		}); err != nil {
			return refusal(registry.ErrForged)
		}
		var did string
		if ext := card.Extension(a2a.TrustExtensionURI); ext != nil {
			did, _ = ext.Params[a2a.ParamDID].(string)
		}
		return Valid(map[string]any{"signer": cx.Node, "did": did}), nil
	}
	sc, err := registry.Parse([]byte(raw), time.Unix(cx.Now, 0))
	if err != nil {
		return refusal(err)
	}
	stored, _, err := a2a.Decode([]byte(sc.JWS))
	if err != nil {
		return Expect{}, err
	}
	h, err := stored.Signatures[0].ProtectedHeader()
	if err != nil {
		return Expect{}, err
	}
	signer, _, _ := strings.Cut(h.Kid, "#")
	return a2aFacts(sc.Card, signer), nil
}
