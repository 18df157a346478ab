package demo_test

import (
	"bytes"
	"context"
	"errors"
	"math/big"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/demo"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
)

// balanceLine is a final balance the demo prints: name, address, wei.
var balanceLine = regexp.MustCompile(`(?m)^  balance (\S+) +(0x[0-9a-fA-F]{40}) (\d+) wei`)

// storyLines are what every run of the demo must tell.
var storyLines = []string{
	"market searches 'audit' + 'solidity': ada",
	"conclusion      market: accepted",
	"accepted: ada is owed",
	"arbiter split 60/40: resolved",
	"it is refunded",
	"backed by the settlement: true",
	"reputation of ada: 0.500 -> 0.",
	"auditor checks its audit of ada: verified: leaf",
	"a tampered copy of that audit does not verify",
	"treasury withdraws the fees",
	"the day is over",
}

// play runs the demo as cfg says (its output collected) and checks the story it tells; it
// returns the final balances printed.
func play(t *testing.T, cfg demo.Config) [][]string {
	t.Helper()
	var out bytes.Buffer
	cfg.Out = &out
	if err := demo.Run(context.Background(), cfg); err != nil {
		t.Fatalf("the demo failed: %v\n%s", err, out.String())
	}
	for _, want := range storyLines {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the demo did not tell %q:\n%s", want, out.String())
		}
	}
	balances := balanceLine.FindAllStringSubmatch(out.String(), -1)
	if len(balances) != 9 { // seven parties, the treasury, the escrow
		t.Errorf("%d balances printed, want 9:\n%s", len(balances), out.String())
	}
	return balances
}

// TestDemoOnEmbeddedChain plays the demo on its embedded chain (what `make demo` runs).
func TestDemoOnEmbeddedChain(t *testing.T) {
	if testing.Short() {
		t.Skip("plays the whole demo")
	}
	play(t, demo.Config{DataDir: t.TempDir()})
}

// TestDemoOnAnvil plays the demo on a real Anvil: every balance it prints is the chain's.
func TestDemoOnAnvil(t *testing.T) {
	if testing.Short() {
		t.Skip("plays the whole demo on Anvil")
	}
	a := testutil.Anvil(t)
	c, err := ethclient.Dial(a.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	dep, err := contracts.Deploy(context.Background(), c, chain.DevKey(0), contracts.DeployConfig{FeeBps: 50}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range play(t, demo.Config{RPC: a.URL, Deployment: dep}) {
		got, err := c.BalanceAt(context.Background(), common.HexToAddress(b[2]), nil)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := new(big.Int).SetString(b[3], 10); got.Cmp(want) != 0 {
			t.Errorf("%s %s: the demo printed %s wei, the chain says %s", b[1], b[2], want, got)
		}
	}
}

// TestDemoRefusesHalfADevChain: a dev chain's URL without its deployment (or the other way round)
// is refused before a node starts; a chain that cannot be reached is a *StartError.
func TestDemoRefusesHalfADevChain(t *testing.T) {
	if err := demo.Run(context.Background(), demo.Config{RPC: "http://127.0.0.1:1"}); err == nil {
		t.Error("an RPC URL without a deployment was played")
	}
	if err := demo.Run(context.Background(), demo.Config{Deployment: &contracts.Deployment{}}); err == nil {
		t.Error("a deployment without an RPC URL was played")
	}
	err := demo.Run(context.Background(), demo.Config{RPC: "http://127.0.0.1:1", Deployment: &contracts.Deployment{}, DataDir: filepath.Join(t.TempDir(), "node")})
	var se *demo.StartError
	if !errors.As(err, &se) {
		t.Errorf("an unreachable chain: %v, want a *demo.StartError", err)
	}
}

// lockedBuffer collects what a running demo prints, for a test to read meanwhile.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var explorerLine = regexp.MustCompile(`(?m)^explorer: (http://127\.0\.0\.1:\d+)/explorer/$`)

// TestDemoKeepServesTheDay: with Keep the node outlives the day: Run prints the explorer's
// URL on loopback, the node answers with the day's bounties and serves the explorer there
// until the context ends, and then Run returns nil and the node is gone.
func TestDemoKeepServesTheDay(t *testing.T) {
	if testing.Short() {
		t.Skip("plays the whole demo")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &lockedBuffer{}
	ran := make(chan error, 1)
	go func() { ran <- demo.Run(ctx, demo.Config{Out: out, DataDir: t.TempDir(), Keep: true}) }()
	var base string
	deadline := time.After(2 * time.Minute)
	for base == "" {
		select {
		case err := <-ran:
			t.Fatalf("the demo ended (%v) before printing the explorer's URL:\n%s", err, out)
		case <-deadline:
			t.Fatalf("no explorer URL printed within 2 minutes:\n%s", out)
		case <-time.After(50 * time.Millisecond):
		}
		if m := explorerLine.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
		}
	}
	if !strings.Contains(out.String(), "the day is over\n") {
		t.Errorf("the explorer's URL came before the day was over:\n%s", out)
	}
	// The day's data is there to browse: its three bounties, settled three ways.
	c, err := client.New(base)
	if err != nil {
		t.Fatal(err)
	}
	bounties, err := c.Bounties(ctx, url.Values{})
	if err != nil {
		t.Fatalf("the kept node does not answer: %v", err)
	}
	var statuses []string
	for _, b := range bounties {
		statuses = append(statuses, string(b.Status))
	}
	slices.Sort(statuses)
	if strings.Join(statuses, " ") != "accepted refunded resolved" {
		t.Errorf("the kept node's bounties: %v, want the day's accepted, resolved, refunded", statuses)
	}
	// And its explorer, the page that browses them.
	resp, err := http.Get(base + "/explorer/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("GET /explorer/ on the kept node: %d %s, want 200 text/html", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	// Still serving a while later: Run waits for its context, not for a timer.
	select {
	case err := <-ran:
		t.Fatalf("the demo ended (%v) while its context was live", err)
	case <-time.After(time.Second):
	}
	cancel()
	select {
	case err := <-ran:
		if err != nil {
			t.Errorf("Run after its context ended: %v, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return within 30s of its context ending")
	}
	if resp, err := http.Get(base + "/healthz"); err == nil {
		resp.Body.Close()
		t.Errorf("the node still answers at %s after Run returned", base)
	}
}
