package e2e

import (
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/internal/testutil/apitest"
	"github.com/surety-ioa/surety/registry"
	"github.com/surety-ioa/surety/testnet"
)

// TestFiveNodesOnAnvil is the registry acceptance test: five real nodes (own hosts on
// loopback, own databases) on one Anvil chain. A staked agent registers on node A and is
// found by DID and by capability on node E; with two nodes stopped, it is still found, also
// by a node that joins afterwards. An unbond and a slash sent straight to the chain re-rank
// the card on every node. A thief's forged bind and revoke of the agent's id change
// nothing anywhere (the de-list attack); the controller's real revocation reaches every node
// from the chain alone: cards go, the resolver says deactivated, envelopes are refused.
func TestFiveNodesOnAnvil(t *testing.T) {
	if testing.Short() {
		t.Skip("runs five nodes and Anvil")
	}
	waiting.Parallel(t) // waits on gossip and the chain
	// Six nodes: A to E, and F, which joins later as a new node (it stops at once, and comes
	// back with no data, bootstrapped from D).
	nw := startNetwork(t, 6, testnet.Config{}, func(int) []string { return []string{"--log-level", "warn"} })
	nodeF := nw.Nodes[5]
	if err := nw.Kill(nodeF.Index, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(nodeF.DataDir); err != nil {
		t.Fatal(err)
	}
	ctx, dep := t.Context(), nw.Devnet.Deployment
	client := dialChain(t, nw)

	// The agent binds (both keys sign the binding, the wallet records it) and stakes on chain
	// from dev wallet 1.
	agent, _ := identity.GenerateKey(identity.Ed25519)
	wallet := chain.DevKey(1)
	stakes := contracts.NewStakeRegistry()
	inst := stakes.Instance(client, dep.Contracts.StakeRegistry)
	id := identity.AgentID(agent.DID.String())
	proof := apitest.BindingJSON(t, agent, wallet, 31337, dep.Contracts.StakeRegistry)
	sendTo := func(to *bind.BoundContract, from *ecdsa.PrivateKey, data []byte, value *big.Int) uint64 {
		t.Helper()
		opts := bind.NewKeyedTransactor(from, big.NewInt(31337))
		opts.Value = value
		tx, err := bind.Transact(to, opts, data)
		if err != nil {
			t.Fatal(err)
		}
		r, err := chain.WaitMined(ctx, client, tx.Hash())
		if err != nil || r.Status != 1 {
			t.Fatalf("transaction %x: %v (status %v)", data[:4], err, r)
		}
		return r.BlockNumber.Uint64()
	}
	send := func(from *ecdsa.PrivateKey, data []byte, value *big.Int) uint64 {
		t.Helper()
		return sendTo(inst, from, data, value)
	}
	send(wallet, stakes.PackBind(id, proof), nil)
	send(wallet, stakes.PackStake(id, big.NewInt(1e18)), big.NewInt(1e18))

	baseA := nw.Nodes[0].URL()
	var bases []string // B, C, D, E
	for _, n := range nw.Nodes[1:5] {
		bases = append(bases, n.URL())
	}
	waitMeshes(t, append([]string{baseA}, bases...)...)

	sc, err := registry.Sign(registry.Card{DID: agent.DID.String(), Name: "Auditor", Description: "audits smart contracts",
		Capabilities: []string{"audit", "solidity"}, Wallet: crypto.PubkeyToAddress(wallet.PublicKey), Seq: 1, Updated: time.Now().Unix()}, agent)
	if err != nil {
		t.Fatal(err)
	}
	bc := &apitest.Client{T: t, Base: baseA}
	if code, body := bc.Request("POST", "/v1/agents", []byte(sc.JWS), nil); code != http.StatusCreated {
		t.Fatalf("register on A: %d %s", code, body)
	}
	baseE := bases[3]
	find := func(base, path string) bool {
		code, body := (&apitest.Client{T: t, Base: base}).Request("GET", path, nil, nil)
		return code == http.StatusOK && strings.Contains(string(body), agent.DID.String())
	}
	testutil.Eventually(t, "found by DID on E", 15*time.Second, func() bool { return find(baseE, "/v1/agents/"+agent.DID.String()) })
	testutil.Eventually(t, "found by capability on E", 15*time.Second, func() bool { return find(baseE, "/v1/agents?capability=solidity") })

	// Stop B and C; E still answers, and a node that joins now finds the card in the DHT.
	waitPuts(t, baseA) // the DHT put is asynchronous
	for _, i := range []int{1, 2} {
		if err := nw.Kill(i, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
	}
	if !find(baseE, "/v1/agents/"+agent.DID.String()) {
		t.Error("E lost the card")
	}
	nodeF.SetFlag("bootstrap", apitest.GetInfo(t, bases[2]).Peer.Addrs[0])
	if err := nw.Restart(ctx, nodeF.Index); err != nil {
		t.Fatal(err)
	}
	baseF := nodeF.URL()
	testutil.Eventually(t, "found by capability on a late node", 20*time.Second, func() bool { return find(baseF, "/v1/agents?capability=audit") })
	testutil.Eventually(t, "found by DID on a late node", 20*time.Second, func() bool { return find(baseF, "/v1/agents/"+agent.DID.String()) })

	// /v1/info ties each node's DID to its peer id.
	info := apitest.GetInfo(t, baseE)
	payload, signer, err := identity.VerifyJWS([]byte(info.Peer.Binding), "surety-peer+jws")
	if err != nil || signer != info.NodeDID {
		t.Fatalf("peer binding: %v (signer %s, node %s)", err, signer, info.NodeDID)
	}
	var claim map[string]string
	_ = json.Unmarshal(payload, &claim)
	if claim["peerId"] != info.Peer.ID {
		t.Errorf("peer binding names %s, node is %s", claim["peerId"], info.Peer.ID)
	}
	testutil.Eventually(t, "peers with their gossip scores on E", 10*time.Second, func() bool { // scored at each inspection
		code, body := (&apitest.Client{T: t, Base: baseE}).Request("GET", "/v1/peers", nil, nil)
		return code == http.StatusOK && strings.Contains(string(body), `"id"`) && strings.Contains(string(body), `"score"`)
	})

	// Stake changes sent straight to the chain re-rank the card on every node, with no call
	// to any node: an unbond, then a slash, which only a dispute ruling can make: a bounty
	// with a minimum stake, claimed by the agent's wallet (locking it), submitted, rejected by
	// its poster and resolved by its arbiter with a slash.
	live := []string{baseA, bases[2], baseE, baseF}
	stakeOn := func(base string) string {
		var a registry.Agent
		code, body := (&apitest.Client{T: t, Base: base}).Request("GET", "/v1/agents/"+agent.DID.String(), nil, nil)
		if code != http.StatusOK || json.Unmarshal(body, &a) != nil {
			return fmt.Sprintf("%d %s", code, body)
		}
		return a.Stake
	}
	send(wallet, stakes.PackRequestUnbond(id, big.NewInt(5e17)), nil)
	for _, base := range live {
		testutil.Eventually(t, "the unbond seen by "+base, 5*time.Second, func() bool { return stakeOn(base) == "500000000000000000" })
	}
	escrowABI := contracts.NewBountyEscrow()
	escrowInst := escrowABI.Instance(client, dep.Contracts.BountyEscrow)
	// The arbiter is dev account 0 (the deployer, idle since): 4 is node F's anchoring wallet here.
	poster, arbiter, w := chain.DevKey(3), chain.DevKey(0), crypto.PubkeyToAddress(wallet.PublicKey)
	head, err := client.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	terms := contracts.IBountyEscrowTerms{Poster: crypto.PubkeyToAddress(poster.PublicKey), Amount: big.NewInt(1),
		Arbiter: crypto.PubkeyToAddress(arbiter.PublicKey), Deadline: head.Time + 3600, ReviewWindow: 60, MinStake: big.NewInt(25e16)}
	if terms.FeeBps, err = bind.Call(escrowInst, nil, escrowABI.PackFeeBps(), escrowABI.UnpackFeeBps); err != nil {
		t.Fatal(err)
	}
	salt := common.Hash{'s', 'l', 'a', 's', 'h'}
	bid, err := bind.Call(escrowInst, nil, escrowABI.PackBountyId(terms.Poster, salt), escrowABI.UnpackBountyId)
	if err != nil {
		t.Fatal(err)
	}
	sendTo(escrowInst, poster, escrowABI.PackPost(common.Address{}, terms.Amount, terms.Arbiter, terms.Deadline, terms.ReviewWindow, terms.MinStake, common.Hash{}, salt), terms.Amount)
	sendTo(escrowInst, wallet, escrowABI.PackClaim(bid, terms, id), nil)
	sendTo(escrowInst, wallet, escrowABI.PackSubmit(bid, terms, w, common.Hash{1}), nil)
	sendTo(escrowInst, poster, escrowABI.PackReject(bid, terms, w, common.Hash{}), nil)
	sendTo(escrowInst, arbiter, escrowABI.PackResolve(bid, terms, w, 0, terms.MinStake), nil)
	for _, base := range live {
		testutil.Eventually(t, "the slash seen by "+base, 5*time.Second, func() bool { return stakeOn(base) == "250000000000000000" })
	}

	// The de-list attack: a thief binds the agent's id from its own wallet with an empty
	// proof, revokes it, and asks E to check the status. Nothing changes on any node.
	thief := chain.DevKey(2)
	send(thief, stakes.PackBind(id, nil), nil)
	forged := send(thief, stakes.PackRevoke(id), nil)
	code, body := (&apitest.Client{T: t, Base: baseE}).Request("POST", "/v1/agents/"+agent.DID.String()+"/status", nil, nil)
	if code != http.StatusOK || !strings.Contains(string(body), `"status":"active"`) || !strings.Contains(string(body), `"dropped":false`) {
		t.Fatalf("status check on E after the forged revocation: %d %s", code, body)
	}
	waitIndexedOn(t, forged, live...)
	for _, base := range live {
		if !find(base, "/v1/agents/"+agent.DID.String()) || !find(base, "/v1/agents?capability=audit") {
			t.Errorf("%s lost the card to a forged revocation", base)
		}
		if code, body := (&apitest.Client{T: t, Base: base}).Request("GET", "/1.0/identifiers/"+agent.DID.String(), nil, nil); code != http.StatusOK {
			t.Errorf("%s resolves the DID after a forged revocation: %d %s", base, code, body)
		}
	}

	// The controller revokes the agent on chain and tells nobody: every node follows the
	// chain and drops the card, the resolver answers deactivated, a fresh envelope from the
	// revoked key is refused, and the card cannot come back.
	send(wallet, stakes.PackRevoke(id), nil)
	for _, base := range live {
		bc := &apitest.Client{T: t, Base: base}
		testutil.Eventually(t, "the revoked card gone from "+base, 5*time.Second, func() bool { return !find(base, "/v1/agents?capability=audit") })
		if code, body := bc.Request("GET", "/v1/agents/"+agent.DID.String(), nil, nil); code != http.StatusGone {
			t.Errorf("GET the revoked agent on %s: %d %s, want 410", base, code, body)
		}
		if code, body := bc.Request("GET", "/1.0/identifiers/"+agent.DID.String(), nil, nil); code != http.StatusGone || !strings.Contains(string(body), `"deactivated":true`) {
			t.Errorf("resolve the revoked DID on %s: %d %s, want 410 deactivated", base, code, body)
		}
		env, err := identity.SignRequest(agent, apitest.Audience(apitest.GetInfo(t, base)), 0, map[string]string{"hello": "world"}, time.Now(), 5*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if code, body := bc.Request("POST", "/v1/envelopes/verify", []byte(env), map[string]string{"Content-Type": "application/jose"}); code != http.StatusForbidden || !strings.Contains(string(body), "envelope-revoked") {
			t.Errorf("a fresh envelope from the revoked key on %s: %d %s, want 403 envelope-revoked", base, code, body)
		}
		if code, body := bc.Request("POST", "/v1/agents", []byte(sc.JWS), nil); code != http.StatusGone {
			t.Errorf("re-register the revoked card on %s: %d %s, want 410", base, code, body)
		}
		// An audit and a group post by the revoked key are refused the same way.
		audit, err := identity.SignRequest(agent, apitest.Audience(apitest.GetInfo(t, base)), 0, map[string]any{"kind": "surety.audit/1", "subject": apitest.GetInfo(t, base).NodeDID,
			"envelope": "m1", "score": 0.5, "evidence": map[string]string{"hash": "0x" + strings.Repeat("ab", 32)}}, time.Now(), 5*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if code, body := bc.Request("POST", "/v1/audits", []byte(audit), nil); code != http.StatusForbidden || !strings.Contains(string(body), "envelope-revoked") {
			t.Errorf("an audit by the revoked key on %s: %d %s, want 403 envelope-revoked", base, code, body)
		}
		post, err := identity.SignRequest(agent, apitest.Audience(apitest.GetInfo(t, base)), 0, map[string]any{"text": "still here"}, time.Now(), 5*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if code, body := bc.Request("POST", "/v1/groups/g1/envelopes", []byte(post), nil); code != http.StatusForbidden || !strings.Contains(string(body), "envelope-revoked") {
			t.Errorf("a group post by the revoked key on %s: %d %s, want 403 envelope-revoked", base, code, body)
		}
	}
}

// waitMeshes waits until every gossip topic's mesh has formed on each node (GET /v1/peers):
// a message published now reaches every node.
func waitMeshes(t *testing.T, bases ...string) {
	t.Helper()
	for _, base := range bases {
		testutil.Eventually(t, "the gossip meshes formed on "+base, 20*time.Second, func() bool {
			var l wire.PeerList
			if !getJSON(base+"/v1/peers", &l) || len(l.Topics) == 0 {
				return false
			}
			for _, m := range l.Topics {
				if !m.Formed {
					return false
				}
			}
			return true
		})
	}
}

// waitPuts waits until the DHT puts of the cards registered on base are done.
func waitPuts(t *testing.T, base string) {
	t.Helper()
	testutil.Eventually(t, "the DHT puts done on "+base, 20*time.Second, func() bool {
		var l wire.PeerList
		return getJSON(base+"/v1/peers", &l) && l.PendingPuts == 0
	})
}

// waitIndexedOn waits until each node's chain indexes hold block (GET /v1/info): what the node
// answers from then on reflects the chain up to it.
func waitIndexedOn(t *testing.T, block uint64, bases ...string) {
	t.Helper()
	for _, base := range bases {
		testutil.Eventually(t, fmt.Sprintf("block %d indexed by %s", block, base), 20*time.Second, func() bool {
			var info wire.Info
			return getJSON(base+"/v1/info", &info) && info.Chain.IndexedBlock != nil && *info.Chain.IndexedBlock >= block
		})
	}
}

// TestRestartedNodeRejoinsThroughKnownPeers: at 66f817e a node restarted with its original
// command line, whose bootstrap peer had died, found no peer and stayed alone. A node now
// remembers the peers it was connected to (DATA_DIR/peers.json) and dials them too.
func TestRestartedNodeRejoinsThroughKnownPeers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three nodes and Anvil")
	}
	waiting.Parallel(t) // a node (or devnet) of its own
	// Node i is bootstrapped from the nodes before it: A (0), then C (1), whose command line
	// names only A, then B (2), which names A and C.
	nw := startNetwork(t, 3, testnet.Config{}, func(int) []string { return []string{"--log-level", "warn"} })
	a, c, b := nw.Nodes[0], nw.Nodes[1], nw.Nodes[2]
	peersOf := func(base string) string {
		_, body := (&apitest.Client{T: t, Base: base}).Request("GET", "/v1/peers", nil, nil)
		return string(body)
	}
	if c.Flag("bootstrap") != a.Addrs()[0] {
		t.Fatalf("C's command line names %q, want A only (%s)", c.Flag("bootstrap"), a.Addrs()[0])
	}
	cBase := c.URL()
	testutil.Eventually(t, "C connected to B", 10*time.Second, func() bool { return strings.Contains(peersOf(cBase), b.PeerID()) })

	// C stops (and writes down its peers), A dies; C restarts with the same command line.
	if err := nw.Kill(c.Index, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if st := c.ProcessState(); st == nil || st.ExitCode() != 0 {
		t.Fatalf("C stopped with %v", st)
	}
	if err := nw.Kill(a.Index, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	logged := len(c.Log())
	if err := nw.Restart(t.Context(), c.Index); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "the restarted C connected to B through its known peers", 10*time.Second, func() bool {
		return strings.Contains(peersOf(cBase), b.PeerID())
	})
	if again := c.Log()[logged:]; strings.Contains(again, "no bootstrap peer answered") {
		t.Errorf("the restarted node found no peer:\n%s", again)
	}
}
