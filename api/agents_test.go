package api_test

import (
	"context"
	"math/big"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/registry"
)

// noStake is a StakeReader for which no agent staked (package stake tests the real index).
type noStake struct{}

func (noStake) StakeOf(context.Context, string, common.Address) (*big.Int, error) {
	return new(big.Int), nil
}

// newRegistryServer builds the API with a real registry (SQLite with FTS5) holding one card,
// "Summarizer" with the capabilities summarize and pdf.
func newRegistryServer(t testing.TB) *api.Server {
	t.Helper()
	_, s := newRegistryAndServer(t)
	return s
}

// newRegistryAndServer is newRegistryServer, with its registry.
func newRegistryAndServer(t testing.TB) (*registry.Registry, *api.Server) {
	t.Helper()
	db := testutil.DB(t)
	ctx := context.Background()
	row, err := sqlite.EnterChain(ctx, db, sqlite.Chain{Key: "t", ChainID: chain.EmbeddedChainID, Genesis: "g", Contracts: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(ctx, registry.Config{DB: db, Chain: row, Stakes: noStake{}})
	if err != nil {
		t.Fatal(err) // without -tags sqlite_fts5 too: the Makefile always sets it
	}
	k, err := identity.GenerateKey(identity.Ed25519)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := registry.Sign(registry.Card{DID: k.DID.String(), Name: "Summarizer", Description: "summarizes research papers",
		Capabilities: []string{"summarize", "pdf"}, Endpoints: []registry.Endpoint{{Kind: "a2a", URL: "https://agent.example/a2a"}},
		Wallet: common.HexToAddress("0x01"), Seq: 1, Updated: time.Now().Unix()}, k)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Register(ctx, []byte(sc.JWS), "test"); err != nil {
		t.Fatal(err)
	}
	s, err := api.New(api.Config{Version: "v-test", Chain: api.ChainInfo{ID: chain.EmbeddedChainID}, Blocks: stubBlocks{}, DB: db,
		Identity: newIdentity(t, db), Agents: reg})
	if err != nil {
		t.Fatal(err)
	}
	return reg, s
}

// plainAgents hides the registry's SearchEncoded: the server answers searches with c.JSON.
type plainAgents struct{ api.Agents }

// TestSearchAgentsKeptBody: GET /v1/agents answers with the same status, headers and bytes
// whether the body was encoded for the request, kept with the registry's answer and served
// again, or written by c.JSON from the answer (a registry without SearchEncoded), for every
// kind of query, pretty ones and empty answers included.
func TestSearchAgentsKeptBody(t *testing.T) {
	reg, s := newRegistryAndServer(t)
	plain, err := api.New(api.Config{Version: "v-test", Chain: api.ChainInfo{ID: chain.EmbeddedChainID}, Blocks: stubBlocks{},
		DB: testutil.DB(t), Identity: newIdentity(t, testutil.DB(t)), Agents: plainAgents{reg}})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/v1/agents?q=summarizes", "/v1/agents?capability=pdf", "/v1/agents?q=research+papers&capability=summarize",
		"/v1/agents?q=summarizes&mode=keyword", "/v1/agents", "/v1/agents?limit=1", "/v1/agents?q=the", "/v1/agents?q=nothing+here",
		"/v1/agents?q=summarizes&pretty", "/v1/agents?pretty=1&limit=3"} {
		want := get(t, plain.Handler(), http.MethodGet, path)
		for i := range 3 { // computed, then kept
			got := get(t, s.Handler(), http.MethodGet, path)
			if got.Code != want.Code || got.Body.String() != want.Body.String() {
				t.Fatalf("GET %s (%d): %d %q, want %d %q", path, i, got.Code, got.Body, want.Code, want.Body)
			}
			// The kept path says the body's length (c.JSON leaves it to the server: chunked
			// past 2 KiB, else counted): the same body on the wire.
			header := got.Header().Clone()
			if n := header.Get(echo.HeaderContentLength); n != "" && want.Header().Get(echo.HeaderContentLength) == "" {
				if n != strconv.Itoa(got.Body.Len()) {
					t.Errorf("GET %s (%d): Content-Length %s, body %d bytes", path, i, n, got.Body.Len())
				}
				header.Del(echo.HeaderContentLength)
			}
			if diff := cmp.Diff(want.Header(), header); diff != "" {
				t.Errorf("GET %s (%d): headers (-c.JSON +kept):\n%s", path, i, diff)
			}
		}
	}
}

// TestSearchAgentsRefusesHostileQueries: whatever a client puts in q, capability or limit,
// GET /v1/agents answers 200 or a 400 problem naming the parameter, never 500 (at 5ab6450,
// ?q=%00&capability=%00 made FTS5 fail on an unterminated string and the node answered 500).
func TestSearchAgentsRefusesHostileQueries(t *testing.T) {
	s := newRegistryServer(t)
	hostile := []string{
		"\x00", "a\x00b", "\xff", "\xc3", "summarizes\xff", "\x01", "\x1b[2J", "\u2028", "\ufeff",
		`"`, `""`, `"summarizes`, "*", "summ*", "NEAR(", "NEAR(a b)", "-", "-summarizes", ":", "name:x", "tags:csummarize",
		"^", "(", ")", "{a b}", "+", "AND", "OR", "NOT", "a OR b", "'", "%", "%00", `\`, "\t", " ",
		strings.Repeat("a", 501), strings.Repeat("a ", 300), strings.Repeat("é", 300), strings.Repeat("x", 70),
		"Summarize", "summarize!", "pdf",
	}
	type query struct{ name, param, value string }
	var queries []query
	for _, v := range hostile {
		queries = append(queries, query{"q", "q", v}, query{"capability", "capability", v})
	}
	queries = append(queries, query{"limit", "limit", "-1"}, query{"limit", "limit", "1e3"}, query{"limit", "limit", "99999999999999999999"},
		query{"limit", "limit", "\x00"}, query{"mode", "mode", "semantic"}, query{"mode", "mode", "\x00"}, query{"mode", "mode", "KEYWORD"})
	for _, qq := range queries {
		t.Run(qq.name+"="+url.QueryEscape(qq.value), func(t *testing.T) {
			for _, path := range []string{
				"/v1/agents?" + qq.param + "=" + url.QueryEscape(qq.value),
				// with the other text parameter set too: q and capability make one FTS5 query
				"/v1/agents?q=summarizes&capability=summarize&" + qq.param + "=" + url.QueryEscape(qq.value),
			} {
				rec := get(t, s.Handler(), http.MethodGet, path)
				switch rec.Code {
				case http.StatusOK:
				case http.StatusBadRequest:
					p := problemOf(t, rec)
					if p.Type != "https://surety.dev/problems/bad-request" || !strings.HasPrefix(p.Detail, qq.param+" ") {
						t.Errorf("GET %s: problem %+v, want bad-request with a detail naming %s", path, p, qq.param)
					}
				default:
					t.Errorf("GET %s: %d %s, want 200 or a 400 problem", path, rec.Code, rec.Body)
				}
			}
		})
	}
	// The real ones still find the card.
	for _, path := range []string{"/v1/agents?q=summarizes", "/v1/agents?capability=pdf", "/v1/agents?q=research+papers&capability=summarize",
		"/v1/agents?q=summarizes&mode=keyword", "/v1/agents?q=summarizes&mode=hybrid"} {
		if rec := get(t, s.Handler(), http.MethodGet, path); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"name":"Summarizer"`) {
			t.Errorf("GET %s: %d %s, want the card", path, rec.Code, rec.Body)
		}
	}
}
