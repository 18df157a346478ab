package main

import (
	"context"
	"encoding/json"
	"math/big"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/registry"
)

// TestFiveNodesOnAnvil is the registry acceptance test: five real nodes (own hosts on
// loopback, own databases) on one Anvil chain. A staked agent registers on node A and is
// found by DID and by capability on node E; with two nodes stopped, it is still found, also
// by a node that joins afterwards. Revoked on chain, its card leaves every node.
func TestFiveNodesOnAnvil(t *testing.T) {
	if testing.Short() {
		t.Skip("runs five nodes and Anvil")
	}
	devnet := deployOnAnvil(t, contracts.DeployConfig{})
	ctx, client, dep := context.Background(), devnet.Client, devnet.Dep
	dir := t.TempDir()

	// The agent binds and stakes on chain from dev wallet 1.
	agent, _ := identity.GenerateKey(identity.Ed25519)
	wallet := chain.DevKey(1)
	stakes := contracts.NewStakeRegistry()
	inst := stakes.Instance(client, dep.Contracts.StakeRegistry)
	opts := bind.NewKeyedTransactor(wallet, big.NewInt(31337))
	id := identity.AgentID(agent.DID.String())
	for _, call := range []struct {
		data  []byte
		value *big.Int
	}{{stakes.PackBind(id, []byte("binding")), nil}, {stakes.PackStake(id, big.NewInt(1e18)), big.NewInt(1e18)}} {
		opts.Value = call.value
		tx, err := bind.Transact(inst, opts, call.data)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := chain.WaitMined(ctx, client, tx.Hash()); err != nil {
			t.Fatal(err)
		}
	}

	startNodeAt := func(name, bootstrap string) (*running, string) {
		args := []string{"node", "--data-dir", filepath.Join(dir, name), "--listen", "127.0.0.1:0", "--rpc", devnet.URL, "--deployment", devnet.DepFile,
			"--p2p-listen", "/ip4/127.0.0.1/tcp/0", "--log-level", "warn"}
		if bootstrap != "" {
			args = append(args, "--bootstrap", bootstrap)
		}
		r := start(t, args...)
		return r, r.apiURL(t)
	}
	_, baseA := startNodeAt("a", "")
	boot := getInfo(t, baseA).Peer.Addrs[0]
	var bases []string
	var runs []*running
	for _, name := range []string{"b", "c", "d", "e"} {
		r, base := startNodeAt(name, boot)
		runs, bases = append(runs, r), append(bases, base)
	}
	time.Sleep(1500 * time.Millisecond) // let the gossip mesh form

	sc, err := registry.Sign(registry.Card{DID: agent.DID.String(), Name: "Auditor", Description: "audits smart contracts",
		Capabilities: []string{"audit", "solidity"}, Wallet: crypto.PubkeyToAddress(wallet.PublicKey), Seq: 1, Updated: time.Now().Unix()}, agent)
	if err != nil {
		t.Fatal(err)
	}
	bc := &bountyClient{t: t, base: baseA}
	if code, body := bc.request("POST", "/v1/agents", []byte(sc.JWS), nil); code != http.StatusCreated {
		t.Fatalf("register on A: %d %s", code, body)
	}
	baseE := bases[3]
	find := func(base, path string) bool {
		code, body := (&bountyClient{t: t, base: base}).request("GET", path, nil, nil)
		return code == http.StatusOK && strings.Contains(string(body), agent.DID.String())
	}
	eventuallyT(t, "found by DID on E", 15*time.Second, func() bool { return find(baseE, "/v1/agents/"+agent.DID.String()) })
	eventuallyT(t, "found by capability on E", 15*time.Second, func() bool { return find(baseE, "/v1/agents?capability=solidity") })

	// Stop B and C; E still answers, and a node that joins now finds the card in the DHT.
	time.Sleep(time.Second) // the DHT put is asynchronous
	runs[0].cancel()
	runs[1].cancel()
	runs[0].wait(t)
	runs[1].wait(t)
	if !find(baseE, "/v1/agents/"+agent.DID.String()) {
		t.Error("E lost the card")
	}
	_, baseF := startNodeAt("f", getInfo(t, bases[2]).Peer.Addrs[0])
	eventuallyT(t, "found by capability on a late node", 20*time.Second, func() bool { return find(baseF, "/v1/agents?capability=audit") })
	eventuallyT(t, "found by DID on a late node", 20*time.Second, func() bool { return find(baseF, "/v1/agents/"+agent.DID.String()) })

	// /v1/info ties each node's DID to its peer id.
	info := getInfo(t, baseE)
	payload, signer, err := identity.VerifyJWS([]byte(info.Peer.Binding), "surety-peer+jws")
	if err != nil || signer != info.NodeDID {
		t.Fatalf("peer binding: %v (signer %s, node %s)", err, signer, info.NodeDID)
	}
	var claim map[string]string
	_ = json.Unmarshal(payload, &claim)
	if claim["peerId"] != info.Peer.ID {
		t.Errorf("peer binding names %s, node is %s", claim["peerId"], info.Peer.ID)
	}
	code, body := (&bountyClient{t: t, base: baseE}).request("GET", "/v1/peers", nil, nil)
	if code != http.StatusOK || !strings.Contains(string(body), `"id"`) || !strings.Contains(string(body), `"score"`) {
		t.Errorf("peers (with their gossip scores): %d %s", code, body)
	}

	// The controller revokes the agent on chain and tells E: E drops the card and gossips the
	// notice; D checks it on chain too and drops the card, which the DHT can no longer bring
	// back.
	opts.Value = nil
	tx, err := bind.Transact(inst, opts, stakes.PackRevoke(id))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chain.WaitMined(ctx, client, tx.Hash()); err != nil {
		t.Fatal(err)
	}
	code, body = (&bountyClient{t: t, base: baseE}).request("POST", "/v1/agents/"+agent.DID.String()+"/status", nil, nil)
	if code != http.StatusOK || !strings.Contains(string(body), `"status":"revoked"`) || !strings.Contains(string(body), `"dropped":true`) {
		t.Fatalf("status check on E: %d %s", code, body)
	}
	baseD := bases[2]
	eventuallyT(t, "the revoked card gone from D", 15*time.Second, func() bool { return !find(baseD, "/v1/agents?capability=audit") })
	if code, body := (&bountyClient{t: t, base: baseD}).request("GET", "/v1/agents/"+agent.DID.String(), nil, nil); code != http.StatusGone {
		t.Errorf("GET the revoked agent on D: %d %s, want 410", code, body)
	}
	if code, body := (&bountyClient{t: t, base: baseD}).request("POST", "/v1/agents", []byte(sc.JWS), nil); code != http.StatusGone {
		t.Errorf("re-register the revoked card on D: %d %s, want 410", code, body)
	}
}

func eventuallyT(t *testing.T, what string, d time.Duration, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if f() {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: not within %s", what, d)
}
