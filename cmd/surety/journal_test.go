package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil/apitest"
)

// TestCLIResumesAnUnansweredWrite: at 66f817e the CLI's Idempotency-Key was random per run,
// so a re-run after a crash posted again. The CLI journals each write until the node answers;
// here the first run's request reached the node and the CLI died before the answer: the
// re-run resends it under the same key and gets the same bounty, and the chain holds one.
func TestCLIResumesAnUnansweredWrite(t *testing.T) {
	waiting.Parallel(t) // a node (or devnet) of its own
	dir := t.TempDir()
	node := start(t, "node", "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0", "--dev-accounts", "4")
	base := node.apiURL(t)
	info := apitest.GetInfo(t, base)
	journalDir := filepath.Join(dir, "journal")
	vars := map[string]string{journalEnv: journalDir}
	wallet := func(i int) string { return crypto.PubkeyToAddress(chain.DevKey(i).PublicKey).Hex() }
	keyFile := filepath.Join(dir, "market.json")
	runOK(t, "", "did", "new", "--out", keyFile)
	runOK(t, "", "did", "bind", "--node", base, "--key", keyFile, "--dev-wallet", "1")
	countPosted := func() int {
		bc := &apitest.Client{T: t, Base: base}
		code, out := bc.Request("GET", "/v1/bounties", nil, nil)
		var list struct {
			Bounties []json.RawMessage `json:"bounties"`
		}
		if code != http.StatusOK || json.Unmarshal(out, &list) != nil {
			t.Fatalf("list: %d %s", code, out)
		}
		return len(list.Bounties)
	}

	// What the first run journalled and sent before it died.
	args := []string{"bounty", "post", "--node", base, "--key", keyFile, "--wallet", wallet(1), "--amount", "1eth", "--arbiter", wallet(3), "--quiet"}
	body := api.PostBody{Wallet: common.HexToAddress(wallet(1)), Amount: "1000000000000000000", Arbiter: common.HexToAddress(wallet(3)),
		Deadline: uint64(time.Now().Add(24 * time.Hour).Unix()), ReviewWindow: 3600, MinStake: "0"}
	raw, _ := json.Marshal(body)
	j := &journal{dir: journalDir}
	name := journalName("", base, args)
	if err := j.save(name, &journalEntry{Key: "first-run-key", Path: "/v1/bounties", Body: raw, Command: args, Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	k, err := readKeyFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	env, err := signForNode(k, info, 0, json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	code, out := (&apitest.Client{T: t, Base: base}).Request("POST", "/v1/bounties", []byte(env), map[string]string{"Idempotency-Key": "first-run-key"})
	if code != http.StatusCreated {
		t.Fatalf("the first run's request: %d %s", code, out)
	}
	first := apitest.DecodeResult(t, out).Bounty.ID

	// The re-run.
	r := startWithEnv(t, "", vars, args...)
	if code := r.wait(t); code != exitOK {
		t.Fatalf("re-run: exit %d\n%s", code, r.stderr)
	}
	if !strings.Contains(r.stderr.String(), "resuming the unanswered request") {
		t.Errorf("the re-run did not say it resumed:\n%s", r.stderr)
	}
	if got := strings.TrimSpace(r.stdout.String()); got != strconv.FormatUint(first, 10) {
		t.Errorf("the re-run printed bounty %q, want the first run's %d", got, first)
	}
	if n := countPosted(); n != 1 {
		t.Errorf("%d bounties after the re-run, want 1", n)
	}
	if entries, _ := os.ReadDir(journalDir); len(entries) != 0 {
		t.Errorf("the journal keeps %d entries after the answer, want none", len(entries))
	}

	// A run that gets its answer leaves nothing behind, and a new run is a new request.
	r = startWithEnv(t, "", vars, args...)
	if code := r.wait(t); code != exitOK {
		t.Fatalf("a new run: exit %d\n%s", code, r.stderr)
	}
	if n := countPosted(); n != 2 {
		t.Errorf("%d bounties after a new run, want 2", n)
	}
	if entries, _ := os.ReadDir(journalDir); len(entries) != 0 {
		t.Errorf("the journal keeps %d entries after an answered run", len(entries))
	}
}
