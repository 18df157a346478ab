// Package testutil holds helpers shared by Surety's tests: a real Anvil on a free port, a
// SQLite file in a temporary dir.
package testutil

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/surety-ioa/surety/internal/anvil"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/tools"
)

// DevAccounts is how many dev accounts Anvil gives the tests, funded like the embedded chain's.
const DevAccounts = 10

// InCI reports whether the tests run in CI, where a missing tool is a failure, not a skip.
func InCI() bool { return os.Getenv("CI") != "" }

// Tool returns the path of a Foundry tool. Outside CI a missing tool skips the test with a
// message saying how to install it; in CI it fails the test.
func Tool(t testing.TB, name string) string {
	t.Helper()
	p, err := tools.Find(name)
	if err != nil {
		if InCI() {
			t.Fatalf("%v (CI must have it: the Makefile installs it)", err)
		}
		t.Skipf("skipping: %v", err)
	}
	return p
}

// Anvil starts an Anvil on a free loopback port for the test, funds the dev accounts of
// chain.DevKey with chain.DefaultDevBalance, and stops it when the test ends.
func Anvil(t testing.TB) *anvil.Anvil {
	t.Helper()
	bin := Tool(t, "anvil")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := anvil.Start(ctx, anvil.Config{Bin: bin})
	if err != nil {
		t.Fatalf("start anvil: %v", err)
	}
	t.Cleanup(a.Stop)
	for addr, bal := range chain.DevAlloc(DevAccounts, chain.DefaultDevBalance) {
		if err := a.SetBalance(ctx, addr, bal); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

// DB opens a fresh SQLite database file in a temporary directory, closed when the test ends.
func DB(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "surety.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// SQL is a database opened for a test.
type SQL struct{ DB *sql.DB }

// OpenSQL is DB wrapped, for helpers that want to pass the handle around by name.
func OpenSQL(t testing.TB) *SQL { return &SQL{DB: DB(t)} }

// NodeScript returns the node executable and the path of clients/ts/interop/script, a check
// by an implementation that is not Surety's, once it has found the npm packages the script
// imports in clients/ts/node_modules. Outside CI a missing node or package skips the test,
// saying how to install it; in CI (make test installs both) it fails the test, so that the
// check cannot go quiet.
func NodeScript(t testing.TB, script string, packages ...string) (node, path string) {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		if InCI() {
			t.Fatalf(format+" (CI must have it: make test installs it)", args...)
		}
		t.Skipf("skipping: "+format, args...)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node (Node.js 20+) is not installed: %v", err)
	}
	root, err := tools.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	ts := filepath.Join(root, "clients", "ts")
	for _, pkg := range packages {
		if _, err := os.Stat(filepath.Join(ts, "node_modules", filepath.FromSlash(pkg), "package.json")); err != nil {
			missing("npm package %s is not installed in clients/ts/node_modules (cd clients/ts && npm ci)", pkg)
		}
	}
	return node, filepath.Join(ts, "interop", script)
}

// WaitingParallel lets every parallel test of the package start at once (-test.parallel 1000)
// unless the command line says how many; a Gate then bounds them. TestMain calls it, before
// m.Run, in packages whose parallel tests mostly wait (on 12 s blocks, log epochs, node
// processes gossiping) rather than compute, where the default, GOMAXPROCS (2 in CI), would
// queue a two-minute wait behind another.
func WaitingParallel() {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", "1000"); err != nil {
			panic(err)
		}
	}
}

// A Gate lets at most n of a package's parallel tests run at once, as -test.parallel n would,
// except for the tests that do not go through it: the package's longest waits (TestChurn,
// TestTwelveSecondBlocks) then start as soon as the serial tests are done instead of queuing,
// in the random order Go wakes parallel tests in, behind shorter ones.
type Gate struct{ places chan struct{} }

// NewGate is a Gate for n tests at once.
func NewGate(n int) *Gate { return &Gate{places: make(chan struct{}, n)} }

// Parallel is t.Parallel, then a place at the gate, kept until the test and its cleanups end.
func (g *Gate) Parallel(t *testing.T) {
	t.Helper()
	t.Parallel()
	g.places <- struct{}{}
	t.Cleanup(func() { <-g.places }) // the first cleanup registered runs last
}

// BinDirEnv names a directory that the test binaries of one `go test` run share their built
// executables in (make test-go makes a fresh one and removes it afterwards): the first
// package to need cmd/surety builds it there, the others (cmd/surety's and testnet/e2e's
// tests run at the same time) wait for it and use it, instead of each linking its own.
const BinDirEnv = "SURETY_TEST_BIN_DIR"

// Binary is an executable of this module that a test package builds once, on first use (a
// run that needs none builds nothing), and removes in its TestMain; with $SURETY_TEST_BIN_DIR
// set (BinDirEnv), once for every package of the run, there. GOFLAGS from the environment
// carries the build tags (make test's sqlite_fts5).
type Binary struct {
	// Package is the import path to build, e.g. Module + "/cmd/surety".
	Package string

	once      sync.Once
	dir, path string
	err       error
}

// Path builds the binary (once) and returns where it is.
func (b *Binary) Path(t testing.TB) string {
	t.Helper()
	b.once.Do(func() {
		if shared := os.Getenv(BinDirEnv); shared != "" {
			b.path, b.err = buildShared(shared, b.Package)
			return
		}
		if b.dir, b.err = os.MkdirTemp("", "surety-bin-"); b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, filepath.Base(b.Package))
		b.err = build(b.path, b.Package)
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

func build(path, pkg string) error {
	if out, err := exec.Command("go", "build", "-ldflags=-w", "-o", path, pkg).CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return nil
}

// buildShared returns pkg's executable in dir, building it there unless another test process
// of the run has: under an exclusive lock on dir/<name>.lock, so that one builds and the
// others wait for it. The executable appears under its name only once whole.
func buildShared(dir, pkg string) (string, error) {
	path := filepath.Join(dir, filepath.Base(pkg))
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", fmt.Errorf("%s: %w", BinDirEnv, err)
	}
	defer lock.Close() // and so unlocks
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("%s: lock: %w", BinDirEnv, err)
	}
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	tmp := path + ".building"
	if err := build(tmp, pkg); err != nil {
		return "", err
	}
	return path, os.Rename(tmp, path)
}

// Remove deletes what Path built; TestMain calls it once the tests have run. A shared
// executable stays for the run's other packages: whoever made $SURETY_TEST_BIN_DIR removes it.
func (b *Binary) Remove() {
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

// Tail is the last n bytes of s: enough of a failed process's log to see why.
func Tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
