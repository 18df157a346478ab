package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
)

// TestClientBodiesHoldToOpenAPI: the bodies the client sends (the JSON requests, and the
// bodies its signed envelopes carry) are valid against their schemas in api/openapi.json; and
// what a node with its real services answers the client is valid against the document and
// decodes into the client's api/wire types with no field lost (their JSON is the answer's).
func TestClientBodiesHoldToOpenAPI(t *testing.T) {
	fz := newAPIFuzz(t)
	ctx := context.Background()
	agentDID := fz.agent.DID.String()
	jws, err := fz.agent.SignCompact([]byte(`{"hello":"node"}`))
	if err != nil {
		t.Fatal(err)
	}
	tr := &handlerTransport{h: fz.h}
	c, err := client.New("http://node.test")
	if err != nil {
		t.Fatal(err)
	}
	c = c.WithHTTP(&http.Client{Transport: tr})
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	binding, err := identity.SignBinding(identity.BindingStatement{DID: agentDID, Wallet: devAddress(1), ChainID: chain.EmbeddedChainID,
		Registry: common.HexToAddress(info.Contracts["StakeRegistry"]), IssuedAt: time.Now().Unix(), Nonce: identity.NewNonce()},
		fz.agent, chain.DevKey(1))
	if err != nil {
		t.Fatal(err)
	}
	bindingReq := wire.BindingRequest{Statement: wire.BindingStatement(binding.Statement), AgentJWS: binding.AgentJWS, WalletSignature: binding.WalletSignature}
	hash := common.HexToHash("0x0101010101010101010101010101010101010101010101010101010101010101")

	t.Run("requests", func(t *testing.T) {
		for _, tt := range []struct {
			schema string
			body   any
		}{
			{"RegisterRequest", wire.RegisterRequest{Proof: jws}},
			{"RelayRequest", wire.RelayRequest{RawTx: []byte{0x02, 0xf8, 0x6c}}},
			{"Binding", bindingReq},
			{"PostBody", wire.PostBody{Wallet: devAddress(0), Amount: "1000", Arbiter: devAddress(1), Deadline: 1_900_000_000, ReviewWindow: 3600, MinStake: "0", SpecHash: hash, Spec: "summarize", Salt: hash}},
			{"ActionBody", wire.ActionBody{Wallet: devAddress(0), AgentID: hash, Worker: devAddress(1), ResultHash: hash, WorkerBps: 5000, Slash: "10"}},
			{"StakeBody", wire.StakeBody{Op: string(wire.OpStake), Wallet: devAddress(0), Amount: "1000"}},
			{"StakeWithdrawBody", wire.StakeWithdrawBody{Op: string(wire.OpWithdrawStake), Wallet: devAddress(0)}},
			{"WithdrawBody", wire.WithdrawBody{Wallet: devAddress(0)}},
			{"RevokeBody", wire.RevokeBody{Op: string(wire.OpRevoke), Wallet: devAddress(0)}},
			{"RotateBody", wire.RotateBody{Op: string(wire.OpRotate), Wallet: devAddress(1), Successor: bindingReq.Statement, SuccessorJWS: binding.AgentJWS}},
		} {
			t.Run(tt.schema, func(t *testing.T) {
				if msg := fz.valid("#/components/schemas/"+tt.schema, tt.body); msg != "" {
					t.Error(msg)
				}
			})
		}
	})

	t.Run("answers", func(t *testing.T) {
		env := func(k *identity.Key, payload map[string]any) []byte {
			raw, _ := json.Marshal(payload)
			filled, err := identity.FillEnvelope(raw, k, time.Now(), 2*time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			s, err := k.SignCompact(filled)
			if err != nil {
				t.Fatal(err)
			}
			return []byte(s)
		}
		for _, tt := range []struct {
			route string
			call  func() (any, error)
		}{
			{"GET /healthz", func() (any, error) { return c.Health(ctx) }},
			{"GET /v1/info", func() (any, error) { return c.Info(ctx) }},
			{"GET /v1/peers", func() (any, error) { return c.Peers(ctx) }},
			{"GET /v1/challenge", func() (any, error) { return c.Challenge(ctx) }},
			{"POST /v1/dids/register", func() (any, error) {
				k, err := identity.GenerateKey(identity.Ed25519)
				if err != nil {
					return nil, err
				}
				ch, err := c.Challenge(ctx)
				if err != nil {
					return nil, err
				}
				proof := env(k, map[string]any{"to": []string{ch.Audience}, "body": map[string]string{"challenge": ch.Challenge}})
				return c.RegisterDID(ctx, string(proof))
			}},
			{"POST /v1/envelopes/verify", func() (any, error) {
				return c.VerifyEnvelope(ctx, env(fz.agent, map[string]any{"to": []string{fz.node}, "body": map[string]string{"hello": "node"}}))
			}},
			{"GET /v1/agents/{did}", func() (any, error) { return c.Agent(ctx, agentDID) }},
			{"GET /v1/agents", func() (any, error) {
				list, err := c.SearchAgents(ctx, url.Values{"q": {"Fuzzed"}})
				return wire.AgentList{Agents: list}, err
			}},
			{"POST /v1/agents/{did}/status", func() (any, error) { return c.CheckAgentStatus(ctx, agentDID) }},
			{"GET /v1/reputation", func() (any, error) {
				list, err := c.TopReputation(ctx, "5")
				return wire.ReputationList{Agents: list}, err
			}},
			{"GET /v1/log/head", func() (any, error) { return c.LogHead(ctx) }},
			{"GET /v1/log/proof/consistency", func() (any, error) { return c.ConsistencyProof(ctx, 0, 0) }},
			{"GET /v1/log/leaves", func() (any, error) { return c.LogLeaves(ctx, 0, 0, agentDID, 10) }},
			{"POST /v1/bindings", func() (any, error) {
				raw, _ := json.Marshal(bindingReq)
				return c.AddBinding(ctx, raw)
			}},
			{"GET /v1/bounties", func() (any, error) {
				list, err := c.Bounties(ctx, url.Values{})
				return wire.BountyList{Bounties: list}, err
			}},
			{"GET /v1/stake/{did}", func() (any, error) { return c.StakeOf(ctx, agentDID, devAddress(1)) }},
			{"GET /v1/jobs", func() (any, error) {
				list, err := c.Jobs(ctx, url.Values{"client": {devAddress(1).Hex()}})
				return wire.JobList{Jobs: list}, err
			}},
			{"GET /v1/jobs/{id}", func() (any, error) { return c.Job(ctx, 1) }},
		} {
			t.Run(tt.route, func(t *testing.T) {
				got, err := tt.call()
				if err != nil {
					t.Fatalf("the client's call: %v", err)
				}
				rec := tr.last
				if msg := fz.check(fz.op(t, tt.route), rec); msg != "" {
					t.Error(msg)
				}
				if d := sameJSON(rec.Body.Bytes(), got); d != "" {
					t.Errorf("the client's %T is not what the node answered: %s", got, d)
				}
			})
		}
	})
}

// handlerTransport serves a client's requests with h in the process, as from one address,
// and keeps the last answer.
type handlerTransport struct {
	h    http.Handler
	last *httptest.ResponseRecorder
}

func (tr *handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.RemoteAddr = "192.0.2.1:1234"
	r.RequestURI = r.URL.RequestURI()
	if r.Body == nil {
		r.Body = http.NoBody
	}
	tr.last = httptest.NewRecorder()
	tr.h.ServeHTTP(tr.last, r)
	return tr.last.Result(), nil
}

// op is the document's operation for route.
func (fz *apiFuzz) op(t *testing.T, route string) fuzzOp {
	t.Helper()
	for _, o := range fz.ops {
		if o.route == route {
			return o
		}
	}
	t.Fatalf("the document has no operation %s", route)
	return fuzzOp{}
}

// valid says why v's JSON is not valid against the schema at loc in the document ("" when it
// is).
func (fz *apiFuzz) valid(loc string, v any) string {
	schema, err := fz.schema(loc)
	if err != nil {
		return fmt.Sprintf("%s does not compile: %v", loc, err)
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err.Error()
	}
	if err := schema.Validate(doc); err != nil {
		return fmt.Sprintf("%T %s is not valid against %s: %v", v, clip(data, 300), loc, err)
	}
	return ""
}

// sameJSON says how the JSON of v differs from body ("" when it does not).
func sameJSON(body []byte, v any) string {
	var w, g any
	if err := json.Unmarshal(body, &w); err != nil {
		return err.Error()
	}
	got, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	_ = json.Unmarshal(got, &g)
	return cmp.Diff(w, g)
}
