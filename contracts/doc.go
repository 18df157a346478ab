// Package contracts holds Surety's Solidity contracts (src/, test/, script/ beside this file),
// their Go bindings generated with abigen v2 from the committed artifacts, and the deployer
// that puts every contract on a chain and describes where it went (a Deployment).
//
// The bindings are generated, committed, and checked for drift by TestBindingsUpToDate and
// TestArtifactsMatchSolidity.
package contracts

//go:generate go run ./internal/bindgen/cmd/bindgen -root ..
