package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/groups"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/internal/testutil/apitest"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/reputation/merkle"
	"github.com/surety-ioa/surety/reputation/verify"
)

// TestAuditsThroughTheAPI: after a bounty is accepted, its poster audits the worker. The audit
// is backed by the settlement, the worker's score rises above the prior, and the refusals come
// back as problems: a self-audit, a stranger's bounty number, the same audit again.
func TestAuditsThroughTheAPI(t *testing.T) {
	waiting.Parallel(t) // waits on the log's epochs
	node := start(t, "node", "--data-dir", t.TempDir(), "--listen", "127.0.0.1:0", "--dev-accounts", "5", "--log-epoch", "1s", "--log-grace", "3s")
	base := node.apiURL(t)
	bc := apitest.NewClient(t, base)
	market, worker, stranger := bc.NewParty(1), bc.NewParty(2), bc.NewParty(4)
	arbiter := crypto.PubkeyToAddress(chain.DevKey(3).PublicKey)

	// 1 ETH: a settlement that backs its audits in full (backing scales with the value settled).
	post := map[string]any{"wallet": market.Wallet, "amount": "1000000000000000000", "arbiter": arbiter, "deadline": time.Now().Add(time.Hour).Unix(), "reviewWindow": 600}
	code, body := bc.Request("POST", "/v1/bounties", bc.Envelope(market, 0, post), nil)
	if code != http.StatusCreated {
		t.Fatalf("post: %d %s", code, body)
	}
	id := apitest.DecodeResult(t, body).Bounty.ID
	for _, step := range []struct {
		p      *apitest.Party
		action string
	}{{worker, "claim"}, {worker, "submit"}, {market, "accept"}} {
		if code, body := bc.Act(step.p, id, step.action, map[string]any{}); code != http.StatusOK {
			t.Fatalf("%s: %d %s", step.action, code, body)
		}
	}

	// The bounty's group id is its parties': a stranger cannot take bounty-N first (at
	// 66f817e group ids were first come, first served); the worker can.
	members := func(by *apitest.Party, group string) []byte {
		m := map[string]any{"group_id": group, "body": map[string]any{"kind": groups.MembersKind, "members": []string{market.Key.DID.String()}},
			"to": []string{bc.Info.NodeDID}, "aud": bc.Info.NodeDID, "chain_id": bc.Info.Chain.ID}
		raw, _ := json.Marshal(m)
		filled, err := identity.FillEnvelope(raw, by.Key, time.Now(), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := by.Key.SignCompact(filled)
		return []byte(s)
	}
	group := fmt.Sprintf("bounty-%d", id)
	if code, body := bc.Request("POST", "/v1/groups/"+group+"/members", members(stranger, group), nil); code != http.StatusForbidden || !strings.Contains(string(body), "group-reserved") {
		t.Errorf("a stranger creates %s: %d %s, want 403 group-reserved", group, code, body)
	}
	if code, body := bc.Request("POST", "/v1/groups/"+group+"/members", members(worker, group), nil); code != http.StatusOK {
		t.Errorf("the worker creates %s: %d %s", group, code, body)
	}
	if code, body := bc.Request("POST", "/v1/groups/bounty-999/members", members(stranger, "bounty-999"), nil); code != http.StatusForbidden {
		t.Errorf("a stranger creates the group of a bounty the node does not know: %d %s", code, body)
	}

	audit := func(by *apitest.Party, subject *apitest.Party, bounty uint64, score float64) []byte {
		return bc.Envelope(by, bounty, map[string]any{"kind": reputation.AuditKind, "subject": subject.Key.DID.String(), "score": score,
			"evidence": map[string]any{"hash": common.Hash{7}.Hex(), "uri": "https://audits.example/1"}})
	}
	good := audit(market, worker, id, 0.95)
	code, body = bc.Request("POST", "/v1/audits", good, nil)
	if code != http.StatusCreated || !strings.Contains(string(body), `"backed":true`) || !strings.Contains(string(body), `"current":true`) {
		t.Fatalf("poster's audit: %d %s", code, body)
	}
	tests := []struct {
		name   string
		body   []byte
		status int
		says   string
	}{
		{"the same audit again (a replayed envelope)", good, http.StatusConflict, "replayed"},
		{"a self-audit", audit(worker, worker, id, 1), http.StatusBadRequest, "cannot audit itself"},
		{"a bounty the index lacks", audit(stranger, worker, 99, 1), http.StatusNotFound, "bounty 99"},
		{"not an envelope", []byte("nope"), http.StatusBadRequest, ""},
	}
	for _, tt := range tests {
		code, body := bc.Request("POST", "/v1/audits", tt.body, nil)
		if code != tt.status || !strings.Contains(string(body), tt.says) || !strings.Contains(string(body), `"type"`) {
			t.Errorf("%s: %d %s", tt.name, code, body)
		}
	}

	var rep reputation.Reputation
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		code, body = bc.Request("GET", "/v1/reputation/"+worker.Key.DID.String(), nil, nil)
		if code == http.StatusOK && json.Unmarshal(body, &rep) == nil && rep.Audits == 1 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if rep.Audits != 1 || rep.Score <= 0.52 || len(rep.Feeding) != 1 || !rep.Feeding[0].Backed {
		t.Fatalf("worker's reputation: %d %s", code, body)
	}
	code, body = bc.Request("GET", "/v1/reputation?top=5", nil, nil)
	if code != http.StatusOK || !strings.Contains(string(body), worker.Key.DID.String()) {
		t.Errorf("top: %d %s", code, body)
	}
	// The log: once the audit's epoch closes, its inclusion proof verifies against the head.
	var head reputation.Head
	testutil.Eventually(t, "the audit's epoch closed in the log", 10*time.Second, func() bool {
		code, body := bc.Request("GET", "/v1/log/head", nil, nil)
		return code == http.StatusOK && json.Unmarshal(body, &head) == nil && head.Size >= 1
	})
	leaf := merkle.LeafHash(good)
	code, body = bc.Request("GET", "/v1/log/proof/inclusion?leaf="+leaf.String()+"&size="+fmt.Sprint(head.Size), nil, nil)
	var incl api.InclusionProof
	if code != http.StatusOK || json.Unmarshal(body, &incl) != nil {
		t.Fatalf("inclusion proof: %d %s", code, body)
	}
	if err := merkle.VerifyInclusion(leaf, incl.Index, incl.Size, incl.Path, head.Root); err != nil {
		t.Errorf("the API's inclusion proof does not verify: %v", err)
	}
	if code, body := bc.Request("GET", "/v1/log/proof/inclusion?leaf="+merkle.LeafHash([]byte("never")).String(), nil, nil); code != http.StatusNotFound {
		t.Errorf("proof for an unknown leaf: %d %s", code, body)
	}
	if code, body := bc.Request("GET", "/v1/log/proof/consistency?from=0", nil, nil); code != http.StatusOK || !strings.Contains(string(body), `"path":[]`) {
		t.Errorf("consistency from the empty tree: %d %s", code, body)
	}

	// The CLI: an outside auditor (a fresh DID, bound to nothing) files an unbacked audit; the
	// worker then shows two audits.
	dir := t.TempDir()
	key := filepath.Join(dir, "auditor.json")
	runOK(t, "", "did", "new", "--out", key)
	out := runOK(t, "", "audit", "submit", "--node", base, "--key", key, "--subject", worker.Key.DID.String(), "--bounty", fmt.Sprint(id),
		"--score", "0.8", "--evidence-hash", common.Hash{9}.Hex(), "--evidence-uri", "https://audits.example/2")
	if !strings.Contains(out, "unbacked") || !strings.Contains(out, worker.Key.DID.String()) {
		t.Errorf("audit submit: %s", out)
	}
	testutil.Eventually(t, "two audits on the worker", 10*time.Second, func() bool {
		return strings.Contains(runOK(t, "", "reputation", "show", "--node", base, worker.Key.DID.String()), "audits 2")
	})
	if out := runOK(t, "", "reputation", "top", "--node", base, "3"); !strings.Contains(out, worker.Key.DID.String()) {
		t.Errorf("reputation top: %s", out)
	}
	for _, bad := range [][]string{
		{"--score", "2"}, {"--score", "x"}, {"--evidence-hash", "0x12"}, {"--envelope", "m1"},
	} {
		args := map[string]string{"--score": "0.5", "--evidence-hash": common.Hash{9}.Hex()}
		for i := 0; i+1 < len(bad); i += 2 {
			args[bad[i]] = bad[i+1]
		}
		cmd := []string{"audit", "submit", "--node", base, "--key", key, "--subject", worker.Key.DID.String(), "--bounty", fmt.Sprint(id)}
		for k, v := range args {
			cmd = append(cmd, k, v)
		}
		r := start(t, cmd...)
		if code := r.wait(t); code != exitUsage || strings.Count(strings.TrimSpace(r.stderr.String()), "\n") != 0 {
			t.Errorf("audit submit %v: exit %d, stderr %q", bad, code, r.stderr)
		}
	}
	for _, path := range []string{"/v1/reputation?top=0", "/v1/reputation/not-a-did"} {
		if code, body := bc.Request("GET", path, nil, nil); code != http.StatusBadRequest {
			t.Errorf("GET %s: %d %s", path, code, body)
		}
	}
}

// TestAuditLogAnchoredOnAnvil is the log's acceptance test on a real chain: an audit's epoch
// closes, the node anchors the head in RootAnchor, and `surety log verify` checks the audit
// against the anchored root on its own; a tampered audit fails to verify.
func TestAuditLogAnchoredOnAnvil(t *testing.T) {
	waiting.Parallel(t) // waits for the audit's epoch to close and be anchored
	devnet := deployOnAnvil(t, contracts.DeployConfig{})
	node := start(t, "node", "--data-dir", t.TempDir(), "--listen", "127.0.0.1:0", "--rpc", devnet.URL, "--deployment", devnet.DepFile,
		"--dev-wallets", "--dev-accounts", "4", "--log-epoch", "1s", "--log-grace", "3s")
	base := node.apiURL(t)
	bc := apitest.NewClient(t, base)
	auditor, subject := bc.NewParty(1), bc.NewParty(2)
	env := bc.Envelope(auditor, 0, map[string]any{"kind": reputation.AuditKind, "subject": subject.Key.DID.String(), "envelope": "msg-1", "score": 0.7,
		"evidence": map[string]any{"hash": common.Hash{3}.Hex()}})
	if code, body := bc.Request("POST", "/v1/audits", env, nil); code != http.StatusCreated {
		t.Fatalf("audit: %d %s", code, body)
	}
	var head reputation.Head
	testutil.Eventually(t, "the head anchored on chain", 20*time.Second, func() bool {
		code, body := bc.Request("GET", "/v1/log/head", nil, nil)
		return code == http.StatusOK && json.Unmarshal(body, &head) == nil && head.AnchorTx != ""
	})
	dir := t.TempDir()
	good := filepath.Join(dir, "audit.jws")
	if err := os.WriteFile(good, env, 0o600); err != nil {
		t.Fatal(err)
	}
	out := runOK(t, "", "log", "verify", "--node", base, "--rpc", devnet.URL, "--envelope", good)
	if !strings.Contains(out, "verified: leaf "+merkle.LeafHash(env).String()) {
		t.Errorf("log verify: %s", out)
	}
	origin := verify.Origin(bc.Info.Chain.ID, devnet.Dep.Contracts.RootAnchor.Hex(), bc.Info.NodeDID)
	if !strings.Contains(out, "verified: head of size") || !strings.Contains(out, "verified: checkpoint "+origin) {
		t.Errorf("log verify checked no head or checkpoint: %s", out)
	}
	// What the node signs is checked against its DID: a head whose signature a proxy in front
	// of the node tampered with, a checkpoint another node signed, and a node that is not the
	// one --node-did names are each refused.
	other, err := identity.GenerateKey(identity.Ed25519)
	if err != nil {
		t.Fatal(err)
	}
	// Dev wallet 5 anchors another root at the head's size: a --wallet that names it finds the
	// chain disagreeing with the node's signed head. Dev wallet 6 anchored nothing.
	liar := chain.DevKey(5)
	rootAnchor := contracts.NewRootAnchor()
	tx, err := bind.Transact(rootAnchor.Instance(devnet.Client, devnet.Dep.Contracts.RootAnchor), bind.NewKeyedTransactor(liar, new(big.Int).SetUint64(bc.Info.Chain.ID)),
		rootAnchor.PackAnchor(head.Size, [32]byte{0xba, 0xd}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bind.WaitMined(context.Background(), devnet.Client, tx.Hash()); err != nil {
		t.Fatal(err)
	}
	liarWallet, silentWallet := crypto.PubkeyToAddress(liar.PublicKey).Hex(), crypto.PubkeyToAddress(chain.DevKey(6).PublicKey).Hex()
	for _, tt := range []struct {
		name    string
		tamper  func(path string, body []byte) []byte
		flags   []string
		refusal string
	}{
		{"a root on chain that is not the head's", nil, []string{"--wallet", liarWallet}, "NOT verified: the root anchored by " + liarWallet},
		{"no root on chain", nil, []string{"--wallet", silentWallet}, "no root is anchored by " + silentWallet},
		{"tampered head signature", func(path string, body []byte) []byte {
			if path != "/v1/log/head" {
				return body
			}
			var h map[string]any
			if err := json.Unmarshal(body, &h); err != nil {
				t.Error(err)
				return body
			}
			signed := h["signed"].(string)
			dot := strings.LastIndex(signed, ".")
			sig, err := base64.RawURLEncoding.DecodeString(signed[dot+1:])
			if err != nil {
				t.Error(err)
				return body
			}
			sig[len(sig)/2] ^= 1
			h["signed"] = signed[:dot+1] + base64.RawURLEncoding.EncodeToString(sig)
			out, _ := json.Marshal(h)
			return out
		}, nil, "NOT verified: the node's head: verify: bad signature"},
		{"checkpoint of another node", func(path string, body []byte) []byte {
			if path != "/v1/log/checkpoint" {
				return body
			}
			cp, err := verify.SignCheckpoint(verify.Checkpoint{Origin: verify.Origin(bc.Info.Chain.ID, devnet.Dep.Contracts.RootAnchor.Hex(), other.DID.String()), Size: head.Size, Root: head.Root},
				other.DID.String(), other.SignNote)
			if err != nil {
				t.Error(err)
			}
			return cp
		}, nil, "NOT verified: the node's checkpoint: verify: no signature by the node's key"},
		{"another node than --node-did", nil, []string{"--node-did", other.DID.String()}, "NOT verified: the node's head: verify: signed by another key"},
	} {
		proxy := tamperingProxy(t, base, tt.tamper)
		r := start(t, append([]string{"log", "verify", "--node", proxy, "--rpc", devnet.URL, "--envelope", good}, tt.flags...)...)
		if code := r.wait(t); code != exitFailure || !strings.Contains(r.stderr.String(), tt.refusal) || strings.Count(strings.TrimSpace(r.stderr.String()), "\n") != 0 {
			t.Errorf("%s: exit %d, stderr %q, want %q", tt.name, code, r.stderr, tt.refusal)
		}
		if strings.Contains(r.stdout.String(), "verified: leaf") {
			t.Errorf("%s: verified the leaf anyway: %s", tt.name, r.stdout)
		}
	}
	// A tampered audit (one byte of its signature changed) is not in the log.
	tampered := append([]byte(nil), env...)
	tampered[len(tampered)-2] ^= 1
	bad := filepath.Join(dir, "tampered.jws")
	if err := os.WriteFile(bad, tampered, 0o600); err != nil {
		t.Fatal(err)
	}
	r := start(t, "log", "verify", "--node", base, "--rpc", devnet.URL, "--envelope", bad)
	if code := r.wait(t); code != exitFailure || !strings.Contains(r.stderr.String(), "No such leaf in the log") {
		t.Errorf("a tampered audit: exit %d, stderr %q", code, r.stderr)
	}
	// The root on chain is the head's: read it directly.
	anchor := contracts.NewRootAnchor()
	from := crypto.PubkeyToAddress(chain.DevKey(0).PublicKey)
	root, err := bind.Call(anchor.Instance(devnet.Client, devnet.Dep.Contracts.RootAnchor), nil, anchor.PackRootAt(from, head.Size), anchor.UnpackRootAt)
	if err != nil || merkle.Hash(root) != head.Root {
		t.Errorf("anchored root %x, head root %s (%v)", root, head.Root, err)
	}
	receipt, err := devnet.Client.TransactionReceipt(context.Background(), common.HexToHash(head.AnchorTx))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("anchoring a head of %d audits cost %d gas: %d gas per audit (ERC-8004 giveFeedback: 131,528-213,372 per feedback)",
		head.Size, receipt.GasUsed, receipt.GasUsed/head.Size)
}

// tamperingProxy is a proxy in front of the node at base that passes each answer's body
// through tamper (nil: none), as a man in the middle or a lying node would.
func tamperingProxy(t *testing.T, base string, tamper func(path string, body []byte) []byte) string {
	t.Helper()
	target, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = func(resp *http.Response) error {
		if tamper == nil {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		body = tamper(resp.Request.URL.Path, body)
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
		return nil
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv.URL
}
