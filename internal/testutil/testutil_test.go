package testutil

import (
	"os"
	"sync"
	"testing"
)

// TestBuildSharedBuildsOnce: test processes that ask for one executable at the same time in a
// shared dir get the same file, built once; a later ask uses it as it is.
func TestBuildSharedBuildsOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	dir := t.TempDir()
	const pkg = "github.com/surety-ioa/surety/internal/benchtable/cmd/benchtable"
	paths := make([]string, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range paths {
		wg.Go(func() { paths[i], errs[i] = buildShared(dir, pkg) })
	}
	wg.Wait()
	for i := range paths {
		if errs[i] != nil || paths[i] != paths[0] {
			t.Fatalf("ask %d: %q, %v; the first got %q", i, paths[i], errs[i], paths[0])
		}
	}
	built, err := os.Stat(paths[0])
	if err != nil || built.Mode()&0o111 == 0 {
		t.Fatalf("%s: %v, %v", paths[0], built, err)
	}
	again, err := buildShared(dir, pkg)
	if err != nil || again != paths[0] {
		t.Fatalf("a later ask: %q, %v", again, err)
	}
	if st, err := os.Stat(again); err != nil || !st.ModTime().Equal(built.ModTime()) || !os.SameFile(st, built) {
		t.Errorf("a later ask built %s again", again)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "benchtable" && e.Name() != "benchtable.lock" {
			t.Errorf("left %s in the shared dir", e.Name())
		}
	}
}
