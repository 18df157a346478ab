package e2e

import (
	"bytes"
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/groups"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/internal/testutil/apitest"
	"github.com/surety-ioa/surety/registry"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/testnet"
)

// A cluster is n `surety node` processes on one Anvil (a testnet.Network: each node with its
// own data dir, fixed API and libp2p ports, so a restarted node is where its peers remember
// it, anchor wallet and deny file), for the churn and partition tests. Its workload is what
// users do: staked agents update their cards, audit each other, and talk in a group thread,
// through random live nodes.
type cluster struct {
	t     testing.TB
	net   *testnet.Network
	nodes []*clusterNode
	http  *http.Client

	agents []*clusterAgent
	group  string

	// What nodes accepted; a write whose answer never came (the node died, or was slow) may
	// or may not have landed, and is counted apart.
	mu          sync.Mutex
	cards       map[string]uint64 // the latest seq a node accepted, by DID
	audits      int
	posts       int
	auditsMaybe int
	postsMaybe  int
	written     int
	// accepted are the audits nodes accepted, by whom and when: an audit whose node dies
	// before it could spread it, and stays down past the log's grace, is closed out of the
	// log by the others, and dropped by its node when it comes back (as designed).
	accepted []acceptedAudit
}

type acceptedAudit struct {
	by *clusterNode
	at time.Time
}

// atRisk is how long after accepting an audit a node may die and take it along: until it
// has gossiped it, or a peer's sync round (every second here) has pulled it.
const atRisk = 3 * time.Second

// clusterNode is a node of the cluster: its process is the network's, its workload state
// (up: writers may pick it) the cluster's.
type clusterNode struct {
	*testnet.Node
	i       int
	base    string
	did     string
	peerID  string
	p2pAddr string

	mu sync.Mutex
	up bool
}

type clusterAgent struct {
	key    *identity.Key
	wallet *ecdsa.PrivateKey
	side   int // agents of one side share a wallet; audits go across sides
	seq    uint64
	// sending is held by the load benchmark's honest writer from a card's sequence number
	// until its answer: an agent sends its card updates one after the other, so a later one
	// never overtakes an earlier (which the node refuses, 409, as stale).
	sending sync.Mutex
}

// clusterFlags tune the nodes of a cluster.
type clusterFlags struct {
	logEpoch, logGrace, syncEvery, scoreStep time.Duration
	// extra, when set, adds flags to node i's.
	extra func(i int) []string
}

// startCluster starts n nodes on a fresh Anvil: node 0 first, then the others bootstrapped to
// the nodes before them.
func startCluster(t testing.TB, n int, f clusterFlags) *cluster {
	t.Helper()
	nw := startNetwork(t, n, testnet.Config{}, func(i int) []string {
		flags := []string{"--log-epoch", f.logEpoch.String(), "--log-grace", f.logGrace.String(), "--sync-every", f.syncEvery.String(),
			"--score-step", f.scoreStep.String(), "--log-level", "warn"}
		if f.extra != nil {
			flags = append(flags, f.extra(i)...)
		}
		return flags
	})
	c := &cluster{t: t, net: nw, http: &http.Client{Timeout: 10 * time.Second}, cards: map[string]uint64{}, group: "churn"}
	for _, n := range nw.Nodes {
		cn := &clusterNode{Node: n, i: n.Index, base: n.URL(), up: true}
		cn.known()
		c.nodes = append(c.nodes, cn)
	}
	return c
}

// known takes cn's identity from its last start.
func (cn *clusterNode) known() {
	cn.did, cn.peerID, cn.p2pAddr = cn.DID(), cn.PeerID(), cn.Addrs()[0]
}

// start starts cn's process again and waits until it answers.
func (c *cluster) start(cn *clusterNode) {
	c.t.Helper()
	if err := c.net.Restart(c.t.Context(), cn.i); err != nil {
		c.t.Fatalf("%v\n%s", err, testutil.Tail(cn.Log(), 8000))
	}
	cn.mu.Lock()
	cn.known()
	cn.up = true
	cn.mu.Unlock()
}

