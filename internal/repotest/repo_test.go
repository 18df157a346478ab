package repotest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/surety-ioa/surety/internal/tools"
)

func repoPackages(t *testing.T) []Package {
	t.Helper()
	root, err := tools.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := ListPackages(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 5 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	return pkgs
}

func TestImportDirection(t *testing.T) {
	for _, v := range ImportViolations(repoPackages(t)) {
		t.Error(v)
	}
}

// TestPurePackagesLinkNoNetworkCode: identity, the Merkle verification and the contract
// bindings are libraries a verifier or wallet tool links without libp2p.
func TestPurePackagesLinkNoNetworkCode(t *testing.T) {
	pkgs := repoPackages(t)
	for _, name := range pure {
		found := false
		for _, p := range pkgs {
			found = found || p.ImportPath == Module+"/"+name
		}
		if !found {
			t.Errorf("pure package %s does not exist", name)
		}
	}
	for _, v := range PureViolations(pkgs) {
		t.Error(v)
	}
}

// TestVerifierLinksOnlyItself: an auditor's program that imports the verifier links the
// standard library, the Merkle hashing and two small pure-Go libraries, nothing of the node
// (issue 26's acceptance: it verifies a proof and a checkpoint importing only the verifier).
func TestVerifierLinksOnlyItself(t *testing.T) {
	pkgs := repoPackages(t)
	for name := range standalone {
		if !slices.ContainsFunc(pkgs, func(p Package) bool { return p.ImportPath == Module+"/"+name }) {
			t.Errorf("standalone package %s does not exist", name)
		}
	}
	for _, v := range StandaloneViolations(pkgs) {
		t.Error(v)
	}
}

// TestStandaloneViolationsCatches proves the verifier check can fail: the verifier importing
// identity (and through it SQLite) is caught.
func TestStandaloneViolationsCatches(t *testing.T) {
	p := Package{ImportPath: Module + "/reputation/verify", Deps: []string{"fmt", Module + "/reputation/merkle", Module + "/identity", "github.com/mattn/go-sqlite3"}}
	got := StandaloneViolations([]Package{p})
	if len(got) != 2 {
		t.Errorf("violations = %q, want the identity and sqlite dependencies", got)
	}
}

func TestPackageDocs(t *testing.T) {
	for _, p := range repoPackages(t) {
		vs, err := DocViolations(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			t.Error(v)
		}
	}
}

// TestLayout checks the design card's top-level directories exist.
func TestLayout(t *testing.T) {
	root, err := tools.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"cmd/surety", "identity", "registry", "reputation", "escrow", "contracts", "api", "testnet", "internal", "docs"} {
		if st, err := os.Stat(filepath.Join(root, dir)); err != nil || !st.IsDir() {
			t.Errorf("missing directory %s", dir)
		}
	}
}

