package conformance_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/surety-ioa/surety/internal/testutil"
)

// TestCredentialVectorsWithNPM checks the credential and status-list vectors with
// implementations that are not Surety's (clients/ts/interop/vc-conformance.mjs): jose
// verifies each vc+jwt with the key its did:key kid names (a vector refused for its signature
// carries one that does not verify, every other one that does), and the window at the
// vector's now; @digitalbazaar/vc-bitstring-status-list reads each credential's status entry
// and decodes each list, whose bits must be the vector's.
func TestCredentialVectorsWithNPM(t *testing.T) {
	node, script := testutil.NodeScript(t, "vc-conformance.mjs", "jose", "@digitalbazaar/vc-bitstring-status-list")
	out, err := exec.Command(node, script, vectorDir(t)).CombinedOutput()
	if err != nil {
		t.Fatalf("vc-conformance.mjs: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `"failures":0`) || strings.Contains(string(out), `"checked":0`) {
		t.Fatalf("unexpected output:\n%s", out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
}
