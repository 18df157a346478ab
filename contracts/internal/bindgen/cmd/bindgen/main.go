// Command bindgen writes contracts/artifacts from forge's output (with -forge-out) and
// regenerates contracts/bindings.go from the committed artifacts. It runs from the contracts
// directory (`go generate ./contracts`) or with -dir.
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
	dir := flag.String("dir", ".", "the contracts package directory")
	forgeOut := flag.String("forge-out", "", "forge's output dir; when set, refresh the committed artifacts from it first")
	flag.Parse()
	if err := run(*dir, *forgeOut); err != nil {
		fmt.Fprintln(os.Stderr, "bindgen:", err)
		os.Exit(1)
	}
}

func run(dir, forgeOut string) error {
	artDir := filepath.Join(dir, "artifacts")
	if forgeOut != "" {
		arts, err := bindgen.FromForge(forgeOut, filepath.Join(dir, "src"))
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
