package reputation

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/memlimit"
	"github.com/surety-ioa/surety/internal/p2p"
	"github.com/surety-ioa/surety/reputation/merkle"
)

// StakeSource gives the stake, in ETH, of every staked agent the node knows.
type StakeSource interface {
	StakedAgents(ctx context.Context) (map[string]float64, error)
}

// ServiceConfig wires a Service.
type ServiceConfig struct {
	Store *Store
	// Log, when set, takes every accepted audit once its epoch closes; audits of a closed
	// epoch are refused.
	Log *Log
	// Anchorer, when set with Log, anchors the latest head on chain after epochs close.
	Anchorer Anchorer
	Rules    *Rules
	Stakes   StakeSource
	// Feedback, when set with Rules.Settlements, imports ERC-8004 feedback
	// (Rules.ImportFeedback) at every recomputation.
	Feedback FeedbackSource
	Params   Params
	// Every is how often scores are recomputed when audits arrived (0: 5 s); they are
	// recomputed every hour regardless, as audits age. Between recomputations each audit
	// moves its subject's score at once, with the auditors' standings of the last one.
	Every time.Duration
	// Clock is the step of the time scores are computed at (0: the log's epoch when there
	// is a log, else a minute): ages are measured from the start of the current step, a
	// time every node shares, never from a node's own instant, so nodes holding the same
	// audits and reading the same chain give bit-identical scores.
	Clock time.Duration
	// CatchUp, when set, waits until the node's chain indexes hold every confirmed block: an
	// audit filed here that names a bounty or subject the indexes lack is checked again after
	// it (bounded by CatchUpWait), since another node may have indexed it a block earlier.
	CatchUp func(ctx context.Context) error
	// Ready, when set, holds back the closing of log epochs until it is closed: the node's
	// first round of anti-entropy (p2p.Syncer.Synced), in which a node back from an absence
	// adopts the epochs its peers closed meanwhile instead of closing them with part of
	// their audits.
	Ready <-chan struct{}
	// Nodes says which DIDs speak for nodes: a peer's log head counts only when one of
	// them signed it. Without it the node adopts no epoch from peers and keeps its own log.
	Nodes Nodes
	// Anchors, when set, reads RootAnchor: a head its signer's wallet anchored on chain is
	// adopted on that alone.
	Anchors Anchors
	// Quorum is how many distinct staked nodes must have signed a head before its epoch is
	// adopted (0: DefaultQuorum).
	Quorum int
	Now    func() time.Time
	// OnPass, when set, is called after each pass of Run's loop, with whether the pass
	// recomputed the scores: tests wait on passes instead of the clock.
	OnPass func(recomputed bool)
	Logger *slog.Logger
}

// Service accepts audits and answers reputation queries from the latest computed scores, so a
// query never waits for a recomputation.
type Service struct {
	cfg ServiceConfig

	live      liveGraph  // the audits that count, in memory
	refreshMu sync.Mutex // one recomputation at a time
	// unfinished (under refreshMu) is set while a recomputation runs and stays set when a
	// panic unwound it: the last snapshot may then read its sums from the live graph
	// (takeOver), which a later load would rewrite under it, so no later one starts.
	unfinished bool
	// midway, when set (tests), runs in recompute once the pairs are summed.
	midway func()

	mu       sync.RWMutex
	snapshot *snapshot
	topic    *p2p.Topic    // set by Attach
	dirty    chan struct{} // holds a token when audits arrived since the last computation

	logMu   sync.Mutex
	logSync LogSync // how the log's last catch-up from peers went
}

// snapshot is one computation's scores, and the audits recorded since, applied by follow.
type snapshot struct {
	at     time.Time
	dids   []string       // by index: the computation's n in DID order, then those follow added
	added  map[string]int // the index of each agent follow added
	scores *Scores
	audits []int   // current audits per subject
	prior  float64 // the score of an agent without audits

	params   Params    // with defaults
	n        int       // agents in the computation (later ones are appended)
	stake    []float64 // per agent, ETH
	newcomer float64   // what the word of an auditor the computation did not know weighs
	// imported is the ERC-8004 feedback that counts, by subject (GET /v1/reputation/{did}).
	imported map[string][]ExternalSignal
	// extra holds the sums of auditor pairs the computation did not have (its own are in
	// scores.pairs, sorted, found by binary search: no map of a million pairs per refresh).
	extra map[pairKey]pairSum
	// speaks says, by index, whose pairs the snapshot keeps: those of the auditors whose word
	// could weigh anything when it was computed (Params.speakers; nil: every auditor's). Any
	// other auditor's word weighs 0 in it, whatever its sums (its Relative is 0, and an agent
	// follow adds stands at 0 too), so they are neither summed nor followed (keeps).
	speaks []bool
	// exact says the pair sums (scores.pairs and extra) are the live graph's at the
	// snapshot's time: it was computed from the live graph and followed its every change.
	exact bool
	// carried says it was computed from the last snapshot's pair sums (incremental).
	carried bool
	// remap is set when the next computation, at the snapshot's time, took its pair list over
	// (carry reindexes it in place rather than copying it: at ten million pairs a copy is
	// 320 MB more at the peak): the snapshot's index → the list's, -1 for an agent the list
	// does not index. The list is then the computation's, read but never written here, and the
	// changes the snapshot follows until it is replaced go to extra.
	remap []int32
	// graph is set when the next computation, at a new time, took its pair list over to sum
	// the new time's pairs into (at ten million pairs, 320 MB less at its peak): the snapshot
	// then reads a pair's sums from the live graph, at its own time, through the computation's
	// index of it, until it is replaced; a pair's first change copies them into extra
	// (Service.follow), where its changes go.
	graph *graphSums
	// restored says it was read from the store at start (restoreScores): the last scores a
	// computation gave, kept as they were until the first recomputation here.
	restored bool
}

