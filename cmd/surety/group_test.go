package main

import (
	"bufio"
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGroupThreadThroughTheCLI: a creator makes a group with one member once it is bound on
// chain; both post through
// the four conversation states; an outsider is refused with one line; `group show` lists the
// thread in order and the event stream delivers it.
func TestGroupThreadThroughTheCLI(t *testing.T) {
	waiting.Parallel(t) // a node (or devnet) of its own
	node := start(t, "node", "--data-dir", t.TempDir(), "--listen", "127.0.0.1:0")
	base := node.apiURL(t)
	dir := t.TempDir()
	keys := map[string]string{}
	dids := map[string]string{}
	for _, who := range []string{"creator", "member", "outsider"} {
		keys[who] = filepath.Join(dir, who+".json")
		dids[who] = strings.TrimSpace(runOK(t, "", "did", "new", "--out", keys[who]))
	}
	// Only a DID bound on chain creates a group (at 409c49a any fresh key did); the member it
	// admits posts unbound.
	r := start(t, "group", "members", "--node", base, "--key", keys["creator"], "task-7", dids["member"])
	if code := r.wait(t); code == 0 || !strings.Contains(r.stderr.String(), "not bound") {
		t.Errorf("an unbound creator: exit %d, stderr %q", code, r.stderr.String())
	}
	runOK(t, "", "did", "bind", "--node", base, "--key", keys["creator"], "--dev-wallet", "1")
	out := runOK(t, "", "group", "members", "--node", base, "--key", keys["creator"], "task-7", dids["member"])
	if !strings.Contains(out, "group task-7: 2 members") {
		t.Fatalf("group members: %s", out)
	}
	for i, st := range []string{"discussion", "task_assignment", "execution", "conclusion"} {
		who := []string{"creator", "member"}[i%2]
		if out := runOK(t, "", "group", "post", "--node", base, "--key", keys[who], "--state", st, "--text", "step "+st, "task-7"); !strings.Contains(out, "posted #") {
			t.Fatalf("post %s: %s", st, out)
		}
	}
	r = start(t, "group", "post", "--node", base, "--key", keys["outsider"], "--text", "let me in", "task-7")
	if code := r.wait(t); code == 0 || !strings.Contains(r.stderr.String(), "not a member") || strings.Count(strings.TrimSpace(r.stderr.String()), "\n") != 0 {
		t.Errorf("outsider's post: exit %d, stderr %q", code, r.stderr.String())
	}
	r = start(t, "group", "post", "--node", base, "--key", keys["member"], "--state", "done", "--text", "x", "task-7")
	if code := r.wait(t); code != 2 {
		t.Errorf("a bad state: exit %d, stderr %q", code, r.stderr.String())
	}

	out = runOK(t, "", "group", "show", "--node", base, "task-7")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 || !strings.Contains(lines[1], "#1") || !strings.Contains(lines[1], "step discussion") || !strings.Contains(lines[4], "conclusion") {
		t.Errorf("group show:\n%s", out)
	}

	// The event stream: the thread from seq 2 on, then it waits.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/v1/groups/task-7/stream", nil)
	req.Header.Set("Last-Event-ID", "2")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var ids []string
	for len(ids) < 2 && sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			ids = append(ids, id)
		}
	}
	if strings.Join(ids, ",") != "3,4" {
		t.Errorf("stream ids after 2: %v", ids)
	}

	for _, tt := range []struct{ path, want string }{
		{"/v1/groups/nope/envelopes", `"status":404`},
		{"/v1/groups/task-7/envelopes?after=x", `"status":400`},
		{"/v1/groups/bad%20id", `"status":400`},
	} {
		resp, err := http.Get(base + tt.path)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 2048)
		n, _ := resp.Body.Read(b)
		resp.Body.Close()
		if !strings.Contains(string(b[:n]), tt.want) || resp.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("GET %s: %s", tt.path, b[:n])
		}
	}
}
