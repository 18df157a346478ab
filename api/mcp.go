package api

import (
	"bytes"
	"io"
	"net/http"
	"sync/atomic"

	"github.com/labstack/echo/v4"
)

// mcpCount counts the /mcp requests in flight across addresses; mounted says MountMCP ran
// (the node's A2A card then names /mcp among its interfaces).
type mcpCount struct {
	n       atomic.Int64
	mounted atomic.Bool
}

// MountMCP serves h (the node's MCP endpoint, mcp.NewHandler) at POST /mcp, which carries
// MCP messages; a stateless server offers no event stream (GET) and keeps no session
// (DELETE), so those are 405 here. Each request
// passes the API's edge like any other (the write rate for POST, the body limit
// maxMCPBody, the handler timeout), and is bounded in flight: maxMCPPerAddress per client
// address (429 too-many-in-flight) and, once its body is read, maxMCPRequests in all (503
// mcp-busy).
func (s *Server) MountMCP(h http.Handler) {
	handler := echo.WrapHandler(h)
	serve := func(c echo.Context) error {
		leave, ok := s.inFlight.enter("mcp "+c.RealIP(), maxMCPPerAddress)
		if !ok {
			return withDetail(ErrTooManyInFlight, "at most %d MCP requests in flight from one address", maxMCPPerAddress)
		}
		defer leave()
		req := c.Request()
		if req.Body != nil {
			body, err := io.ReadAll(req.Body)
			if err != nil {
				return bodyError(err)
			}
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		if s.mcp.n.Add(1) > maxMCPRequests {
			s.mcp.n.Add(-1)
			return withDetail(ErrMCPBusy, "at most %d MCP requests at once", maxMCPRequests)
		}
		defer s.mcp.n.Add(-1)
		return handler(c)
	}
	s.echo.POST("/mcp", serve)
	s.mcp.mounted.Store(true)
}
