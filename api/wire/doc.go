// Package wire holds the request and response bodies of a Surety node's HTTP API, and the
// envelope bodies its signed writes carry: the types the server (package api) and its typed
// client (package api/client) exchange, and that any program speaking to a node can import.
//
// It imports nothing of the node: no network stack, no database, no cgo (only the standard
// library, go-ethereum's common types, the log's hash type, reputation/merkle, and the A2A card
// types of package a2a, which link only the standard library), so a client
// links none of what a node runs. internal/repotest's TestClientLinksNoNode holds it to that.
//
// api/openapi.json is the contract. Where the server answers with a type of a node package
// (registry.Agent, escrow.Bounty, reputation.Reputation, ...), the type here of the same name
// is its wire shape, with the same JSON: api's TestWireMirrorsDomainTypes fails when one drifts
// from the other, and TestClientBodiesHoldToOpenAPI checks the client's bodies against the
// document and decodes the node's real answers into these types without losing a field.
package wire
