package e2e

import (
	"crypto/ecdsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	apiclient "github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/auditor"
	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/internal/testutil/apitest"
	"github.com/surety-ioa/surety/testnet"
)

// TestNodesShareTheChainsWord runs two node processes that hold the same dev wallets on one
// Anvil chain. Bindings are chain state, so a bounty posted on node 0 is claimed on node 1 by
// a DID bound on chain through node 0, with no extra step. One envelope sent to both nodes
// acts once: node 1 refuses it (its aud names node 0) and the chain holds one bounty. A DID
// rotated on chain (by a transaction neither node sent) is refused on both nodes, which
// resolve it as deactivated and name the successor, and the successor acts at once.
func TestNodesShareTheChainsWord(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two nodes and Anvil")
	}
	waiting.Parallel(t) // its nodes and chain mostly wait on each other
	nw := startNetwork(t, 2, testnet.Config{}, func(int) []string { return []string{"--log-level", "warn"} })
	ctx, client, dep := t.Context(), dialChain(t, nw), nw.Devnet.Deployment
	var bcs []*apitest.Client
	for _, n := range nw.Nodes {
		bcs = append(bcs, &apitest.Client{T: t, Base: n.URL(), Info: apitest.GetInfo(t, n.URL())})
	}
	n0, n1 := bcs[0], bcs[1]
	market, worker := n0.NewParty(1), n0.NewParty(3) // bound on chain through node 0
	head, err := client.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	task := "Label 500 images of street signs.\nAnswer with a CSV of file,label."
	post := map[string]any{"wallet": market.Wallet, "amount": "1000000000000000", "arbiter": bystander, "deadline": head.Time + 3600, "reviewWindow": 600, "spec": task}

	// One envelope, two nodes that both hold the market's wallet: one bounty.
	env := n0.Envelope(market, 0, post)
	code, out := n0.Request("POST", "/v1/bounties", env, nil)
	if code != http.StatusCreated {
		t.Fatalf("post on node 0: %d %s", code, out)
	}
	id := apitest.DecodeResult(t, out).Bounty.ID
	if code, out := n1.Request("POST", "/v1/bounties", env, nil); code != http.StatusForbidden || !strings.Contains(string(out), "envelope-wrong-audience") {
		t.Errorf("the same envelope on node 1: %d %s, want 403 envelope-wrong-audience", code, out)
	}
	// Signed for node 1 but for another chain: refused as well.
	m := map[string]any{"body": post, "aud": n1.Info.NodeDID, "chain_id": 1}
	raw, _ := json.Marshal(m)
	filled, err := identity.FillEnvelope(raw, market.Key, time.Now(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	wrongChain, _ := market.Key.SignCompact(filled)
	if code, out := n1.Request("POST", "/v1/bounties", []byte(wrongChain), nil); code != http.StatusForbidden || !strings.Contains(string(out), "envelope-wrong-chain") {
		t.Errorf("an envelope for another chain: %d %s, want 403 envelope-wrong-chain", code, out)
	}
	if n := postedOnChain(t, client, dep.Contracts.BountyEscrow); n != 1 {
		t.Fatalf("the chain holds %d bounties, want 1", n)
	}
	// Even a node that let it through could not post it twice: the salt the node derives
	// from the envelope makes the bounty id, and a second post of it reverts.
	if code, out := n0.Request("POST", "/v1/bounties", n0.Envelope(market, 0, map[string]any{"wallet": market.Wallet, "amount": "1000000000000000",
		"arbiter": bystander, "deadline": head.Time + 3600, "reviewWindow": 600, "salt": postSaltOf(t, env)}), nil); code != http.StatusConflict || !strings.Contains(string(out), "already-posted") {
		t.Errorf("a post with the first one's salt: %d %s, want 409 already-posted", code, out)
	}
	if n := postedOnChain(t, client, dep.Contracts.BountyEscrow); n != 1 {
		t.Fatalf("the chain holds %d bounties after the replayed salt, want 1", n)
	}

	// Posted on node 0, claimed on node 1 by a DID bound through node 0: node 1 reads both
	// from the chain (catching its indexes up when a block is new to it), no extra step.
	claim := func(bc *apitest.Client, p *apitest.Party, id uint64) (int, []byte) {
		return bc.Act(p, id, "claim", map[string]any{})
	}
	if code, out := claim(n1, worker, id); code != http.StatusOK {
		t.Fatalf("claim on node 1: %d %s", code, out)
	}

	// The task text: node 0 got it with the post and serves it; node 1 has only the hash from
	// the chain until someone gives it the text, which it takes only when it hashes right.
	spec := func(bc *apitest.Client) string {
		var b escrow.Bounty
		code, out := bc.Request("GET", fmt.Sprintf("/v1/bounties/%d", id), nil, nil)
		if code != http.StatusOK || json.Unmarshal(out, &b) != nil {
			t.Fatalf("GET bounty %d: %d %s", id, code, out)
		}
		if b.SpecHash != escrow.SpecHash(task) {
			t.Errorf("specHash on chain %s, want the task's %s", b.SpecHash, escrow.SpecHash(task))
		}
		return b.Spec
	}
	if got := spec(n0); got != task {
		t.Errorf("node 0 serves spec %q, want the posted task", got)
	}
	if got := spec(n1); got != "" {
		t.Errorf("node 1 serves spec %q before anyone gave it the text", got)
	}
	specPath := fmt.Sprintf("/v1/bounties/%d/spec", id)
	if code, out := n1.Request("PUT", specPath, []byte("Label 5 images."), nil); code != http.StatusUnprocessableEntity || !strings.Contains(string(out), "spec-mismatch") {
		t.Errorf("PUT another text: %d %s, want 422 spec-mismatch", code, out)
	}
	if code, out := n1.Request("PUT", specPath, []byte(task), nil); code != http.StatusNoContent {
		t.Errorf("PUT the task: %d %s, want 204", code, out)
	}
	if got := spec(n1); got != task {
		t.Errorf("node 1 serves spec %q after the PUT, want the task", got)
	}
	if code, out := n1.Request("GET", "/v1/bounties?q=street+signs", nil, nil); code != http.StatusOK || !strings.Contains(string(out), fmt.Sprintf(`"id":%d`, id)) {
		t.Errorf("search by task text on node 1: %d %s", code, out)
	}
	// Posting the worker's binding again, to the other node that also holds its wallet, costs
	// nothing: the chain has it, so the node answers 200 and sends no transaction.
	before, err := client.NonceAt(ctx, worker.Wallet, nil)
	if err != nil {
		t.Fatal(err)
	}
	again := apitest.BindingJSON(t, worker.Key, chain.DevKey(3), n1.Info.Chain.ID, dep.Contracts.StakeRegistry)
	if code, out := n1.Request("POST", "/v1/bindings", again, nil); code != http.StatusOK || !strings.Contains(string(out), `"onChain":true`) || strings.Contains(string(out), "txHash") {
		t.Errorf("the same binding again on node 1: %d %s, want 200 on chain, no transaction", code, out)
	}
	if after, _ := client.NonceAt(ctx, worker.Wallet, nil); after != before {
		t.Errorf("re-posting a binding sent a transaction (nonce %d → %d)", before, after)
	}

	// Rotation, sent straight to the chain from wallet 4: the old key is refused on both
	// nodes, which name the successor; the successor claims at once.
	old, next4 := mustGenerate(t), mustGenerate(t)
	wallet := chain.DevKey(4)
	stakes := contracts.NewStakeRegistry()
	inst := stakes.Instance(client, dep.Contracts.StakeRegistry)
	proofOf := func(k *identity.Key) []byte {
		return apitest.BindingJSON(t, k, wallet, 31337, dep.Contracts.StakeRegistry)
	}
	sendFrom := func(key *ecdsa.PrivateKey, data []byte) {
		t.Helper()
		tx, err := bind.Transact(inst, bind.NewKeyedTransactor(key, big.NewInt(31337)), data)
		if err != nil {
			t.Fatal(err)
		}
		if r, err := chain.WaitMined(ctx, client, tx.Hash()); err != nil || r.Status != 1 {
			t.Fatalf("transaction: %v %v", err, r)
		}
	}
	oldID := identity.AgentID(old.DID.String())
	sendFrom(wallet, stakes.PackBind(oldID, proofOf(old)))
	sendFrom(wallet, stakes.PackRotate(oldID, identity.AgentID(next4.DID.String()), proofOf(next4)))
	code, out = n0.Request("POST", "/v1/bounties", n0.Envelope(market, 0, post), nil)
	if code != http.StatusCreated {
		t.Fatalf("second post: %d %s", code, out)
	}
	second := apitest.DecodeResult(t, out).Bounty.ID
	oldParty := &apitest.Party{Key: old, Wallet: crypto.PubkeyToAddress(wallet.PublicKey)}
	for _, bc := range bcs {
		testutil.Eventually(t, "the rotation seen by "+bc.Base, 5*time.Second, func() bool {
			code, out := bc.Request("GET", "/1.0/identifiers/"+old.DID.String(), nil, nil)
			return code == http.StatusGone && strings.Contains(string(out), `"successor":"`+next4.DID.String()+`"`)
		})
		if code, out := bc.Act(oldParty, second, "claim", map[string]any{}); code != http.StatusForbidden || !strings.Contains(string(out), "envelope-rotated") {
			t.Errorf("the rotated-away key claims on %s: %d %s, want 403 envelope-rotated", bc.Base, code, out)
		}
	}
	if code, out := claim(n1, &apitest.Party{Key: next4, Wallet: oldParty.Wallet}, second); code != http.StatusOK {
		t.Fatalf("the successor claims on node 1: %d %s", code, out)
	}
}

// bystander arbitrates bounties whose disputes a test never reaches: the escrow refuses an
// arbiter that is the poster or the worker.
const bystander = "0x00000000000000000000000000000000000a1b17"

func mustGenerate(t *testing.T) *identity.Key {
	t.Helper()
	k, err := identity.GenerateKey(identity.Ed25519)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestThreeNodesScoreAlike files audits at different nodes of three (separate processes,
// gossiping, on one Anvil) and waits until every node reports the same reputation, to the
// byte, and the same audit-log root. One audit is filed by a DID that is bound to the poster's
// wallet only afterwards: it counts unbacked at first, then, once every node has indexed the
// binding, backed, on every node alike. The three publish the same scores of the anchored head
// (GET /v1/log/scores), though each anchors from its own wallet, and package auditor
// recomputes one node's from Anvil alone, bit for bit.
func TestThreeNodesScoreAlike(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three nodes and Anvil")
	}
	waiting.Parallel(t) // waits on gossip and the log's epochs
	// Each node anchors from a dev wallet of its own (9, 8 and 7).
	nw := startNetwork(t, 3, testnet.Config{}, func(int) []string {
		return []string{"--log-epoch", "2s", "--log-grace", "3s", "--log-level", "warn"}
	})
	ctx, client := t.Context(), dialChain(t, nw)
	var bcs []*apitest.Client
	for _, n := range nw.Nodes {
		bcs = append(bcs, &apitest.Client{T: t, Base: n.URL(), Info: apitest.GetInfo(t, n.URL())})
	}
	for _, bc := range bcs {
		waitMeshes(t, bc.Base)
	}
	n0 := bcs[0]
	market, worker := n0.NewParty(1), n0.NewParty(3)
	head, err := client.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Two bounties posted by the market and settled with the worker: one backed audit per
	// bounty and side, so the late DID audits the second.
	settle := func() uint64 {
		t.Helper()
		code, out := n0.Request("POST", "/v1/bounties", n0.Envelope(market, 0, map[string]any{"wallet": market.Wallet, "amount": "1000000000000000",
			"arbiter": bystander, "deadline": head.Time + 3600, "reviewWindow": 600}), nil)
		if code != http.StatusCreated {
			t.Fatalf("post: %d %s", code, out)
		}
		id := apitest.DecodeResult(t, out).Bounty.ID
		for _, step := range []struct {
			p      *apitest.Party
			action string
			body   map[string]any
		}{{worker, "claim", map[string]any{}}, {worker, "submit", map[string]any{"resultHash": "0x" + strings.Repeat("11", 32)}}, {market, "accept", map[string]any{}}} {
			if code, out := n0.Act(step.p, id, step.action, step.body); code != http.StatusOK {
				t.Fatalf("%s: %d %s", step.action, code, out)
			}
		}
		return id
	}
	first, second := settle(), settle()
	audit := func(bc *apitest.Client, by *apitest.Party, id uint64, score float64) {
		t.Helper()
		body := map[string]any{"kind": "surety.audit/1", "subject": worker.Key.DID.String(), "score": score, "evidence": map[string]any{"hash": "0x" + strings.Repeat("ab", 32)}}
		if code, out := bc.Request("POST", "/v1/audits", bc.Envelope(by, id, body), nil); code != http.StatusCreated {
			t.Fatalf("audit at %s: %d %s", bc.Base, code, out)
		}
	}
	audit(bcs[1], market, first, 0.9)
	// A second DID of the market, bound to its wallet only after its audit is filed.
	late := &apitest.Party{Key: mustGenerate(t), Wallet: market.Wallet}
	audit(bcs[2], late, second, 0.6)
	type view struct{ rep, root string }
	look := func(bc *apitest.Client) view {
		_, rep := bc.Request("GET", "/v1/reputation/"+worker.Key.DID.String(), nil, nil)
		_, head := bc.Request("GET", "/v1/log/head", nil, nil)
		var h struct {
			Size uint64 `json:"size"`
			Root string `json:"root"`
		}
		_ = json.Unmarshal(head, &h)
		return view{rep: string(rep), root: fmt.Sprintf("%d/%s", h.Size, h.Root)}
	}
	same := func(what string, want func(view) bool) []view {
		t.Helper()
		var views []view
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			views = views[:0]
			for _, bc := range bcs {
				views = append(views, look(bc))
			}
			agree := true
			for _, v := range views {
				agree = agree && v == views[0] && want(v)
			}
			if agree {
				return views
			}
			if time.Now().After(deadline) {
				for i, v := range views {
					t.Logf("node %d: log %s, reputation %s", i, v.root, v.rep)
				}
				t.Fatalf("%s: not within 30s", what)
			}
		}
	}
	before := same("every node with both audits, one unbacked, and one log root", func(v view) bool {
		return strings.Count(v.rep, `"backed":false`) == 1 && strings.Count(v.rep, `"backed":true`) == 1 && strings.HasPrefix(v.root, "2/")
	})
	if code, out := n0.Request("POST", "/v1/bindings", apitest.BindingJSON(t, late.Key, chain.DevKey(1), n0.Info.Chain.ID, common.HexToAddress(n0.Info.Contracts["StakeRegistry"])), nil); code != http.StatusCreated {
		t.Fatalf("bind the late DID: %d %s", code, out)
	}
	after := same("every node counting both audits backed", func(v view) bool {
		return strings.Count(v.rep, `"backed":true`) == 2
	})
	if before[0].rep == after[0].rep {
		t.Errorf("the late binding changed nothing: %s", after[0].rep)
	}
	// The scores of the anchored head of size 2 (issue 28): every node publishes the same
	// figures, computed from the log and the chain at the block of the head's first anchor,
	// whichever node's wallet sent it; and an auditor with Anvil's JSON-RPC alone recomputes
	// one node's bit for bit.
	var published []string
	var scored wire.ScoredHead
	for i, bc := range bcs {
		testutil.Eventually(t, fmt.Sprintf("node %d to score the head of size 2", i), 30*time.Second, func() bool {
			code, out := bc.Request("GET", "/v1/log/scores?size=2", nil, nil)
			return code == http.StatusOK && json.Unmarshal(out, &scored) == nil
		})
		figures, err := json.Marshal(struct {
			At     int64
			Block  uint64
			Scores []wire.HeadScore
		}{scored.At, scored.Block, scored.Scores})
		if err != nil {
			t.Fatal(err)
		}
		published = append(published, string(figures))
	}
	for i, p := range published[1:] {
		if p != published[0] {
			t.Errorf("node %d publishes the scores of head 2 as %s, node 0 as %s", i+1, p, published[0])
		}
	}
	nc, err := apiclient.New(bcs[1].Base)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := auditor.Check(ctx, auditor.CheckConfig{Node: nc, Chain: client, Size: 2, DID: worker.Key.DID.String(), Dir: t.TempDir()})
	if err != nil || len(rep.Mismatches) != 0 || rep.Agents != len(scored.Scores) || rep.Subject == nil || rep.Subject.Weight == 0 {
		t.Fatalf("an auditor's recomputation of node 1's head 2: %+v %v", rep, err)
	}
}

// postedOnChain counts the escrow's Posted events: the bounties on chain.
func postedOnChain(t *testing.T, client *ethclient.Client, escrowAddr common.Address) int {
	t.Helper()
	parsed, err := contracts.BountyEscrowMetaData.ParseABI()
	if err != nil {
		t.Fatal(err)
	}
	logs, err := client.FilterLogs(t.Context(), ethereum.FilterQuery{Addresses: []common.Address{escrowAddr},
		Topics: [][]common.Hash{{parsed.Events["Posted"].ID}}})
	if err != nil {
		t.Fatal(err)
	}
	return len(logs)
}

// postSaltOf is the salt a node derives for a post envelope that names none.
func postSaltOf(t *testing.T, env []byte) common.Hash {
	t.Helper()
	_, payload, ok := strings.Cut(string(env), ".")
	if !ok {
		t.Fatal("not a compact JWS")
	}
	payload, _, _ = strings.Cut(payload, ".")
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		t.Fatal(err)
	}
	var e identity.Envelope
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	return crypto.Keccak256Hash([]byte("surety-post\x00" + e.Sender + "\x00" + e.ID))
}
