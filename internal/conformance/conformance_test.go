package conformance_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/surety-ioa/surety/internal/conformance"
	"github.com/surety-ioa/surety/internal/tools"
)

var update = flag.Bool("update", false, "rewrite testdata/conformance from the generators")

func vectorDir(t *testing.T) string {
	t.Helper()
	root, err := tools.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "testdata", "conformance")
}

// TestVectors: the committed vectors are exactly what the generators make (regenerate with
// -update), and the Go code reaches every vector's verdict.
func TestVectors(t *testing.T) {
	dir := vectorDir(t)
	files, err := conformance.Generate()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		for _, kind := range conformance.Kinds() {
			old, _ := filepath.Glob(filepath.Join(dir, kind, "*.json"))
			for _, f := range old {
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
			}
		}
		for path, b := range files {
			f := filepath.Join(dir, filepath.FromSlash(path))
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Run("drift", func(t *testing.T) {
		for path, want := range files {
			got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(path)))
			if err != nil {
				t.Errorf("%s: %v (regenerate: go test ./internal/conformance -run TestVectors -update)", path, err)
				continue
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from what the generator makes (regenerate: go test ./internal/conformance -run TestVectors -update)", path)
			}
		}
		on, _ := filepath.Glob(filepath.Join(dir, "*", "*.json"))
		for _, f := range on {
			rel, _ := filepath.Rel(dir, f)
			if _, ok := files[filepath.ToSlash(rel)]; !ok {
				t.Errorf("%s is committed but no generator makes it", rel)
			}
		}
	})
	vectors, err := conformance.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(vectors) == 0 {
		t.Fatal("no vectors under testdata/conformance")
	}
	names := make([]string, 0, len(vectors))
	for n := range vectors {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		v := vectors[n]
		t.Run(strings.TrimSuffix(n, ".json"), func(t *testing.T) {
			if kind, _, _ := strings.Cut(n, "/"); kind != v.Kind {
				t.Fatalf("file is under %s/ but its kind is %q", kind, v.Kind)
			}
			if err := conformance.Run(v); err != nil {
				t.Errorf("%s (%s): %v", n, v.Description, err)
			}
		})
	}
}

// TestEveryKindHasBothVerdicts: each kind has a valid vector and, but for key, a refused
// one, so a checker that accepts or refuses everything fails.
func TestEveryKindHasBothVerdicts(t *testing.T) {
	files, err := conformance.Generate()
	if err != nil {
		t.Fatal(err)
	}
	valid, refused := map[string]bool{}, map[string]bool{}
	vectors, err := conformance.Load(vectorDir(t))
	if err != nil {
		t.Fatal(err)
	}
	for path := range files {
		v, ok := vectors[path]
		if !ok {
			continue // TestVectors reports it
		}
		if v.Expect.Valid {
			valid[v.Kind] = true
		} else {
			refused[v.Kind] = true
		}
	}
	for _, k := range conformance.Kinds() {
		if !valid[k] {
			t.Errorf("kind %s has no valid vector", k)
		}
		if !refused[k] && k != "key" {
			t.Errorf("kind %s has no refused vector", k)
		}
	}
}
