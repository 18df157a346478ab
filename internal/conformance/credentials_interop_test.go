package conformance_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surety-ioa/surety/internal/tools"
)

// TestCredentialVectorsWithNPM checks the credential and status-list vectors with
// implementations that are not Surety's (clients/ts/interop/vc-conformance.mjs): jose
// verifies each vc+jwt with the key its did:key kid names (a vector refused for its signature
// carries one that does not verify, every other one that does), and the window at the
// vector's now; @digitalbazaar/vc-bitstring-status-list reads each credential's status entry
// and decodes each list, whose bits must be the vector's.
func TestCredentialVectorsWithNPM(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the interop check of the credential vectors needs it")
	}
	root, err := tools.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"jose", "@digitalbazaar/vc-bitstring-status-list"} {
		if _, err := os.Stat(filepath.Join(root, "clients", "ts", "node_modules", pkg, "package.json")); err != nil {
			t.Skipf("clients/ts/node_modules/%s is missing (npm ci in clients/ts): %v", pkg, err)
		}
	}
	out, err := exec.Command(node, filepath.Join(root, "clients", "ts", "interop", "vc-conformance.mjs"), vectorDir(t)).CombinedOutput()
	if err != nil {
		t.Fatalf("vc-conformance.mjs: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `"failures":0`) || strings.Contains(string(out), `"checked":0`) {
		t.Fatalf("unexpected output:\n%s", out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
}
