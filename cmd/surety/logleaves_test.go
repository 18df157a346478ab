package main

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/internal/testutil/apitest"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/reputation/merkle"
	"github.com/surety-ioa/surety/reputation/verify"
)

// TestAuditorWalkThroughOnMakeRun: the README's auditor's walk-through works on a `make run`
// node as written. The node runs the command line `make run` runs (make -n: the Makefile is
// what passes LOG_EPOCH and LOG_GRACE on; the README's values shortened to 1s and 3s, and the
// libp2p port a free one); a bound auditor files an audit; once its epoch is closed and
// anchored on the embedded chain, the section's commands run in bash as written: log leaves
// lists the audit, and log verify checks it through the node's relay (POST /v1/rpc) and says
// that this trusts the node. The leaves of log leaves --json rebuild the signed head's root.
func TestAuditorWalkThroughOnMakeRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a node and the auditor's commands")
	}
	waiting.Parallel(t) // waits for the audit's epoch to close and be anchored
	makeBin, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make")
	}
	var makeRun string
	var lines []string
	for _, l := range readmeBlocks(t, readmeTourEnd, readmeAuditorEnd) {
		if strings.HasPrefix(l, "make run ") {
			makeRun = l
			continue
		}
		if strings.Contains(l, ":8545") {
			continue // the make devnet line: testnet/e2e's TestRecomputeTheDemosDayOnAnvil runs it
		}
		lines = append(lines, l)
	}
	settings := strings.Fields(strings.SplitN(makeRun, "#", 2)[0])[2:]
	short := map[string]string{"LOG_EPOCH": "1s", "LOG_GRACE": "3s"}
	var vars []string
	for _, s := range settings {
		name, _, _ := strings.Cut(s, "=")
		if short[name] == "" {
			t.Fatalf("the README's make run sets %s; the test knows LOG_EPOCH and LOG_GRACE", s)
		}
		vars = append(vars, name+"="+short[name])
	}
	if len(vars) != 2 {
		t.Fatalf("the README's walk-through starts the node with %q, want make run LOG_EPOCH=… LOG_GRACE=…", makeRun)
	}
	dir := t.TempDir()
	cmd := exec.Command(makeBin, append([]string{"-s", "-n", "-o", "build", "run", "DATA_DIR=" + filepath.Join(dir, "data"), "LISTEN=127.0.0.1:0"}, vars...)...)
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make -n run: %v", err)
	}
	args := strings.Fields(string(out))
	if len(args) < 2 || args[0] != "./bin/surety" || !strings.Contains(string(out), " --log-epoch 1s --log-grace 3s") {
		t.Fatalf("make run runs %q: not a node with LOG_EPOCH and LOG_GRACE", out)
	}
	node := start(t, append(args[1:], "--p2p-listen", "/ip4/127.0.0.1/tcp/0", "--log-level", "warn")...)
	base := node.apiURL(t)
	bc := apitest.NewClient(t, base)
	if bc.Info.Chain.Kind != "embedded" {
		t.Fatalf("make run's chain is %q", bc.Info.Chain.Kind)
	}
	auditor, subject := bc.NewParty(1), bc.NewParty(2)
	env := bc.Envelope(auditor, 0, map[string]any{"kind": reputation.AuditKind, "subject": subject.Key.DID.String(), "envelope": "msg-1", "score": 0.7,
		"evidence": map[string]any{"hash": common.Hash{3}.Hex()}})
	if code, body := bc.Request("POST", "/v1/audits", env, nil); code != http.StatusCreated {
		t.Fatalf("audit: %d %s", code, body)
	}
	var head reputation.Head
	testutil.Eventually(t, "the head anchored on the embedded chain", 20*time.Second, func() bool {
		code, body := bc.Request("GET", "/v1/log/head", nil, nil)
		return code == http.StatusOK && json.Unmarshal(body, &head) == nil && head.AnchorTx != "" && head.Size >= 1
	})

	var script strings.Builder
	script.WriteString("set -euo pipefail\nprintf '%s' '" + string(env) + "' > audit.jws\n")
	for _, l := range lines {
		script.WriteString("echo '+ " + strings.ReplaceAll(l, "'", `'"'"'`) + "'\n")
		script.WriteString(readmePort.ReplaceAllString(l, strings.TrimPrefix(base, "http://")) + "\n")
	}
	got := runScript(t, script.String(), "SURETY_NODE="+base, "AGENT="+subject.Key.DID.String())
	leaf := verify.EnvelopeLeaf(env)
	for _, want := range []string{
		`"anchorTx":"` + head.AnchorTx,                          // the head, by curl
		" " + leaf.String() + ": epoch ", "anchored with epoch", // log leaves --subject
		"trusted: the node itself: its chain is embedded", "verified: leaf " + leaf.String(), // log verify
		"verified: " + subject.Key.DID.String() + "'s score ", "bit for bit, as do all ", // log verify --recompute
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the walk-through's output does not show %q:\n%s", want, got)
		}
	}

	// The leaves log leaves --json prints rebuild the signed head's root.
	var page wire.LeafPage
	if err := json.Unmarshal([]byte(runOK(t, "", "log", "leaves", "--node", base, "--json")), &page); err != nil {
		t.Fatal(err)
	}
	signed, err := verify.OpenHead(head.Signed, bc.Info.NodeDID)
	if err != nil {
		t.Fatal(err)
	}
	var tree merkle.Tree
	for _, x := range page.Leaves {
		tree.Append(verify.EnvelopeLeaf(x.Envelope))
	}
	if root, err := tree.Root(signed.Size); err != nil || root != signed.Root {
		t.Errorf("log leaves --json: %d leaves give root %s at size %d, the signed head %s (%v)", len(page.Leaves), root, signed.Size, signed.Root, err)
	}
	if out := runOK(t, "", "log", "leaves", "--node", base, "--subject", auditor.Key.DID.String()); !strings.HasPrefix(out, "no leaves from 0 in the log of size ") {
		t.Errorf("log leaves of a DID that was audited by none: %s", out)
	}
	r := start(t, "log", "leaves", "--node", base, "--subject", "nobody")
	if code := r.wait(t); code != exitUsage || strings.Count(strings.TrimSpace(r.stderr.String()), "\n") != 0 {
		t.Errorf("log leaves --subject nobody: exit %d, stderr %q", code, r.stderr)
	}
	// Without --rpc-url, log verify says in one line where the embedded chain answers.
	r = start(t, "log", "verify", "--node", base, "--envelope", filepath.Join(dir, "none"))
	if code := r.wait(t); code != exitUsage || !strings.Contains(r.stderr.String(), "NODE/v1/rpc") || strings.Count(strings.TrimSpace(r.stderr.String()), "\n") != 0 {
		t.Errorf("log verify without --rpc-url: exit %d, stderr %q", code, r.stderr)
	}
}
