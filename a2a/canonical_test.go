package a2a_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/surety-ioa/surety/a2a"
)

// TestCanonicalIsWhatTheSDKSigns: the canonical form drops what @a2a-js/sdk 1.3.0 drops
// before it canonicalizes (members outside the v1.0 schema, signatures, empty strings, lists
// and objects, a false `required`, null), keeps an explicit false capability, and sorts
// members by JCS. The expected bytes follow the SDK's canonicalizeAgentCard (checked against
// the SDK itself in api's TestA2ACardsVerifyWithTheSDK and the a2a-card vectors).
func TestCanonicalIsWhatTheSDKSigns(t *testing.T) {
	in := `{"name":"N","description":"D","iconUrl":"","x-unknown":{"a":1},"provider":{},"version":"1",
	"supportedInterfaces":[{"url":"https://a.example","protocolBinding":"JSONRPC","tenant":""},{}],
	"capabilities":{"streaming":false,"extensions":[{"uri":"u","required":false,"params":{"k":"","n":[],"o":{"p":null},"z":0,"b":false}}]},
	"defaultInputModes":["text/plain",""],"defaultOutputModes":[],"skills":[{"id":"s","name":"s","description":"d","tags":["t"],"examples":[]}],
	"signatures":[{"protected":"p","signature":"s"}], "documentationUrl": null}`
	card, canon, err := a2a.Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"capabilities":{"extensions":[{"params":{"b":false,"z":0},"uri":"u"}],"streaming":false},"defaultInputModes":["text/plain"],"description":"D","name":"N",` +
		`"skills":[{"description":"d","id":"s","name":"s","tags":["t"]}],"supportedInterfaces":[{"protocolBinding":"JSONRPC","url":"https://a.example"}],"version":"1"}`
	if string(canon) != want {
		t.Errorf("canonical =\n%s\nwant\n%s", canon, want)
	}
	if len(card.Signatures) != 1 || card.Signatures[0].Protected != "p" {
		t.Errorf("signatures = %+v", card.Signatures)
	}
	again, err := a2a.Canonical(card)
	if err != nil || string(again) != want {
		t.Errorf("Canonical(Decode(x)) = %s, %v; want the same form", again, err)
	}
}

func TestDecodeRefuses(t *testing.T) {
	for _, tt := range []struct{ name, in string }{
		{"not an object", `[]`},
		{"name not a string", `{"name":1}`},
		{"skills not a list", `{"skills":{}}`},
		{"a tag not a string", `{"skills":[{"tags":[1]}]}`},
		{"required not a bool", `{"capabilities":{"extensions":[{"required":"yes"}]}}`},
		{"params not an object", `{"capabilities":{"extensions":[{"params":[1]}]}}`},
		{"security schemes", `{"securitySchemes":{"x":{}}}`},
		{"skill security", `{"skills":[{"securityRequirements":[{}]}]}`},
		{"snake case", `{"supported_interfaces":[]}`},
		{"duplicate member", `{"name":"a","name":"b"}`},
		{"lone surrogate", `{"name":"\udc00"}`},
		{"trailing data", `{} x`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := a2a.Decode([]byte(tt.in)); !errors.Is(err, a2a.ErrMalformed) {
				t.Errorf("Decode(%s) = %v, want ErrMalformed", tt.in, err)
			}
		})
	}
}

func TestValidateNamesTheMissingMember(t *testing.T) {
	full := func() *a2a.AgentCard {
		return &a2a.AgentCard{Name: "n", Description: "d", Version: "1", SupportedInterfaces: []a2a.AgentInterface{{URL: "https://a", ProtocolBinding: "JSONRPC"}},
			Capabilities: &a2a.AgentCapabilities{}, DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
			Skills: []a2a.AgentSkill{{ID: "s", Name: "s", Description: "d", Tags: []string{"t"}}}}
	}
	if err := full().Validate(); err != nil {
		t.Fatalf("a full card: %v", err)
	}
	for member, drop := range map[string]func(c *a2a.AgentCard){
		"name": func(c *a2a.AgentCard) { c.Name = "" }, "description": func(c *a2a.AgentCard) { c.Description = "" },
		"version": func(c *a2a.AgentCard) { c.Version = "" }, "supportedInterfaces": func(c *a2a.AgentCard) { c.SupportedInterfaces = nil },
		"capabilities": func(c *a2a.AgentCard) { c.Capabilities = nil }, "defaultInputModes": func(c *a2a.AgentCard) { c.DefaultInputModes = nil },
		"defaultOutputModes": func(c *a2a.AgentCard) { c.DefaultOutputModes = nil }, "skills[0]": func(c *a2a.AgentCard) { c.Skills[0].Tags = nil },
		"supportedInterfaces[0]": func(c *a2a.AgentCard) { c.SupportedInterfaces[0].ProtocolBinding = "" },
	} {
		c := full()
		drop(c)
		if err := c.Validate(); !errors.Is(err, a2a.ErrMalformed) || !strings.Contains(err.Error(), member) {
			t.Errorf("without %s: %v", member, err)
		}
	}
}

func TestSignAndVerifyBy(t *testing.T) {
	card := &a2a.AgentCard{Name: "n"}
	// A stand-in JWS signer: the "signature" is the signer's name, which VerifyBy's stand-in
	// verifier reads back. (identity's real signer is tested in registry and api.)
	signer := func(name string) a2a.SignFunc {
		return func(p []byte) (string, error) {
			h := `eyJhbGciOiJFZERTQSJ9`
			return h + "." + b64(p) + "." + b64([]byte(name)), nil
		}
	}
	verify := func(compact []byte) (string, error) {
		parts := strings.Split(string(compact), ".")
		canon, _ := a2a.Canonical(card)
		if parts[1] != b64(canon) {
			return "", errors.New("payload differs")
		}
		name, _ := unb64(parts[2])
		return string(name), nil
	}
	if err := a2a.Sign(card, signer("alice")); err != nil {
		t.Fatal(err)
	}
	if err := a2a.Sign(card, signer("node")); err != nil {
		t.Fatal(err)
	}
	canon, _ := a2a.Canonical(card)
	if i, err := a2a.VerifyBy(card, canon, "node", 4, verify); err != nil || i != 1 {
		t.Errorf("VerifyBy(node) = %d, %v; want the second signature", i, err)
	}
	var wrong *a2a.WrongSignerError
	if _, err := a2a.VerifyBy(card, canon, "carol", 4, verify); !errors.Is(err, a2a.ErrUnsigned) || !errors.As(err, &wrong) {
		t.Errorf("VerifyBy(carol) = %v, want ErrUnsigned wrapping a WrongSignerError", err)
	}
	if _, err := a2a.VerifyBy(card, canon, "node", 1, verify); !errors.Is(err, a2a.ErrMalformed) {
		t.Errorf("two signatures with max 1: %v, want ErrMalformed", err)
	}
	bad := func(p []byte) (string, error) { return "h.cGF5bG9hZA.s", nil }
	if err := a2a.Sign(&a2a.AgentCard{Name: "n"}, bad); err == nil {
		t.Error("Sign took a JWS over another payload")
	}
}

// FuzzDecode: whatever Decode accepts has a canonical form that is itself canonical JSON
// and that a second Decode of the card's encoding reproduces.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"name":"n","skills":[{"id":"a","tags":["x"]}],"capabilities":{"extensions":[{"uri":"u","params":{"a":1.5e300}}]}}`,
		`{"signatures":[{"protected":"e30","signature":"x","header":{"kid":"k"}}]}`, `{"name":""}`, `{"provider":{"url":"u"},"iconUrl":"\u00e9"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		card, canon, err := a2a.Decode(raw)
		if err != nil {
			if !errors.Is(err, a2a.ErrMalformed) {
				t.Fatalf("error %v is not ErrMalformed", err)
			}
			return
		}
		if !json.Valid(canon) {
			t.Fatalf("canonical form is not JSON: %q", canon)
		}
		enc, err := a2a.Encode(card)
		if err != nil {
			t.Fatalf("Encode of a decoded card: %v", err)
		}
		_, canon2, err := a2a.Decode(enc)
		if err != nil || string(canon2) != string(canon) {
			t.Fatalf("round trip changed the canonical form:\n%s\n%s (%v)", canon, canon2, err)
		}
	})
}
