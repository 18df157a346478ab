package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/internal/testutil/apitest"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/testnet"
)

// TestSybilsOnAnvil runs the attack measured at 66f817e end to end, through a node on Anvil:
// five DIDs bound to one wallet, a helper wallet that settles a 1-wei bounty with one of them
// and audits all five as "backed". The honest pair settles a 1 ETH bounty. Now the DIDs of
// one wallet cannot audit each other, one audit per bounty and side is backed, and a 1-wei
// settlement backs no more than nothing: every attacker DID ranks below the honest worker.
// (The costed search over many attacks is reputation.TestSybilSimulation.)
func TestSybilsOnAnvil(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Anvil and a node process")
	}
	waiting.Parallel(t) // waits on its node process
	nw := startNetwork(t, 1, testnet.Config{Deploy: contracts.DeployConfig{FeeBps: contracts.DefaultFeeBps}},
		func(int) []string { return []string{"--log-level", "warn"} })
	base := nw.Nodes[0].URL()
	bc := apitest.NewClient(t, base)
	head, err := dialChain(t, nw).HeaderByNumber(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	stake := func(p *apitest.Party, wei string) {
		t.Helper()
		body := map[string]any{"op": "stake", "wallet": p.Wallet, "amount": wei}
		if code, out := bc.Request("POST", "/v1/stake", bc.Envelope(p, 0, body), nil); code != http.StatusOK && code != http.StatusCreated {
			t.Fatalf("stake %s for %s: %d %s", wei, p.Key.DID, code, out)
		}
	}
	settle := func(poster, worker *apitest.Party, wei string) uint64 {
		t.Helper()
		code, out := bc.Request("POST", "/v1/bounties", bc.Envelope(poster, 0, map[string]any{"wallet": poster.Wallet, "amount": wei,
			"arbiter": bystander, "deadline": head.Time + 3600, "reviewWindow": 600}), nil)
		if code != http.StatusCreated {
			t.Fatalf("post: %d %s", code, out)
		}
		id := apitest.DecodeResult(t, out).Bounty.ID
		for _, step := range []struct {
			p      *apitest.Party
			action string
		}{{worker, "claim"}, {worker, "submit"}, {poster, "accept"}} {
			if code, out := bc.Act(step.p, id, step.action, map[string]any{}); code != http.StatusOK {
				t.Fatalf("%s: %d %s", step.action, code, out)
			}
		}
		return id
	}
	audit := func(by, of *apitest.Party, id uint64, score float64) (int, reputation.Submitted) {
		t.Helper()
		code, out := bc.Request("POST", "/v1/audits", bc.Envelope(by, id, map[string]any{"kind": reputation.AuditKind, "subject": of.Key.DID.String(),
			"score": score, "evidence": map[string]any{"hash": common.Hash{1}.Hex(), "uri": "https://audits.example/sybil"}}), nil)
		var res reputation.Submitted
		_ = json.Unmarshal(out, &res)
		return code, res
	}

	// The honest pair: a market and a worker, staked, one 1 ETH bounty, a backed audit.
	market, worker := bc.NewParty(1), bc.NewParty(2)
	stake(market, "2000000000000000000")
	stake(worker, "3000000000000000000")
	honest := settle(market, worker, "1000000000000000000")
	if code, res := audit(market, worker, honest, 0.95); code != http.StatusCreated || res.Counted.Backing != 1 {
		t.Fatalf("the market's audit of a 1 ETH bounty: %d, counted %+v; want backed in full", code, res.Counted)
	}

	// The attack: five DIDs on wallet 3, staked 0.2 ETH each; a helper on wallet 4, staked
	// 1 ETH so its audits carry weight, settles a 1-wei bounty with the first and audits all
	// five 1.0.
	var sybils []*apitest.Party
	for range 5 {
		s := bc.NewParty(3)
		stake(s, "200000000000000000")
		sybils = append(sybils, s)
	}
	helper := bc.NewParty(4)
	stake(helper, "1000000000000000000")
	wash := settle(helper, sybils[0], "1")
	for i, s := range sybils {
		code, res := audit(helper, s, wash, 1)
		if code != http.StatusCreated {
			t.Fatalf("helper's audit of Sybil %d: %d", i, code)
		}
		if res.Counted.Backing > 0.1+1e-9 {
			t.Errorf("helper's audit of Sybil %d counts with backing %g: a 1-wei settlement must back no more than nothing (0.1)", i, res.Counted.Backing)
		}
	}
	// The Sybils cannot vouch for each other: they share a wallet.
	if code, _ := audit(sybils[1], sybils[0], wash, 1); code != http.StatusForbidden {
		t.Errorf("a Sybil audits another DID of its own wallet: %d, want 403 audit-same-wallet", code)
	}

	// Wait for a full recomputation with every stake and audit in it (at most every 5 s after
	// audits arrive): then the helper, staked above the minimum, has standing of its own.
	testutil.Eventually(t, "a recomputation that knows the helper's stake", 20*time.Second, func() bool {
		var r reputation.Reputation
		code, out := bc.Request("GET", "/v1/reputation/"+helper.Key.DID.String(), nil, nil)
		return code == http.StatusOK && json.Unmarshal(out, &r) == nil && r.Standing > 0
	})
	var top []reputation.Reputation
	testutil.Eventually(t, "scores with every audit", 15*time.Second, func() bool {
		code, out := bc.Request("GET", "/v1/reputation?top=20", nil, nil)
		var body struct {
			Top []reputation.Reputation `json:"agents"`
		}
		if code != http.StatusOK || json.Unmarshal(out, &body) != nil {
			return false
		}
		top = body.Top
		return len(top) >= 6 // the worker and the five Sybils (the market too, once the worker's audit lands)
	})
	rank := func(p *apitest.Party) int {
		return slices.IndexFunc(top, func(r reputation.Reputation) bool { return r.DID == p.Key.DID.String() })
	}
	var board []string
	for _, r := range top {
		board = append(board, fmt.Sprintf("%s %.4f", r.DID[len(r.DID)-6:], r.Score))
	}
	t.Logf("top: %s", strings.Join(board, ", "))
	w := rank(worker)
	if w < 0 {
		t.Fatalf("the honest worker is not ranked: %s", strings.Join(board, ", "))
	}
	for i, s := range sybils {
		if r := rank(s); r >= 0 && r < w {
			t.Errorf("Sybil %d ranks %d, above the honest worker (%d): %s", i, r+1, w+1, strings.Join(board, ", "))
		}
	}
}
