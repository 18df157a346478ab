package erc8004_test

import (
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/google/go-cmp/cmp"

	"github.com/surety-ioa/surety/erc8004"
)

var registry = common.HexToAddress("0x8004A169FB4a3325136EB29fA0ceB6D2e539a432")

func TestBuildRegistration(t *testing.T) {
	r := erc8004.BuildRegistration(erc8004.RegistrationInput{Name: "worker", Description: "does work", DID: did,
		A2ACard: "https://node/v1/agents/" + did + "/agent-card.json", A2AVersion: "1.0", MCP: "https://node/mcp",
		ChainID: 31337, IdentityRegistry: registry, AgentIDs: []uint64{0, 7}, Active: true})
	got, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"https://eips.ethereum.org/EIPS/eip-8004#registration-v1","name":"worker","description":"does work","image":"",` +
		`"services":[{"name":"A2A","endpoint":"https://node/v1/agents/` + did + `/agent-card.json","version":"1.0"},` +
		`{"name":"MCP","endpoint":"https://node/mcp"},{"name":"DID","endpoint":"` + did + `","version":"v1"}],` +
		`"x402Support":false,"active":true,"registrations":[{"agentId":0,"agentRegistry":"eip155:31337:` + registry.Hex() + `"},` +
		`{"agentId":7,"agentRegistry":"eip155:31337:` + registry.Hex() + `"}],"supportedTrust":["reputation","crypto-economic"]}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("registration file (-want +got):\n%s", diff)
	}
	back, err := erc8004.ParseRegistration(got)
	if err != nil {
		t.Fatal(err)
	}
	if back.DID() != did || !back.Names(31337, registry, 7) || back.Names(1, registry, 7) || back.Names(31337, registry, 8) {
		t.Errorf("parsed back: did %q, names %+v", back.DID(), back.Registrations)
	}
}

func TestParseRegistration(t *testing.T) {
	ok := func(mut string) string {
		return `{"type":"https://eips.ethereum.org/EIPS/eip-8004#registration-v1","name":"a",` + mut + `}`
	}
	tests := []struct {
		name, in string
		wantErr  bool
	}{
		{"minimal", ok(`"services":[]`), false},
		{"unknown fields kept out", ok(`"oasf":{"x":1},"services":[{"name":"ENS","endpoint":"a.eth","extra":true}]`), false},
		{"wrong type", `{"type":"registration-v2","name":"a"}`, true},
		{"no name", `{"type":"https://eips.ethereum.org/EIPS/eip-8004#registration-v1","name":"  "}`, true},
		{"service without endpoint", ok(`"services":[{"name":"A2A"}]`), true},
		{"registry in another namespace", ok(`"registrations":[{"agentId":1,"agentRegistry":"solana:1:abc"}]`), true},
		{"registry chain 0", ok(`"registrations":[{"agentId":1,"agentRegistry":"eip155:0:` + registry.Hex() + `"}]`), true},
		{"registry chain with a sign", ok(`"registrations":[{"agentId":1,"agentRegistry":"eip155:+1:` + registry.Hex() + `"}]`), true},
		{"registry short address", ok(`"registrations":[{"agentId":1,"agentRegistry":"eip155:1:0x1234"}]`), true},
		{"negative agent id", ok(`"registrations":[{"agentId":-1,"agentRegistry":"eip155:1:` + registry.Hex() + `"}]`), true},
		{"not json", `<html>`, true},
		{"trailing", ok(`"services":[]`) + `{}`, true},
		{"too big", ok(`"description":"` + strings.Repeat("x", erc8004.MaxRegistrationBytes) + `"`), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := erc8004.ParseRegistration([]byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, erc8004.ErrBadRegistration) {
				t.Errorf("err %v is not ErrBadRegistration", err)
			}
		})
	}
}

// FuzzParseRegistration: a registration file from anywhere never panics the parser, and
// what it accepts encodes and parses back to the same file.
func FuzzParseRegistration(f *testing.F) {
	b, _ := json.Marshal(erc8004.BuildRegistration(erc8004.RegistrationInput{Name: "n", DID: did, ChainID: 1, IdentityRegistry: registry, AgentIDs: []uint64{3}}))
	f.Add(b)
	f.Add([]byte(`{"type":"https://eips.ethereum.org/EIPS/eip-8004#registration-v1","name":"a","registrations":[{"agentId":1,"agentRegistry":"eip155:1:0x0000000000000000000000000000000000000001"}]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := erc8004.ParseRegistration(data)
		if err != nil {
			if !errors.Is(err, erc8004.ErrBadRegistration) {
				t.Fatalf("error %v is not ErrBadRegistration", err)
			}
			return
		}
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		again, err := erc8004.ParseRegistration(out)
		if err != nil {
			t.Fatalf("re-encoded file does not parse: %v\n%s", err, out)
		}
		if diff := cmp.Diff(r, again); diff != "" {
			t.Errorf("round trip (-first +second):\n%s", diff)
		}
	})
}

// FuzzParseAgentRegistry: what parses writes back the same (checksummed) way.
func FuzzParseAgentRegistry(f *testing.F) {
	f.Add("eip155:1:" + registry.Hex())
	f.Add("eip155:18446744073709551615:0x0000000000000000000000000000000000000000")
	f.Add("eip155::")
	f.Fuzz(func(t *testing.T, s string) {
		c, a, err := erc8004.ParseAgentRegistry(s)
		if err != nil {
			return
		}
		if back := erc8004.AgentRegistry(c, a); !strings.EqualFold(back, s) {
			t.Errorf("%q parses to %d %s, which writes %q", s, c, a, back)
		}
	})
}

func TestAuditValue(t *testing.T) {
	tests := []struct {
		score   float64
		want    int64
		wantErr bool
	}{
		{0, 0, false},
		{1, 10000, false},
		{0.8, 8000, false},
		{0.12345, 1235, false}, // 12.345% rounds half away from zero to 12.35%
		{0.99994, 9999, false},
		{-0.01, 0, true},
		{1.0001, 0, true},
	}
	for _, tt := range tests {
		got, err := erc8004.AuditValue(tt.score)
		if (err != nil) != tt.wantErr {
			t.Errorf("AuditValue(%v) err = %v", tt.score, err)
			continue
		}
		if err == nil && got.Int64() != tt.want {
			t.Errorf("AuditValue(%v) = %s, want %d", tt.score, got, tt.want)
		}
	}
	fb, err := erc8004.AuditFeedback(0.75, 12, erc8004.AuditProofURL("https://node/", common.HexToHash("0xab"), 40), common.HexToHash("0xab"))
	if err != nil {
		t.Fatal(err)
	}
	if fb.Value.Cmp(big.NewInt(7500)) != 0 || fb.ValueDecimals != 2 || fb.Tag1 != "surety/audit" || fb.Tag2 != "bounty:12" ||
		fb.FeedbackURI != "https://node/v1/log/proof/inclusion?leaf=00000000000000000000000000000000000000000000000000000000000000ab&size=40" {
		t.Errorf("audit feedback = %+v", fb)
	}
	if err := erc8004.CheckFeedback(fb); err != nil {
		t.Error(err)
	}
}

func TestRegistrationURL(t *testing.T) {
	if got := erc8004.RegistrationURL("https://n.example/", "did:pkh:eip155:1:0xab"); got != "https://n.example/v1/erc8004/registration/did:pkh:eip155:1:0xab" {
		t.Errorf("RegistrationURL = %s", got)
	}
}