// keeps says whether the snapshot keeps the sums of the pairs of the auditor at index i.
func (snap *snapshot) keeps(i int) bool {
	return snap.speaks == nil || i < len(snap.speaks) && snap.speaks[i]
}

// pair is the sums of the auditor pair k, and a function that stores them back after a change.
// Once a recomputation took the list over (remap), the list is its own: a change is kept in
// extra, which is read first.
func (snap *snapshot) pair(k pairKey) (pairSum, func(pairSum)) {
	if _, ok := snap.extra[k]; !ok && snap.remap == nil && snap.graph == nil {
		if i, ok := snap.listed(k); ok {
			ps := snap.scores.pairs
			return ps[i].sum, func(s pairSum) { ps[i].sum = s }
		}
	}
	ps, _ := snap.sum(k)
	if snap.extra == nil {
		snap.extra = map[pairKey]pairSum{}
	}
	return ps, func(s pairSum) { snap.extra[k] = s }
}

// sum is the sums of the auditor pair k, and whether the snapshot holds the pair.
func (snap *snapshot) sum(k pairKey) (pairSum, bool) {
	if ps, ok := snap.extra[k]; ok {
		return ps, true
	}
	if snap.graph != nil {
		return snap.fromGraph(k)
	}
	if i, ok := snap.listed(k); ok {
		return snap.scores.pairs[i].sum, true
	}
	return pairSum{}, false
}

// graphSums is where a snapshot reads its pair sums once its list went to the next
// computation (snapshot.graph): the live graph, and that computation's index of its audits.
type graphSums struct {
	live *liveGraph
	idx  *byAuditor
	// read counts the pairs read from the graph, each a walk over the pair's audits (tests
	// bound what a reader costs with it).
	read atomic.Int64
}

// fromGraph is the sums of the pair k from the live graph, at the snapshot's time: exact
// for a pair no change touched since the index was made, as the snapshot followed every
// change before (exact); a touched one is in extra (prefetch).
func (snap *snapshot) fromGraph(k pairKey) (pairSum, bool) {
	g := snap.graph.live
	a, ok := g.ids[snap.dids[k.auditor]]
	s, ok2 := g.ids[snap.dids[k.subject]]
	if !ok || !ok2 {
		return pairSum{}, false
	}
	snap.graph.read.Add(1)
	return snap.graph.idx.sum(g, a, s, snap.at.Unix(), snap.params)
}

// prefetch copies the sums of auditor's audits of subject into extra before a change of
// them reaches the live graph, when the snapshot reads its sums from the graph (graph):
// from then on extra holds them.
func (snap *snapshot) prefetch(auditor, subject string) {
	if snap.graph == nil {
		return
	}
	i, ok := snap.find(auditor)
	j, ok2 := snap.find(subject)
	if !ok || !ok2 || !snap.keeps(i) {
		return
	}
	k := pairKey{int32(i), int32(j)}
	if _, ok := snap.extra[k]; !ok {
		if snap.extra == nil {
			snap.extra = map[pairKey]pairSum{}
		}
		snap.extra[k], _ = snap.fromGraph(k)
	}
}

// listed is the place of the pair k in scores.pairs (by binary search: no map of a million
// pairs per refresh), its key reindexed as the list now is (remap).
func (snap *snapshot) listed(k pairKey) (int, bool) {
	if r := snap.remap; r != nil {
		if int(k.auditor) >= len(r) || int(k.subject) >= len(r) || r[k.auditor] < 0 || r[k.subject] < 0 {
			return 0, false
		}
		k = pairKey{r[k.auditor], r[k.subject]}
	}
	return slices.BinarySearchFunc(snap.scores.pairs, k, func(e pairEntry, k pairKey) int { return e.key.compare(k) })
}

// newSnapshot wraps a computation over g at at (dids: g's agents by index).
func newSnapshot(at time.Time, g *Graph, dids []string, params Params) *snapshot {
	p := params.withDefaults()
	audits := make([]int, len(dids))
	for _, e := range g.Audits {
		audits[e.Subject]++
	}
	return wrapSnapshot(at, Compute(g, p), g.Stake, dids, audits, p)
}

// wrapSnapshot wraps scores computed at at over agents dids (by index) with stake, of whom
// audits[j] audits are about j; p with defaults.
func wrapSnapshot(at time.Time, scores *Scores, stake []float64, dids []string, audits []int, p Params) *snapshot {
	snap := &snapshot{at: at, dids: dids, scores: scores, audits: audits, prior: p.priorMean(), params: p, n: len(dids), stake: stake}
	// An auditor the computation did not know has no audits about it, so no one trusts it:
	// its word weighs 0, unless no one is staked above the minimum and pre-trust is spread over
	// everyone (then it holds what each holds, 1, and speaks with Own of it).
	if snap.scores.Everyone {
		snap.newcomer = p.relative(1, 1, 1)
	}
	return snap
}

