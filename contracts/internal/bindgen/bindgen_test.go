package bindgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const abiJSON = `[{"type":"function","name":"ping","inputs":[],"outputs":[],"stateMutability":"nonpayable"}]`

func writeForge(t *testing.T, out, file, name, target, code string) {
	t.Helper()
	dir := filepath.Join(out, file)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	body := `{"abi": ` + abiJSON + `, "bytecode": {"object": "` + code + `"},
	  "metadata": {"settings": {"compilationTarget": {"` + target + `": "` + name + `"}}}}`
	if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFromForge(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "contracts", "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"Ping.sol", "IPing.sol"} {
		if err := os.WriteFile(filepath.Join(src, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(root, "out")
	writeForge(t, out, "Ping.sol", "Ping", "contracts/src/Ping.sol", "0x6001")
	writeForge(t, out, "IPing.sol", "IPing", "contracts/src/IPing.sol", "0x")
	// A test helper compiled from a file of the same name elsewhere is not ours.
	writeForge(t, out, "Ping.sol", "Helper", "contracts/test/Ping.sol", "0x6002")

	arts, err := FromForge(out, root)
	if err != nil {
		t.Fatal(err)
	}
	want := []Artifact{
		{Name: "IPing", Source: "contracts/src/IPing.sol", ABI: []byte(abiJSON), Bytecode: "0x"},
		{Name: "Ping", Source: "contracts/src/Ping.sol", ABI: []byte(abiJSON), Bytecode: "0x6001"},
	}
	if diff := cmp.Diff(want, arts); diff != "" {
		t.Errorf("artifacts (-want +got):\n%s", diff)
	}

	// Round trip through the committed form, then bind: interfaces get no deploy code.
	dir := filepath.Join(root, "artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, a := range arts {
		b, err := Encode(a)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, a.Name+".json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	loaded, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(arts, loaded); diff != "" {
		t.Errorf("loaded (-want +got):\n%s", diff)
	}
	src2, err := Bindings(loaded, "demo")
	if err != nil {
		t.Fatal(err)
	}
	code := string(src2)
	if strings.Count(code, "// Code generated") != 1 || !strings.Contains(code, "package demo") {
		t.Errorf("bindings header:\n%.400s", code)
	}
	if !strings.Contains(code, "func (ping *Ping) PackPing()") || !strings.Contains(code, `Bin: "0x6001"`) {
		t.Errorf("bindings lack Ping's pack function or bytecode")
	}
}

func TestFromForgeErrors(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "contracts", "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := FromForge(filepath.Join(root, "out"), root); err == nil || !strings.Contains(err.Error(), "no Solidity sources") {
		t.Errorf("empty src: err = %v", err)
	}
	if err := os.WriteFile(filepath.Join(src, "A.sol"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := FromForge(filepath.Join(root, "out"), root); err == nil || !strings.Contains(err.Error(), "run forge build") {
		t.Errorf("no output: err = %v", err)
	}
	writeForge(t, filepath.Join(root, "out"), "A.sol", "A.0.8.30", "contracts/src/A.sol", "0x")
	if _, err := FromForge(filepath.Join(root, "out"), root); err == nil || !strings.Contains(err.Error(), "unexpected artifact name") {
		t.Errorf("versioned artifact: err = %v", err)
	}
}

// TestBindingsNameOutputsByContract: two contracts with a method of several returns by the
// same name but different returns get one output struct each, named after the contract
// (abigen alone declares GetOutput twice, differently).
func TestBindingsNameOutputsByContract(t *testing.T) {
	const one = `[{"type":"function","name":"get","inputs":[],"outputs":[{"name":"a","type":"uint8"},{"name":"b","type":"uint8"}],"stateMutability":"view"}]`
	const two = `[{"type":"function","name":"get","inputs":[],"outputs":[{"name":"a","type":"uint64"},{"name":"c","type":"address"}],"stateMutability":"view"}]`
	src, err := Bindings([]Artifact{{Name: "One", ABI: []byte(one), Bytecode: "0x"}, {Name: "Two", ABI: []byte(two), Bytecode: "0x"}}, "p")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"type OneGetOutput struct", "type TwoGetOutput struct", "(OneGetOutput, error)", "(TwoGetOutput, error)"} {
		if !strings.Contains(string(src), want) {
			t.Errorf("bindings lack %q", want)
		}
	}
	if strings.Contains(string(src), "type GetOutput struct") {
		t.Error("bindings still declare GetOutput")
	}
}

// TestBindingsDeclareSharedOutputsOnce binds an interface and the contract implementing it,
// both with a method of several return values: abigen names the struct of those values after
// the method alone, so without dedupeTypes the package declares PairOutput twice and does
// not compile.
func TestBindingsDeclareSharedOutputsOnce(t *testing.T) {
	pair := `[{"type":"function","name":"pair","inputs":[],"outputs":[{"name":"a","type":"uint256"},{"name":"b","type":"address"}],"stateMutability":"view"}]`
	arts := []Artifact{
		{Name: "IPair", Source: "contracts/src/IPair.sol", ABI: []byte(pair), Bytecode: "0x"},
		{Name: "Pair", Source: "contracts/src/Pair.sol", ABI: []byte(pair), Bytecode: "0x6001"},
	}
	src, err := Bindings(arts, "demo")
	if err != nil {
		t.Fatal(err)
	}
	code := string(src)
	if n := strings.Count(code, "type PairOutput struct"); n != 1 {
		t.Errorf("PairOutput declared %d times, want 1", n)
	}
	if !strings.Contains(code, "func (pair *Pair) UnpackPair(") || !strings.Contains(code, "func (iPair *IPair) UnpackPair(") {
		t.Errorf("bindings lack an UnpackPair")
	}
}

func TestDedupeTypesKeepsDifferentDeclarations(t *testing.T) {
	src := "// A is one.\ntype A struct {\n\tX int\n}\n\n// A is one.\ntype A struct {\n\tX int\n}\n\ntype A struct {\n\tY int\n}\n"
	want := "// A is one.\ntype A struct {\n\tX int\n}\n\n\ntype A struct {\n\tY int\n}\n"
	if got := dedupeTypes(src); got != want {
		t.Errorf("dedupeTypes:\n%s\nwant:\n%s", got, want)
	}
}