// TestImportViolationsCatches proves the import check can fail.
func TestImportViolationsCatches(t *testing.T) {
	m := Module + "/"
	pkgs := []Package{
		{ImportPath: m + "identity", Imports: []string{m + "registry", m + "internal/sqlite", "fmt"}},
		{ImportPath: m + "registry", Imports: []string{m + "identity", m + "escrow"}},
		{ImportPath: m + "escrow", TestImports: []string{m + "api"}},
		{ImportPath: m + "api", XTestImports: []string{m + "cmd/surety"}},
		{ImportPath: m + "internal/sqlite", Imports: []string{m + "contracts"}},
		{ImportPath: m + "internal/chainlog", Imports: []string{m + "internal/p2p", m + "internal/sqlite"}},
		{ImportPath: m + "groups", Imports: []string{m + "internal/p2p", m + "reputation"}, XTestImports: []string{m + "internal/testutil"}},
		{ImportPath: m + "api", TestImports: []string{m + "internal/p2p"}},
		{ImportPath: m + "cmd/surety", Imports: []string{m + "api", m + "testnet", m + "node"}},
		{ImportPath: m + "node", Imports: []string{m + "api", m + "stake", m + "internal/p2p", m + "cmd/surety", m + "testnet"}},
		{ImportPath: m + "reputation", Imports: []string{m + "node"}},
		{ImportPath: m + "tools/x"},
		{ImportPath: m + "demo", Imports: []string{m + "node", m + "api/client", m + "api/wire", m + "api", m + "testnet"}},
	}
	want := []string{
		m + "api imports " + m + "cmd/surety: api may not import cmd",
		m + "api imports " + m + "internal/p2p: api may not import internal/p2p",
		m + "demo imports " + m + "api: demo may import only api/client, api/wire of api",
		m + "demo imports " + m + "testnet: demo may not import testnet",
		m + "escrow imports " + m + "api: escrow may not import api",
		m + "groups imports " + m + "reputation: groups may not import reputation",
		m + "identity imports " + m + "registry: identity may not import registry",
		m + "internal/chainlog imports " + m + "internal/p2p: internal/chainlog may not import internal/p2p",
		m + "internal/sqlite imports " + m + "contracts: internal/sqlite may not import contracts",
		m + "node imports " + m + "cmd/surety: node may not import cmd",
		m + "node imports " + m + "testnet: node may not import testnet",
		m + "registry imports " + m + "escrow: registry may not import escrow",
		m + "reputation imports " + m + "node: reputation may not import node",
		m + `tools/x: top-level directory "tools" has no import rule (add it to allowed)`,
	}
	if diff := cmp.Diff(want, ImportViolations(pkgs)); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
}

// TestDocViolationsCatches proves the package-comment check can fail.
func TestDocViolationsCatches(t *testing.T) {
	write := func(dir, name, src string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		files map[string]string
		want  []string // substrings, one per violation
	}{
		{"one comment", map[string]string{"a.go": "// Package p does p.\npackage p\n", "b.go": "package p\n"}, nil},
		{"none", map[string]string{"a.go": "package p\n"}, []string{"no package comment"}},
		{"two", map[string]string{"a.go": "// Package p does p.\npackage p\n", "b.go": "// Package p again.\npackage p\n"}, []string{"2 files"}},
		{"wrong start", map[string]string{"a.go": "// This is p.\npackage p\n"}, []string{`should start "Package p "`}},
		{"undocumented export", map[string]string{"a.go": "// Package p does p.\npackage p\n\nfunc Do() {}\n\ntype T int\n\nfunc (T) M() {}\n\nfunc (t) m() {}\n\ntype t int\n\nvar (\n\t// V is.\n\tV = 1\n\tW = 2\n)\n"},
			[]string{"exported Do", "exported T", "exported M", "exported W"}},
		{"generated file exempt", map[string]string{"a.go": "// Package p does p.\npackage p\n", "z.go": "// Code generated by x; DO NOT EDIT.\n\npackage p\n\nfunc Gen() {}\n"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var names []string
			for n, src := range tt.files {
				write(dir, n, src)
				names = append(names, n)
			}
			got, err := DocViolations(Package{ImportPath: "x/p", Name: "p", Dir: dir, GoFiles: names})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("violations = %q, want %d", got, len(tt.want))
			}
			for _, w := range tt.want {
				found := false
				for _, g := range got {
					found = found || strings.Contains(g, w)
				}
				if !found {
					t.Errorf("no violation mentions %q in %q", w, got)
				}
			}
		})
	}
}

// TestArchitectureNamesEveryPackage: docs/ARCHITECTURE.md's package table has a row for every
// package of the module, and no row for one that is gone.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	root, err := tools.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The table under the header "| package | holds |", up to the first line that is not a row.
	rows := map[string]bool{}
	_, table, ok := strings.Cut(string(doc), "| package | holds |\n")
	if !ok {
		t.Fatal(`docs/ARCHITECTURE.md has no "| package | holds |" table`)
	}
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		if rest, ok := strings.CutPrefix(line, "| `"); ok {
			if name, _, ok := strings.Cut(rest, "`"); ok {
				rows[name] = true
			}
		}
	}
	for _, p := range repoPackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, Module), "/")
		if !rows[rel] {
			t.Errorf("docs/ARCHITECTURE.md's package table has no row for %s", rel)
		}
		delete(rows, rel)
	}
	for name := range rows {
		t.Errorf("docs/ARCHITECTURE.md's package table names %s, which is not a package", name)
	}
}

