package verify_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/reputation/merkle"
	"github.com/surety-ioa/surety/reputation/verify"
)

var update = flag.Bool("update", false, "rewrite testdata/auditor from a fixed node key")

// auditorFiles is what a node serves an auditor, from a fixed key (Ed25519 signs
// deterministically): the files Example_auditor reads.
func auditorFiles(t *testing.T) map[string][]byte {
	t.Helper()
	k, err := identity.KeyFromSeed(identity.Ed25519, bytes.Repeat([]byte{0x5e}, 32))
	if err != nil {
		t.Fatal(err)
	}
	tr, envs := testLog(11)
	older, _ := tr.Root(4)
	root, _ := tr.Root(11)
	head := func(size uint64) []byte {
		b, _ := json.MarshalIndent(map[string]any{"size": size, "root": map[uint64]any{4: older, 11: root}[size], "epoch": size, "closed": 1_800_000_000 + size,
			"signed": signHeadAt(t, k, tr, size)}, "", "  ")
		return append(b, '\n')
	}
	path, _ := tr.InclusionProof(6, 11)
	incl, _ := json.MarshalIndent(verify.InclusionProof{Leaf: verify.EnvelopeLeaf(envs[6]), Index: 6, Size: 11, Path: path}, "", "  ")
	cons, _ := tr.ConsistencyProof(4, 11)
	consJSON, _ := json.MarshalIndent(verify.ConsistencyProof{From: 4, To: 11, Path: cons}, "", "  ")
	return map[string][]byte{
		"node.txt":         []byte(k.DID.String() + "\n"),
		"checkpoint.txt":   signCheckpoint(t, k, verify.Checkpoint{Origin: verify.Origin(31337, anchor, k.DID.String()), Size: 11, Root: root}),
		"head-4.json":      head(4),
		"head-11.json":     head(11),
		"inclusion.json":   append(incl, '\n'),
		"consistency.json": append(consJSON, '\n'),
		"audit.jws":        append(envs[6], '\n'),
	}
}

// signHeadAt signs the head of size as reputation.Log does, epoch size and closed a fixed time.
func signHeadAt(t *testing.T, k *identity.Key, tr *merkle.Tree, size uint64) string {
	t.Helper()
	root, _ := tr.Root(size)
	jws, err := k.SignDocument(headPayload(size, root, int64(size), 1_800_000_000+int64(size)), verify.HeadType)
	if err != nil {
		t.Fatal(err)
	}
	return jws
}

// TestAuditorTestdata keeps testdata/auditor what the package makes and checks (go test
// -update rewrites it).
func TestAuditorTestdata(t *testing.T) {
	dir := filepath.Join("testdata", "auditor")
	for name, want := range auditorFiles(t) {
		file := filepath.Join(dir, name)
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("%v (go test -update writes it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what the package makes (go test -update):\n%s", file, fmt.Sprintf("got\n%s\nwant\n%s", got, want))
		}
	}
}
