package conformance_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/surety-ioa/surety/internal/testutil"
)

// TestVectorsWithJose checks the committed vectors with implementations that are not
// Surety's (clients/ts/interop/conformance-jose.mjs): every signature with jose (EdDSA) or
// viem (ES256K), keys and did:key derivations with Node's crypto and viem, bindings' EIP-712
// digests and wallet signatures with viem. A vector refused for its signature must carry one
// that does not verify, every other vector one that does.
func TestVectorsWithJose(t *testing.T) {
	node, script := testutil.NodeScript(t, "conformance-jose.mjs", "jose", "viem")
	cmd := exec.Command(node, script, vectorDir(t))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("conformance-jose.mjs: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `"failures":0`) {
		t.Fatalf("unexpected output:\n%s", out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
}