// TestClientLinksNoNode: the typed API client and its wire types link no network stack, no
// database, no cgo and no server: an agent that only calls a node pays for a client.
func TestClientLinksNoNode(t *testing.T) {
	root, err := tools.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	deps, err := ListClientDeps(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range client {
		found := false
		for _, p := range deps {
			found = found || p.ImportPath == Module+"/"+name
		}
		if !found {
			t.Errorf("client package %s does not exist", name)
		}
	}
	for _, v := range ClientViolations(deps) {
		t.Error(v)
	}
}

// TestClientViolationsCatches proves the client check can fail: node code, a module package
// outside the client's, cgo outside the standard library.
func TestClientViolationsCatches(t *testing.T) {
	m := Module + "/"
	deps := []Package{
		{ImportPath: m + "api/client", Deps: []string{"net/http", m + "api/wire", m + "reputation/merkle", m + "api", "github.com/labstack/echo/v4"}},
		{ImportPath: m + "api/wire", Deps: []string{"github.com/ethereum/go-ethereum/common", "github.com/libp2p/go-libp2p/core/peer", "github.com/ethereum/go-ethereum/core/types"}},
		{ImportPath: "github.com/mattn/go-sqlite3", CgoFiles: []string{"sqlite3.go"}},
		{ImportPath: "runtime/cgo", Standard: true, CgoFiles: []string{"cgo.go"}},
		{ImportPath: m + "escrow", Deps: []string{"github.com/mattn/go-sqlite3"}}, // not a client package
	}
	want := []string{
		"github.com/mattn/go-sqlite3 uses cgo: the client packages must link none",
		m + "api/client depends on github.com/labstack/echo/v4: a client links no node code",
		m + "api/client depends on " + m + "api: a client links no module package but api/client, api/wire, reputation/merkle, a2a, internal/jcs",
		m + "api/wire depends on github.com/ethereum/go-ethereum/core/types: a client links no node code",
		m + "api/wire depends on github.com/libp2p/go-libp2p/core/peer: a client links no node code",
	}
	if diff := cmp.Diff(want, ClientViolations(deps)); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
}

// TestProtocolNamesEveryConstant: every protocol constant in the source (JWS typs, gossip
// topics, stream protocol ids, DHT namespaces, body kinds, sync names, Surety's URIs; found
// by parsing, so a new one is found too) appears in docs/PROTOCOL.md.
func TestProtocolNamesEveryConstant(t *testing.T) {
	root, err := tools.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "PROTOCOL.md"))
	if err != nil {
		t.Fatal(err)
	}
	var all []ProtocolConstant
	for _, p := range repoPackages(t) {
		cs, err := ProtocolConstants(p)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, cs...)
	}
	// The kinds the protocol has today must be among those found, or the search is broken.
	for _, v := range []string{"surety-envelope+jws", "surety-card+jws", "surety-binding+jws", "surety-sth+jws", "surety-peer+jws",
		"/surety/audits/1", "/surety/cards/1", "/surety/groups/1", "/surety/agents/1", "/surety/sync/1", "surety-card"} {
		if !slices.ContainsFunc(all, func(c ProtocolConstant) bool { return c.Value == v }) {
			t.Errorf("the constant search did not find %q", v)
		}
	}
	for _, v := range UndocumentedProtocol(all, string(doc)) {
		t.Error(v)
	}
	if testing.Verbose() {
		for _, c := range all {
			t.Logf("%s %s = %q", c.Pos, c.Name, c.Value)
		}
	}
}

