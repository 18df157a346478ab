// Package repotest holds the tests that guard the shape of the whole repository: imports
// flow one way (identity ← registry/reputation/escrow ← api ← cmd), and every package has
// exactly one package comment and a doc comment on every exported name.
package repotest
