package api

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

// openAPIDocument is the OpenAPI 3.1 description of every route New can register, written by
// hand. TestOpenAPICoversEveryRoute fails when a route is served but not described, or
// described but not served.
//
//go:embed openapi.json
var openAPIDocument []byte

// openAPI serves the document as it is: it lists the optional routes too, whether or not this
// node registered them (the document's tags say when each group is present).
func (s *Server) openAPI(c echo.Context) error {
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, openAPIDocument)
}
