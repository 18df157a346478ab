package repotest

import (
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"
)

// Module is the module path whose packages are checked.
const Module = "github.com/surety-ioa/surety"

// allowed lists, for each group (a top-level directory, or one package under internal/),
// the groups its packages may import besides their own. It is the design's import direction:
//
//	internal/*                     (the bottom: a few of them build on others)
//	identity, contracts            (internal/sqlite, internal/chain; no network code)
//	explorer                       (the web page bundle the node serves; imports nothing of ours)
//	groups, registry, reputation   (identity, contracts, internal/p2p; never each other)
//	txn                            (internal/chain, internal/sqlite: it knows no contract)
//	escrow, stake, jobs, erc8004   (identity, contracts, txn, the chain log follower)
//	api                            (all of the above but internal/p2p: it serves, never gossips)
//	testnet                        (contracts and the bottom)
//	node                           (all of the above but testnet: it assembles a node)
//	mcp                            (a client of the API: api/client, api/wire, identity to
//	                               sign, reputation/verify to check proofs; its tests start a node)
//	demo                           (node, and what a client links: api/client, api/wire, the
//	                               signed objects' packages, the chain; never testnet)
//	testnet/e2e                    (testnet and what its tests talk to: node processes, never node code)
//	cmd                            (anything)
//
// Domain packages never import each other: they meet through interfaces that node wires.
// internal/testutil (test helpers) may be imported by any package's tests.
var allowed = map[string][]string{
	"internal/sqlite":     {},
	"internal/chain":      {},
	"internal/tools":      {},
	"internal/p2p":        {},
	"internal/anvil":      {},
	"internal/benchtable": {},
	"internal/units":      {},
	"internal/memlimit":   {},
	"internal/jcs":        {},
	"a2a":                 {"internal/jcs"},
	"explorer":            {},
	"internal/chainlog":   {"internal/sqlite", "internal/chain"},
	"internal/benchref":   {"internal/sqlite"},
	"internal/repotest":   {"internal/tools"},
	// internal/testutil/apitest is the test client of whole nodes: a node's wire types, its
	// escrow's answers, envelopes signed with identity.
	"internal/testutil": {"api", "escrow", "identity", "internal/anvil", "internal/chain", "internal/sqlite", "internal/tools"},
	// conformance generates and checks the protocol's vectors with the node's own code: the
	// signed objects' packages, and api for the problem type each refusal is answered with.
	"internal/conformance": {"a2a", "api", "identity", "groups", "registry", "reputation", "stake", "contracts", "internal/tools", "internal/chain", "internal/sqlite", "internal/units"},
	"identity":             {"internal/jcs", "internal/sqlite"},
	"contracts":            {"internal/chain", "internal/tools", "internal/units"},
	"groups":               {"identity", "internal/p2p", "internal/sqlite"},
	"registry":             {"a2a", "identity", "contracts", "internal/p2p", "internal/sqlite", "internal/chain", "internal/units"},
	"reputation":           {"identity", "contracts", "internal/p2p", "internal/sqlite", "internal/chain", "internal/units", "internal/memlimit"},
	"txn":                  {"internal/chain", "internal/sqlite"},
	"escrow":               {"txn", "identity", "contracts", "internal/chain", "internal/chainlog", "internal/sqlite", "internal/tools", "internal/units"},
	"stake":                {"txn", "identity", "contracts", "internal/chain", "internal/chainlog", "internal/sqlite", "internal/units"},
	"jobs":                 {"txn", "contracts", "internal/chain", "internal/chainlog", "internal/sqlite", "internal/units"},
	"erc8004":              {"txn", "contracts", "internal/chain", "internal/chainlog", "internal/sqlite"},
	"api":                  {"a2a", "txn", "identity", "groups", "contracts", "registry", "reputation", "escrow", "stake", "jobs", "erc8004", "internal/chain", "internal/sqlite", "internal/units"},
	"testnet":              {"identity", "contracts", "internal/anvil", "internal/chain", "internal/units"},
	"mcp":                  {"api", "identity", "reputation"},
	// auditor recomputes a node's scores from its log and a chain the auditor names, with
	// the node's own indexers and engine; node runs it to publish the scores it checks.
	"auditor":     {"api", "identity", "contracts", "reputation", "escrow", "stake", "erc8004", "internal/chain", "internal/chainlog", "internal/sqlite", "internal/units"},
	"node":        {"auditor", "explorer", "mcp", "a2a", "api", "txn", "identity", "groups", "contracts", "registry", "reputation", "escrow", "stake", "jobs", "erc8004", "internal/chain", "internal/p2p", "internal/sqlite", "internal/units"},
	"demo":        {"a2a", "node", "api", "identity", "groups", "registry", "reputation", "contracts", "internal/chain", "internal/p2p", "internal/units"},
	"testnet/e2e": {"auditor", "a2a", "testnet", "api", "identity", "groups", "contracts", "registry", "reputation", "escrow", "internal/chain", "internal/p2p", "internal/units"},
	"cmd":         {"*"},
}

