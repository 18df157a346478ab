package api_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/surety-ioa/surety/api"
)

// TestCORS: the browsers of listed origins get their preflight answered and may read the
// answers; any other origin's preflight is refused with a problem, and its plain requests
// are served without the header that would let its page read them; "*" lets every origin.
func TestCORS(t *testing.T) {
	const app, other = "https://app.example", "https://evil.example"
	type want struct {
		status      int
		allowOrigin string
		slug        string
	}
	tests := []struct {
		name      string
		origins   []string
		method    string
		origin    string
		preflight bool
		want      want
	}{
		{"no origins: preflight refused", nil, http.MethodOptions, app, true, want{http.StatusForbidden, "", "cors-origin"}},
		{"no origins: a GET is served, unreadable by the page", nil, http.MethodGet, app, false, want{http.StatusOK, "", ""}},
		{"no Origin: nothing changes", []string{app}, http.MethodGet, "", false, want{http.StatusOK, "", ""}},
		{"listed: preflight answered", []string{app}, http.MethodOptions, app, true, want{http.StatusNoContent, app, ""}},
		{"listed, as configured with a slash and capitals", []string{"HTTPS://App.Example/"}, http.MethodOptions, app, true, want{http.StatusNoContent, app, ""}},
		{"listed: GET readable", []string{app}, http.MethodGet, app, false, want{http.StatusOK, app, ""}},
		{"listed: a refusal readable too", []string{app}, http.MethodPost, app, false, want{http.StatusMethodNotAllowed, app, ""}},
		{"another origin: preflight refused", []string{app}, http.MethodOptions, other, true, want{http.StatusForbidden, "", "cors-origin"}},
		{"another origin: GET unreadable", []string{app}, http.MethodGet, other, false, want{http.StatusOK, "", ""}},
		{"any: preflight answered", []string{"*"}, http.MethodOptions, other, true, want{http.StatusNoContent, "*", ""}},
		{"any: GET readable", []string{"*"}, http.MethodGet, other, false, want{http.StatusOK, "*", ""}},
		// An OPTIONS without Access-Control-Request-Method is no preflight: routing answers it.
		{"listed: OPTIONS that is no preflight", []string{app}, http.MethodOptions, app, false, want{http.StatusNoContent, app, ""}},
	}
	ok := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}) // a route that answers 200
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := api.New(api.Config{Blocks: stubBlocks{}, DB: stubDB{}, Identity: stubIdentity{}, CORSOrigins: tt.origins, Explorer: ok})
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest(tt.method, "/explorer/", strings.NewReader("{"))
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			if tt.preflight {
				req.Header.Set("Access-Control-Request-Method", http.MethodPost)
				req.Header.Set("Access-Control-Request-Headers", "content-type, idempotency-key")
			}
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, req)
			if rec.Code != tt.want.status {
				t.Fatalf("status %d, want %d (%s)", rec.Code, tt.want.status, rec.Body)
			}
			h := rec.Header()
			if got := h.Get("Access-Control-Allow-Origin"); got != tt.want.allowOrigin {
				t.Errorf("Access-Control-Allow-Origin = %q, want %q", got, tt.want.allowOrigin)
			}
			if tt.want.slug != "" {
				if p := problemOf(t, rec); !strings.HasSuffix(p.Type, "/"+tt.want.slug) {
					t.Errorf("problem %s, want %s", p.Type, tt.want.slug)
				}
			}
			if h.Get("Access-Control-Allow-Credentials") != "" {
				t.Error("credentials allowed: the API takes none")
			}
			if tt.origin != "" && len(tt.origins) > 0 && tt.origins[0] != "*" && !strings.Contains(h.Get("Vary"), "Origin") {
				t.Errorf("Vary = %q: a cache could hand one origin's answer to another", h.Get("Vary"))
			}
			if tt.preflight && tt.want.status == http.StatusNoContent {
				for _, m := range []string{"GET", "POST", "PUT"} {
					if !strings.Contains(h.Get("Access-Control-Allow-Methods"), m) {
						t.Errorf("Access-Control-Allow-Methods = %q, lacks %s", h.Get("Access-Control-Allow-Methods"), m)
					}
				}
				for _, hd := range []string{"Content-Type", "Idempotency-Key", "Prefer"} {
					if !strings.Contains(h.Get("Access-Control-Allow-Headers"), hd) {
						t.Errorf("Access-Control-Allow-Headers = %q, lacks %s", h.Get("Access-Control-Allow-Headers"), hd)
					}
				}
			}
			if !tt.preflight && tt.want.allowOrigin != "" && !strings.Contains(h.Get("Access-Control-Expose-Headers"), "Location") {
				t.Errorf("Access-Control-Expose-Headers = %q: the page cannot read an async write's Location", h.Get("Access-Control-Expose-Headers"))
			}
		})
	}
}

func TestCORSOriginsAreChecked(t *testing.T) {
	for _, o := range []string{"app.example", "ftp://app.example", "https://app.example/path", "https://", "https://u@app.example", "https://app.example?x=1", ""} {
		if _, err := api.New(api.Config{Blocks: stubBlocks{}, DB: stubDB{}, Identity: stubIdentity{}, CORSOrigins: []string{o}}); err == nil {
			t.Errorf("CORS origin %q accepted", o)
		}
	}
	for _, o := range []string{"*", "http://127.0.0.1:5173", "https://app.example"} {
		if _, err := api.ParseOrigin(o); err != nil {
			t.Errorf("CORS origin %q refused: %v", o, err)
		}
	}
}

// TestExplorerIsMounted: with an explorer, / sends a browser to it and /explorer/... reaches
// it; without, neither is served.
func TestExplorerIsMounted(t *testing.T) {
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Page", r.URL.Path)
	})
	s, err := api.New(api.Config{Blocks: stubBlocks{}, DB: stubDB{}, Identity: stubIdentity{}, Explorer: page})
	if err != nil {
		t.Fatal(err)
	}
	rec := do(t, s.Handler(), http.MethodGet, "/", "text/html", nil)
	if rec.Code != http.StatusFound || rec.Header().Get("Location") != "/explorer/" {
		t.Errorf("GET /: %d → %q, want 302 → /explorer/", rec.Code, rec.Header().Get("Location"))
	}
	for _, p := range []string{"/explorer", "/explorer/", "/explorer/app.js"} {
		if rec := do(t, s.Handler(), http.MethodGet, p, "", nil); rec.Header().Get("X-Page") != p {
			t.Errorf("GET %s did not reach the explorer (%d)", p, rec.Code)
		}
	}
	s, err = api.New(api.Config{Blocks: stubBlocks{}, DB: stubDB{}, Identity: stubIdentity{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/", "/explorer/"} {
		if rec := do(t, s.Handler(), http.MethodGet, p, "", nil); rec.Code != http.StatusNotFound {
			t.Errorf("without an explorer GET %s: %d, want 404", p, rec.Code)
		}
	}
}
