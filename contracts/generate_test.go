package contracts_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/surety-ioa/surety/contracts/internal/bindgen"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/internal/tools"
)

// TestBindingsUpToDate fails when bindings.go differs from what the committed artifacts
// generate: someone edited the bindings by hand or forgot `go generate ./contracts`.
func TestBindingsUpToDate(t *testing.T) {
	arts, err := bindgen.Load("artifacts")
	if err != nil {
		t.Fatal(err)
	}
	want, err := bindgen.Bindings(arts, "contracts")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("bindings.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("contracts/bindings.go is stale: run `make contracts`\n%s", cmp.Diff(string(want), string(got)))
	}
}

// TestArtifactsMatchSolidity compiles the Solidity sources with the pinned forge and solc
// and fails when the committed artifacts (and so the bindings) no longer match them.
func TestArtifactsMatchSolidity(t *testing.T) {
	forge := testutil.Tool(t, "forge")
	root, err := tools.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	out := filepath.Join(tmp, "out")
	cmd := exec.Command(forge, "build", "--root", root, "--out", out, "--cache-path", filepath.Join(tmp, "cache"),
		"--skip", "test", "--skip", "script")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("forge build: %v\n%s", err, b)
	}
	compiled, err := bindgen.FromForge(out, root)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := bindgen.Load("artifacts")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(encodeAll(t, committed), encodeAll(t, compiled)); diff != "" {
		t.Errorf("contracts/artifacts differ from the Solidity sources: run `make contracts` (-committed +compiled):\n%s", diff)
	}
}

func encodeAll(t *testing.T, arts []bindgen.Artifact) map[string]string {
	t.Helper()
	m := make(map[string]string, len(arts))
	for _, a := range arts {
		b, err := bindgen.Encode(a)
		if err != nil {
			t.Fatal(err)
		}
		m[a.Name] = string(b)
	}
	return m
}
