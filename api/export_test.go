package api

import (
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

// BountyActions lists the actions POST /v1/bounties/{id}/{action} takes.
func BountyActions() []string {
	out := make([]string, 0, len(actions))
	for name := range actions {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}
