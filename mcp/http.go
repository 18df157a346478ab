package mcp

import (
	"bytes"
	"context"
	"io"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/surety-ioa/surety/api/client"
)

// HTTPConfig assembles the node's /mcp handler.
type HTTPConfig struct {
	// API is the node's own HTTP API: the tools call it in process.
	API http.Handler
	// Version is the node's version, told to clients.
	Version string
}

// callerHeader and hostHeader carry the caller's socket address and the Host it asked for
// from the /mcp request to the tools, which call the API as that request. The handler sets
// both on every request, over whatever the caller sent.
const (
	callerHeader = "Surety-Mcp-Caller"
	hostHeader   = "Surety-Mcp-Host"
)

// NewHandler is /mcp: MCP's streamable HTTP transport, stateless (each request is its own
// session, which ends with it, so a caller holds no node memory between requests), with
// JSON answers (no event streams: GET is 405). The tools reach the node's API in process,
// as the caller (its client address), so every quota of the API counts the caller's tool
// calls as its own requests; no key is held: a write takes the caller's signed envelope.
// The API bounds the route's body, requests in flight and time (api.Server.MountMCP).
func NewHandler(cfg HTTPConfig) http.Handler {
	srv := New(Config{Version: cfg.Version, nodeFor: func(extra *sdk.RequestExtra) *client.Client {
		return inProcessClient(cfg.API, extra)
	}})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{
		Stateless: true, JSONResponse: true, MaxRequestBodyBytes: MaxRequestBody,
		// The node's API listens where its operator says; a DNS-rebinding page reaches no
		// more through /mcp than through the API itself, and there is no key to steal.
		DisableLocalhostProtection: true,
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), RequestTimeout)
		defer cancel()
		r = r.WithContext(ctx)
		r.Header.Set(callerHeader, r.RemoteAddr)
		r.Header.Set(hostHeader, r.Host)
		h.ServeHTTP(w, r)
	})
}

// inProcessClient is an API client that calls api in process, as the caller the request's
// extra names (its socket address and forwarding header).
func inProcessClient(api http.Handler, extra *sdk.RequestExtra) *client.Client {
	t := &inProcess{api: api}
	if extra != nil && extra.Header != nil {
		t.remote, t.host, t.forwarded = extra.Header.Get(callerHeader), extra.Header.Get(hostHeader), extra.Header.Values("X-Forwarded-For")
	}
	c, err := client.New("http://surety-node.invalid")
	if err != nil {
		panic(err) // a constant URL
	}
	return c.WithHTTP(&http.Client{Transport: t, Timeout: RequestTimeout})
}

// inProcess is an http.RoundTripper that serves each request with the node's API handler.
type inProcess struct {
	api          http.Handler
	remote, host string
	forwarded    []string
}

func (t *inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.RemoteAddr = t.remote
	if r.RemoteAddr == "" {
		r.RemoteAddr = "0.0.0.0:0" // no caller known: counted as one unknown address
	}
	r.Header.Del("X-Forwarded-For")
	for _, v := range t.forwarded {
		r.Header.Add("X-Forwarded-For", v)
	}
	if t.host != "" {
		r.Host = t.host // what the API builds its own URLs from (without --public-url)
	}
	r.RequestURI = r.URL.RequestURI()
	if r.Body == nil {
		r.Body = http.NoBody
	}
	w := &recorder{header: http.Header{}, status: http.StatusOK}
	t.api.ServeHTTP(w, r)
	return &http.Response{
		StatusCode: w.status, Status: http.StatusText(w.status), Header: w.header,
		Body: io.NopCloser(bytes.NewReader(w.body.Bytes())), ContentLength: int64(w.body.Len()),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Request: req,
	}, nil
}

// recorder is the http.ResponseWriter of an in-process call: the API's answers are bounded
// by what it writes (the client reads at most 8 MiB of them).
type recorder struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(status int) {
	if !w.wrote {
		w.status, w.wrote = status, true
	}
}

func (w *recorder) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}

// Flush lets handlers that flush (event streams) run; the tools call none.
func (w *recorder) Flush() {}

var _ http.Flusher = (*recorder)(nil)
