package conformance_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surety-ioa/surety/internal/testutil"
)

// TestA2ACardVectorsWithTheSDK: @a2a-js/sdk's own verifier (with its own JCS) reaches the
// a2a-card vectors' signature verdicts (valid, forged, another signer); the other vectors
// rest on Surety's rules, which the SDK does not know (clients/ts/interop/a2a-vectors.mjs).
func TestA2ACardVectorsWithTheSDK(t *testing.T) {
	node, script := testutil.NodeScript(t, "a2a-vectors.mjs", "@a2a-js/sdk")
	dir := filepath.Join(vectorDir(t), "a2a-card")
	out, err := exec.Command(node, script, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("a2a-vectors.mjs: %v\n%s", err, out)
	}
	lines, checked := 0, 0
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r struct {
			SDK any `json:"sdk"`
		}
		if json.Unmarshal([]byte(l), &r) != nil {
			t.Fatalf("a2a-vectors.mjs printed %q", l)
		}
		lines++
		if r.SDK != "skipped" {
			checked++
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if lines != len(files) || checked < 8 {
		t.Errorf("the SDK ran %d of %d vectors, checking %d signatures:\n%s", lines, len(files), checked, out)
	}
}
