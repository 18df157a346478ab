// Command bindgen writes contracts/artifacts from forge's output (with -forge-out) and
// regenerates contracts/bindings.go from the committed artifacts. `go generate ./contracts`
// runs it from the contracts directory; `make contracts` runs it from the root with -root .
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/surety-ioa/surety/contracts/internal/bindgen"
)

func main() {
	root := flag.String("root", "..", "the repository root")
	forgeOut := flag.String("forge-out", "", "forge's output dir (relative to the working directory); when set, refresh the committed artifacts from it first")
	flag.Parse()
	if err := run(*root, *forgeOut); err != nil {
		fmt.Fprintln(os.Stderr, "bindgen:", err)
		os.Exit(1)
	}
}

func run(root, forgeOut string) error {
	dir := filepath.Join(root, "contracts")
	artDir := filepath.Join(dir, "artifacts")
	if forgeOut != "" {
		arts, err := bindgen.FromForge(forgeOut, root)
		if err != nil {
			return err
		}
		if err := os.RemoveAll(artDir); err != nil {
			return err
		}
		if err := os.MkdirAll(artDir, 0o755); err != nil {
			return err
		}
		for _, a := range arts {
			b, err := bindgen.Encode(a)
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(artDir, a.Name+".json"), b, 0o644); err != nil {
				return err
			}
		}
	}
	arts, err := bindgen.Load(artDir)
	if err != nil {
		return err
	}
	src, err := bindgen.Bindings(arts, "contracts")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "bindings.go")
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, src) {
		return nil
	}
	return os.WriteFile(path, src, 0o644)
}