// carry is what the next computation at the snapshot's time needs of it, indexed as v
// indexes: the pair sums of every auditor that speaks in v (speaks, by index: its word can
// weigh anything; nil: every auditor) and its subjects, in CSR order, and how many audits
// count about each agent. When the snapshot is exact (it followed every change of the live
// graph since its computation, at its own time), these are exactly what Compute would sum
// from the live graph's audits: fixed-point sums do not depend on the order they were
// added and removed in. Not ok when an agent with audits is not in v (never, as the live
// graph's agents are all in it), or when an auditor speaks in v whose pairs the snapshot
// does not keep (snapshot.speaks): its stake came to count since, and its audits are summed
// again with everyone's. The list may hold pairs of auditors that no longer speak, with
// sums no longer followed: no computation reads them (computePairs).
//
// The list is the snapshot's own, reindexed in place (both indexes are in DID order, so its
// order holds) with the pairs of extra merged in, when it has room for them (the lists are
// made with some: pairSlack); the snapshot then reads it through remap (snapshot.remap),
// and readers wait on mu, the readers' lock, only while it is reindexed. Without room the
// pairs are copied into a new list, and the snapshot keeps its own. The caller holds the
// live graph's lock: nothing the snapshot follows moves the sums meanwhile.
func (snap *snapshot) carry(v *view, speaks []bool, mu *sync.RWMutex) (pairs []pairEntry, counts []int, ok bool) {
	if snap.remap != nil || snap.graph != nil { // taken over once already
		return nil, nil, false
	}
	if speaks == nil && snap.speaks != nil {
		return nil, nil, false
	}
	remap := make([]int32, len(snap.dids)) // the snapshot's index → v's, or -1
	j := 0
	for i := range snap.n { // both in DID order
		for j < len(v.dids) && v.dids[j] < snap.dids[i] {
			j++
		}
		remap[i] = -1
		if j < len(v.dids) && v.dids[j] == snap.dids[i] {
			remap[i] = int32(j)
		}
	}
	for i := snap.n; i < len(snap.dids); i++ { // the agents follow appended
		remap[i] = -1
		if k, ok := slices.BinarySearch(v.dids, snap.dids[i]); ok {
			remap[i] = int32(k)
		}
	}
	if speaks != nil {
		for i, k := range remap {
			if k >= 0 && speaks[k] && !snap.keeps(i) {
				return nil, nil, false
			}
		}
	}
	counts = make([]int, len(v.dids))
	for i, c := range snap.audits {
		if c > 0 {
			if remap[i] < 0 {
				return nil, nil, false
			}
			counts[remap[i]] = c
		}
	}
	more := make([]pairEntry, 0, len(snap.extra))
	for k, ps := range snap.extra {
		k = pairKey{remap[k.auditor], remap[k.subject]}
		if k.auditor < 0 || k.subject < 0 {
			return nil, nil, false
		}
		more = append(more, pairEntry{k, ps})
	}
	slices.SortFunc(more, func(a, b pairEntry) int { return a.key.compare(b.key) })
	old := snap.scores.pairs
	for _, e := range old {
		if remap[e.key.auditor] < 0 || remap[e.key.subject] < 0 {
			return nil, nil, false
		}
	}
	if len(old)+len(more) > cap(old) {
		pairs = make([]pairEntry, 0, withSlack(len(old)+len(more)))
		m := 0
		for _, e := range old { // remapped in order: the index order is kept
			k := pairKey{remap[e.key.auditor], remap[e.key.subject]}
			for m < len(more) && more[m].key.less(k) {
				pairs = append(pairs, more[m])
				m++
			}
			pairs = append(pairs, pairEntry{k, e.sum})
		}
		return append(pairs, more[m:]...), counts, true
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range old {
		k := &old[i].key
		*k = pairKey{remap[k.auditor], remap[k.subject]}
	}
	pairs = old[:len(old)+len(more)]
	for w, i, m := len(pairs)-1, len(old)-1, len(more)-1; m >= 0; w-- { // merged from the end
		if i >= 0 && more[m].key.less(pairs[i].key) {
			pairs[w] = pairs[i]
			i--
		} else {
			pairs[w] = more[m]
			m--
		}
	}
	snap.scores.pairs, snap.remap = pairs, remap
	return pairs, counts, true
}

// pairSlack is the room a pair list is made with, beyond its pairs, as a share: the pairs
// audits followed until the next computation at the same time add are merged into it in
// place (carry), not copied into a list of their own.
const pairSlack = 64

// withSlack is the capacity of a list of n pairs (pairSlack).
func withSlack(n int) int { return n + n/pairSlack + 64 }

// find is did's index: by binary search among the computation's agents (no map of a
// million DIDs per recomputation), else among those follow added.
func (snap *snapshot) find(did string) (int, bool) {
	if i, ok := slices.BinarySearch(snap.dids[:snap.n], did); ok {
		return i, true
	}
	i, ok := snap.added[did]
	return i, ok
}

// slot is did's index, appending an agent the computation did not know.
func (snap *snapshot) slot(did string) int {
	if i, ok := snap.find(did); ok {
		return i
	}
	i := len(snap.dids)
	if snap.added == nil {
		snap.added = map[string]int{}
	}
	snap.added[did] = i
	snap.dids = append(snap.dids, did)
	snap.audits = append(snap.audits, 0)
	snap.stake = append(snap.stake, 0)
	sc := snap.scores
	sc.Standing = append(sc.Standing, 0)
	sc.Relative = append(sc.Relative, 0)
	sc.Score = append(sc.Score, snap.prior)
	sc.Confidence = append(sc.Confidence, 0)
	sc.Weight = append(sc.Weight, 0)
	sc.pos = append(sc.pos, 0)
	sc.all = append(sc.all, 0)
	return i
}

// standing is what auditor's word weighs (Scores.Relative), and its stake, in this snapshot.
func (snap *snapshot) standing(auditor string) (rel, stake float64) {
	rel = snap.newcomer
	if i, ok := snap.find(auditor); ok && i < snap.n {
		rel, stake = snap.scores.Relative[i], snap.stake[i]
	}
	return rel, stake
}

// edge is e as Compute sees it at the snapshot's time.
func (snap *snapshot) edge(e *liveEdge) *Edge {
	return &Edge{Score: e.score, Age: float64(snap.at.Unix() - e.time), Backed: e.backed, Settled: e.settled}
}

// weigh is what audit e by auditor would add to its subject's sums in this snapshot as its
// auditor's only audit of that subject.
func (snap *snapshot) weigh(auditor string, e *liveEdge) (w, ws fixed) {
	rel, _ := snap.standing(auditor)
	return snap.params.weigh(snap.edge(e), rel)
}

// follow applies one change of the audits that count: the subject's sums lose what the
// auditor's audits of it added and gain what they add now, and its score follows. O(1): the
// standings stay those of the computation until the next one, and exactly what Compute would
// add with them (the sums are exact, so the same in any order).
func (snap *snapshot) follow(c change) {
	j := snap.slot(c.subject)
	k := pairKey{int32(snap.slot(c.auditor)), int32(j)}
	rel, _ := snap.standing(c.auditor)
	p, sc := snap.params, snap.scores
	ps, store := pairSum{}, func(pairSum) {} // an auditor whose word weighs 0 here adds 0 before and after
	if snap.keeps(int(k.auditor)) {
		ps, store = snap.pair(k)
	}
	w, ws := p.contribution(ps, rel)
	sc.all[j] -= w
	sc.pos[j] -= ws
	counts := func(e *liveEdge) bool { return c.auditor != c.subject && e.score >= 0 && e.score <= 1 } // as Edge.valid
	if c.old == nil {
		snap.audits[j]++
	} else if counts(c.old) {
		ps.sub(p.evidence(snap.edge(c.old)))
	}
	if counts(&c.new) {
		ps.add(p.evidence(snap.edge(&c.new)))
	}
	store(ps)
	w, ws = p.contribution(ps, rel)
	sc.all[j] += w
	sc.pos[j] += ws
	sc.beta(p, j)
}

// Reputation is an agent's standing and score, and the audits that fed it.
type Reputation struct {
	DID        string  `json:"did"`
	Score      float64 `json:"score"`
	Confidence float64 `json:"confidence"`
	Weight     float64 `json:"weight"` // Σ of its audits' weights, and of its imported feedback's
	// External is the part of Weight imported ERC-8004 feedback gives (docs/REPUTATION.md).
	External float64 `json:"external,omitempty"`
	// Rank is what Top orders by: the 10% lower bound of the score (Params.RankBound), so
	// little evidence does not outrank much.
	Rank     float64        `json:"rank"`
	Standing float64        `json:"standing"` // what its word weighs as an auditor, in ETH (Scores.Relative)
	Audits   int            `json:"audits"`   // audits that count
	Computed time.Time      `json:"computed"`
	Feeding  []*StoredAudit `json:"feeding,omitempty"`
	// Imported is the ERC-8004 feedback that counts about it, by client (Rules.External):
	// what External sums.
	Imported []ExternalSignal `json:"imported,omitempty"`
}

// NewService builds the service; Run keeps its scores current.
func NewService(cfg ServiceConfig) *Service {
	if cfg.Every == 0 {
		cfg.Every = defaultRecomputeEvery
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Quorum <= 0 {
		cfg.Quorum = DefaultQuorum
	}
	if cfg.Clock == 0 {
		cfg.Clock = defaultClock
		if cfg.Log != nil {
			cfg.Clock = cfg.Log.cfg.Epoch
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{cfg: cfg, dirty: make(chan struct{}, 1), snapshot: newSnapshot(time.Time{}, &Graph{}, nil, cfg.Params)}
	s.markDirty()
	return s
}

func (s *Service) markDirty() {
	select {
	case s.dirty <- struct{}{}:
	default:
	}
}

// StakesChanged tells the service that the staked agents or their stakes may have changed:
// standings start from stake, so the scores are recomputed on the next tick (within Every).
func (s *Service) StakesChanged() { s.markDirty() }

// FeedbackChanged tells the service that imported feedback, or the settlements that let it
// count, may have changed (an ERC-8004 feedback or revocation, a bounty that paid): the
// scores are recomputed on the next tick (within Every).
func (s *Service) FeedbackChanged() { s.markDirty() }

// Submitted is the outcome of an accepted audit.
type Submitted struct {
	Audit   *StoredAudit `json:"audit"`
	Current bool         `json:"current"` // it is the audit that counts for its target
	// Counted says what the audit weighs now, and why.
	Counted Counted `json:"counted"`
}

// Counted is what an audit weighs in its subject's score at the time it is filed, with the
// parts of that weight (docs/REPUTATION.md): w = min(standing, 10) · decay · backing (the
// auditor's stake counts through its standing).
type Counted struct {
	// Weight is what the audit adds to its subject's Σ w now; 0 when it does not count.
	Weight float64 `json:"weight"`
	// Backing is Unbacked (0.1) for an audit no settlement backs (or not the one backed audit
	// of its bounty's side), and for the backed one grows with what the bounty settled, up
	// to 1 at FullBacking (1 ETH).
	Backing float64 `json:"backing"`
	// Settled is what the audit's bounty settled, in ETH (amount + 200 × fee), when the audit
	// speaks for a side of one.
	Settled float64 `json:"settled,omitempty"`
	// Standing is what the auditor's word weighs, in ETH (its net trust plus half its stake
	// above the minimum: Scores.Relative), as of the last full recomputation; Stake the
	// auditor's stake that counts (none below the minimum).
	Standing float64 `json:"standing"`
	Stake    float64 `json:"stake"`
	// Why says in words what holds the weight where it is.
	Why string `json:"why"`
}

// Submit checks and records an audit filed here as the verified envelope v (raw: its bytes
// as received, logged without surrounding whitespace, so that its leaf is the one an auditor
// computes from the envelope: verify.EnvelopeLeaf), and gossips it to the other nodes when
// the service is attached to a network.
// It returns an *AuditError wrapping ErrBadAudit or a rule's sentinel when the audit is
// refused, and ErrDuplicate for an audit already recorded.
func (s *Service) Submit(ctx context.Context, v *identity.Verified, raw []byte) (*Submitted, error) {
	raw = bytes.TrimSpace(raw)
	res, err := s.submit(ctx, v, raw)
	if (waitsForFacts(err) || s.mayHaveStaked(ctx, err, v.Envelope.Sender)) && s.cfg.CatchUp != nil {
		wctx, cancel := context.WithTimeout(ctx, CatchUpWait)
		if s.cfg.CatchUp(wctx) == nil {
			res, err = s.submit(ctx, v, raw)
		}
		cancel()
	}
	if err != nil {
		return nil, err
	}
	s.spread(ctx, res)
	return res, nil
}

// mayHaveStaked says whether err refused an audit for its auditor's standing while a wallet
// binds the auditor: it may have staked in a block the index has not read. A DID bound to no
// wallet has no stake to wait for, so a free identity's audit costs no catch-up with the
// chain.
func (s *Service) mayHaveStaked(ctx context.Context, err error, auditor string) bool {
	if !errors.Is(err, ErrNoStanding) {
		return false
	}
	wallets, werr := s.cfg.Rules.Wallets.WalletsOf(ctx, auditor)
	return werr == nil && len(wallets) > 0
}

// submit is Submit without the gossip: for audits that came by gossip.
func (s *Service) submit(ctx context.Context, v *identity.Verified, raw []byte) (*Submitted, error) {
	a, err := ParseAudit(&v.Envelope)
	if err != nil {
		return nil, err
	}
	verdict, err := s.cfg.Rules.Check(ctx, a)
	if err != nil {
		return nil, err
	}
	if err := s.mayStand(ctx, a.Auditor, verdict); err != nil {
		return nil, err
	}
	return s.keep(ctx, a, raw, verdict)
}

// bondedOf is the per-DID stake a StakeSource may also give (stake.Index does): read fresh
// by the DID's key, with what is unbonding.
type bondedOf interface {
	Bonded(ctx context.Context, did string) (float64, error)
}

// mayStand refuses (ErrNoStanding) an audit by an auditor whose word weighs nothing (v: the
// rules' verdict on it): agents are staked above the minimum (not the everyone fallback) and
// the auditor has no stake that counts (a word weighs at most three times its own stake).
// Such an audit would be stored at weight 0 on every node, for nothing; refusing it leaves a
// free identity no disk to fill. One that speaks for a side of a bounty that settled at least
// the minimum stake is taken from anyone: the settlement priced it, and it counts once its
// auditor stakes (a market audits its workers, then stakes). A smaller settlement prices
// nothing (a 1-wei bounty a wallet posts to itself would open the store to every pair of its
// DIDs).
//
// The auditor's stake is what it has bonded, read from the chain's index by its DID when the
// source gives it (stake.Index.Bonded): a stake bonded a block ago counts, and so does one
// requested out but still unbonding, so an unbond in the block a node has indexed and its
// peer has not yet does not have one take the audit and the other refuse it for good (their
// logs would differ). Without it, the last recomputation's stake. Before the first
// recomputation here (scores restored from the store included), whether anyone is staked is
// read from the source.
func (s *Service) mayStand(ctx context.Context, auditor string, v Verdict) error {
	s.mu.RLock()
	snap := s.snapshot
	// standing reads the snapshot's DIDs and the map of those follow added, which follow
	// writes under the readers' lock: read under it (review 43, finding 8).
	_, stake := snap.standing(auditor)
	everyone := snap.scores.Everyone
	s.mu.RUnlock()
	p := snap.params
	if v.Side != SideNone && v.Settled >= p.minStake() {
		return nil
	}
	// Not computed yet (its fallback says nothing of the chain), or restored from the store:
	// the last run's word on who was staked may be old, and a node back from a restart must
	// take or refuse an audit as its peers do, for good.
	if snap.at.IsZero() || snap.restored {
		staked, err := s.cfg.Stakes.StakedAgents(ctx)
		if err != nil {
			return err
		}
		everyone = !slices.ContainsFunc(slices.Collect(maps.Values(staked)), func(eth float64) bool { return p.counted(eth) > 0 })
		stake = staked[auditor]
	}
	if everyone {
		return nil // nobody is staked above the minimum: every agent's word counts evenly
	}
	if src, ok := s.cfg.Stakes.(bondedOf); ok {
		var err error
		if stake, err = src.Bonded(ctx, auditor); err != nil {
			return err
		}
	}
	if p.counted(stake) > 0 {
		return nil
	}
	return &AuditError{Err: ErrNoStanding, Detail: fmt.Sprintf("%s has %g bonded, below the %g that counts: its word weighs nothing, so its audits are not stored; stake at least that with this DID (surety stake add)",
		auditor, stake, p.minStake())}
}

// keep records audit a (raw: its envelope) with the rules' verdict on it, and makes it count.
func (s *Service) keep(ctx context.Context, a *Audit, raw []byte, verdict Verdict) (*Submitted, error) {
	side := verdict.Side
	var err error
	var current bool
	add := func() (err error) {
		current, err = s.cfg.Store.Add(ctx, a, raw, verdict)
		return err
	}
	if s.cfg.Log != nil {
		err = s.cfg.Log.admit(a.Time, add)
	} else {
		err = add()
	}
	if err != nil {
		return nil, err
	}
	leaf := merkle.LeafHash(raw)
	backed := false
	switch {
	case current && verdict.Refused != "":
		s.reload() // it counts nothing, and the audit it replaced no longer counts either
	case current:
		s.follow(a, false, 0)
	}
	if side != SideNone {
		// One audit per bounty and side is backed: this one, or an earlier one of its side.
		flips, err := s.cfg.Store.settleSide(ctx, a.Target(), side)
		if err != nil {
			return nil, err
		}
		for _, f := range flips {
			s.follow(&f.Audit, f.Backed, f.Settled)
			if f.Leaf == leaf {
				backed = f.Backed
			}
		}
	}
	s.markDirty()
	return &Submitted{Audit: &StoredAudit{Audit: *a, Leaf: leaf, Backed: backed, Side: side, Settled: verdict.Settled, Raw: raw}, Current: current,
		Counted: s.counted(a, current, backed, verdict)}, nil
}

// reload has the next recomputation read the audits that count from the store again, where
// the graph in memory cannot follow a change (an audit that counts nothing replaced one).
func (s *Service) reload() {
	s.live.mu.Lock()
	s.live.loaded = false
	s.live.mu.Unlock()
	s.markDirty()
}

// counted weighs a, just recorded, with the current snapshot, and says why it weighs that.
func (s *Service) counted(a *Audit, current, backed bool, v Verdict) Counted {
	side := v.Side
	s.mu.RLock()
	snap := s.snapshot
	w, _ := snap.weigh(a.Auditor, &liveEdge{score: a.Score, time: a.Time, backed: backed, settled: v.Settled})
	rel, stake := snap.standing(a.Auditor)
	s.mu.RUnlock()
	p := snap.params
	c := Counted{Weight: w.float(), Backing: p.backing(&Edge{Backed: backed, Settled: v.Settled}), Standing: rel, Stake: p.counted(stake), Settled: v.Settled}
	var why []string
	switch {
	case v.Refused != "":
		c.Weight = 0
		why = append(why, "the acceptance rules refuse it here, so it counts 0: "+v.Refused)
	case !current:
		c.Weight = 0
		why = append(why, "a later audit of yours of this target counts instead")
	case rel == 0:
		why = append(why, "your word weighs 0: no staked agent trusts you yet, directly or through others, or you have no stake that counts (a word weighs at most three times your own stake), so your audits weigh nothing until both change")
	}
	switch {
	case backed && c.Backing < 1:
		why = append(why, fmt.Sprintf("backed by the bounty's settlement (%s's side), at %.3g: it settled %g ETH (amount + %d × fee), and full backing takes %g",
			side, c.Backing, v.Settled, FeeWeight, p.FullBacking))
	case backed:
		why = append(why, "backed by the bounty's settlement ("+string(side)+"'s side), in full")
	case side != SideNone:
		why = append(why, "unbacked: a later audit from your side of this settlement is the backed one (one per bounty and side)")
	default:
		why = append(why, fmt.Sprintf("unbacked: no settled bounty between your wallet and the subject's stands behind it, so it counts for %g", p.Unbacked))
	}
	if c.Stake == 0 {
		why = append(why, fmt.Sprintf("no stake of yours that counts (at least %g) as of the last recomputation; stake added since counts at the next, within seconds", p.minStake()))
	}
	c.Why = strings.Join(why, "; ")
	return c
}

// follow makes a, just recorded, count in memory: in the audit graph, and in the scores
// readers get.
func (s *Service) follow(a *Audit, backed bool, settled float64) {
	s.live.mu.Lock()
	defer s.live.mu.Unlock()
	if !s.live.loaded { // the first recomputation reads it from the store
		return
	}
	// A snapshot that reads its pair sums from the graph (snapshot.graph) has readers read
	// the graph: then the graph changes under the readers' lock. Otherwise readers do not
	// wait for the change (an edge store's rehash, at ten million audits, is a table of 128
	// MB), only for the snapshot's. No computation takes the snapshot's list over while this
	// holds the live graph's lock, so the mode read stays (review 43, finding 2).
	s.mu.RLock()
	fromGraph := s.snapshot.graph != nil
	s.mu.RUnlock()
	if fromGraph {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.snapshot.prefetch(a.Auditor, a.Subject)
	}
	c := s.live.put(a, backed, settled)
	if !fromGraph {
		s.mu.Lock()
		defer s.mu.Unlock()
	}
	if !s.snapshot.restored { // stored scores stay as computed until the first recomputation
		s.snapshot.follow(c)
	}
}

// Run recomputes scores when audits arrived (at most every cfg.Every) and every hour, and
// closes the log's epochs as they end, until ctx ends.
func (s *Service) Run(ctx context.Context) error {
	t := time.NewTicker(min(s.cfg.Every, tick))
	defer t.Stop()
	// Until the first recomputation ends (it reads every audit from the store), readers get
	// the scores the last run stored, at their own computed time.
	if ok, err := s.restoreScores(ctx); err != nil && ctx.Err() == nil {
		s.cfg.Logger.Warn("reputation: read stored scores", "err", err)
	} else if ok {
		s.cfg.Logger.Info("reputation: answering with stored scores until the first recomputation")
	}
	var saved time.Time                                        // when the scores were last stored
	last := time.Now()                                         // of the last recomputation Run made: the first is now, which loads
	if err := s.Refresh(ctx); err != nil && ctx.Err() == nil { // the audits into memory
		s.cfg.Logger.Warn("reputation: compute scores (retrying)", "err", err)
		last = time.Time{}
	} else if err == nil {
		s.storeScores(ctx, &saved)
	}
	for {
		select {
		case <-ctx.Done():
			if !saved.IsZero() && last.After(saved) {
				sctx, cancel := context.WithTimeout(context.Background(), storeScoresTimeout)
				s.storeScores(sctx, &saved)
				cancel()
			}
			return nil
		case <-t.C:
		}
		recomputed := s.pass(ctx, &last)
		if recomputed && time.Since(saved) >= saveScoresEvery {
			s.storeScores(ctx, &saved)
		}
		if s.cfg.OnPass != nil {
			s.cfg.OnPass(recomputed)
		}
	}
}

// storeScores stores the scores readers get (saveScores) and notes when in saved.
func (s *Service) storeScores(ctx context.Context, saved *time.Time) {
	if err := s.saveScores(ctx); err != nil {
		if ctx.Err() == nil {
			s.cfg.Logger.Warn("reputation: store scores", "err", err)
		}
		return
	}
	*saved = time.Now()
}

// pass is one pass of Run's loop: close and anchor log epochs, and recompute the scores when
// they are due; it says whether it recomputed them.
func (s *Service) pass(ctx context.Context, last *time.Time) bool {
	if s.cfg.Log != nil && s.ready() {
		if heads, err := s.cfg.Log.CloseEpochs(ctx, s.cfg.Now()); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Warn("reputation: close log epochs (retrying)", "err", err)
		} else {
			for _, h := range heads {
				s.cfg.Logger.Info("audit log epoch closed", "epoch", h.Epoch, "size", h.Size, "root", h.Root)
			}
		}
		if s.cfg.Anchorer != nil {
			if h, err := s.cfg.Log.anchorLatest(ctx, s.cfg.Anchorer); err != nil && ctx.Err() == nil {
				s.cfg.Logger.Warn("reputation: anchor the audit log (retrying)", "err", err)
			} else if h != nil {
				s.cfg.Logger.Info("audit log anchored", "size", h.Size, "root", h.Root, "tx", h.AnchorTx)
			}
		}
	}
	// A new score step is computed at once (within a tick), so every node's scores move to
	// the same instant together; audits that arrived are folded in at most every cfg.Every.
	s.mu.RLock()
	stale := s.scoreTime() != s.snapshot.at
	s.mu.RUnlock()
	if !stale && time.Since(*last) < s.cfg.Every {
		return false
	}
	if _, err := s.RetryHeld(ctx); err != nil && ctx.Err() == nil {
		s.cfg.Logger.Warn("reputation: retry held audits", "err", err)
	}
	if !stale {
		select {
		case <-s.dirty:
		default:
			return false
		}
	}
	*last = time.Now()
	if err := s.Refresh(ctx); err != nil && ctx.Err() == nil {
		s.cfg.Logger.Warn("reputation: recompute scores (retrying)", "err", err)
		s.markDirty()
	}
	return true
}

// ready says whether the log may close epochs (ServiceConfig.Ready).
func (s *Service) ready() bool {
	if s.cfg.Ready == nil {
		return true
	}
	select {
	case <-s.cfg.Ready:
		return true
	default:
		return false
	}
}

// scoreTime is the time scores are computed at now: the start of the current Clock step.
func (s *Service) scoreTime() time.Time { return s.cfg.Now().Truncate(s.cfg.Clock).UTC() }

// errUnfinished refuses a recomputation after one a panic unwound (Service.unfinished).
var errUnfinished = errors.New("reputation: an earlier recomputation failed midway (a panic); the scores stay those it started from until the node restarts")

// Refresh recomputes every score now. The audits recorded while it runs are applied to its
// outcome before it replaces the last one, so no reader sees them go missing.
func (s *Service) Refresh(ctx context.Context) error {
	s.refreshMu.Lock()
	defer s.refreshMu.Unlock()
	if s.unfinished {
		return errUnfinished
	}
	now := s.scoreTime()
	staked, err := s.cfg.Stakes.StakedAgents(ctx)
	if err != nil {
		return fmt.Errorf("reputation: stakes: %w", err)
	}
	s.live.mu.Lock()
	fresh := !s.live.loaded
	err = s.live.load(ctx, s.cfg.Store)
	s.live.mu.Unlock()
	if err != nil {
		return err
	}
	var ext []ExternalSignal
	if s.cfg.Feedback != nil && s.cfg.Rules != nil {
		p := s.cfg.Params.withDefaults()
		if ext, err = s.cfg.Rules.ImportFeedback(ctx, s.cfg.Feedback, func(did string) bool { return p.counted(staked[did]) > 0 }); err != nil {
			return fmt.Errorf("reputation: ERC-8004 feedback: %w", err)
		}
	}
	s.recompute(now, staked, ext, fresh)
	return nil
}

// recompute computes the scores at now from the live graph, with stakes staked and the
// imported feedback ext, and makes them the snapshot readers get; fresh says the live graph
// was just read from the store (the last snapshot did not follow it). The caller holds
// refreshMu.
func (s *Service) recompute(now time.Time, staked map[string]float64, ext []ExternalSignal, fresh bool) {
	s.unfinished = true // until it returns: a panic that unwinds it leaves it set
	p := s.cfg.Params.withDefaults()
	// At the last computation's time, with the graph in memory since, its pair sums are
	// carried over (incremental: no audit is summed again); at a new time every audit's
	// decay changes, and they are summed afresh. Either way the same sums, so the same bits.
	s.live.mu.Lock()
	v := s.live.index(staked, subjects(ext))
	s.mu.RLock()
	prev := s.snapshot
	s.mu.RUnlock()
	var pairs []pairEntry
	var counts []int
	carried := false
	speaks := p.speakers(v.stake) // whose pairs it sums and keeps
	if !fresh && prev.exact && prev.at.Equal(now) {
		pairs, counts, carried = prev.carry(v, speaks, &s.mu) // under live.mu: no change moves them meanwhile
	}
	if !carried {
		var into func(*byAuditor, int) []pairEntry
		if !fresh {
			into = s.takeOver(prev)
		}
		procs := runtime.GOMAXPROCS(0)
		pairs = s.live.pairs(now.Unix(), v.pos, p, procs, speaks, into)
		counts = subjectCounts(s.live.edges.subject, v.pos, len(v.dids), procs)
	}
	s.live.mu.Unlock()
	if s.midway != nil {
		s.midway()
	}
	// What the computation holds at its peak beside its pairs and the last snapshot, lent by
	// the memory limit until the snapshot is replaced (memlimit.Lend).
	defer memlimit.Lend(int64(speaking(pairs, speaks))*computePairBytes + int64(len(v.dids))*computeAgentBytes)()
	external := externalEdges(ext, indexOf(v.dids), now.Unix())
	snap := wrapSnapshot(now, computePairs(pairs, v.stake, external, p), v.stake, v.dids, counts, p)
	snap.exact, snap.carried, snap.speaks = true, carried, speaks
	for _, sig := range ext {
		if snap.imported == nil {
			snap.imported = map[string][]ExternalSignal{}
		}
		snap.imported[sig.Subject] = append(snap.imported[sig.Subject], sig)
	}
	s.install(prev, snap)
	s.unfinished = false
}

// install makes snap, computed after prev (the snapshot readers got when the computation
// started), the one readers get, the audits filed since the computation's view applied to it
// first.
func (s *Service) install(prev, snap *snapshot) {
	s.live.mu.Lock()
	defer s.live.mu.Unlock()
	// When the list is prev's too (carry in place: prev.remap), readers of prev read it while
	// the audits filed meanwhile are replayed into it; else they wait only for the switch.
	if prev.remap != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
	}
	for _, c := range s.live.release() {
		snap.follow(c)
	}
	if prev.remap == nil {
		s.mu.Lock()
		defer s.mu.Unlock()
	}
	s.snapshot = snap
}

// takeOver is liveGraph.pairs' into for a computation at a new time after prev, the
// snapshot readers get, when prev followed the live graph since its computation (exact): prev
// then reads its sums from the graph, at its own time (snapshot.graph), and the new time's
// are summed into its list, when it has room for them; readers wait only for the switch.
func (s *Service) takeOver(prev *snapshot) func(*byAuditor, int) []pairEntry {
	if !prev.exact || prev.restored || prev.remap != nil || prev.graph != nil {
		return nil
	}
	return func(idx *byAuditor, n int) []pairEntry {
		s.mu.Lock()
		defer s.mu.Unlock()
		old := prev.scores.pairs
		if cap(old) < n {
			return nil
		}
		prev.scores.pairs, prev.graph = nil, &graphSums{live: &s.live, idx: idx}
		return old[:0]
	}
}

func (snap *snapshot) reputation(did string) *Reputation {
	r := &Reputation{DID: did, Computed: snap.at}
	i, ok := snap.find(did)
	if !ok {
		r.Score = snap.prior
		return r
	}
	r.Score, r.Confidence, r.Weight = snap.scores.Score[i], snap.scores.Confidence[i], snap.scores.Weight[i]
	r.Rank = snap.params.RankBound(r.Score, r.Weight)
	if ext := snap.scores.External; i < len(ext) {
		r.External = ext[i]
	}
	r.Standing = snap.scores.Relative[i]
	r.Audits = snap.audits[i]
	return r
}

// Reputation is did's reputation as last computed, with the audits that count about it, each
// with what its auditor's audits of did add to its Σ w now (StoredAudit.Weight).
func (s *Service) Reputation(ctx context.Context, did string) (*Reputation, error) {
	feeding, err := s.cfg.Store.Current(ctx, did)
	if err != nil {
		return nil, err
	}
	r := s.weigh(did, feeding)
	r.Feeding = feeding
	return r, nil
}

// weigh is did's reputation in the snapshot readers get, each audit of feeding given its
// auditor's weight there (StoredAudit.Weight).
func (s *Service) weigh(did string, feeding []*StoredAudit) *Reputation {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r := s.snapshot.reputation(did)
	// One weight per auditor: an auditor's audits of did under many targets share it, and a
	// snapshot reading its sums from the live graph (snapshot.graph) sums each pair's audits
	// (review 43, finding 3: k audits of one auditor would cost k² decays under the lock).
	weights := map[string]float64{}
	for _, a := range feeding {
		w, ok := weights[a.Auditor]
		if !ok {
			w = s.snapshot.pairWeight(a.Auditor, did)
			weights[a.Auditor] = w
		}
		a.Weight = w
	}
	r.Imported = s.snapshot.imported[did]
	return r
}

// pairWeight is what auditor's audits of subject add to subject's Σ w in this snapshot (0 for
// a pair it does not hold); it only reads, so readers may call it together.
func (snap *snapshot) pairWeight(auditor, subject string) float64 {
	i, ok := snap.find(auditor)
	j, ok2 := snap.find(subject)
	if !ok || !ok2 || !snap.keeps(i) { // a word that weighs 0
		return 0
	}
	ps, found := snap.sum(pairKey{int32(i), int32(j)})
	if !found {
		return 0
	}
	rel, _ := snap.standing(auditor)
	w, _ := snap.params.contribution(ps, rel)
	return w.float()
}

// Top lists the n best-ranked agents among those with audits: by Rank (the score's lower
// bound), then score, then DID.
func (s *Service) Top(_ context.Context, n int) []*Reputation {
	s.mu.RLock()
	defer s.mu.RUnlock()
	snap := s.snapshot
	var out []*Reputation
	for i, did := range snap.dids {
		if snap.audits[i] > 0 {
			out = append(out, snap.reputation(did))
		}
	}
	slices.SortFunc(out, func(a, b *Reputation) int {
		switch {
		case a.Rank != b.Rank:
			if a.Rank > b.Rank {
				return -1
			}
			return 1
		case a.Score != b.Score:
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.DID, b.DID)
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// Log is the audit log (nil when the service keeps none).
func (s *Service) Log() *Log { return s.cfg.Log }

// Weight is the registry's reputation weight for did: 2 × score, so the prior (0.5) and
// unknown agents weigh 1.
func (s *Service) Weight(_ context.Context, did string) (float64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return 2 * s.snapshot.reputation(did).Score, nil
}
