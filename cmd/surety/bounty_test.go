package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil/apitest"
)

func TestBountyAPIEndToEnd(t *testing.T) {
	node := start(t, "node", "--data-dir", t.TempDir(), "--listen", "127.0.0.1:0", "--dev-accounts", "5")
	base := node.apiURL(t)
	bc := apitest.NewClient(t, base)
	market, worker, stranger := bc.NewParty(1), bc.NewParty(2), bc.NewParty(4)
	arbiter := crypto.PubkeyToAddress(chain.DevKey(3).PublicKey)

	// SSE: follow bounty 1 from the start.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	deadline := time.Now().Add(time.Hour).Unix()
	post := map[string]any{"wallet": market.Wallet, "amount": "1000000000000000000", "arbiter": arbiter, "deadline": deadline, "reviewWindow": 600}
	env := bc.Envelope(market, 0, post)
	code, body := bc.Request("POST", "/v1/bounties", env, map[string]string{"Idempotency-Key": "post-1"})
	if code != http.StatusCreated {
		t.Fatalf("post: %d %s", code, body)
	}
	posted := apitest.DecodeResult(t, body)
	id := posted.Bounty.ID
	// The very same request again (same envelope, same key) gets the same answer: no second transaction.
	code, body = bc.Request("POST", "/v1/bounties", env, map[string]string{"Idempotency-Key": "post-1"})
	if code != http.StatusOK || apitest.DecodeResult(t, body).TxHash != posted.TxHash {
		t.Fatalf("retried post: %d %s", code, body)
	}
	// Without the key, the same envelope is a replay.
	if code, body := bc.Request("POST", "/v1/bounties", env, nil); code != http.StatusConflict || !strings.Contains(string(body), "replayed") {
		t.Errorf("replay without key: %d %s", code, body)
	}

	events := make(chan string, 16)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/v1/bounties/%d/events", base, id), nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				events <- name
			}
		}
	}()

	bad := []struct {
		name   string
		do     func() (int, []byte)
		status int
		says   string
	}{
		{"unknown bounty", func() (int, []byte) { return bc.Act(worker, 999, "claim", map[string]any{}) }, http.StatusNotFound, "bounty 999"},
		{"wrong caller", func() (int, []byte) { return bc.Act(worker, id, "cancel", map[string]any{}) }, http.StatusForbidden, "only the poster"},
		{"amount 0", func() (int, []byte) {
			p := map[string]any{"wallet": market.Wallet, "amount": "0", "arbiter": arbiter, "deadline": deadline, "reviewWindow": 600}
			return bc.Request("POST", "/v1/bounties", bc.Envelope(market, 0, p), nil)
		}, http.StatusBadRequest, "amount"},
		{"past deadline", func() (int, []byte) {
			p := map[string]any{"wallet": market.Wallet, "amount": "1", "arbiter": arbiter, "deadline": time.Now().Add(-time.Hour).Unix(), "reviewWindow": 600}
			return bc.Request("POST", "/v1/bounties", bc.Envelope(market, 0, p), nil)
		}, http.StatusBadRequest, "InvalidDeadline"},
		{"malformed body", func() (int, []byte) {
			return bc.Request("POST", "/v1/bounties", bc.Envelope(market, 0, "not an object"), nil)
		}, http.StatusBadRequest, "envelope body"},
		{"not an envelope", func() (int, []byte) { return bc.Request("POST", "/v1/bounties", []byte(`{"amount":"1"}`), nil) }, http.StatusBadRequest, "malformed"},
		{"signature from another DID", func() (int, []byte) {
			p := map[string]any{"wallet": market.Wallet, "amount": "1", "arbiter": arbiter, "deadline": deadline, "reviewWindow": 600}
			return bc.Request("POST", "/v1/bounties", bc.Envelope(stranger, 0, p), nil)
		}, http.StatusForbidden, "not bound"},
		{"envelope for another bounty", func() (int, []byte) {
			b := map[string]any{"wallet": worker.Wallet}
			return bc.Request("POST", fmt.Sprintf("/v1/bounties/%d/claim", id), bc.Envelope(worker, id+1, b), nil)
		}, http.StatusBadRequest, "name this bounty"},
	}
	// The parties' wallets' nonces, read through the node's relay: unchanged, nothing was sent
	// for them. (Not the block height: the node sends transactions of its own, such as its
	// stake as a node, at any time; at 404f159 one landed between two reads.)
	nonce := func() uint64 {
		var n uint64
		for _, p := range []*apitest.Party{market, worker, stranger} {
			req := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"eth_getTransactionCount","params":["%s","latest"]}`, p.Wallet.Hex())
			code, body := bc.Request("POST", "/v1/rpc", []byte(req), map[string]string{"Content-Type": "application/json"})
			var res struct{ Result hexutil.Uint64 }
			if code != http.StatusOK || json.Unmarshal(body, &res) != nil {
				t.Fatalf("eth_getTransactionCount: %d %s", code, body)
			}
			n += uint64(res.Result)
		}
		return n
	}
	before := nonce()
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			code, body := tt.do()
			if code != tt.status || !strings.Contains(string(body), tt.says) {
				t.Errorf("status %d body %s; want %d saying %q", code, body, tt.status, tt.says)
			}
			var p api.Problem
			if err := json.Unmarshal(body, &p); err != nil || p.Title == "" {
				t.Errorf("not a problem document: %s", body)
			}
		})
	}
	if after := nonce(); after != before {
		t.Errorf("refused requests sent %d transactions", after-before)
	}

	for _, step := range []struct {
		p      *apitest.Party
		action string
		body   map[string]any
	}{
		{worker, "claim", map[string]any{"agentId": identity.AgentID(worker.Key.DID.String())}},
		{worker, "submit", map[string]any{"resultHash": common.Hash{7}}},
		{market, "accept", map[string]any{}},
	} {
		if code, body := bc.Act(step.p, id, step.action, step.body); code != http.StatusOK {
			t.Fatalf("%s: %d %s", step.action, code, body)
		}
		if step.action == "claim" {
			// A claim on a bounty without a minimum stake holds it for the claim window: the
			// poster's unclaim before its end is refused, saying until when, and nothing is sent.
			before := nonce()
			code, body := bc.Act(market, id, "unclaim", map[string]any{})
			if code != http.StatusConflict || !strings.Contains(string(body), "bounty-too-early") || !strings.Contains(string(body), "has until") {
				t.Errorf("unclaim within the claim window: %d %s", code, body)
			}
			if after := nonce(); after != before {
				t.Errorf("a refused unclaim sent %d transactions", after-before)
			}
		}
	}
	code, body = bc.Request("GET", fmt.Sprintf("/v1/bounties/%d", id), nil, nil)
	var b escrow.Bounty
	if err := json.Unmarshal(body, &b); err != nil || code != http.StatusOK {
		t.Fatalf("get: %d %s", code, body)
	}
	if b.Status != escrow.StatusAccepted || b.Worker != worker.Wallet || len(b.History) != 4 {
		t.Errorf("bounty after accept = %+v", b)
	}
	if code, body := bc.Act(market, id, "accept", map[string]any{}); code != http.StatusConflict || !strings.Contains(string(body), "already accepted") {
		t.Errorf("second accept: %d %s", code, body)
	}
	code, body = bc.Request("GET", "/v1/bounties?status=accepted&worker="+worker.Wallet.Hex(), nil, nil)
	if code != http.StatusOK || !strings.Contains(string(body), fmt.Sprintf(`"id":%d`, id)) {
		t.Errorf("list: %d %s", code, body)
	}
	var got []string
	timeout := time.After(10 * time.Second)
	for len(got) < 4 {
		select {
		case e := <-events:
			got = append(got, e)
		case <-timeout:
			t.Fatalf("events streamed: %v", got)
		}
	}
	if strings.Join(got, ",") != "Posted,Claimed,Submitted,Accepted" {
		t.Errorf("streamed %v", got)
	}
}

// bystander arbitrates bounties whose disputes a test never reaches: the escrow refuses an
// arbiter that is the poster or the worker.
const bystander = "0x00000000000000000000000000000000000a1b17"

// TestPrintOperation: each state of a write the node carries on is one line naming the
// transaction: sent, mined with its confirmations, mined and waiting for the node's index;
// the other states print nothing (the answer says the rest).
func TestPrintOperation(t *testing.T) {
	const tx = "0xb3b13584515d16ba5724d6f3025ed8ab5b3879bf9e8379c4e72bdd46d332a78b"
	for _, tt := range []struct {
		name string
		op   api.Operation
		want string
	}{
		{"sent", api.Operation{State: api.OpSent, TxHash: tx}, "stake add: sent " + tx + "\n"},
		{"mined, confirming", api.Operation{State: api.OpMined, TxHash: tx, Block: 13, Confirmations: &api.OpConfirmations{Have: 1, Want: 2}},
			"stake add: mined " + tx + " in block 13, 1/2 confirmations\n"},
		{"mined, indexing", api.Operation{State: api.OpMined, TxHash: tx, Block: 13}, "stake add: mined " + tx + " in block 13; waiting for the node's index\n"},
		{"pending", api.Operation{State: api.OpPending}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			tty := false
			printOperation(&env{stderr: &stderr, tty: &tty}, "stake add", &tt.op)
			if stderr.String() != tt.want {
				t.Errorf("printed %q, want %q", stderr.String(), tt.want)
			}
		})
	}
}