// narrowed limits, for a group, which packages of a group allowed to it it may import: the
// demo reaches its node through the typed API client and the wire types, like any other
// client, never through the server's package.
var narrowed = map[string]map[string][]string{
	"demo":    {"api": {"api/client", "api/wire"}},
	"mcp":     {"api": {"api/client", "api/wire"}, "reputation": {"reputation/verify", "reputation/merkle"}},
	"auditor": {"api": {"api/client", "api/wire"}},
}

// allowedInTests adds, for a group, what its tests may import besides allowed: txn knows no
// contract, but its tests send to real ones.
var allowedInTests = map[string][]string{"txn": {"contracts"}, "mcp": {"node", "registry", "internal/chain", "internal/p2p"},
	// The whole-API fuzz serves the real explorer, so its routes are held to openapi.json.
	"api": {"explorer"},
	// The feedback source's test gives ERC-8004 feedback from dev wallets.
	"auditor": {"txn"}}

// pure are packages that link no network code: a verifier or a wallet tool can use them
// without pulling in libp2p.
var pure = []string{"identity", "reputation/merkle", "reputation/verify", "contracts"}

// standalone are packages an auditor links on their own, held tighter than pure: besides the
// standard library they may depend only on the module paths listed (no cgo, no SQLite, no
// HTTP server, no chain client, nothing else of Surety's).
var standalone = map[string][]string{
	"reputation/verify": {
		Module + "/reputation/merkle",
		"github.com/decred/dcrd/dcrec/secp256k1/v4", // pure Go, for ES256K node keys
		"github.com/mr-tron/base58",                 // did:key
	},
}

// networkCode are the import path prefixes pure packages may not depend on, even indirectly.
var networkCode = []string{"github.com/libp2p/", Module + "/internal/p2p"}

// client are the packages a program that only calls a node links (the typed API client and
// its wire types): they depend on no node code (nodeCode), no cgo outside the standard
// library, and of this module only on clientMayLink.
var client = []string{"api/client", "api/wire"}

// clientMayLink are the module's packages the client packages may depend on: each other and
// the log's hash type, which an auditor links anyway.
var clientMayLink = []string{"api/client", "api/wire", "reputation/merkle", "a2a", "internal/jcs"}

// nodeCode are the import path prefixes of what a node runs and a client does not: the
// network stack (libp2p, go-ethereum's p2p and eth), the database (go-sqlite3, cgo), the
// HTTP server (echo) and the chain (go-ethereum's core, node and RPC clients).
var nodeCode = []string{
	"github.com/libp2p/", "github.com/mattn/go-sqlite3", "github.com/labstack/echo",
	"github.com/ethereum/go-ethereum/core", "github.com/ethereum/go-ethereum/p2p", "github.com/ethereum/go-ethereum/eth",
	"github.com/ethereum/go-ethereum/node", "github.com/ethereum/go-ethereum/rpc",
}

// Package is what the checks need to know of one package, as `go list -json` reports it.
type Package struct {
	ImportPath   string
	Name         string
	Dir          string
	Standard     bool
	GoFiles      []string
	CgoFiles     []string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Deps         []string
}

// ListPackages runs `go list -json ./...` in dir (the repository root).
func ListPackages(dir string) ([]Package, error) {
	return goList(dir, "./...")
}

// ListClientDeps lists the client packages and everything they depend on (`go list -deps
// -json`), run in dir (the repository root).
func ListClientDeps(dir string) ([]Package, error) {
	args := []string{"-deps"}
	for _, c := range client {
		args = append(args, Module+"/"+c)
	}
	return goList(dir, args...)
}

