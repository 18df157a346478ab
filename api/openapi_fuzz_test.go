package api_test

// The whole API fuzzed from its own OpenAPI document: for each operation of api/openapi.json,
// requests made from its parameters' and body's schemas (valid values, the node's own
// fixtures, and hostile ones) go to a node with its real services over a real chain, and
// every answer must hold to the document: no 5xx (but a documented 501), every error a
// problem (type, title, status; the DID resolver's in its resolution result), every answer's
// status and Content-Type documented and its body valid against the schema there.
//
// TestAPIFromOpenAPI runs a fixed number of requests from a fixed seed (in every go test);
// FuzzAPIFromOpenAPI lets the fuzzer choose the seed and a hostile value
// (scripts/fuzz-smoke runs it).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/erc8004"
	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/explorer"
	"github.com/surety-ioa/surety/groups"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/jobs"
	"github.com/surety-ioa/surety/registry"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/stake"
	"github.com/surety-ioa/surety/txn"
)

const (
	// apiFuzzSeed and apiFuzzPerOperation fix what TestAPIFromOpenAPI sends.
	apiFuzzSeed         = 25
	apiFuzzPerOperation = 200
	// streamWait is how long a request to an event stream stays open once its answer has
	// started (a loaded machine can take longer than that to start it), and streamStartWait
	// how long one may take to start before the request gives up.
	streamWait      = 50 * time.Millisecond
	streamStartWait = 10 * time.Second
)

// TestAPIFromOpenAPI sends apiFuzzPerOperation requests to each operation of the document,
// from a fixed seed, and checks every answer against the document.
func TestAPIFromOpenAPI(t *testing.T) {
	fz := newAPIFuzz(t)
	r := rand.New(rand.NewPCG(apiFuzzSeed, 0))
	for i, o := range fz.ops {
		t.Run(o.route, func(t *testing.T) {
			failed := 0
			for n := range apiFuzzPerOperation {
				var raw []byte
				if n%4 == 3 {
					raw = fz.hostile(r)
				}
				if msg := fz.try(uint16(i), r, raw); msg != "" && failed < 3 {
					t.Error(msg)
					failed++
				}
			}
		})
	}
}

// FuzzAPIFromOpenAPI is TestAPIFromOpenAPI with the operation, the seed and a hostile value
// (sent as a parameter or the body) from the fuzzer.
func FuzzAPIFromOpenAPI(f *testing.F) {
	fz := newAPIFuzz(f)
	for i := range fz.ops {
		f.Add(uint16(i), uint64(i), []byte(nil))
		f.Add(uint16(i), uint64(i)+1000, []byte("\x00"))
		f.Add(uint16(i), uint64(i)+2000, []byte(`{"a":[1e400,"\u0000",null]}`))
	}
	// What the fuzz found, each fixed since: the operation, and the seed that made it.
	for _, found := range []struct {
		route string
		seed  uint64
	}{
		// a verified envelope whose payload has "bounty": null, echoed back against the
		// document's EnvelopePayload (the node checks only the fields it verifies)
		{"POST /v1/envelopes/verify", 27},
	} {
		i := slices.IndexFunc(fz.ops, func(o fuzzOp) bool { return o.route == found.route })
		f.Add(uint16(i), found.seed, []byte(nil))
	}
	f.Fuzz(func(t *testing.T, op uint16, seed uint64, raw []byte) {
		if msg := fz.try(op, rand.New(rand.NewPCG(seed, uint64(op))), raw); msg != "" {
			t.Error(msg)
		}
	})
}

// apiFuzz holds the node under test and what requests are made from.
type apiFuzz struct {
	h   http.Handler
	doc map[string]any
	ops []fuzzOp
	// fixtures are values the node knows (DIDs, groups, a bounty): requests use them as
	// well as made-up ones, to get past lookups.
	fixtures map[string][]string
	agent    *identity.Key
	node     string

	mu      sync.Mutex
	schemas *jsonschema.Compiler
	cache   map[string]*jsonschema.Schema
}

// fuzzOp is one operation of the document.
type fuzzOp struct {
	route, method, path string
	op                  map[string]any
	params              []map[string]any
}

