// Package conformance generates and checks the protocol's conformance vectors,
// testdata/conformance/<kind>/<name>.json: one signed object (or key, or DID) each, with what
// its verifier is told besides it (the context: time, audience, chain, revoked DIDs, nonces
// already seen) and the verdict every implementation must reach (valid, with the facts it
// derives, or the exact problem type a node's API answers for the refusal).
//
// Each kind registers a generator and a checker (Register, in a file of its own); the
// generator is deterministic (fixed seeds, fixed times), so regenerating gives the same bytes
// and TestVectors fails when the committed files drift. Regenerate with
//
//	go test ./internal/conformance -run TestVectors -update
//
// (or go generate ./internal/conformance). The Go checkers run the node's own verification
// code offline; the TypeScript and Python clients run the same files.
package conformance

//go:generate go test . -run TestVectors -update
