package api_test

// These tests hold api/openapi.json to the server: every route New registers has an
// operation in the document, and every operation is a route New registers.
//
// To add a route: register it in New, then add its operation under "paths" in openapi.json
// (echo's :name is {name} there) with summary, operationId, tags, parameters, requestBody
// and responses, errors through #/components/responses, and "default". If the route hangs on
// a new optional service in Config, give newFullServer a stand-in for it (it fails until
// every interface in Config is set).

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"

	"github.com/surety-ioa/surety/api"
)

// Stand-ins that only let New register every route: none of their methods is meant to be
// called (one that is panics, and the server answers 500).
type (
	stubBlocks      struct{ api.BlockReader }
	stubDB          struct{ api.Pinger }
	stubIdentity    struct{ api.Identity }
	stubBounties    struct{ api.Bounties }
	stubJobs        struct{ api.Jobs }
	stubStaking     struct{ api.Staking }
	stubSenders     struct{ api.Senders }
	stubWallets     struct{ api.Wallets }
	stubStakes      struct{ api.StakeIndex }
	stubCredentials struct{ api.Credentials }
	stubCredStakes  struct{ api.CredentialStakes }
	stubHistory     struct{ api.StakeHistory }
	stubAgents      struct{ api.Agents }
	stubReputation  struct{ reputationService } // api.Reputation has a method Reputation
	stubAuditLog    struct{ api.AuditLog }
	stubScoredHeads struct{ api.ScoredHeads }
	stubPeers       struct{ api.Peers }
	stubGroups      struct{ api.Groups }
	stubChainRPC    struct{ api.ChainRPC }
	stubERC8004     struct{ api.ERC8004 }
	stubERC8004Rel  struct{ api.ERC8004Relay }
)

type reputationService = api.Reputation

// newFullServer builds a server with every optional service present, so that it registers
// every route it can.
func newFullServer(t *testing.T) *api.Server {
	t.Helper()
	return newFullServerWith(t, api.Config{})
}

// newFullServerWith is newFullServer with the limits of limits (its rates and bursts).
func newFullServerWith(t *testing.T, limits api.Config) *api.Server {
	t.Helper()
	cfg := api.Config{
		Blocks: stubBlocks{}, DB: stubDB{}, Identity: stubIdentity{},
		Bounties: stubBounties{}, Staking: stubStaking{}, Senders: stubSenders{}, Wallets: stubWallets{}, Stakes: stubStakes{}, Agents: stubAgents{},
		Reputation: stubReputation{}, AuditLog: stubAuditLog{}, ScoredHeads: stubScoredHeads{}, Peers: stubPeers{}, Groups: stubGroups{},
		ChainRPC: stubChainRPC{}, Jobs: stubJobs{}, ERC8004: stubERC8004{}, ERC8004Relay: stubERC8004Rel{},
		Credentials: stubCredentials{}, CredentialStakes: stubCredStakes{}, StakeHistory: stubHistory{},
		Explorer:  http.NotFoundHandler(),
		WriteRate: limits.WriteRate, WriteBurst: limits.WriteBurst, RPCRate: limits.RPCRate, RPCBurst: limits.RPCBurst,
	}
	v := reflect.ValueOf(cfg)
	for i := range v.NumField() {
		if f := v.Type().Field(i); f.Type.Kind() == reflect.Interface && v.Field(i).IsNil() {
			t.Fatalf("Config.%s is not set here: give newFullServer a stand-in for it, so that the routes it enables are checked against openapi.json", f.Name)
		}
	}
	s, err := api.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// A node mounts its MCP endpoint (mcp.NewHandler) on every server; a stand-in here.
	s.MountMCP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	return s
}

var echoParam = regexp.MustCompile(`:([A-Za-z0-9_]+)`)

// servedRoutes lists the server's routes as "METHOD /path/{param}".
func servedRoutes(s *api.Server) []string {
	var out []string
	for _, r := range s.Routes() {
		if r.Method == echo.RouteNotFound {
			continue // echo's own catch-all entries, not routes the server serves
		}
		out = append(out, r.Method+" "+echoParam.ReplaceAllString(r.Path, "{$1}"))
	}
	return out
}

var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// documentedRoutes lists the document's operations as "METHOD /path/{param}".
func documentedRoutes(doc map[string]any) []string {
	var out []string
	paths, _ := doc["paths"].(map[string]any)
	for path, item := range paths {
		ops, _ := item.(map[string]any)
		for _, m := range httpMethods {
			if _, ok := ops[m]; ok {
				out = append(out, strings.ToUpper(m)+" "+path)
			}
		}
	}
	return out
}

