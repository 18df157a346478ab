// Package api serves Surety's HTTP JSON API with echo: the routes, request logging, and (in
// errors.go) the one error mapper that turns every error into an RFC 9457 problem+json reply
// with a constant, safe message.
//
// Handlers depend on small interfaces declared here, beside their use; cmd/surety wires the
// implementations in.
//
// openapi.json, written by hand and served at GET /v1/openapi.json, describes every route;
// TestOpenAPICoversEveryRoute fails when a route is registered without being described there,
// or described without being registered.
package api
