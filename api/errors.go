package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"
)

// Sentinel errors that handlers return; the mapper below gives each its status.
var (
	// ErrChainUnavailable reports that the chain did not answer a read.
	ErrChainUnavailable = errors.New("api: chain unavailable")
	// ErrUnhealthy reports a failed health check.
	ErrUnhealthy = errors.New("api: node unhealthy")
)

// Problem is an RFC 9457 problem details document.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	// Instance is the request path the problem occurred on.
	Instance string `json:"instance,omitempty"`
}

// problemType is the base of the type URIs of Surety's problems.
const problemType = "https://surety.dev/problems/"

// mapping gives the status and the constant, safe title and detail of an error class.
type mapping struct {
	err    error
	status int
	slug   string
	title  string
}

// mappings is checked in order with errors.Is; the first match wins.
var mappings = []mapping{
	{ErrChainUnavailable, http.StatusServiceUnavailable, "chain-unavailable", "The chain did not answer; try again shortly"},
	{ErrUnhealthy, http.StatusServiceUnavailable, "unhealthy", "The node is not healthy"},
	{context.DeadlineExceeded, http.StatusGatewayTimeout, "timeout", "The request took too long"},
}

// problemFor maps err to the problem returned to the client. Messages come from the table
// (or echo's own HTTP errors for routing and binding), never from err's text, so internal
// detail does not leak; the caller logs err itself.
func problemFor(err error) Problem {
	var he *echo.HTTPError
	if errors.As(err, &he) {
		p := Problem{Type: "about:blank", Status: he.Code, Title: http.StatusText(he.Code)}
		if msg, ok := he.Message.(string); ok && he.Code < 500 && msg != p.Title {
			p.Detail = msg
		}
		return p
	}
	for _, m := range mappings {
		if errors.Is(err, m.err) {
			return Problem{Type: problemType + m.slug, Title: m.title, Status: m.status}
		}
	}
	return Problem{Type: problemType + "internal", Title: "Internal error", Status: http.StatusInternalServerError}
}

// errorHandler is echo's HTTPErrorHandler for the server: the single place errors become
// HTTP responses.
func errorHandler(log *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		p := problemFor(err)
		p.Instance = c.Request().URL.Path
		if p.Status >= 500 {
			log.Error("request failed", "method", c.Request().Method, "path", p.Instance, "status", p.Status, "err", err)
		}
		c.Response().Header().Set(echo.HeaderContentType, "application/problem+json")
		if c.Request().Method == http.MethodHead {
			_ = c.NoContent(p.Status)
			return
		}
		_ = c.JSON(p.Status, p)
	}
}
