package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/internal/testutil/apitest"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/testnet"
)

// The explorer's browser test: how long each part may take.
const (
	// demoWithin bounds the demo's day on Anvil, up to the explorer's URL.
	demoWithin = 3 * time.Minute
	// browserWithin bounds the whole browser script (seven steps, each of a few waits).
	browserWithin = 5 * time.Minute
	// browserStep bounds one wait of the script (STEP_TIMEOUT); the live bounty and the
	// first page a cold browser opens may take three.
	browserStep = 20 * time.Second
	// logHeadWithin bounds the wait for the log to close and anchor the epoch of an audit (the
	// demo's node: 1 s epochs, 3 s grace).
	logHeadWithin = 45 * time.Second
)

// explorerTyped is typed into the agents page's search box: a capability one agent of the
// day has.
const explorerTyped = "fuzzing"

// explorerWebDir is the explorer's sources and npm packages, from this package's directory.
const explorerWebDir = "../../explorer/web"

// explorerSearch is what the test searches on the agents page: the words of the demo's own
// search, whose top result has audits (so its score has a history to plot).
const explorerSearch = "audit solidity"

// shotNames are the screenshots the browser test takes (docs/explorer/<name>.png).
var shotNames = map[string]int{"agents": 1280, "agent": 1280, "log": 1280, "bounty": 1280, "network": 1280, "agent-390": 390}

// browserTools finds node, the explorer's npm packages (playwright-core) and Chromium, or
// skips the test when one is missing outside CI (in CI, where make test installs them, it
// fails). It returns node, the script and the browser.
func browserTools(t *testing.T) (nodeBin, script, browser string) {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		if testutil.InCI() {
			t.Fatalf(format+" (CI must have it: make tools installs it)", args...)
		}
		t.Skipf("skipping: "+format, args...)
	}
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		missing("node (Node.js 20+) is not installed: %v", err)
	}
	web, err := filepath.Abs(explorerWebDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(web, "node_modules", "playwright-core", "package.json")); err != nil {
		missing("playwright-core is not installed in explorer/web/node_modules (cd explorer/web && npm ci)")
	}
	browser = os.Getenv("CHROMIUM")
	if browser == "" {
		browser = "/usr/bin/chromium"
	}
	if fi, err := os.Stat(browser); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		missing("no Chromium at %s (Debian: apt-get install chromium; or set CHROMIUM)", browser)
	}
	return nodeBin, filepath.Join(web, "test", "browser.mjs"), browser
}

// lines collects a process's output line by line, for a test to wait on.
type lines struct {
	mu   sync.Mutex
	all  []string
	more chan struct{} // closed and replaced at each new line, and at the end
	done bool
}

func newLines(r io.Reader) *lines {
	l := &lines{more: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
		for sc.Scan() {
			l.mu.Lock()
			l.all = append(l.all, sc.Text())
			close(l.more)
			l.more = make(chan struct{})
			l.mu.Unlock()
		}
		l.mu.Lock()
		l.done = true
		close(l.more)
		l.mu.Unlock()
	}()
	return l
}

// wait returns the first line from index from on that match accepts, and its index; false
// when the output ends or ctx does first.
func (l *lines) wait(ctx context.Context, from int, match func(string) bool) (string, int, bool) {
	for {
		l.mu.Lock()
		for i := from; i < len(l.all); i++ {
			if match(l.all[i]) {
				s := l.all[i]
				l.mu.Unlock()
				return s, i, true
			}
		}
		from = len(l.all)
		done, more := l.done, l.more
		l.mu.Unlock()
		if done {
			return "", 0, false
		}
		select {
		case <-more:
		case <-ctx.Done():
			return "", 0, false
		}
	}
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.all, "\n")
}

var explorerURLLine = regexp.MustCompile(`^explorer: (http://127\.0\.0\.1:\d+)/explorer/$`)

