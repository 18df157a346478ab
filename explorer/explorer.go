package explorer

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed dist
var dist embed.FS

// Prefix is the path the explorer is served under.
const Prefix = "/explorer/"

// csp allows the page its own scripts, styles, images and API calls, and nothing else: no
// CDN, no external font, no inline script, no framing by another site.
const csp = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; " +
	"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'"

// asset is one file of the bundle with the validators it is served with.
type asset struct {
	body  []byte
	ctype string
	etag  string
	// hash is what index.html puts in the file's ?h= query: a request that carries it may
	// be cached for a year, since another build names another hash.
	hash string
}

// Handler serves the bundle: index.html at /explorer/ (and /explorer), app.js and app.css
// beside it. Only GET and HEAD; anything else under /explorer/ is 404.
func Handler() http.Handler {
	assets := map[string]*asset{}
	err := fs.WalkDir(dist, "dist", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := dist.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		assets[strings.TrimPrefix(p, "dist/")] = &asset{
			body:  b,
			ctype: contentType(p),
			etag:  `"` + hex.EncodeToString(sum[:12]) + `"`,
			hash:  hex.EncodeToString(sum[:])[:16],
		}
		return nil
	})
	if err != nil {
		panic("explorer: embedded bundle unreadable: " + err.Error()) // the build embeds it
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if r.URL.Path == strings.TrimSuffix(Prefix, "/") {
			http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
			return
		}
		name, ok := strings.CutPrefix(r.URL.Path, Prefix)
		if !ok {
			http.NotFound(w, r)
			return
		}
		if name == "" {
			name = "index.html"
		}
		a := assets[path.Clean(name)]
		if a == nil {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", a.ctype)
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("ETag", a.etag)
		if v := r.URL.Query().Get("h"); v != "" && v == a.hash {
			h.Set("Cache-Control", "public, max-age="+maxAge+", immutable")
		} else {
			h.Set("Cache-Control", "no-cache")
		}
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(a.body))
	})
}

func contentType(p string) string {
	switch path.Ext(p) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	}
	return "application/octet-stream"
}
