package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/auditor"
	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/testnet"
)

// TestRecomputeTheDemosDayOnAnvil is issue 28's acceptance for scores: the demo plays its
// marketplace day on Anvil; a node process then serves the demo's data (its log, anchored on
// chain) and scores its anchored head. An auditor, with package auditor alone, reads every leaf
// from the node and every chain fact from Anvil's own JSON-RPC, recomputes every agent's
// scores and finds the node's published ones equal, bit for bit. In front of the node, a proxy
// that changes one published score by the least amount a float64 can change, one that swaps a
// leaf's envelope, and one that names other facts' block are each caught; so is the CLI's
// `surety log verify --recompute` through the lying proxy.
func TestRecomputeTheDemosDayOnAnvil(t *testing.T) {
	if testing.Short() {
		t.Skip("plays the demo's day on Anvil")
	}
	waiting.Parallel(t)
	ctx := t.Context()
	dn, err := testnet.Start(ctx, testnet.Config{AnvilBin: testutil.Tool(t, "anvil"), Deploy: contracts.DeployConfig{FeeBps: contracts.DefaultFeeBps}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dn.Stop)
	dir := t.TempDir()
	depFile, data := filepath.Join(dir, "deployment.json"), filepath.Join(dir, "demo")
	if err := testnet.WriteDeployment(depFile, dn.Deployment); err != nil {
		t.Fatal(err)
	}
	bin := surety.Path(t)
	demo := exec.CommandContext(ctx, bin, "demo", "--rpc-url", dn.RPC(), "--deployment", depFile, "--data-dir", data)
	if out, err := demo.CombinedOutput(); err != nil {
		t.Fatalf("the demo's day: %v\n%s", err, testutil.Tail(string(out), 4000))
	}

	// The demo's node, back up on its data as a node process: it closes what the day left
	// open, anchors it, and scores the anchored head.
	port, err := testnet.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	api := "127.0.0.1:" + strconv.Itoa(port)
	var nodeLog bytes.Buffer
	node := exec.Command(bin, "node", "--rpc-url", dn.RPC(), "--deployment", depFile, "--data-dir", data, "--listen", api,
		"--p2p-listen", "/ip4/127.0.0.1/tcp/0", "--log-epoch", "1s", "--log-grace", "3s")
	node.Stdout, node.Stderr = &nodeLog, &nodeLog
	node.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = node.Process.Signal(syscall.SIGTERM)
		_ = node.Wait()
		if t.Failed() {
			t.Logf("node log:\n%s", testutil.Tail(nodeLog.String(), 8000))
		}
	})
	base := "http://" + api
	nc, err := client.New(base)
	if err != nil {
		t.Fatal(err)
	}
	var scored *wire.ScoredHead
	testutil.Eventually(t, "the node to score its anchored head", 90*time.Second, func() bool {
		head, err := nc.LogHead(ctx)
		if err != nil || head.Size == 0 {
			return false
		}
		sh, err := nc.LogScores(ctx, 0, "", "", 0, true)
		if err != nil || sh.Size != head.Size {
			return false
		}
		scored = sh
		return true
	})
	if len(scored.Scores) < 6 || scored.Inputs == nil || len(scored.Inputs.Audits) < 3 {
		t.Fatalf("the demo's day scored %d agents from %v: want its marketplace and five agents, and its audits", len(scored.Scores), scored.Inputs)
	}

	chain, err := ethclient.Dial(dn.RPC())
	if err != nil {
		t.Fatal(err)
	}
	defer chain.Close()
	top := scored.Scores[0]
	for _, s := range scored.Scores {
		if s.Weight > top.Weight {
			top = s
		}
	}
	check := func(t *testing.T, nodeURL string) (*auditor.Report, error) {
		t.Helper()
		c, err := client.New(nodeURL)
		if err != nil {
			t.Fatal(err)
		}
		return auditor.Check(ctx, auditor.CheckConfig{Node: c, Chain: chain, Dir: t.TempDir(), DID: top.DID})
	}

	t.Run("honest node", func(t *testing.T) {
		rep, err := check(t, base)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Mismatches) != 0 || rep.Agents != len(scored.Scores) || rep.Subject == nil {
			t.Fatalf("mismatches %v over %d agents (want none over %d)", rep.Mismatches, rep.Agents, len(scored.Scores))
		}
		if rep.Subject.Score != top.Score || rep.Audits != len(scored.Inputs.Audits) {
			t.Fatalf("recomputed %v of %s from %d audits; the node published %v from %d", rep.Subject.Score, top.DID, rep.Audits, top.Score, len(scored.Inputs.Audits))
		}
		if rep.Subject.Score == 0.5 || rep.Subject.Weight == 0 {
			t.Fatalf("the top agent's recomputed score %v (weight %v) is the prior: no audit moved it", rep.Subject.Score, rep.Subject.Weight)
		}
	})

	// lie serves the node through a proxy that rewrites the answers of path with edit.
	lie := func(t *testing.T, path string, edit func(body []byte) []byte) string {
		target, _ := url.Parse(base)
		proxy := httputil.NewSingleHostReverseProxy(target)
		proxy.ModifyResponse = func(r *http.Response) error {
			if r.Request.URL.Path != path || r.StatusCode != http.StatusOK {
				return nil
			}
			body, err := io.ReadAll(r.Body)
			if err != nil {
				return err
			}
			body = edit(body)
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
			r.Header.Set("Content-Length", strconv.Itoa(len(body)))
			return nil
		}
		srv := httptest.NewServer(proxy)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	scores := func(edit func(sh *wire.ScoredHead)) func([]byte) []byte {
		return func(body []byte) []byte {
			var sh wire.ScoredHead
			if err := json.Unmarshal(body, &sh); err != nil {
				return body
			}
			edit(&sh)
			out, _ := json.Marshal(&sh)
			return out
		}
	}

	t.Run("a score one ulp off", func(t *testing.T) {
		liar := lie(t, "/v1/log/scores", scores(func(sh *wire.ScoredHead) {
			for i := range sh.Scores {
				if sh.Scores[i].DID == top.DID {
					sh.Scores[i].Score = math.Nextafter(sh.Scores[i].Score, 1)
				}
			}
		}))
		rep, err := check(t, liar)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Mismatches) != 1 || rep.Mismatches[0].DID != top.DID || rep.Mismatches[0].Field != "score" {
			t.Fatalf("mismatches %v: want exactly %s's score", rep.Mismatches, top.DID)
		}
		// The CLI says so, names the agent and exits 1.
		cmd := exec.CommandContext(ctx, bin, "log", "verify", "--recompute", top.DID, "--node", liar, "--rpc-url", dn.RPC())
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "NOT verified") || !strings.Contains(string(out), top.DID) {
			t.Fatalf("log verify --recompute through the liar: %v\n%s", err, out)
		}
	})

	t.Run("a forged leaf", func(t *testing.T) {
		liar := lie(t, "/v1/log/leaves", func(body []byte) []byte {
			var page wire.LeafPage
			if err := json.Unmarshal(body, &page); err != nil || len(page.Leaves) == 0 {
				return body
			}
			env := page.Leaves[0].Envelope
			page.Leaves[0].Envelope = append(bytes.Clone(env[:len(env)-1]), env[len(env)-1]^1)
			out, _ := json.Marshal(&page)
			return out
		})
		if _, err := check(t, liar); !errors.Is(err, auditor.ErrLogMismatch) {
			t.Fatalf("a leaf whose envelope was changed: %v, want ErrLogMismatch", err)
		}
	})

	t.Run("facts of another block", func(t *testing.T) {
		liar := lie(t, "/v1/log/scores", scores(func(sh *wire.ScoredHead) { sh.Block-- }))
		if _, err := check(t, liar); !errors.Is(err, auditor.ErrLogMismatch) {
			t.Fatalf("scores said to use block %d: %v, want ErrLogMismatch", scored.Block-1, err)
		}
	})

	t.Run("the README's make devnet line", func(t *testing.T) {
		line := readmeLine(t, "## Checking a node as an auditor", ":8545")
		line = strings.NewReplacer("bin/surety", bin, "http://127.0.0.1:8545", dn.RPC(), "http://127.0.0.1:7746", base, "$AGENT", top.DID,
			".devnet/deployment.json", depFile).Replace(line)
		cmd := exec.CommandContext(ctx, "bash", "-c", line)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("log verify --recompute: %v\n%s", err, out)
		}
		want := fmt.Sprintf("verified: %s's score %v (confidence %v", top.DID, top.Score, top.Confidence)
		if !strings.Contains(string(out), want) || strings.Contains(string(out), "trusted:") || !strings.Contains(string(out), "is bound to the node's DID") {
			t.Fatalf("log verify --recompute printed:\n%s\nwant a line with %q, the anchoring wallet bound to the node's DID, and nothing trusted", out, want)
		}
		t.Logf("%s\n%s", line, out)
	})
}

// readmeLine is the first line of an sh block of README.md's section heading that contains
// marker.
func readmeLine(t *testing.T, heading, marker string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	in, block := false, false
	for _, l := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(l, "## "):
			in = l == heading
		case in && l == "```sh":
			block = true
		case block && l == "```":
			block = false
		case in && block && strings.Contains(l, marker):
			return l
		}
	}
	t.Fatalf("README.md's %q has no sh line with %q", heading, marker)
	return ""
}
