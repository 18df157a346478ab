// Package tools finds the pinned external programs Surety works with (anvil, forge, cast),
// which `make tools` installs from npm into the repository's .tools/ directory.
package tools

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ErrNotFound reports a tool that is neither in .tools/ nor on PATH.
var ErrNotFound = errors.New("tools: not installed (run 'make tools')")

// Module is the Go module path that marks the repository root.
const Module = "github.com/surety-ioa/surety"

// RepoRoot walks up from dir to the directory holding Surety's go.mod.
func RepoRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(b), "module "+Module+"\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no %s checkout above the current directory", Module)
		}
		dir = parent
	}
}

// Find returns the path of a tool the Makefile installs: a Foundry program ("anvil",
// "forge" or "cast") or Clef ("clef"), the copy in the repository's .tools/ when the working
// directory is inside a checkout, else one on PATH.
func Find(name string) (string, error) {
	if wd, err := os.Getwd(); err == nil {
		if root, err := RepoRoot(wd); err == nil {
			for _, p := range []string{
				filepath.Join(root, ".tools", "node_modules", "@foundry-rs", name+"-linux-amd64", "bin", name),
				filepath.Join(root, ".tools", "bin", name),
			} {
				if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
					return p, nil
				}
			}
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s: %w", name, ErrNotFound)
}
