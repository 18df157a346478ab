package e2e

import (
	"encoding/json"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/internal/testutil/apitest"
	"github.com/surety-ioa/surety/reputation"
)

// TestLyingLogPeersOnAnvil is the log-head attack of issue 25 with separate node processes on
// one Anvil. Nodes 0-2 are honest (each stakes its DID at start, as nodes do on dev chains);
// nodes 3 and 4 are not staked nodes (--register-node no), so whatever they sign is no node's
// word. The two sides are cut apart and each hears only its own audits; then honest nodes 1 and
// 2 go down while the epochs close, and come back eclipsed: node 1 (the restart after downtime)
// reaches only node 3 (the lone liar); node 2 comes back as a new node, its data gone, and
// reaches only nodes 3 and 4 (a liar and a Sybil confirmer). At 5ab6450 both adopted the liars'
// epoch (any did:key could sign a head; silence was no objection), and node 1 dropped the
// honest audits it held. Now neither adopts it and both say so in /v1/info: node 1 keeps its own
// log and closes the epoch itself with the audits it had, which gives the honest network's
// root; node 2 stays empty.
func TestLyingLogPeersOnAnvil(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 5 node processes")
	}
	waiting.Parallel(t)
	c := startCluster(t, 5, clusterFlags{logEpoch: 2 * time.Second, logGrace: 3 * time.Second, syncEvery: time.Second, scoreStep: time.Hour,
		extra: func(i int) []string {
			if i >= 3 {
				return []string{"--register-node", "no"}
			}
			return nil
		}})
	c.setUp(2)
	honest, liars := c.nodes[:3], c.nodes[3:]
	c.partition(honest, liars)
	// The partition holds once no node of either side still has a connection to the other:
	// then gossip under way crosses no more.
	apart := func(set, others []*clusterNode) bool {
		for _, cn := range set {
			code, body, err := c.do(cn, "GET", "/v1/peers", nil)
			if err != nil || code != 200 {
				return false
			}
			for _, o := range others {
				if strings.Contains(string(body), o.peerID) {
					return false
				}
			}
		}
		return true
	}
	testutil.Eventually(t, "the partition to hold", 30*time.Second, func() bool { return apart(honest, liars) && apart(liars, honest) })
	audits := func(set []*clusterNode) int {
		n := 0
		for range 60 {
			if c.write(set) {
				n++
			}
		}
		return n
	}
	if audits(honest) == 0 || audits(liars) == 0 {
		t.Fatal("no writes landed")
	}
	// Nodes 1 and 2 hold the honest side's audits before they go down.
	testutil.Eventually(t, "nodes 1 and 2 to hold node 0's audits", 30*time.Second, func() bool {
		v0, err0 := c.view(c.nodes[0])
		v1, err1 := c.view(c.nodes[1])
		v2, err2 := c.view(c.nodes[2])
		return err0 == nil && err1 == nil && err2 == nil && v0.audits > 0 && v1.audits == v0.audits && v2.audits == v0.audits
	})
	before, _ := c.view(c.nodes[1])
	c.kill(c.nodes[1], syscall.SIGTERM)
	c.kill(c.nodes[2], syscall.SIGTERM)
	// Node 2 comes back new: no data, so no peers it remembers; it joins through the liars.
	if err := os.RemoveAll(c.nodes[2].DataDir); err != nil {
		t.Fatal(err)
	}
	c.nodes[2].SetFlag("bootstrap", c.nodes[3].p2pAddr+","+c.nodes[4].p2pAddr)
	// While they are down, both sides close the epochs, each with its own audits.
	testutil.Eventually(t, "both sides to close their epochs", 30*time.Second, func() bool {
		v0, err0 := c.view(c.nodes[0])
		v3, err3 := c.view(c.nodes[3])
		v4, err4 := c.view(c.nodes[4])
		return err0 == nil && err3 == nil && err4 == nil && v0.head.Size > 0 && v3.head.Size > 0 && v3.head.Root == v4.head.Root &&
			v0.head.Root != v3.head.Root
	})
	// The last epochs with audits close too: each side's log holds every audit it has.
	testutil.Eventually(t, "both sides to log every audit they hold", 30*time.Second, func() bool {
		v0, err0 := c.view(c.nodes[0])
		v3, err3 := c.view(c.nodes[3])
		v4, err4 := c.view(c.nodes[4])
		return err0 == nil && err3 == nil && err4 == nil && v0.head.Size == uint64(v0.audits) && v3.head.Size == uint64(v3.audits) &&
			v4.head.Size == uint64(v4.audits) && v3.head.Root == v4.head.Root
	})
	honestHead, _ := c.view(c.nodes[0])
	liarHead, _ := c.view(c.nodes[3])
	if honestHead.head.Root == liarHead.head.Root {
		t.Fatal("the sides closed the same log: the partition did not hold")
	}
	// The eclipse: node 1 reaches node 3 only, node 2 nodes 3 and 4 only.
	reachOnly(t, c.nodes[1], c.nodes, c.nodes[3])
	reachOnly(t, c.nodes[2], c.nodes, c.nodes[3], c.nodes[4])
	reachOnly(t, c.nodes[3], c.nodes, c.nodes[1], c.nodes[2], c.nodes[4])
	reachOnly(t, c.nodes[4], c.nodes, c.nodes[2], c.nodes[3])
	reachOnly(t, c.nodes[0], c.nodes)
	c.start(c.nodes[1])
	// Node 1 comes back to an epoch long past its grace and closes it with the audits it held,
	// before node 2 comes back new: the order a fixed pause here used to give (without it,
	// node 2 was seen in step, not alone, in 2 runs of 3).
	testutil.Eventually(t, "node 1 to close the epoch it held", 30*time.Second, func() bool {
		v, err := c.view(c.nodes[1])
		return err == nil && v.head.Size > 0
	})
	c.start(c.nodes[2])
	alone := func(cn *clusterNode, want ...string) {
		t.Helper()
		var sync *wire.LogSync
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			if sync = apitest.GetInfo(t, cn.base).AuditLog; sync != nil && sync.State == reputation.LogAlone {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d's audit log after 30 s: %+v, want alone", cn.i, sync)
			}
		}
		t.Logf("node %d's audit log: %s: %s", cn.i, sync.State, sync.Detail)
		for _, w := range want {
			if strings.Contains(sync.Detail, w) {
				return
			}
		}
		t.Errorf("node %d's audit log: %+v, want alone, saying one of %q", cn.i, sync, want)
	}
	// Node 1 closes the epoch itself, with the audits it held: the honest network's log. Under
	// load it may close it before its first catch-up reaches the liar (its first round found
	// no peer): the liar's epoch then differs from its log, the same refusal.
	alone(c.nodes[1], "0 staked node(s) signed it of the 2 needed", "differ")
	testutil.Eventually(t, "node 1 to close its own epoch", 30*time.Second, func() bool {
		v, err := c.view(c.nodes[1])
		return err == nil && v.head.Size > 0
	})
	if v, _ := c.view(c.nodes[1]); v.head.Root == liarHead.head.Root || v.head.Root != honestHead.head.Root || v.audits < before.audits {
		t.Errorf("node 1: head %+v, %d audits; the honest network's head %+v, the liars' %+v; it held %d audits before",
			v.head, v.audits, honestHead.head, liarHead.head, before.audits)
	}
	// Node 2, new, has no epoch of its own to close: only the liars' to refuse.
	alone(c.nodes[2], "0 staked node(s) signed it of the 2 needed")
	// A few more rounds with both liars: node 2 has refused each liar's epoch, and still does.
	refused := map[string]bool{}
	testutil.Eventually(t, "node 2 to refuse both liars' epochs", 30*time.Second, func() bool {
		code, body, err := c.do(c.nodes[2], "GET", "/v1/info", nil)
		var info wire.Info
		if err != nil || code != 200 || json.Unmarshal(body, &info) != nil || info.AuditLog == nil || info.AuditLog.State != reputation.LogAlone {
			return false
		}
		for _, l := range liars {
			if strings.Contains(info.AuditLog.Detail, "peer "+l.peerID+" offers") {
				refused[l.peerID] = true
			}
		}
		return len(refused) == len(liars)
	})
	var head reputation.Head
	if code, body, err := c.do(c.nodes[2], "GET", "/v1/log/head", nil); err != nil || code != 200 || json.Unmarshal(body, &head) != nil || head.Size != 0 {
		t.Errorf("node 2's log head: %d %s %v, want empty", code, body, err)
	}
}

// reachOnly lets cn reach only the nodes of allowed (it denies every other node of all).
func reachOnly(t *testing.T, cn *clusterNode, all []*clusterNode, allowed ...*clusterNode) {
	t.Helper()
	var deny []string
	for _, o := range all {
		if o != cn && !containsNode(allowed, o) {
			deny = append(deny, o.peerID)
		}
	}
	if err := cn.Deny(deny...); err != nil {
		t.Fatal(err)
	}
}

func containsNode(set []*clusterNode, cn *clusterNode) bool {
	for _, o := range set {
		if o == cn {
			return true
		}
	}
	return false
}