// TestExplorerInBrowser plays the demo's day on Anvil with `surety demo --keep` and drives the
// node's explorer in Debian's chromium (playwright-core, explorer/web/test/browser.mjs). In the
// page: the top agent of a search opens, the rows in the API's order, and its chart plots
// exactly the API's score history; a bounty's group thread shows every message verified, and
// one whose signature was changed on the way as not; a bounty the test posts, claims, submits
// and accepts through the API reaches "accepted" on its page live, the page never loaded
// again. Then, with a fourth audit anchored in a second head: an inclusion proof verifies on
// the log page, and fails with one hash of it changed on the way; so does a consistency proof
// between the two heads; a score recomputed in the page from the log's inputs matches the
// node's, and does not once the node's number is one bit off. The network page names the
// node. The page asks nothing of any origin but the node's and throws nothing. Screenshots go
// to $SURETY_SCREENSHOTS (make screenshots: docs/explorer), else to a temporary directory; a
// screenshot of each step that fails goes to $SURETY_FAILURE_SHOTS when set.
func TestExplorerInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Anvil, the demo's day and a browser")
	}
	waiting.Parallel(t) // waits on the demo's node and the browser
	nodeBin, script, browser := browserTools(t)
	ctx, cancel := context.WithTimeout(t.Context(), demoWithin+browserWithin+time.Minute)
	defer cancel()

	// Anvil with the contracts, and the demo's day on it, kept serving.
	devnet, err := testnet.Start(ctx, testnet.Config{AnvilBin: testutil.Tool(t, "anvil"), Deploy: contracts.DeployConfig{FeeBps: contracts.DefaultFeeBps}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(devnet.Stop)
	dir := t.TempDir()
	depFile := filepath.Join(dir, "deployment.json")
	if err := testnet.WriteDeployment(depFile, devnet.Deployment); err != nil {
		t.Fatal(err)
	}
	demo := exec.CommandContext(ctx, surety.Path(t), "demo", "--keep", "--rpc-url", devnet.RPC(), "--deployment", depFile, "--data-dir", filepath.Join(dir, "node"))
	demo.Stderr = &syncWriter{}
	demo.WaitDelay = 10 * time.Second
	out, err := demo.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := demo.Start(); err != nil {
		t.Fatal(err)
	}
	story := newLines(out)
	t.Cleanup(func() {
		_ = demo.Process.Signal(os.Interrupt)
		_ = demo.Wait()
		if t.Failed() {
			t.Logf("the demo:\n%s\nits stderr:\n%s", testutil.Tail(story.String(), 6000), testutil.Tail(demo.Stderr.(*syncWriter).String(), 4000))
		}
	})
	dayCtx, dayDone := context.WithTimeout(ctx, demoWithin)
	line, _, ok := story.wait(dayCtx, 0, explorerURLLine.MatchString)
	dayDone()
	if !ok {
		t.Fatalf("the demo ended, or printed no explorer URL within %s", demoWithin)
	}
	base := explorerURLLine.FindStringSubmatch(line)[1]
	bc := apitest.NewClient(t, base)

	// The day's bounty settled in its group thread (the accepted one), and a new bounty the
	// browser will follow: posted now, settled once the page watches it.
	var list struct {
		Bounties []struct {
			ID     uint64 `json:"id"`
			Status string `json:"status"`
		} `json:"bounties"`
	}
	mustGetJSON(t, base+"/v1/bounties?status=accepted", &list)
	if len(list.Bounties) != 1 {
		t.Fatalf("the day has %d accepted bounties, want 1: %+v", len(list.Bounties), list)
	}
	threadBounty := list.Bounties[0].ID
	var thread struct {
		Envelopes []struct {
			Sender string `json:"sender"`
		} `json:"envelopes"`
	}
	mustGetJSON(t, fmt.Sprintf("%s/v1/groups/bounty-%d/envelopes", base, threadBounty), &thread)
	if len(thread.Envelopes) < 2 {
		t.Fatalf("bounty %d's thread holds %d envelopes, want the day's conversation", threadBounty, len(thread.Envelopes))
	}

	// The DID whose score the log page recomputes: the API's top agent for the search, which
	// has audits.
	found := agentsFor(t, base, explorerSearch)
	if len(found) == 0 {
		t.Fatalf("no agent found for %q", explorerSearch)
	}
	recomputeDID := found[0]
	// The node scores a head once its anchor is mined: wait for the top agent's score history
	// (a point at the day's anchored head), which the agent page's chart must then plot.
	var history struct {
		DID    string         `json:"did"`
		Points []historyPoint `json:"points"`
	}
	if err := waitFor(ctx, logHeadWithin, func() bool {
		return getJSON(base+"/v1/reputation/"+recomputeDID+"/history", &history) && len(history.Points) > 0
	}); err != nil {
		t.Fatalf("%s's score history has no point: %v", recomputeDID, err)
	}
	scoreBefore := scoreOf(t, base, recomputeDID)

	client, err := ethclient.Dial(devnet.RPC())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	head, err := client.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	poster, worker := bc.NewParty(8), bc.NewParty(9) // the demo uses dev accounts 1-7
	task := "Review the explorer's screenshots.\nAnswer with the ones that look wrong."
	// 0.2 ETH: enough for the poster's audit of it to count without stake (over the 0.1 minimum).
	code, body := bc.Request("POST", "/v1/bounties", bc.Envelope(poster, 0, map[string]any{"wallet": poster.Wallet, "amount": "200000000000000000",
		"arbiter": bystander, "deadline": head.Time + 3600, "reviewWindow": 600, "spec": task}), nil)
	if code != http.StatusCreated {
		t.Fatalf("post the live bounty: %d %s", code, body)
	}
	live := apitest.DecodeResult(t, body).Bounty.ID

	// The browser.
	shots := os.Getenv("SURETY_SCREENSHOTS")
	if shots == "" {
		shots = filepath.Join(dir, "shots")
	}
	bctx, bdone := context.WithTimeout(ctx, browserWithin)
	defer bdone()
	cmd := exec.CommandContext(bctx, nodeBin, script)
	cmd.Dir = filepath.Dir(script)
	cmd.Env = append(os.Environ(),
		"EXPLORER_URL="+base+"/explorer/",
		"CHROMIUM="+browser,
		"SEARCH="+explorerSearch,
		"SEARCH_TYPED="+explorerTyped,
		"RECOMPUTE_DID="+recomputeDID,
		fmt.Sprintf("THREAD_BOUNTY=%d", threadBounty),
		fmt.Sprintf("LIVE_BOUNTY=%d", live),
		"SHOTS="+shots,
		fmt.Sprintf("STEP_TIMEOUT=%d", browserStep.Milliseconds()),
		"FAILURE_SHOTS="+os.Getenv("SURETY_FAILURE_SHOTS"),
	)
	stderr := &syncWriter{}
	cmd.Stderr = stderr
	cmd.WaitDelay = 10 * time.Second
	sout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	sin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	steps := newLines(sout)
	failed := func(format string, args ...any) {
		t.Helper()
		t.Fatalf(format+"\nthe browser script said:\n%s\n%s", append(args, steps.String(), testutil.Tail(stderr.String(), 6000))...)
	}

	// Settle the live bounty once the page watches it: claim, submit, accept.
	watching, _, ok := steps.wait(bctx, 0, func(s string) bool { return strings.HasPrefix(s, `{"watching":`) })
	if !ok {
		err := cmd.Wait()
		failed("the browser script ended (%v) before it watched bounty %d", err, live)
	}
	if !strings.Contains(watching, `"failed":true`) {
		for _, a := range []struct {
			by     *apitest.Party
			action string
			body   map[string]any
		}{
			{worker, "claim", map[string]any{}},
			{worker, "submit", map[string]any{"resultHash": "0x" + strings.Repeat("ab", 32)}},
			{poster, "accept", map[string]any{}},
		} {
			if code, out := bc.Act(a.by, live, a.action, a.body); code != http.StatusOK {
				t.Fatalf("%s bounty %d: %d %s", a.action, live, code, out)
			}
		}
	}
	// A fourth leaf (the poster's audit of the live bounty's worker) and a second head for the
	// log page, which the script opens once told.
	code, body = bc.Request("POST", "/v1/audits", bc.Envelope(poster, live, map[string]any{"kind": reputation.AuditKind,
		"subject": worker.Key.DID.String(), "score": 0.9, "evidence": map[string]any{"hash": "0x" + strings.Repeat("cd", 32)}}), nil)
	if code/100 != 2 {
		t.Fatalf("audit of the live bounty's worker: %d %s", code, body)
	}
	if err := waitFor(bctx, logHeadWithin, func() bool {
		var h struct {
			Size     uint64 `json:"size"`
			AnchorTx string `json:"anchorTx"`
		}
		return getJSON(base+"/v1/log/head", &h) && h.Size >= 4 && h.AnchorTx != ""
	}); err != nil {
		t.Fatalf("the log did not anchor a head holding the fourth audit: %v", err)
	}
	blockBefore, err := client.BlockNumber(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(sin, "log\n"); err != nil {
		t.Fatalf("tell the browser script to go on: %v", err)
	}
	sin.Close()
	last, _, ok := steps.wait(bctx, 0, func(s string) bool { return strings.HasPrefix(s, `{"ok":`) })
	err = cmd.Wait()
	if !ok {
		failed("the browser script ended (%v) without its summary", err)
	}
	var got struct {
		OK                       bool
		Rows                     []string
		RowsTyped                []string
		TopDid                   string
		Points                   []historyPoint
		Score                    string
		Heads                    []uint64
		Consistency              string
		ConsistencyTampered      string
		ConsistencyTamperedField string
		Recompute                string
		RecomputeTampered        string
		RecomputeLied            bool
		RecomputeParams          string
		RecomputeAtOff           string
		RecomputeParamsOwn       string
		RecomputeAt              string
		RecomputeAtOffAt         string
		InputsCheck              string
		ProofLeaf                string
		ProofVerified            string
		ProofTampered            string
		TamperedField            string
		Thread                   []threadMessage
		ThreadTampered           []threadMessage
		LiveBefore               []string
		LiveAfter                []string
		LiveState                string
		LiveSameDocument         bool
		TaskCheck                string
		InputsCheckLimited       string
		HugeDeadline             string
		HugeDeadlineTask         string
		HugeDeadlineThread       int
		ThreadForeign            []threadMessage
		ThreadForeignWant        int
		HeadSignature            string
		HeadSignatureNoDid       string
		CardSignature            string
		CardSignatureTampered    string
		AuditSignatures          []string
		AuditSignaturesTampered  []string
		ForeignAudit             bool
		ThreadTask               string
		ThreadTaskSource         string
		ThreadTaskForged         string
		NodeDid                  string
		ChainBlock               uint64
		KeyStatus                string
		AuditLeaves              []string
		AuditWeights             []float64
		NarrowOverflow           int
		OffOrigin                []string
		PageErrors               []string
		Failures                 []struct {
			Step, Error, URL, Page string
		}
	}
	if err := json.Unmarshal([]byte(last), &got); err != nil {
		failed("the script's summary: %v", err)
	}
	t.Logf("the browser's steps:\n%s", steps.String())
	// Each step of the walk that did not hold in the page, then the API's side of those that did.
	stepFailed := map[string]bool{}
	for _, f := range got.Failures {
		stepFailed[f.Step] = true
		t.Errorf("in the browser, step %s: %s\n  at %s; the page showed %q", f.Step, f.Error, f.URL, testutil.Tail(f.Page, 600))
	}
	if err != nil && len(got.Failures) == 0 {
		failed("the browser script: %v", err)
	}

	// The agents page ranks as the API does, and the top agent's chart is its history.
	if !stepFailed["agents"] {
		if want := agentsFor(t, base, explorerSearch); !slices.Equal(got.Rows, want) {
			t.Errorf("the agents page lists %v for %q, the API %v", got.Rows, explorerSearch, want)
		}
		if want := agentsFor(t, base, explorerTyped); len(want) == 0 || !slices.Equal(got.RowsTyped, want) {
			t.Errorf("the agents page lists %v for %q typed into its search, the API %v", got.RowsTyped, explorerTyped, want)
		}
	}
	if !stepFailed["agent"] {
		// The card and every feeding audit verify in the page.
		if got.CardSignature != "verified" {
			t.Errorf("the agent page's card signature: %q, want verified", got.CardSignature)
		}
		if len(got.AuditSignatures) == 0 || slices.ContainsFunc(got.AuditSignatures, func(s string) bool { return s != "verified" }) {
			t.Errorf("the agent page's audit signatures: %v, want every one verified", got.AuditSignatures)
		}
	}
	// With the node lying, the page's checks fail: a description the agent did not sign fails
	// the card's check; another agent's audit listed as this one's fails its row's.
	if !stepFailed["agent-tampered"] {
		if got.CardSignatureTampered != "failed" {
			t.Errorf("with a description the agent did not sign, the card signature: %q, want failed", got.CardSignatureTampered)
		}
		if !got.ForeignAudit {
			t.Errorf("no other agent's audit found to list on the top agent's page")
		} else if n := len(got.AuditSignaturesTampered); n != len(got.AuditSignatures)+1 || got.AuditSignaturesTampered[n-1] != "failed" ||
			slices.ContainsFunc(got.AuditSignaturesTampered[:n-1], func(s string) bool { return s != "verified" }) {
			t.Errorf("with another agent's audit listed, the audit signatures: %v, want %d verified and the last failed", got.AuditSignaturesTampered, len(got.AuditSignatures))
		}
	}
	if !stepFailed["agent"] {
		// The history as it was when the page opened (the fourth audit came later).
		if got.KeyStatus != "active" {
			t.Errorf("the agent page says %s's key is %q, want active", got.TopDid, got.KeyStatus)
		}
		if got.TopDid != recomputeDID {
			t.Errorf("the page's top agent is %s, the API's %s", got.TopDid, recomputeDID)
		}
		if !slices.Equal(got.Points, history.Points) {
			t.Errorf("the chart plots %v, the API's history is %v", got.Points, history.Points)
		}
		// The audits feeding the score are the API's, each with the weight its auditor's
		// audits of the agent add (feeding[].weight, one voice per auditor and subject).
		var rep struct {
			Feeding []struct {
				Leaf   string  `json:"leaf"`
				Weight float64 `json:"weight"`
			} `json:"feeding"`
		}
		mustGetJSON(t, base+"/v1/reputation/"+recomputeDID, &rep)
		var leaves []string
		for _, f := range rep.Feeding {
			leaves = append(leaves, f.Leaf)
		}
		if !slices.Equal(got.AuditLeaves, leaves) || len(leaves) == 0 || len(got.AuditWeights) != len(leaves) {
			t.Errorf("the agent page lists audits %v (weights %v), the API %v", got.AuditLeaves, got.AuditWeights, leaves)
		}
		for i, w := range got.AuditWeights {
			if !(w > 0) {
				t.Errorf("the agent page gives audit %d weight %v: every audit feeding the top agent's score weighs something", i, w)
			}
		}
		// The score the page shows is the API's, read before the page opened or after it
		// closed (a recomputation of the standings may fall between).
		after := scoreOf(t, base, recomputeDID)
		if !strings.Contains(got.Score, scoreBefore) && !strings.Contains(got.Score, after) {
			t.Errorf("the agent page shows score %q, the API %s before and %s after", got.Score, scoreBefore, after)
		}
	}

	// Proofs: verified, and failed once tampered with.
	if !stepFailed["log"] && (got.ProofVerified != "verified" || got.ProofTampered != "failed") {
		t.Errorf("proof of leaf %s in the page: %q, with %s changed: %q; want verified, then failed", got.ProofLeaf, got.ProofVerified, got.TamperedField, got.ProofTampered)
	}

	// Two heads: consistent in the page, and not once the proof is tampered with.
	if !stepFailed["consistency"] && (len(got.Heads) < 2 || got.Consistency != "verified" || got.ConsistencyTampered != "failed") {
		t.Errorf("consistency between heads %v in the page: %q, with %s changed: %q; want two heads, verified, then failed", got.Heads, got.Consistency, got.ConsistencyTamperedField, got.ConsistencyTampered)
	}

	// A 429 while the inputs check reads the log is its own state: not checked.
	if !stepFailed["recompute"] && got.InputsCheckLimited != "rate-limited" {
		t.Errorf("with the log's leaves answering 429, the inputs check: %q, want rate-limited", got.InputsCheckLimited)
	}
	// The head's signature verifies against the DID the node names, and without one it does not.
	if !stepFailed["log"] && got.HeadSignature != "verified" {
		t.Errorf("the log page's head signature: %q, want verified", got.HeadSignature)
	}
	if !stepFailed["log-no-did"] && got.HeadSignatureNoDid != "failed" {
		t.Errorf("with /v1/info answering 404, the log page's head signature: %q, want failed", got.HeadSignatureNoDid)
	}
	// The score recomputed in the page: the node's, bit for bit; one bit off, not.
	if !stepFailed["recompute"] && (got.Recompute != "match" || got.InputsCheck != "verified" || got.RecomputeTampered != "mismatch" || !got.RecomputeLied) {
		t.Errorf("%s's score recomputed in the page: %q (its inputs against the log: %q), with the node's number one bit off (changed: %v): %q; want match (verified), then mismatch",
			recomputeDID, got.Recompute, got.InputsCheck, got.RecomputeLied, got.RecomputeTampered)
	}
	// The node's time and params are held to the head and the documented defaults.
	if !stepFailed["recompute"] && (got.RecomputeParams != "default" || got.RecomputeAt != "ok" || got.RecomputeAtOff != "mismatch" || got.RecomputeAtOffAt != "bad" || got.RecomputeParamsOwn != "node's own") {
		t.Errorf("the recompute's params: %q (its time: %q), want default (ok); with the time scored at one second off and alpha changed: %q (params %q, time %q), want mismatch (node's own, bad)",
			got.RecomputeParams, got.RecomputeAt, got.RecomputeAtOff, got.RecomputeParamsOwn, got.RecomputeAtOffAt)
	}

	// The thread: every message verified; the tampered one alone not.
	// A deadline no Date holds shows as given (2^64-1 as a JavaScript number prints it), and the
	// page with it.
	if !stepFailed["bounty-deadline"] && (got.HugeDeadline != "18446744073709552000" || got.HugeDeadlineTask == "" || got.HugeDeadlineThread == 0) {
		t.Errorf("bounty %d with deadline 2^64-1: the page shows deadline %q, task check %q, %d thread messages; want it as given, and the rest of the page",
			threadBounty, got.HugeDeadline, got.HugeDeadlineTask, got.HugeDeadlineThread)
	}
	// Another bounty's page served this thread: signed for another group, no message verifies,
	// and one message the page cannot read does not hide the others.
	if !stepFailed["thread-foreign"] {
		verified := slices.ContainsFunc(got.ThreadForeign, func(m threadMessage) bool { return m.Verified != "false" })
		if len(got.ThreadForeign) != got.ThreadForeignWant || got.ThreadForeignWant < 2 || verified {
			t.Errorf("another bounty's page served bounty %d's thread and one unreadable message: %d messages shown (%v), want %d, none verified",
				threadBounty, len(got.ThreadForeign), got.ThreadForeign, got.ThreadForeignWant)
		}
	}
	if !stepFailed["thread"] {
		// The task check reads the hash from the Posted event's receipt: a node serving another
		// text, with that text's hash as the escrow's, gets a mismatch.
		if (got.ThreadTask != "match" && got.ThreadTask != "absent") || got.ThreadTaskSource != "receipt" || got.ThreadTaskForged != "mismatch" {
			t.Errorf("bounty %d's task check: %q (from %q), with another text and its hash served: %q; want match or absent (from the receipt), then mismatch",
				threadBounty, got.ThreadTask, got.ThreadTaskSource, got.ThreadTaskForged)
		}
		if len(got.Thread) != len(thread.Envelopes) {
			t.Errorf("the bounty page shows %d messages of bounty %d's thread, the API holds %d", len(got.Thread), threadBounty, len(thread.Envelopes))
		}
		for i, m := range got.Thread {
			if m.Verified != "true" {
				t.Errorf("thread message %d (%s) not verified in the page", i, m.Sender)
			}
			if i < len(thread.Envelopes) && m.Sender != thread.Envelopes[i].Sender {
				t.Errorf("thread message %d is from %s in the page, from %s at the node", i, m.Sender, thread.Envelopes[i].Sender)
			}
		}
		var bad int
		for _, m := range got.ThreadTampered {
			if m.Verified != "true" {
				bad++
			}
		}
		if len(got.ThreadTampered) != len(thread.Envelopes) || bad != 1 {
			t.Errorf("with one envelope's signature changed the page shows %d messages, %d not verified; want %d and 1", len(got.ThreadTampered), bad, len(thread.Envelopes))
		}
	}

	// The live bounty: followed to its end without reloading.
	if !stepFailed["live"] {
		if !strings.EqualFold(got.LiveState, "accepted") || !got.LiveSameDocument {
			t.Errorf("bounty %d on its page: %q (same document: %v), want accepted, live", live, got.LiveState, got.LiveSameDocument)
		}
		if !inOrder(got.LiveAfter, "Posted", "Claimed", "Submitted", "Accepted") || slices.Contains(got.LiveBefore, "Claimed") {
			t.Errorf("bounty %d's timeline: %v before, %v after; want Posted, then Claimed, Submitted, Accepted arriving live", live, got.LiveBefore, got.LiveAfter)
		}
		if got.TaskCheck != "match" {
			t.Errorf("bounty %d's task text against its on-chain hash: %q, want match", live, got.TaskCheck)
		}
	}

	// Network, phone width, and what the page must not do.
	if !stepFailed["network"] {
		if !strings.Contains(got.NodeDid, bc.Info.NodeDID) {
			t.Errorf("the network page names node %q, /v1/info %s", got.NodeDid, bc.Info.NodeDID)
		}
		blockAfter, err := client.BlockNumber(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got.ChainBlock < blockBefore || got.ChainBlock > blockAfter {
			t.Errorf("the network page shows chain head %d, the chain was at %d before and %d after", got.ChainBlock, blockBefore, blockAfter)
		}
	}
	if !stepFailed["narrow"] && got.NarrowOverflow > 0 {
		t.Errorf("at 390 px the agent page is %d px wider than the screen", got.NarrowOverflow)
	}
	if len(got.OffOrigin) > 0 || len(got.PageErrors) > 0 {
		t.Errorf("requests off the node's origin: %v; errors thrown in the page: %v", got.OffOrigin, got.PageErrors)
	}

	// The screenshots: PNGs of the width asked for (a failed step took none).
	shotOf := map[string]string{"agents": "agents", "agent": "agent", "log": "log", "bounty": "live", "network": "network", "agent-390": "narrow"}
	for name, width := range shotNames {
		if stepFailed[shotOf[name]] {
			continue
		}
		f, err := os.Open(filepath.Join(shots, name+".png"))
		if err != nil {
			t.Errorf("screenshot %s: %v", name, err)
			continue
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil || cfg.Width != width {
			t.Errorf("screenshot %s: %v, %d px wide, want a PNG %d px wide", name, err, cfg.Width, width)
		}
	}
}

// historyPoint is a point of the score chart as the page plots it (data-points) and as
// GET /v1/reputation/{did}/history serves it: the head's size and the score there.
type historyPoint struct {
	Size  uint64  `json:"size"`
	Score float64 `json:"score"`
}

type threadMessage struct {
	Sender   string `json:"sender"`
	Verified string `json:"verified"`
}

// agentsFor is the DIDs GET /v1/agents?q= answers for words, in its order.
func agentsFor(t *testing.T, base, words string) []string {
	t.Helper()
	var found struct {
		Agents []struct {
			DID string `json:"did"`
		} `json:"agents"`
	}
	mustGetJSON(t, base+"/v1/agents?"+url.Values{"q": {words}}.Encode(), &found)
	var dids []string
	for _, a := range found.Agents {
		dids = append(dids, a.DID)
	}
	return dids
}

// scoreOf is did's score at the node (GET /v1/reputation/{did}) as the agent page shows it,
// with four decimals.
func scoreOf(t *testing.T, base, did string) string {
	t.Helper()
	var rep struct {
		Score float64 `json:"score"`
	}
	mustGetJSON(t, base+"/v1/reputation/"+did, &rep)
	return fmt.Sprintf("%.4f", rep.Score)
}

// waitFor polls ok until it holds, for at most within.
func waitFor(ctx context.Context, within time.Duration, ok func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !ok() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("not within %s", within)
		case <-tick.C:
		}
	}
	return nil
}

// inOrder reports whether events holds want in that order (others may come between).
func inOrder(events []string, want ...string) bool {
	for _, e := range events {
		if len(want) > 0 && e == want[0] {
			want = want[1:]
		}
	}
	return len(want) == 0
}

// syncWriter is a buffer a process writes to while the test may read it.
type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