// goList runs `go list -json args...` in dir.
func goList(dir string, args ...string) ([]Package, error) {
	cmd := exec.Command("go", append([]string{"list", "-json"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return nil, fmt.Errorf("go list: %v: %s", err, ee.Stderr)
		}
		return nil, fmt.Errorf("go list: %w", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []Package
	for {
		var p Package
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// group is the top-level directory of a package in the module (internal/X for the packages
// under internal, testnet/e2e for the multi-node tests), or "" outside it.
func group(importPath string) string {
	rest, ok := strings.CutPrefix(importPath, Module+"/")
	if !ok {
		return ""
	}
	parts := strings.SplitN(rest, "/", 3)
	if parts[0] == "internal" && len(parts) > 1 {
		return "internal/" + parts[1]
	}
	if parts[0] == "testnet" && len(parts) > 1 && parts[1] == "e2e" {
		return "testnet/e2e" // the multi-node tests, above the network they run
	}
	return parts[0]
}

// ImportViolations lists every import (test imports included) that runs against the
// direction in allowed, and every package in a top-level directory the rules do not know.
func ImportViolations(pkgs []Package) []string {
	var out []string
	for _, p := range pkgs {
		from := group(p.ImportPath)
		ok, known := allowed[from]
		if !known {
			out = append(out, fmt.Sprintf("%s: top-level directory %q has no import rule (add it to allowed)", p.ImportPath, from))
			continue
		}
		imports := append(append(append([]string{}, p.Imports...), p.TestImports...), p.XTestImports...)
		for _, imp := range imports {
			to := group(imp)
			testOnly := !contains(p.Imports, imp)
			if only, ok := narrowed[from][to]; ok && !contains(only, strings.TrimPrefix(imp, Module+"/")) {
				out = append(out, fmt.Sprintf("%s imports %s: %s may import only %s of %s", p.ImportPath, imp, from, strings.Join(only, ", "), to))
				continue
			}
			if to == "" || to == from || contains(ok, to) || contains(ok, "*") || testOnly && (to == "internal/testutil" || contains(allowedInTests[from], to)) {
				continue
			}
			out = append(out, fmt.Sprintf("%s imports %s: %s may not import %s", p.ImportPath, imp, from, to))
		}
	}
	sort.Strings(out)
	return dedupe(out)
}

// PureViolations lists every dependency of a pure package (see pure) on network code.
func PureViolations(pkgs []Package) []string {
	var out []string
	for _, p := range pkgs {
		rel, _ := strings.CutPrefix(p.ImportPath, Module+"/")
		if !contains(pure, rel) {
			continue
		}
		for _, d := range p.Deps {
			for _, prefix := range networkCode {
				if strings.HasPrefix(d, prefix) {
					out = append(out, fmt.Sprintf("%s depends on %s: it must link no network code", p.ImportPath, d))
					break
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// StandaloneViolations lists every dependency of a standalone package outside the standard
// library and its allowed list, and every cgo file it links.
func StandaloneViolations(pkgs []Package) []string {
	var out []string
	for _, p := range pkgs {
		rel, _ := strings.CutPrefix(p.ImportPath, Module+"/")
		ok, isStandalone := standalone[rel]
		if !isStandalone {
			continue
		}
		if len(p.CgoFiles) > 0 {
			out = append(out, fmt.Sprintf("%s has cgo files: a verifier builds without a C compiler", p.ImportPath))
		}
	deps:
		for _, d := range p.Deps {
			if first, _, _ := strings.Cut(d, "/"); !strings.Contains(first, ".") {
				continue // the standard library
			}
			for _, a := range ok {
				if d == a || strings.HasPrefix(d, a+"/") {
					continue deps
				}
			}
			out = append(out, fmt.Sprintf("%s depends on %s: an auditor links it alone, with the standard library and %v only", p.ImportPath, d, ok))
		}
	}
	sort.Strings(out)
	return out
}

// ClientViolations lists every dependency of a client package (see client) on node code, on a
// module package outside clientMayLink, and every package outside the standard library in
// their closure that uses cgo. deps are the client packages and their dependencies, as
// ListClientDeps lists them.
func ClientViolations(deps []Package) []string {
	var out []string
	for _, p := range deps {
		if !p.Standard && len(p.CgoFiles) > 0 {
			out = append(out, fmt.Sprintf("%s uses cgo: the client packages must link none", p.ImportPath))
		}
		rel, ok := strings.CutPrefix(p.ImportPath, Module+"/")
		if !ok || !contains(client, rel) {
			continue
		}
		for _, d := range p.Deps {
			if dr, ok := strings.CutPrefix(d, Module+"/"); ok && !contains(clientMayLink, dr) {
				out = append(out, fmt.Sprintf("%s depends on %s: a client links no module package but %s", p.ImportPath, d, strings.Join(clientMayLink, ", ")))
			}
			for _, prefix := range nodeCode {
				if strings.HasPrefix(d, prefix) {
					out = append(out, fmt.Sprintf("%s depends on %s: a client links no node code", p.ImportPath, d))
					break
				}
			}
		}
	}
	sort.Strings(out)
	return dedupe(out)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}
