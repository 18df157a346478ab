package api

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
)

// The headers a browser on another origin may send, and read, beyond the CORS-safelisted
// ones: those the API's routes use (Prefer: respond-async, Idempotency-Key on writes,
// Last-Event-ID on the event streams; Location, Retry-After and Preference-Applied in the
// answers).
const (
	corsAllowMethods  = "GET, HEAD, POST, PUT"
	corsAllowHeaders  = "Content-Type, Idempotency-Key, Prefer, Last-Event-ID"
	corsExposeHeaders = "Location, Retry-After, Preference-Applied, ETag"
)

// ParseOrigin checks one --cors-origin value: "*" (any origin), or an origin as a browser
// sends it (scheme://host[:port], http or https, no path). It returns the origin in the form
// browsers send.
func ParseOrigin(s string) (string, error) {
	if s == "*" {
		return s, nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("CORS origin %q: want * or scheme://host[:port] (http or https, no path)", s)
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}

// cors lets the browsers of the listed origins call the API (answering their preflight
// OPTIONS requests, and naming their origin in Access-Control-Allow-Origin): another front
// end may then be a client of the node, as the explorer is on the node's own origin. "*"
// lets every origin. No credentials are allowed: the API's writes carry signed envelopes,
// never cookies. A preflight from an origin not listed is refused (403) before routing; a
// plain request from one is served as to any client (CORS only decides whether its browser
// lets the page read the answer). It runs before routing, so a preflight costs the node
// nothing but this check.
func cors(origins []string) echo.MiddlewareFunc {
	any := slices.Contains(origins, "*")
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			origin := req.Header.Get("Origin")
			if origin == "" {
				return next(c)
			}
			h := c.Response().Header()
			allowed := any || slices.Contains(origins, strings.ToLower(origin))
			if !any {
				h.Add("Vary", "Origin")
			}
			preflight := req.Method == http.MethodOptions && req.Header.Get("Access-Control-Request-Method") != ""
			if !allowed {
				if preflight {
					return withDetail(ErrOriginNotAllowed, "the node answers browsers from the origins its operator listed (surety node --cors-origin); %q is not one", origin)
				}
				return next(c)
			}
			if any {
				h.Set("Access-Control-Allow-Origin", "*")
			} else {
				h.Set("Access-Control-Allow-Origin", origin)
			}
			if preflight {
				h.Set("Access-Control-Allow-Methods", corsAllowMethods)
				h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
				h.Set("Access-Control-Max-Age", corsMaxAge)
				return c.NoContent(http.StatusNoContent)
			}
			h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
			return next(c)
		}
	}
}