// TestProtocolConstantsCatches proves the protocol check can fail: a new typ, topic,
// namespace or sync set that the document does not name is reported; string enums of a named
// type and constants of no protocol shape are not protocol names.
func TestProtocolConstantsCatches(t *testing.T) {
	dir := t.TempDir()
	src := "package p\n\ntype KeyType string\n\nconst (\n" +
		"\tNewType = \"surety-new+jws\"\n\tTopicX = \"/surety/x/1\"\n\tFooNamespace = \"foo\"\n\tThingsSet = \"things\"\n" +
		"\tEd KeyType = \"ed25519\"\n\tgreeting = \"hello\"\n\tCredType = \"vc+jwt\"\n\tDocumented = \"/surety/documented/1\"\n)\n"
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, err := ProtocolConstants(Package{Name: "p", Dir: dir, GoFiles: []string{"p.go"}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	if want := []string{"p.NewType", "p.TopicX", "p.FooNamespace", "p.ThingsSet", "p.CredType", "p.Documented"}; !slices.Equal(names, want) {
		t.Errorf("found %q, want %q", names, want)
	}
	got := UndocumentedProtocol(cs, "the `/surety/documented/1` protocol; /surety/x/1 unquoted does not count")
	if len(got) != 5 {
		t.Errorf("undocumented = %q, want all but the documented one", got)
	}
}

// fusedChecked are the packages whose floats are part of a protocol: reputation's scores,
// and the search ranking every node must compute to the same bits (registry multiplies in
// the reputation weight, registry/search scores text, registry/semantic vectors).
var fusedChecked = []string{"reputation", "registry", "registry/search", "registry/semantic"}

// TestNoFusedMultiplyAdd: the scoring engines (fusedChecked) compile to no fused
// multiply-add on the builds that fuse (arm64, amd64 v3), so its scores are the same bits on
// every node and every auditor's machine, and in the explorer's JavaScript; the review of
// issue 28 found 26 on arm64, which made an arm64 auditor's recomputation of an amd64 node's
// scores differ in the last bit. A product that feeds a sum is written float64(a*b).
func TestNoFusedMultiplyAdd(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a package for two other targets")
	}
	root, err := tools.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range fusedChecked {
		for _, target := range FusedTargets {
			found, err := FusedInstructions(root, Module+"/"+pkg, target)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range found {
				t.Errorf("%s: a fused multiply-add in %s: %s", target.Describe, pkg, f)
			}
		}
	}
}

// TestImportGroups: every file lists its imports as `goimports -local` groups them, the
// standard library, other modules, then this module, each in its own group (four files had
// drifted unnoticed by gofmt).
func TestImportGroups(t *testing.T) {
	root, err := tools.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	found, err := ImportGroupViolations(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Error(f)
	}
}

func TestImportGroupViolationsCatches(t *testing.T) {
	for _, c := range []struct {
		name, imports string
		want          int
	}{
		{"ordered", "\"fmt\"\n\n\"github.com/x/y\"\n\n\"" + Module + "/identity\"", 0},
		{"one group each, a doc comment between", "\"fmt\"\n// why\n\"os\"\n\n\"" + Module + "/identity\"", 0},
		{"ours among the standard library", "\"fmt\"\n\"" + Module + "/identity\"\n\"os\"", 2},
		{"ours before another module", "\"fmt\"\n\n\"" + Module + "/identity\"\n\n\"github.com/x/y\"", 1},
		{"another module mixed with ours", "\"fmt\"\n\n\"github.com/x/y\"\n\"" + Module + "/identity\"", 1},
		{"the standard library last", "\"github.com/x/y\"\n\n\"fmt\"", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := importGroupViolations("x.go", []byte("package x\n\nimport (\n"+c.imports+"\n)\n"))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != c.want {
				t.Errorf("found %d, want %d: %q", len(got), c.want, got)
			}
		})
	}
}
