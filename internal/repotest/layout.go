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

// allowed lists, for each top-level directory, the top-level directories its packages may
// import besides their own. It is the design's import direction:
//
//	internal, identity, contracts  (the bottom: they import only internal)
//	registry, reputation, escrow   (identity, contracts; never each other: they meet
//	                                through interfaces that cmd wires)
//	api                            (all of the above)
//	testnet                        (contracts and the bottom)
//	cmd                            (anything)
var allowed = map[string][]string{
	"internal":   {},
	"identity":   {"internal"},
	"contracts":  {"internal"},
	"registry":   {"identity", "contracts", "internal"},
	"reputation": {"identity", "contracts", "internal"},
	"escrow":     {"identity", "contracts", "internal"},
	"stake":      {"identity", "contracts", "internal"},
	"api":        {"identity", "contracts", "registry", "reputation", "escrow", "stake", "internal"},
	"testnet":    {"identity", "contracts", "internal"},
	"cmd":        {"identity", "contracts", "registry", "reputation", "escrow", "stake", "api", "testnet", "internal"},
}

// Package is what the checks need to know of one package, as `go list -json` reports it.
type Package struct {
	ImportPath   string
	Name         string
	Dir          string
	GoFiles      []string
	CgoFiles     []string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// ListPackages runs `go list -json ./...` in dir (the repository root).
func ListPackages(dir string) ([]Package, error) {
	cmd := exec.Command("go", "list", "-json", "./...")
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

// group is the top-level directory of a package in the module, or "" outside it.
func group(importPath string) string {
	rest, ok := strings.CutPrefix(importPath, Module+"/")
	if !ok {
		return ""
	}
	g, _, _ := strings.Cut(rest, "/")
	return g
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
			if to == "" || to == from || contains(ok, to) {
				continue
			}
			out = append(out, fmt.Sprintf("%s imports %s: %s may not import %s", p.ImportPath, imp, from, to))
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
