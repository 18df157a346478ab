package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/surety-ioa/surety/internal/testutil/apitest"
)

// The story the demo tells, and the balances it prints checked against the chain, are
// package demo's tests; these are about the command: its flags, its output, its exit codes.

// TestDemoEmbedded runs `surety demo` on its embedded chain (what `make demo` runs): the story
// goes to stdout, from the node coming up to the day's end, with the nine final balances.
func TestDemoEmbedded(t *testing.T) {
	if testing.Short() {
		t.Skip("plays the whole demo")
	}
	waiting.Parallel(t) // a node (or devnet) of its own
	r := start(t, "demo")
	// The demo takes under a minute on a quiet machine; under a loaded test run, a few.
	if code := r.waitFor(t, 5*time.Minute); code != exitOK {
		t.Fatalf("surety demo: exit %d\n%s", code, r.stderr)
	}
	out := r.stdout.String()
	if !regexp.MustCompile(`^\[ *\d+\.\ds\] node did:key:\S+ up on chain \d+ \(embedded\), escrow 0x`).MatchString(out) {
		t.Errorf("the demo did not start by naming its node:\n%s", out)
	}
	if !strings.HasSuffix(out, "the day is over\n") {
		t.Errorf("the demo did not end the day:\n%s", out)
	}
	if n := len(regexp.MustCompile(`(?m)^  balance \S+ +0x[0-9a-fA-F]{40} \d+ wei`).FindAllString(out, -1)); n != 9 {
		t.Errorf("%d balances printed, want 9:\n%s", n, out)
	}
}

// TestDemoFlags: --rpc-url and --deployment go together, and a deployment file that cannot be
// read is refused before a node starts; both are usage errors.
func TestDemoFlags(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "deployment.json")
	for _, tt := range []struct {
		args []string
		says string
	}{
		{[]string{"--rpc-url", "http://127.0.0.1:1"}, "--rpc-url and --deployment go together"},
		{[]string{"--deployment", missing}, "--rpc-url and --deployment go together"},
		{[]string{"--rpc-url", "http://127.0.0.1:1", "--deployment", missing}, "deployment.json"},
	} {
		r := start(t, append([]string{"demo"}, tt.args...)...)
		if code := r.wait(t); code != exitUsage || !strings.Contains(r.stderr.String(), tt.says) || r.stdout.String() != "" {
			t.Errorf("demo %v: exit %d, stdout %q, stderr %q; want %d and %q", tt.args, code, r.stdout, r.stderr, exitUsage, tt.says)
		}
	}
}

// TestDemoKeep runs `surety demo --keep --listen ADDR`: after the day the command prints the
// explorer's URL on the address asked for and keeps running; the node answers there until
// Ctrl-C (the context ending), and then the command exits 0.
func TestDemoKeep(t *testing.T) {
	if testing.Short() {
		t.Skip("plays the whole demo")
	}
	waiting.Parallel(t) // a node (or devnet) of its own
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	r := start(t, "demo", "--keep", "--listen", addr)
	want := "\nexplorer: http://" + addr + "/explorer/\n"
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(r.stdout.String(), want) {
		select {
		case code := <-r.code:
			r.code <- code
			t.Fatalf("demo --keep exited with %d before printing %q:\n%s\n%s", code, want, r.stdout, r.stderr)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("demo --keep did not print %q within 2 minutes:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stdout.String(), "the day is over\n"+want[1:]) {
		t.Errorf("the explorer's URL does not follow the day's end:\n%s", r.stdout)
	}
	if info := apitest.GetInfo(t, "http://"+addr); info.NodeDID == "" {
		t.Errorf("the kept node's /v1/info names no node: %+v", info)
	}
	r.cancel()
	if code := r.wait(t); code != 0 {
		t.Errorf("demo --keep stopped by Ctrl-C: exit %d, want 0; stderr:\n%s", code, r.stderr)
	}
}