// routeDiff reports the routes served but not documented, and documented but not served.
func routeDiff(served, documented []string) (undocumented, unserved []string) {
	for _, r := range served {
		if !slices.Contains(documented, r) {
			undocumented = append(undocumented, r)
		}
	}
	for _, r := range documented {
		if !slices.Contains(served, r) {
			unserved = append(unserved, r)
		}
	}
	sort.Strings(undocumented)
	sort.Strings(unserved)
	return undocumented, unserved
}

// fetchDocument gets the document the way a client does.
func fetchDocument(t *testing.T, s *api.Server) map[string]any {
	t.Helper()
	rec := do(t, s.Handler(), http.MethodGet, "/v1/openapi.json", "", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /v1/openapi.json: %d %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var doc map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("openapi.json is not JSON: %v", err)
	}
	return doc
}

func TestOpenAPICoversEveryRoute(t *testing.T) {
	s := newFullServer(t)
	served := servedRoutes(s)
	if len(served) < 20 {
		t.Fatalf("the server registers only %d routes: %v", len(served), served)
	}
	undocumented, unserved := routeDiff(served, documentedRoutes(fetchDocument(t, s)))
	for _, r := range undocumented {
		t.Errorf("%s is served but not in api/openapi.json: add its operation under paths", r)
	}
	for _, r := range unserved {
		t.Errorf("%s is in api/openapi.json but the server does not register it: remove it, or register the route", r)
	}
}

func TestOpenAPIDocument(t *testing.T) {
	doc := fetchDocument(t, newFullServer(t))
	if v, _ := doc["openapi"].(string); !strings.HasPrefix(v, "3.1") {
		t.Fatalf("openapi = %q, want 3.1.x", v)
	}
	tests := []struct {
		name  string
		check func(doc map[string]any) []string
	}{
		{"info", checkInfo},
		{"refs resolve", danglingRefs},
		{"operations complete", incompleteOperations},
		{"path parameters declared", undeclaredPathParams},
		{"problem types match the mapper", problemTypeDrift},
		{"bounty actions match the route", bountyActionDrift},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, msg := range tt.check(doc) {
				t.Error(msg)
			}
		})
	}
}

// TestOpenAPIDocumentsLimits: every operation the server rate limits documents its 429
// problem, and every operation that takes a body its 413 problem (every body is capped). An
// operation counts as limited when it answers 429 to a client that sent it twice under a
// limit of one request (a stand-in service behind it answers the first one 500; the limits
// run before it).
func TestOpenAPIDocumentsLimits(t *testing.T) {
	s := newFullServerWith(t, api.Config{WriteRate: 1e-9, WriteBurst: 1, RPCRate: 1e-9, RPCBurst: 1})
	doc := fetchDocument(t, s)
	for _, msg := range undocumentedLimits(doc, probeRateLimits(t, s, doc)) {
		t.Error(msg)
	}
}

// probeRateLimits sends each operation of doc twice from its own address and lists those
// answered 429 the second time, as "METHOD /path/{param}".
func probeRateLimits(t *testing.T, s *api.Server, doc map[string]any) []string {
	t.Helper()
	var limited []string
	n := 0
	operations(doc, func(route, path string, _, _ map[string]any) {
		method, _, _ := strings.Cut(route, " ")
		target := templateParam.ReplaceAllString(path, "1")
		n++
		addr := fmt.Sprintf("192.0.2.%d:1234", n)
		var rec *httptest.ResponseRecorder
		for range 2 {
			req := httptest.NewRequest(method, target, strings.NewReader("{}"))
			req.RemoteAddr = addr
			rec = httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, req)
		}
		if rec.Code == http.StatusTooManyRequests {
			limited = append(limited, route)
		}
	})
	if len(limited) < 10 {
		t.Fatalf("only %v answered 429 to a second request: the probe no longer reaches the limits", limited)
	}
	return limited
}

// undocumentedLimits reports the limited operations without a 429 problem response and the
// operations with a request body without a 413 problem response.
func undocumentedLimits(doc map[string]any, limited []string) []string {
	var out []string
	problem := func(responses map[string]any, code string) bool {
		r, _ := deref(doc, responses[code]).(map[string]any)
		content, _ := r["content"].(map[string]any)
		_, ok := content["application/problem+json"]
		return ok
	}
	operations(doc, func(route, _ string, _, op map[string]any) {
		responses, _ := op["responses"].(map[string]any)
		if slices.Contains(limited, route) && !problem(responses, "429") {
			out = append(out, route+": rate limited, but no 429 problem+json response (#/components/responses/TooManyRequests)")
		}
		if _, body := op["requestBody"]; body && !problem(responses, "413") {
			out = append(out, route+": takes a body, but no 413 problem+json response (#/components/responses/TooLarge)")
		}
	})
	return out
}