// kill stops cn: SIGKILL, or SIGTERM for a clean stop. The audits it accepted within atRisk
// may go with it.
func (c *cluster) kill(cn *clusterNode, sig syscall.Signal) {
	cn.mu.Lock()
	cn.up = false
	cn.mu.Unlock()
	c.mu.Lock()
	c.accepted = slices.DeleteFunc(c.accepted, func(a acceptedAudit) bool {
		if a.by != cn || time.Since(a.at) >= atRisk {
			return false
		}
		c.audits--
		c.auditsMaybe++
		return true
	})
	c.mu.Unlock()
	if err := c.net.Kill(cn.i, sig); err != nil {
		c.t.Fatal(err)
	}
}

func (cn *clusterNode) isUp() bool {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	return cn.up
}

// live are the nodes up now, among those in set (all when nil).
func (c *cluster) live(set []*clusterNode) []*clusterNode {
	if set == nil {
		set = c.nodes
	}
	var out []*clusterNode
	for _, cn := range set {
		if cn.isUp() {
			out = append(out, cn)
		}
	}
	return out
}

// do sends a request to cn; err is set when the node did not answer.
func (c *cluster) do(cn *clusterNode, method, path string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(method, cn.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// envelope signs body as a, for node cn.
func (c *cluster) envelope(cn *clusterNode, a *clusterAgent, fields map[string]any) []byte {
	c.t.Helper()
	m := map[string]any{"to": []string{cn.did}, "aud": cn.did, "chain_id": 31337}
	for k, v := range fields {
		m[k] = v
	}
	raw, _ := json.Marshal(m)
	filled, err := identity.FillEnvelope(raw, a.key, time.Now(), time.Minute)
	if err != nil {
		c.t.Fatal(err)
	}
	s, err := a.key.SignCompact(filled)
	if err != nil {
		c.t.Fatal(err)
	}
	return []byte(s)
}

// mustDo sends a request to node 0 during set-up and wants one of codes.
func (c *cluster) mustDo(method, path string, body []byte, codes ...int) []byte {
	c.t.Helper()
	code, out, err := c.do(c.nodes[0], method, path, body)
	if err != nil || !slices.Contains(codes, code) {
		c.t.Fatalf("%s %s: %d %s (%v)", method, path, code, out, err)
	}
	return out
}

// setUp makes k agents on each of two wallets (dev accounts 0 and 1): bound and staked on
// chain, with a card; and a group of all of them.
func (c *cluster) setUp(k int) {
	c.t.Helper()
	info := apitest.GetInfo(c.t, c.nodes[0].base)
	registryAddr := common.HexToAddress(info.Contracts["StakeRegistry"])
	for side := range 2 {
		wallet := chain.DevKey(side)
		for range k {
			key, err := identity.GenerateKey(identity.Ed25519)
			if err != nil {
				c.t.Fatal(err)
			}
			a := &clusterAgent{key: key, wallet: wallet, side: side}
			c.mustDo("POST", "/v1/bindings", apitest.BindingJSON(c.t, key, wallet, 31337, registryAddr), http.StatusCreated)
			c.mustDo("POST", "/v1/stake", c.envelope(c.nodes[0], a, map[string]any{"body": map[string]any{"op": "stake",
				"wallet": crypto.PubkeyToAddress(wallet.PublicKey), "amount": "1000000000000000000"}}), http.StatusOK, http.StatusCreated)
			c.agents = append(c.agents, a)
			if !c.updateCard(c.nodes[0], a) {
				c.t.Fatalf("card of %s refused", key.DID)
			}
		}
	}
	var members []string
	for _, a := range c.agents[1:] {
		members = append(members, a.key.DID.String())
	}
	c.mustDo("POST", "/v1/groups/"+c.group+"/members", c.envelope(c.nodes[0], c.agents[0], map[string]any{"group_id": c.group,
		"body": map[string]any{"kind": groups.MembersKind, "members": members}}), http.StatusOK, http.StatusCreated)
	// Every node holds the set-up before the test starts.
	c.convergence(60*time.Second, false)
}

// updateCard registers a's next card at cn and says whether cn took it.
func (c *cluster) updateCard(cn *clusterNode, a *clusterAgent) bool {
	c.mu.Lock()
	a.seq++
	seq := a.seq
	c.mu.Unlock()
	sc, err := registry.Sign(registry.Card{DID: a.key.DID.String(), Name: fmt.Sprintf("agent v%d", seq), Description: "works under churn",
		Capabilities: []string{"churn"}, Wallet: crypto.PubkeyToAddress(a.wallet.PublicKey), Seq: seq, Updated: time.Now().Unix()}, a.key)
	if err != nil {
		c.t.Fatal(err)
	}
	code, _, err := c.do(cn, "POST", "/v1/agents", []byte(sc.JWS))
	if err != nil || code != http.StatusCreated {
		return false
	}
	c.mu.Lock()
	c.cards[a.key.DID.String()] = max(c.cards[a.key.DID.String()], seq)
	c.mu.Unlock()
	return true
}

// write does one random user action at a random live node of set and says whether it landed.
func (c *cluster) write(set []*clusterNode) bool {
	live := c.live(set)
	if len(live) == 0 {
		return false
	}
	cn := live[rand.IntN(len(live))]
	c.mu.Lock()
	c.written++
	n := c.written
	c.mu.Unlock()
	a := c.agents[rand.IntN(len(c.agents))]
	switch n % 3 {
	case 0:
		return c.updateCard(cn, a)
	case 1:
		var others []*clusterAgent
		for _, o := range c.agents {
			if o.side != a.side {
				others = append(others, o)
			}
		}
		subject := others[rand.IntN(len(others))]
		env := c.envelope(cn, a, map[string]any{"body": map[string]any{"kind": reputation.AuditKind, "subject": subject.key.DID.String(),
			"envelope": fmt.Sprintf("msg-%d", n), "score": float64(rand.IntN(100)) / 100, "evidence": map[string]any{"hash": common.Hash{byte(n)}.Hex()}}})
		code, _, err := c.do(cn, "POST", "/v1/audits", env)
		c.mu.Lock()
		defer c.mu.Unlock()
		switch {
		case err != nil:
			c.auditsMaybe++
			return false
		case code != http.StatusCreated:
			return false
		}
		c.audits++
		c.accepted = append(c.accepted, acceptedAudit{by: cn, at: time.Now()})
	default:
		env := c.envelope(cn, a, map[string]any{"group_id": c.group, "state": "discussion", "body": map[string]any{"text": fmt.Sprintf("post %d", n)}})
		code, _, err := c.do(cn, "POST", "/v1/groups/"+c.group+"/envelopes", env)
		c.mu.Lock()
		defer c.mu.Unlock()
		switch {
		case err != nil, code == http.StatusAccepted: // no answer; or forwarded, stored elsewhere
			c.postsMaybe++
			return false
		case code != http.StatusCreated:
			return false
		}
		c.posts++
	}
	return true
}

// nodeView is what one node holds of the workload.
type nodeView struct {
	cards  map[string]uint64
	head   reputation.Head
	scores map[string]string // DID → score, confidence and time of computation
	posts  int64
	audits int
}

func (c *cluster) view(cn *clusterNode) (*nodeView, error) {
	v := &nodeView{cards: map[string]uint64{}, scores: map[string]string{}}
	get := func(path string, out any) error {
		code, body, err := c.do(cn, "GET", path, nil)
		if err != nil {
			return err
		}
		if code != http.StatusOK {
			return fmt.Errorf("GET %s: %d %s", path, code, body)
		}
		return json.Unmarshal(body, out)
	}
	for _, a := range c.agents {
		did := a.key.DID.String()
		var card registry.Agent
		if err := get("/v1/agents/"+did, &card); err != nil {
			return nil, err
		}
		v.cards[did] = card.Seq
		var r reputation.Reputation
		if err := get("/v1/reputation/"+did, &r); err != nil {
			return nil, err
		}
		v.scores[did] = fmt.Sprintf("%v/%v/%d@%s", r.Score, r.Confidence, r.Audits, r.Computed.Format(time.RFC3339))
		v.audits += r.Audits
	}
	if err := get("/v1/log/head", &v.head); err != nil {
		return nil, err
	}
	var g groups.Group
	if err := get("/v1/groups/"+c.group, &g); err != nil {
		return nil, err
	}
	v.posts = g.Envelopes
	return v, nil
}

// converged says whether every node holds every card, audit and post that was accepted (and
// no more than were sent), all nodes the same, with the same scores; with logged, also every
// audit in the log, under the same root. It says what differs when not.
func (c *cluster) converged(logged bool) (bool, string) {
	c.mu.Lock()
	cards, audits, posts := maps(c.cards), c.audits, c.posts
	maxAudits, maxPosts := audits+c.auditsMaybe, posts+c.postsMaybe
	sent := map[string]uint64{}
	for _, a := range c.agents {
		sent[a.key.DID.String()] = a.seq
	}
	c.mu.Unlock()
	var first *nodeView
	for _, cn := range c.nodes {
		v, err := c.view(cn)
		if err != nil {
			return false, fmt.Sprintf("node %d: %v", cn.i, err)
		}
		for did, seq := range cards {
			if v.cards[did] < seq || v.cards[did] > sent[did] {
				return false, fmt.Sprintf("node %d: card %s at seq %d, want %d (or up to %d)", cn.i, did, v.cards[did], seq, sent[did])
			}
		}
		if v.audits < audits || v.audits > maxAudits || v.posts < int64(posts) || v.posts > int64(maxPosts) {
			return false, fmt.Sprintf("node %d: %d audits and %d posts, want %d (to %d) and %d (to %d)", cn.i, v.audits, v.posts, audits, maxAudits, posts, maxPosts)
		}
		if logged && v.head.Size != uint64(v.audits) {
			return false, fmt.Sprintf("node %d: log size %d, want its %d audits", cn.i, v.head.Size, v.audits)
		}
		if first == nil {
			first = v
			continue
		}
		if v.audits != first.audits || v.posts != first.posts {
			return false, fmt.Sprintf("node %d: %d audits and %d posts, node 0 %d and %d", cn.i, v.audits, v.posts, first.audits, first.posts)
		}
		for did, seq := range first.cards {
			if v.cards[did] != seq {
				return false, fmt.Sprintf("node %d: card %s at seq %d, node 0 at %d", cn.i, did, v.cards[did], seq)
			}
		}
		if v.head.Root != first.head.Root || v.head.Size != first.head.Size {
			return false, fmt.Sprintf("node %d: log head %d/%s, node 0 %d/%s", cn.i, v.head.Size, v.head.Root, first.head.Size, first.head.Root)
		}
		for did, s := range first.scores {
			if v.scores[did] != s {
				return false, fmt.Sprintf("node %d: %s scores %s, node 0 %s", cn.i, did, v.scores[did], s)
			}
		}
	}
	return true, ""
}

func maps(m map[string]uint64) map[string]uint64 {
	out := make(map[string]uint64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// convergence waits (up to within) until the cluster has converged and returns how long it
// took; it fails the test, saying what differs, if it does not.
func (c *cluster) convergence(within time.Duration, logged bool) time.Duration {
	c.t.Helper()
	start := time.Now()
	var why string
	for time.Since(start) < within {
		var ok bool
		if ok, why = c.converged(logged); ok {
			return time.Since(start)
		}
		time.Sleep(250 * time.Millisecond)
	}
	c.t.Fatalf("not converged after %s: %s", within, why)
	return 0
}

// partition cuts the network between sides (each node refuses the other side's peers), or
// heals it with nil.
func (c *cluster) partition(sides ...[]*clusterNode) {
	c.t.Helper()
	var idx [][]int
	for _, side := range sides {
		var is []int
		for _, cn := range side {
			is = append(is, cn.i)
		}
		idx = append(idx, is)
	}
	if err := c.net.Partition(idx...); err != nil {
		c.t.Fatal(err)
	}
}
