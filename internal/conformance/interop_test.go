package conformance_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surety-ioa/surety/internal/tools"
)

// TestVectorsWithJose checks the committed vectors with implementations that are not
// Surety's (clients/ts/interop/conformance-jose.mjs): every signature with jose (EdDSA) or
// viem (ES256K), keys and did:key derivations with Node's crypto and viem, bindings' EIP-712
// digests and wallet signatures with viem. A vector refused for its signature must carry one
// that does not verify, every other vector one that does.
func TestVectorsWithJose(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the interop check of the vectors needs it")
	}
	root, err := tools.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"jose", "viem"} {
		if _, err := os.Stat(filepath.Join(root, "clients", "ts", "node_modules", pkg, "package.json")); err != nil {
			t.Skipf("clients/ts/node_modules/%s is missing (npm ci in clients/ts): %v", pkg, err)
		}
	}
	cmd := exec.Command(node, filepath.Join(root, "clients", "ts", "interop", "conformance-jose.mjs"), vectorDir(t))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("conformance-jose.mjs: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `"failures":0`) {
		t.Fatalf("unexpected output:\n%s", out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
}