// TestOpenAPIChecksCatch proves the checks above can fail.
func TestOpenAPIChecksCatch(t *testing.T) {
	doc := map[string]any{
		"paths": map[string]any{
			"/v1/things/{id}": map[string]any{
				"get": map[string]any{
					"summary": "A thing", "operationId": "getThing", "tags": []any{"x"},
					"responses": map[string]any{
						"200":     map[string]any{"$ref": "#/components/responses/Missing"},
						"default": map[string]any{"description": "error"},
					},
				},
			},
		},
	}
	undocumented, unserved := routeDiff([]string{"GET /v1/things/{id}", "POST /v1/things"}, documentedRoutes(doc))
	tests := []struct {
		name string
		got  []string
		want []string
	}{
		{"undocumented route", undocumented, []string{"POST /v1/things"}},
		{"unserved route", unserved, nil},
		{"dangling ref", danglingRefs(doc), []string{`/paths//v1/things/{id}/get/responses/200: $ref "#/components/responses/Missing" does not resolve`}},
		{"undeclared path parameter", undeclaredPathParams(doc), []string{"GET /v1/things/{id}: path parameter id is not declared"}},
		{"undocumented limits", undocumentedLimits(map[string]any{"paths": map[string]any{"/v1/things": map[string]any{
			"post": map[string]any{"requestBody": map[string]any{}, "responses": map[string]any{"429": map[string]any{"description": "no content"}}}}}},
			[]string{"POST /v1/things"}),
			[]string{
				"POST /v1/things: rate limited, but no 429 problem+json response (#/components/responses/TooManyRequests)",
				"POST /v1/things: takes a body, but no 413 problem+json response (#/components/responses/TooLarge)",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func checkInfo(doc map[string]any) []string {
	var out []string
	info, _ := doc["info"].(map[string]any)
	for _, k := range []string{"title", "version"} {
		if s, _ := info[k].(string); s == "" {
			out = append(out, "info."+k+" is missing")
		}
	}
	if _, ok := lookup(doc, "#/components/schemas/Problem"); !ok {
		out = append(out, "components.schemas.Problem is missing")
	}
	// The document links the written protocol (every signed object and wire message).
	ext, _ := doc["externalDocs"].(map[string]any)
	if u, _ := ext["url"].(string); !strings.HasSuffix(u, "/docs/PROTOCOL.md") {
		out = append(out, fmt.Sprintf("externalDocs.url is %q, want a link to docs/PROTOCOL.md", u))
	}
	return out
}

// lookup resolves a local reference ("#/a/b") in doc (RFC 6901 pointer).
func lookup(doc any, ref string) (any, bool) {
	frag, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, false
	}
	cur := doc
	for _, tok := range strings.Split(frag, "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// deref follows v's $ref, if it has one, within doc.
func deref(doc, v any) any {
	for range 10 {
		m, _ := v.(map[string]any)
		ref, ok := m["$ref"].(string)
		if !ok {
			return v
		}
		if v, ok = lookup(doc, ref); !ok {
			return nil
		}
	}
	return nil
}

// danglingRefs reports every $ref that does not resolve within the document.
func danglingRefs(doc map[string]any) []string {
	var out []string
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				if _, ok := lookup(doc, ref); !ok {
					out = append(out, fmt.Sprintf("%s: $ref %q does not resolve", at, ref))
				}
			}
			for k, c := range x {
				walk(c, at+"/"+k)
			}
		case []any:
			for i, c := range x {
				walk(c, at+"/"+strconv.Itoa(i))
			}
		}
	}
	walk(doc, "")
	sort.Strings(out)
	return out
}

// operations calls f for each operation of the document, in a stable order.
func operations(doc map[string]any, f func(route, path string, item, op map[string]any)) {
	paths, _ := doc["paths"].(map[string]any)
	names := make([]string, 0, len(paths))
	for p := range paths {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		item, _ := paths[p].(map[string]any)
		for _, m := range httpMethods {
			if op, ok := item[m].(map[string]any); ok {
				f(strings.ToUpper(m)+" "+p, p, item, op)
			}
		}
	}
}

// incompleteOperations reports operations without a summary, a unique operationId, a tag,
// a success response and a default (error) response.
func incompleteOperations(doc map[string]any) []string {
	var out []string
	ids := map[string]string{}
	operations(doc, func(route, _ string, _, op map[string]any) {
		if s, _ := op["summary"].(string); s == "" {
			out = append(out, route+": no summary")
		}
		id, _ := op["operationId"].(string)
		if id == "" {
			out = append(out, route+": no operationId")
		} else if other, dup := ids[id]; dup {
			out = append(out, fmt.Sprintf("%s: operationId %s is also %s's", route, id, other))
		}
		ids[id] = route
		if tags, _ := op["tags"].([]any); len(tags) == 0 {
			out = append(out, route+": no tags")
		}
		responses, _ := op["responses"].(map[string]any)
		ok2xx := false
		for code := range responses {
			// A redirect is the success of a route that only sends the client on (GET /).
			ok2xx = ok2xx || strings.HasPrefix(code, "2") || strings.HasPrefix(code, "3")
		}
		if !ok2xx {
			out = append(out, route+": no 2xx (or 3xx) response")
		}
		if _, ok := responses["default"]; !ok {
			out = append(out, route+`: no "default" response (#/components/responses/Error)`)
		}
	})
	return out
}

var templateParam = regexp.MustCompile(`\{([^}]+)\}`)

// undeclaredPathParams reports path template parameters without a required path parameter
// declared for them, and declared path parameters the template does not have.
func undeclaredPathParams(doc map[string]any) []string {
	var out []string
	operations(doc, func(route, path string, item, op map[string]any) {
		var want []string
		for _, m := range templateParam.FindAllStringSubmatch(path, -1) {
			want = append(want, m[1])
		}
		declared := map[string]bool{}
		params, _ := item["parameters"].([]any)
		opParams, _ := op["parameters"].([]any)
		for _, p := range append(slices.Clone(params), opParams...) {
			pm, _ := deref(doc, p).(map[string]any)
			if pm["in"] != "path" {
				continue
			}
			name, _ := pm["name"].(string)
			if req, _ := pm["required"].(bool); !req {
				out = append(out, fmt.Sprintf("%s: path parameter %s is not required", route, name))
			}
			if !slices.Contains(want, name) {
				out = append(out, fmt.Sprintf("%s: path parameter %s is not in the path", route, name))
			}
			declared[name] = true
		}
		for _, name := range want {
			if !declared[name] {
				out = append(out, fmt.Sprintf("%s: path parameter %s is not declared", route, name))
			}
		}
	})
	return out
}

// problemTypeDrift compares the Problem schema's enums with what the error mapper makes.
func problemTypeDrift(doc map[string]any) []string {
	types, reasons := api.ProblemTypes()
	types = append(types, "about:blank")
	var out []string
	for _, c := range []struct {
		ref  string
		want []string
	}{
		{"#/components/schemas/Problem/properties/type/enum", types},
		{"#/components/schemas/Problem/properties/reason/enum", reasons},
	} {
		v, _ := lookup(doc, c.ref)
		list, _ := v.([]any)
		got := make([]string, 0, len(list))
		for _, x := range list {
			s, _ := x.(string)
			got = append(got, s)
		}
		sort.Strings(got)
		want := slices.Clone(c.want)
		sort.Strings(want)
		if diff := cmp.Diff(want, got); diff != "" {
			out = append(out, fmt.Sprintf("%s differs from the error mapper (-mapper +document):\n%s", c.ref, diff))
		}
	}
	return out
}

// bountyActionDrift compares the action enum of POST /v1/bounties/{id}/{action} with the
// actions the route takes.
func bountyActionDrift(doc map[string]any) []string {
	const ref = "#/paths/~1v1~1bounties~1{id}~1{action}/post/parameters/1"
	param, _ := lookup(doc, ref)
	p, _ := param.(map[string]any)
	schema, _ := p["schema"].(map[string]any)
	list, _ := schema["enum"].([]any)
	if p["name"] != "action" || len(list) == 0 {
		return []string{ref + " is not the action parameter with an enum"}
	}
	got := make([]string, 0, len(list))
	for _, x := range list {
		s, _ := x.(string)
		got = append(got, s)
	}
	sort.Strings(got)
	if diff := cmp.Diff(api.BountyActions(), got); diff != "" {
		return []string{fmt.Sprintf("the action enum differs from the route's actions (-route +document):\n%s", diff)}
	}
	return nil
}