// newAPIFuzz builds a node over the embedded chain with the contracts deployed and every
// service real (its libp2p peers aside), and reads its document.
func newAPIFuzz(t testing.TB) *apiFuzz {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(2, chain.DefaultDevBalance)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	dep, err := contracts.Deploy(ctx, c, chain.DevKey(0), contracts.DeployConfig{FeeBps: contracts.DefaultFeeBps}, nil)
	if err != nil {
		t.Fatal(err)
	}
	db := testutil.DB(t)
	row, err := sqlite.EnterChain(ctx, db, sqlite.Chain{Key: "fuzz", ChainID: chain.EmbeddedChainID, Genesis: "g", Contracts: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	stakes, err := stake.NewIndex(ctx, stake.Config{DB: db, Chain: row, Client: c, ChainID: chain.EmbeddedChainID,
		Registry: dep.Contracts.StakeRegistry, StartBlock: dep.Block, Poll: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	index, err := escrow.NewIndexer(ctx, escrow.IndexerConfig{DB: db, Chain: row, Client: c, Escrow: dep.Contracts.BountyEscrow, StartBlock: dep.Block})
	if err != nil {
		t.Fatal(err)
	}
	// An ERC-8183 JobEscrow with one job (id 1), for the job routes.
	jobEscrow := deployJobEscrow(t, c)
	jobIndex, err := jobs.NewIndexer(ctx, jobs.IndexerConfig{DB: db, Chain: row, Client: c, Caller: c, JobEscrow: jobEscrow, StartBlock: dep.Block})
	if err != nil {
		t.Fatal(err)
	}
	// The ERC-8004 registries with agent 0 (account 1's, claiming the fuzz agent's DID below)
	// and one feedback from account 0, for the erc8004 routes.
	agentIDs, err := erc8004.NewIndexer(ctx, erc8004.IndexerConfig{DB: db, Chain: row, Client: c, IdentityRegistry: dep.Contracts.IdentityRegistry,
		ReputationRegistry: dep.Contracts.ReputationRegistry, ValidationRegistry: dep.Contracts.ValidationRegistry, StartBlock: dep.Block,
		Bindings: stakes, Poll: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, run := range []func(context.Context) error{stakes.Run, index.Run, jobIndex.Run, agentIDs.Run} {
		wg.Go(func() { _ = run(ctx) })
	}
	t.Cleanup(func() { cancel(); wg.Wait() })

	store, err := identity.OpenStore(ctx, db, identity.StoreConfig{Passphrase: []byte("fuzz"), KDF: identity.KDFParams{N: 1 << 10, R: 8, P: 1}})
	if err != nil {
		t.Fatal(err)
	}
	nodeKey, _, err := store.NodeKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids := identity.NewService(identity.ServiceConfig{Store: store, Node: nodeKey,
		Verifier: identity.NewVerifier(identity.VerifierConfig{Started: time.Now().Add(-time.Minute), Keys: stakes}),
		ChainID:  chain.EmbeddedChainID, Registry: dep.Contracts.StakeRegistry})
	threads, err := groups.New(ctx, db, groups.Config{Verify: ids.VerifyEnvelope})
	if err != nil {
		t.Fatal(err)
	}
	agents, err := registry.New(ctx, registry.Config{DB: db, Chain: row, Stakes: stakes, Keys: stakes})
	if err != nil {
		t.Fatal(err)
	}
	txs, err := txn.New(ctx, txn.Config{DB: db, Chain: row, Client: c})
	if err != nil {
		t.Fatal(err)
	}
	audits, err := reputation.OpenStore(ctx, db, row)
	if err != nil {
		t.Fatal(err)
	}
	auditLog, err := reputation.OpenLog(ctx, db, row, reputation.LogConfig{Signer: ids})
	if err != nil {
		t.Fatal(err)
	}
	rep := reputation.NewService(reputation.ServiceConfig{Store: audits, Log: auditLog, Stakes: agents,
		Rules: &reputation.Rules{ChainID: chain.EmbeddedChainID, Escrow: dep.Contracts.BountyEscrow, Bounties: noBounties{}, Wallets: stakes, Agents: agents}})
	jobService := jobs.NewService(jobs.ServiceConfig{Indexer: jobIndex, Chain: c, Tx: txs, JobEscrow: jobEscrow})
	agentIDService := erc8004.NewService(erc8004.ServiceConfig{Tx: txs, Chain: c, ChainID: chain.EmbeddedChainID, IdentityRegistry: dep.Contracts.IdentityRegistry,
		ReputationRegistry: dep.Contracts.ReputationRegistry, ValidationRegistry: dep.Contracts.ValidationRegistry, Index: agentIDs})
	s, err := api.New(api.Config{Version: "v-fuzz", Jobs: jobService, ERC8004: agentIDs, ERC8004Relay: agentIDService,
		Chain: api.ChainInfo{ID: chain.EmbeddedChainID, Kind: "embedded", Key: "fuzz", MinStake: new(big.Int),
			Contracts: []api.Contract{{Name: "BountyEscrow", Address: dep.Contracts.BountyEscrow}, {Name: "StakeRegistry", Address: dep.Contracts.StakeRegistry}}},
		Blocks: c, DB: db, Identity: ids, Bounties: escrow.NewService(escrow.ServiceConfig{Tx: txs, Chain: c, Escrow: dep.Contracts.BountyEscrow, Indexer: index}),
		Staking: stake.NewService(stake.ServiceConfig{Tx: txs, Chain: c, Registry: dep.Contracts.StakeRegistry, Index: stakes}),
		Senders: txs, Wallets: ids, Stakes: stakes, Indexes: []api.Index{index, stakes}, ChainRPC: c, Agents: agents,
		Reputation: rep, Groups: threads, AuditLog: auditLog, ScoredHeads: audits, Peers: fixedPeers{}, Explorer: explorer.Handler(),
		WriteRate: 1e9, WriteBurst: 1 << 30, RPCRate: 1e9, RPCBurst: 1 << 30, LeafPageRate: 1e9, LeafPageBurst: 1 << 30, RequestTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	fz := &apiFuzz{h: s.Handler(), node: ids.NodeDID(), cache: map[string]*jsonschema.Schema{}}
	fz.agent, err = identity.GenerateKey(identity.Ed25519)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := registry.Sign(registry.Card{DID: fz.agent.DID.String(), Name: "Fuzzed", Description: "an agent the fuzz knows",
		Capabilities: []string{"summarize"}, Endpoints: []registry.Endpoint{{Kind: "a2a", URL: "https://agent.example/a2a"}},
		Wallet: devAddress(1), Seq: 1, Updated: time.Now().Unix()}, fz.agent)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agents.Register(ctx, []byte(sc.JWS), "fuzz"); err != nil {
		t.Fatal(err)
	}
	for i, op := range []erc8004.Op{
		{Kind: erc8004.OpRegister, AgentURI: erc8004.RegistrationURL("http://127.0.0.1", fz.agent.DID.String()), DID: fz.agent.DID.String()},
		{Kind: erc8004.OpFeedback, AgentID: 0, Feedback: erc8004.FeedbackInput{Value: big.NewInt(87), Tag1: "starred"}},
	} {
		snd, err := txn.NewSender(ctx, c, txn.NewKeySigner(chain.DevKey(1-i)), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := agentIDService.Run(ctx, snd, op); err != nil {
			t.Fatal(err)
		}
	}
	fz.fixtures = map[string][]string{
		"did":      {fz.agent.DID.String(), fz.node, "did:pkh:eip155:1337:" + devAddress(1).Hex()},
		"address":  {devAddress(0).Hex(), devAddress(1).Hex(), dep.Contracts.BountyEscrow.Hex()},
		"group_id": {"g1", "bounty-1"},
		"id":       {"0", "1", "2"},
		"escrow":   {dep.Contracts.BountyEscrow.Hex()},
	}

	rec := httptest.NewRecorder()
	fz.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/openapi.json", nil))
	if err := json.Unmarshal(rec.Body.Bytes(), &fz.doc); err != nil {
		t.Fatal(err)
	}
	docValue, err := jsonschema.UnmarshalJSON(bytes.NewReader(rec.Body.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	fz.schemas = jsonschema.NewCompiler()
	fz.schemas.DefaultDraft(jsonschema.Draft2020)
	if err := fz.schemas.AddResource(docURL, docValue); err != nil {
		t.Fatal(err)
	}
	operations(fz.doc, func(route, path string, item, op map[string]any) {
		o := fuzzOp{route: route, path: path, op: op}
		o.method, _, _ = strings.Cut(route, " ")
		itemParams, _ := item["parameters"].([]any)
		opParams, _ := op["parameters"].([]any)
		for _, p := range append(slices.Clone(itemParams), opParams...) {
			if pm, ok := deref(fz.doc, p).(map[string]any); ok {
				o.params = append(o.params, pm)
			}
		}
		fz.ops = append(fz.ops, o)
	})
	if len(fz.ops) < 30 {
		t.Fatalf("the document has only %d operations", len(fz.ops))
	}
	return fz
}

// devAddress is dev account i's address.
func devAddress(i int) common.Address { return crypto.PubkeyToAddress(chain.DevKey(i).PublicKey) }

// noBounties is an escrow index without finished bounties, for reputation's rules.
type noBounties struct{}

func (noBounties) Bounty(context.Context, uint64) (reputation.BountyFacts, bool, error) {
	return reputation.BountyFacts{}, false, nil
}

// docURL names the document for the schema compiler.
const docURL = "https://surety.dev/openapi.json"

// try sends one request to operation op (modulo their number) made with r, raw as a hostile
// value when not nil, and returns what is wrong with the answer ("" when nothing).
func (fz *apiFuzz) try(op uint16, r *rand.Rand, raw []byte) string {
	o := fz.ops[int(op)%len(fz.ops)]
	req, desc := fz.request(o, r, raw)
	rec := httptest.NewRecorder()
	var w http.ResponseWriter = rec
	if fz.streams(o) {
		ctx, cancel := context.WithCancel(req.Context())
		defer cancel()
		req = req.WithContext(ctx)
		late := time.AfterFunc(streamStartWait, cancel)
		defer late.Stop()
		w = &startedRecorder{ResponseRecorder: rec, started: func() { time.AfterFunc(streamWait, cancel) }}
	}
	fz.h.ServeHTTP(w, req)
	if msg := fz.check(o, rec); msg != "" {
		return fmt.Sprintf("%.400s\n  request: %.400s\n  answer: %d %s %.400s", msg, desc, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	return ""
}

// request makes a request for o: each parameter present when required and often otherwise,
// its value from its schema, a fixture, or hostile; a body from the schema, or hostile.
func (fz *apiFuzz) request(o fuzzOp, r *rand.Rand, raw []byte) (*http.Request, string) {
	// raw goes into one place: a parameter (-1 for the body).
	rawAt := -2
	if raw != nil {
		rawAt = r.IntN(len(o.params)+1) - 1
	}
	path := o.path
	query := url.Values{}
	header := http.Header{}
	pathValues := map[string]string{}
	for i, p := range o.params {
		name, _ := p["name"].(string)
		in, _ := p["in"].(string)
		required, _ := p["required"].(bool)
		if !required && i != rawAt && r.IntN(3) == 0 {
			continue
		}
		var v string
		switch {
		case i == rawAt:
			v = string(raw)
		case r.IntN(6) == 0:
			v = string(fz.hostile(r))
		default:
			v = fz.paramValue(name, p["schema"], r)
		}
		switch in {
		case "path":
			if v == "" {
				v = "0" // an empty segment makes another path, not a request to o
			}
			pathValues[name] = v
			path = strings.ReplaceAll(path, "{"+name+"}", url.PathEscape(v))
		case "query":
			query.Set(name, v)
		case "header":
			header.Set(name, headerValue(v))
		}
	}
	var body []byte
	contentType := ""
	if rb, ok := deref(fz.doc, o.op["requestBody"]).(map[string]any); ok {
		content, _ := rb["content"].(map[string]any)
		types := make([]string, 0, len(content))
		for ct := range content {
			types = append(types, ct)
		}
		slices.Sort(types)
		contentType = types[r.IntN(len(types))]
		media, _ := content[contentType].(map[string]any)
		switch {
		case rawAt == -1:
			body = raw
		case r.IntN(5) == 0:
			body = fz.hostile(r)
		default:
			body = fz.body(o, pathValues, contentType, media["schema"], r)
		}
		if r.IntN(10) == 0 {
			contentType = []string{"", "text/plain", "application/json", "application/x-www-form-urlencoded"}[r.IntN(4)]
		}
	}
	target := path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	req := httptest.NewRequest(o.method, target, bytes.NewReader(body))
	maps(header, req.Header)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return req, fmt.Sprintf("%s %s %v body %q", o.method, target, header, clip(body, 300))
}

// startedRecorder records an event stream's answer and calls started once, when the answer
// starts (its status, or its first bytes or flush).
type startedRecorder struct {
	*httptest.ResponseRecorder
	once    sync.Once
	started func()
}

func (w *startedRecorder) WriteHeader(code int) {
	w.once.Do(w.started)
	w.ResponseRecorder.WriteHeader(code)
}

func (w *startedRecorder) Write(b []byte) (int, error) {
	w.once.Do(w.started)
	return w.ResponseRecorder.Write(b)
}

func (w *startedRecorder) WriteString(s string) (int, error) {
	w.once.Do(w.started)
	return w.ResponseRecorder.WriteString(s)
}

func (w *startedRecorder) Flush() {
	w.once.Do(w.started)
	w.ResponseRecorder.Flush()
}

func maps(from, to http.Header) {
	for k, v := range from {
		to[k] = v
	}
}

// clip shortens b for a message.
func clip(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// headerValue makes v a value a client can send in a header (no line breaks or NULs: HTTP
// refuses those before the node sees them).
func headerValue(v string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return -1
		}
		return r
	}, v)
}

// streams says whether o answers with server-sent events.
func (fz *apiFuzz) streams(o fuzzOp) bool {
	responses, _ := o.op["responses"].(map[string]any)
	r, _ := deref(fz.doc, responses["200"]).(map[string]any)
	content, _ := r["content"].(map[string]any)
	_, ok := content["text/event-stream"]
	return ok
}

// paramValue is a value for a parameter: a fixture for the names the node knows, else one
// made from the schema.
func (fz *apiFuzz) paramValue(name string, schema any, r *rand.Rand) string {
	switch name {
	case "Accept":
		return []string{"", "*/*", "application/did-resolution", "application/did", "application/did+json", "application/did+ld+json",
			`application/ld+json;profile="https://w3id.org/did-resolution"`, "text/html", "application/json;q=0.5, */*;q=0.1", "application/did;q=0"}[r.IntN(10)]
	case "action":
		if r.IntN(4) == 0 {
			return randomString(r)
		}
	}
	if f := fz.fixtures[name]; len(f) > 0 && r.IntN(2) == 0 {
		return f[r.IntN(len(f))]
	}
	switch v := fz.value(schema, r, 0).(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// body is a request body of contentType from schema: JSON as it is, a text, for JOSE an
// Agent Card (POST /v1/agents) or an envelope (signed by the fuzz's agent for the node, its
// body from the operation's x-surety-envelope-body schema), both from their schemas.
func (fz *apiFuzz) body(o fuzzOp, pathValues map[string]string, contentType string, schema any, r *rand.Rand) []byte {
	switch {
	case contentType == "text/plain":
		return []byte(randomString(r))
	case o.route == "POST /v1/agents":
		var card registry.Card
		b, _ := json.Marshal(fz.value(map[string]any{"$ref": "#/components/schemas/AgentCard"}, r, 0))
		_ = json.Unmarshal(b, &card)
		card.DID = fz.agent.DID.String()
		sc, err := registry.Sign(card, fz.agent)
		if err != nil {
			return b
		}
		return []byte(sc.JWS)
	case contentType == "application/jose" || contentType == "application/jose+json":
		payload := map[string]any{"to": []string{fz.node}, "aud": fz.node, "chain_id": chain.EmbeddedChainID,
			"state": "discussion", "body": fz.value(o.op["x-surety-envelope-body"], r, 0)}
		// What the route checks against its path, mostly right.
		if g, ok := pathValues["group_id"]; ok && r.IntN(4) != 0 {
			payload["group_id"] = g
		}
		id, err := strconv.ParseUint(pathValues["id"], 10, 64)
		if err != nil {
			id = uint64(r.IntN(3))
		}
		switch r.IntN(4) {
		case 0, 1:
			payload["bounty"] = identity.BountyRef{ChainID: chain.EmbeddedChainID, Escrow: fz.fixtures["escrow"][0], ID: id}
		case 2:
			payload["bounty"] = fz.value(map[string]any{"$ref": "#/components/schemas/BountyRef"}, r, 0)
		}
		// The fuzz's agent (known to the node) or a new one: a sender has a budget of live
		// envelopes at the node (429 replay-budget past it).
		signer := fz.agent
		if r.IntN(4) != 0 {
			k, err := identity.GenerateKey(identity.Ed25519)
			if err != nil {
				panic(err)
			}
			signer = k
		}
		raw, _ := json.Marshal(payload)
		filled, err := identity.FillEnvelope(raw, signer, time.Now(), time.Minute)
		if err != nil {
			return raw
		}
		if contentType == "application/jose+json" {
			jws, err := identity.SignJSON(filled, signer)
			if err != nil {
				return filled
			}
			return jws
		}
		jws, err := signer.SignCompact(filled)
		if err != nil {
			return filled
		}
		return []byte(jws)
	}
	b, _ := json.Marshal(fz.value(schema, r, 0))
	return b
}

// value makes a JSON value from schema: mostly one it describes, sometimes not.
func (fz *apiFuzz) value(schema any, r *rand.Rand, depth int) any {
	s, _ := schema.(map[string]any)
	if ref, ok := s["$ref"].(string); ok {
		switch ref {
		case "#/components/schemas/DID":
			return fz.fixtures["did"][r.IntN(len(fz.fixtures["did"]))]
		case "#/components/schemas/Address":
			return fz.fixtures["address"][r.IntN(len(fz.fixtures["address"]))]
		}
		s, _ = deref(fz.doc, s).(map[string]any)
	}
	if depth > 6 || s == nil {
		return nil
	}
	if c, ok := s["const"]; ok {
		return c
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 && r.IntN(8) != 0 {
		return e[r.IntN(len(e))]
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if list, ok := s[k].([]any); ok && len(list) > 0 {
			return fz.value(list[r.IntN(len(list))], r, depth+1)
		}
	}
	typ := s["type"]
	if list, ok := typ.([]any); ok && len(list) > 0 {
		typ = list[r.IntN(len(list))]
	}
	if r.IntN(12) == 0 { // the wrong type
		typ = []string{"string", "integer", "boolean", "array", "object", "null"}[r.IntN(6)]
	}
	switch typ {
	case "object":
		obj := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		required, _ := s["required"].([]any)
		names := make([]string, 0, len(props))
		for k := range props {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			if slices.Contains(required, any(k)) || r.IntN(2) == 0 {
				obj[k] = fz.value(props[k], r, depth+1)
			}
		}
		if r.IntN(10) == 0 {
			obj[randomString(r)] = randomString(r)
		}
		return obj
	case "array":
		n := r.IntN(4)
		out := make([]any, n)
		for i := range out {
			out[i] = fz.value(s["items"], r, depth+1)
		}
		return out
	case "integer", "number":
		return []any{0, 1, 2, r.IntN(1000), -1, json.Number("18446744073709551616"), json.Number("1e400"), json.Number("0.5")}[r.IntN(8)]
	case "boolean":
		return r.IntN(2) == 0
	case "null":
		return nil
	}
	if ex, ok := s["examples"].([]any); ok && len(ex) > 0 && r.IntN(2) == 0 {
		return ex[r.IntN(len(ex))]
	}
	if p, ok := s["pattern"].(string); ok && r.IntN(4) != 0 {
		if v, ok := fz.matching(p, r); ok {
			return v
		}
	}
	return randomString(r)
}

// matching picks a string that matches pattern from the values the fuzz makes, if one does.
func (fz *apiFuzz) matching(pattern string, r *rand.Rand) (string, bool) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return "", false
	}
	hex := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return fmt.Sprintf("%x", b)
	}
	candidates := []string{"0x" + hex(20), "0x" + hex(32), hex(32), "0x" + hex(100), strconv.Itoa(r.IntN(1000)), "1000000000000000000", "g1", "bounty-1"}
	for _, f := range fz.fixtures {
		candidates = append(candidates, f...)
	}
	var ok []string
	for _, c := range candidates {
		if re.MatchString(c) {
			ok = append(ok, c)
		}
	}
	if len(ok) == 0 {
		return "", false
	}
	return ok[r.IntN(len(ok))], true
}

// randomString is a short string: plain, shaped like the API's values, or hostile.
func randomString(r *rand.Rand) string {
	pool := []string{"", "a", "summarize", "did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp", "did:example:1",
		"0x0000000000000000000000000000000000000001", "0x" + strings.Repeat("ab", 32), "1", "1000000000000000000", "-1",
		"eyJhbGciOiJFZERTQSJ9.e30.AAAA", "g1", "bounty-1", "multikey", "jwk", "claim", "é", "😀", "a b", "\x00", "\xff", "%00", "../x"}
	return pool[r.IntN(len(pool))]
}

// hostile is a value meant to break parsers: control bytes, broken UTF-8 and JSON, FTS5
// syntax, numbers out of range, deep nesting, long runs.
func (fz *apiFuzz) hostile(r *rand.Rand) []byte {
	pool := []string{"\x00", "a\x00b", "\xff\xfe", "\xc3", "\x1b[2J", `"`, "*", "NEAR(", "-", ":", "(", "a OR b",
		"{", "[", `{"a":`, "null", "[]", `{"__proto__":1}`, "1e400", "-0", "18446744073709551616", "-9223372036854775809",
		strings.Repeat("[", 10000), strings.Repeat("a", 70_000), strings.Repeat("é", 600), "%", "%zz", "..", "/", "\\",
		"did:key:" + strings.Repeat("z", 5000), "0x", "0xZZ", "a.b.c", "....", "=?", "\t\n\r", "\u2028", "\ufeff"}
	return []byte(pool[r.IntN(len(pool))])
}

// check holds an answer to the document.
func (fz *apiFuzz) check(o fuzzOp, rec *httptest.ResponseRecorder) string {
	code := rec.Code
	responses, _ := o.op["responses"].(map[string]any)
	key := strconv.Itoa(code)
	if _, ok := responses[key]; !ok {
		key = "default"
	}
	switch {
	case code >= 500 && !(code == http.StatusNotImplemented && key != "default"):
		return fmt.Sprintf("%s answered %d", o.route, code)
	case code < 400 && key == "default":
		return fmt.Sprintf("%s answered %d, which the document does not list", o.route, code)
	}
	resp, loc := fz.response(responses[key], "#/paths/"+pointerEscape(o.path)+"/"+strings.ToLower(o.method)+"/responses/"+key)
	ct := rec.Header().Get("Content-Type")
	body := rec.Body.Bytes()
	content, _ := resp["content"].(map[string]any)
	// A page's files (the explorer's HTML, script, style, and its plain-text 404) are text the
	// document names by media type; they are not JSON, nor problems.
	if code >= 300 && code < 400 && len(content) == 0 {
		if rec.Header().Get("Location") == "" {
			return fmt.Sprintf("%s answered %d without a Location", o.route, code)
		}
		return "" // the body is http.Redirect's note for a browser
	}
	if mt, _, _ := mime.ParseMediaType(ct); textMedia[mt] {
		if _, ok := content[mt]; !ok {
			return fmt.Sprintf("%s answered %d as %q, which the document does not list", o.route, code, ct)
		}
		return ""
	}
	if code >= 400 {
		if msg := problemShape(o, ct, code, body); msg != "" {
			return msg
		}
	}
	if len(content) == 0 {
		if len(body) > 0 {
			return fmt.Sprintf("%s answered %d with a body the document does not have", o.route, code)
		}
		return ""
	}
	name := ct
	media, ok := content[name].(map[string]any)
	if !ok {
		name, _, _ = mime.ParseMediaType(ct)
		media, ok = content[name].(map[string]any)
	}
	if !ok {
		return fmt.Sprintf("%s answered %d as %q, which the document does not list", o.route, code, ct)
	}
	if name == "text/event-stream" {
		return ""
	}
	if _, ok := media["schema"]; !ok {
		return ""
	}
	schema, err := fz.schema(loc + "/content/" + pointerEscape(name) + "/schema")
	if err != nil {
		return fmt.Sprintf("%s: the document's schema for %d %s does not compile: %v", o.route, code, name, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Sprintf("%s answered %d %s that is not JSON: %v", o.route, code, name, err)
	}
	if err := schema.Validate(v); err != nil {
		return fmt.Sprintf("%s answered %d %s not valid against the document: %v", o.route, code, name, err)
	}
	return ""
}

// textMedia are the media types of a page's files, which check holds to the document by type.
var textMedia = map[string]bool{"text/html": true, "text/javascript": true, "text/css": true, "text/plain": true}

// problemShape checks an error answer is a problem: application/problem+json with a type,
// a title and its status; or, from the DID resolver, a resolution result carrying one.
func problemShape(o fuzzOp, ct string, code int, body []byte) string {
	var p struct {
		Type, Title string
		Status      int
		Resolution  *struct {
			Error *struct {
				Type, Title string
				Status      int
			} `json:"error"`
		} `json:"didResolutionMetadata"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return fmt.Sprintf("%s answered %d with a body that is not JSON: %v", o.route, code, err)
	}
	switch {
	case ct == "application/problem+json":
	case ct == "application/did-resolution" && o.route == "GET /1.0/identifiers/{did}" && code != http.StatusGone:
		if p.Resolution == nil || p.Resolution.Error == nil {
			return fmt.Sprintf("%s answered %d without didResolutionMetadata.error", o.route, code)
		}
		p.Type, p.Title, p.Status = p.Resolution.Error.Type, p.Resolution.Error.Title, p.Resolution.Error.Status
	case ct == "application/did-resolution" && code == http.StatusGone:
		return ""
	default:
		return fmt.Sprintf("%s answered %d as %q, not application/problem+json", o.route, code, ct)
	}
	if p.Type == "" || p.Title == "" || p.Status != code {
		return fmt.Sprintf("%s answered %d with a problem without a type, a title or its status", o.route, code)
	}
	return ""
}

// response follows v's $ref to a response and returns it with its location.
func (fz *apiFuzz) response(v any, loc string) (map[string]any, string) {
	if m, ok := v.(map[string]any); ok {
		if ref, ok := m["$ref"].(string); ok {
			loc = ref
		}
	}
	r, _ := deref(fz.doc, v).(map[string]any)
	return r, loc
}

// schema compiles the schema at loc (a pointer into the document), once.
func (fz *apiFuzz) schema(loc string) (*jsonschema.Schema, error) {
	fz.mu.Lock()
	defer fz.mu.Unlock()
	if s, ok := fz.cache[loc]; ok {
		return s, nil
	}
	s, err := fz.schemas.Compile(docURL + loc)
	if err != nil {
		return nil, err
	}
	fz.cache[loc] = s
	return s, nil
}

// pointerEscape escapes a JSON pointer token (RFC 6901) for a URL fragment.
func pointerEscape(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
	return url.PathEscape(s)
}

// deployJobEscrow deploys a JobEscrow owned by dev account 0 on c and opens job 1 there from
// dev account 1 (provider: dev account 2, evaluator: dev account 0).
func deployJobEscrow(t testing.TB, c *chain.Embedded) common.Address {
	t.Helper()
	ctx := context.Background()
	owner := crypto.PubkeyToAddress(chain.DevKey(0).PublicKey)
	abi := contracts.NewJobEscrow()
	addr, tx, err := bind.DeployContract(bind.NewKeyedTransactor(chain.DevKey(0), big.NewInt(chain.EmbeddedChainID)),
		common.FromHex(contracts.JobEscrowMetaData.Bin), c, abi.PackConstructor(owner, owner))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chain.WaitMined(ctx, c, tx.Hash()); err != nil {
		t.Fatal(err)
	}
	head, err := c.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	client, err := txn.NewSender(ctx, c, txn.NewKeySigner(chain.DevKey(1)), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Send(ctx, txn.Call{To: addr, Data: abi.PackCreateJob(devAddress(2), owner, new(big.Int).SetUint64(head.Time+3600),
		"fuzzed job", common.Address{}, big.NewInt(0))}); err != nil {
		t.Fatal(err)
	}
	return addr
}
