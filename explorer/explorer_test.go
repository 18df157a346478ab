package explorer

import (
	"bytes"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/surety-ioa/surety/internal/testutil"
)

// TestBundleIsBuilt rebuilds the bundle from web/ with the pinned esbuild into a temporary
// directory and compares it, byte for byte, with the committed dist/ that the binary embeds:
// a source changed without `make explorer` fails here. Without node or web/node_modules it
// skips, and fails in CI (make test installs them).
func TestBundleIsBuilt(t *testing.T) {
	missing := func(format string, args ...any) {
		t.Helper()
		if testutil.InCI() {
			t.Fatalf(format+" (CI must have it: make test installs it)", args...)
		}
		t.Skipf("skipping: "+format, args...)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node (Node.js 20+) is not installed: %v", err)
	}
	if _, err := os.Stat(filepath.Join("web", "node_modules", "esbuild", "package.json")); err != nil {
		missing("web/node_modules is not installed (make tools, or cd explorer/web && npm ci)")
	}
	out := t.TempDir()
	cmd := exec.Command(node, "build.mjs", out)
	cmd.Dir = "web"
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, b)
	}
	built := files(t, os.DirFS(out))
	committed := files(t, os.DirFS("dist"))
	for name, b := range built {
		c, ok := committed[name]
		switch {
		case !ok:
			t.Errorf("dist/%s is missing: run make explorer", name)
		case !bytes.Equal(b, c):
			t.Errorf("dist/%s differs from a build of web/ (%d bytes built, %d committed): run make explorer", name, len(b), len(c))
		}
	}
	for name := range committed {
		if _, ok := built[name]; !ok {
			t.Errorf("dist/%s is not built from web/ any more: run make explorer", name)
		}
	}
}

func files(t *testing.T, fsys fs.FS) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		m[p] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestHandlerServesTheBundle: the page, its assets under their content hash (kept a year),
// the same asset under another hash not kept, the CSP on everything, nothing outside the
// bundle, and no reference in it to another origin.
func TestHandlerServesTheBundle(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	get := func(method, path string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := (&http.Transport{}).RoundTrip(req) // no redirects followed
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	res := get("GET", "/explorer/")
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("/explorer/: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if got := res.Header.Get("Content-Security-Policy"); !strings.HasPrefix(got, "default-src 'self'") {
		t.Errorf("CSP = %q", got)
	}
	if got := res.Header.Get("Cache-Control"); got != "no-cache" {
		t.Errorf("index.html Cache-Control = %q, want no-cache", got)
	}
	var page bytes.Buffer
	page.ReadFrom(res.Body)
	refs := regexp.MustCompile(`(?:src|href)="(app\.(?:js|css)\?h=[0-9a-f]{16})"`).FindAllStringSubmatch(page.String(), -1)
	if len(refs) != 2 {
		t.Fatalf("index.html names %d hashed assets, want app.js and app.css:\n%s", len(refs), page.String())
	}
	for _, ref := range refs {
		res := get("GET", "/explorer/"+ref[1])
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d", ref[1], res.StatusCode)
		}
		if got := res.Header.Get("Cache-Control"); !strings.Contains(got, "max-age="+maxAge) || !strings.Contains(got, "immutable") {
			t.Errorf("%s Cache-Control = %q, want a year, immutable", ref[1], got)
		}
		stale := strings.Split(ref[1], "?")[0] + "?h=0000000000000000"
		if got := get("GET", "/explorer/"+stale).Header.Get("Cache-Control"); got != "no-cache" {
			t.Errorf("%s Cache-Control = %q, want no-cache for a hash that is not the file's", stale, got)
		}
	}
	if res := get("GET", "/explorer"); res.StatusCode != http.StatusMovedPermanently || res.Header.Get("Location") != "/explorer/" {
		t.Errorf("/explorer: %d → %q", res.StatusCode, res.Header.Get("Location"))
	}
	for _, p := range []string{"/explorer/nope.js", "/explorer/../go.mod", "/explorer/dist/app.js", "/other"} {
		if res := get("GET", p); res.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, res.StatusCode)
		}
	}
	if res := get("POST", "/explorer/"); res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /explorer/: %d, want 405", res.StatusCode)
	}
	// Offline: nothing in the bundle loads from elsewhere (the CSP would block it anyway,
	// and the page would break).
	for name, b := range files(t, os.DirFS("dist")) {
		if m := regexp.MustCompile(`(?:src|href|url\()\s*=?\s*["']?(?:https?:)?//`).Find(b); m != nil {
			t.Errorf("dist/%s loads from another origin: %q", name, m)
		}
	}
}
