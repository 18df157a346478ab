package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"

	"github.com/labstack/echo/v4"
)

// Routes lists the routes s registers, echo's own "route not found" entries included, for
// the tests that hold openapi.json to the server.
func (s *Server) Routes() []*echo.Route { return s.echo.Routes() }

// ProblemTypes lists the type URIs of the problems the mapper makes (echo's about:blank
// aside) and the reasons of envelope refusals.
func ProblemTypes() (types, reasons []string) {
	types = []string{problemType + "internal"}
	for _, m := range mappings {
		types = append(types, problemType+m.slug)
		if m.reason != "" {
			reasons = append(reasons, m.reason)
		}
	}
	slices.Sort(types) // several errors may share a problem type
	slices.Sort(reasons)
	return slices.Compact(types), slices.Compact(reasons)
}

// The body caps of limits.go, and the budget of pages of the log's leaves.
const (
	MaxBody       = maxBody
	MaxSpecBody   = maxSpecBody
	LeafPageBurst = leafPageBurst
	SearchBurst   = searchBurst
)

// StreamWriteTimeout bounds each write of a search's event stream.
const StreamWriteTimeout = streamWriteTimeout

// HandleUncapped routes method path to a handler that reads the whole body with no cap of
// its own, as one that forgot readBody would: the server's middleware alone stands between
// it and a body of any size. It answers 204, or the problem its read ends in.
func (s *Server) HandleUncapped(method, path string) {
	s.echo.Add(method, path, func(c echo.Context) error {
		if _, err := io.ReadAll(c.Request().Body); err != nil {
			return bodyError(err)
		}
		return c.NoContent(http.StatusNoContent)
	})
}

// ReadBody reads body as the handlers read theirs (readBody), with no middleware in front:
// their own cap alone.
func ReadBody(body io.Reader) ([]byte, error) {
	return readBody(echo.New().NewContext(httptest.NewRequest(http.MethodPost, "/", body), httptest.NewRecorder()))
}

// BountyActions lists the actions POST /v1/bounties/{id}/{action} takes.
func BountyActions() []string {
	out := make([]string, 0, len(actions))
	for name := range actions {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// ClientKey is clientKey: the client an address stands for in every per-address quota.
var ClientKey = clientKey
