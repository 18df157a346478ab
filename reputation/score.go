package reputation

import (
	"math"
	"runtime"
	"slices"
	"sync"
)

// Scoring. Two passes over the audit graph:
//
//  1. Standing, EigenTrust style. Auditor i's local trust in subject j is
//     s_ij = evidence_ij · their mean score, over i's audits of j, where evidence_ij caps
//     Σ decay(age) · backing at one full audit (the unbacked floor once, settled value up to
//     full: pairSum.capped), so repeated bounties between two wallets add nothing; normalized
//     per auditor
//     (C_ij = s_ij / Σ_k s_ik). Standing is the stationary vector of
//     t = (1 − α) Cᵀ t + α p, where p, the pre-trust, spreads over staked agents in
//     proportion to their stake above the minimum (MinStake): linear, so splitting one stake
//     across several DIDs never adds pre-trust (k parts of S give Σ (S/k − m) = S − k·m,
//     less than S − m); auditors with no trust to give hand their share to p, and so does
//     every agent for its standing above three times its own stake (maxWordPerStake). Agents no
//     staked agent trusts, directly or through others, keep zero standing, whatever they say
//     of each other. Stake below the minimum counts as none.
//  2. Score, beta reputation. An audit weighs w = r_auditor (capped at maxStanding) ×
//     decay(age) × backing, where r is what the auditor's word weighs in ETH: P·(max(0, t − p)
//     + Own·min(t, p)), P the total stake above the minimum, so the trust others hand it in
//     full and its own pre-trust at half (Params.relative; free DIDs add nothing to P, and a
//     closed ring nets nothing). Stake counts once, through standing. Backing follows money: Unbacked
//     (0.1) for an audit no settlement stands behind, and for the one backed audit of a
//     settled bounty's side Unbacked + (1 − Unbacked) · min(1, settled / FullBacking), where
//     settled is the bounty's amount plus FeeWeight (200) times the fee it paid, in ETH, and
//     FullBacking is 1 ETH. A 1-wei bounty backs an audit no more than nothing does; full
//     backing needs 1 ETH settled (or 0.005 ETH of fee, the dev deployment's 0.5% of 1 ETH).
//     One auditor's audits of one subject count together, as at most one full audit at the
//     mean of their scores (Params.contribution), so repeating bounties between two wallets
//     adds no weight. A subject's score is (a + Σ w·score) / (a + b + Σ w), its confidence
//     Σ w / (Σ w + a + b).
//
// Sums are taken in fixed point (2^-32 steps), which makes them independent of the order
// audits arrive in; the power iteration runs over auditors and subjects in index order. So
// the same agents (indexed in DID order) and the same audits give bit-identical scores on
// every node.

// Params tune scoring; the zero value of a field takes its default.
type Params struct {
	Alpha     float64 `json:"alpha"`    // weight of pre-trust in standing (0.15)
	HalfLife  float64 `json:"halfLife"` // seconds for an audit's weight to halve (90 days)
	Unbacked  float64 `json:"unbacked"` // weight of an audit without settlement behind it (0.1)
	PriorA    float64 `json:"priorA"`   // beta prior pseudo-counts (1 and 1: a neutral 0.5)
	PriorB    float64 `json:"priorB"`
	Tolerance float64 `json:"tolerance"` // stop when the L1 change of standing falls below this (1e-9)
	MaxIter   int     `json:"maxIter"`   // and after at most this many iterations (100)
	// MinStake is the stake, in ETH, below which an agent counts as unstaked (0.1); a
	// negative value sets no minimum.
	MinStake float64 `json:"minStake"`
	// FullBacking is the settled value, in ETH, at which a backed audit counts in full (1);
	// below it backing scales linearly down to Unbacked. Negative: every backed audit counts
	// in full, whatever its bounty settled (the rule before value weighting).
	FullBacking float64 `json:"fullBacking"`
	// Own is how much of its own pre-trust an auditor's word carries (0.5); the rest of
	// its weight is net trust, what others hand it beyond its own pre-trust. Negative: its
	// whole standing, as the rule was before issue 25.
	Own float64 `json:"own"`
}

// FeeWeight is how much a unit of fee paid counts, against a unit of bounty amount, in the
// value that backs an audit: the fee is what a wash trade really burns (the amount comes back
// to a poster that is its own worker), so at the dev deployment's 0.5% fee a settlement's fee
// counts as much as its amount.
const FeeWeight = 200

// DefaultMinStake is the stake below which an agent counts as unstaked, in ETH.
const DefaultMinStake = 0.1

// DefaultParams are the documented defaults.
var DefaultParams = Params{Alpha: 0.15, HalfLife: 90 * 24 * 3600, Unbacked: 0.1, PriorA: 1, PriorB: 1, Tolerance: 1e-9, MaxIter: 100,
	MinStake: DefaultMinStake, FullBacking: DefaultFullBacking, Own: DefaultOwn}

// DefaultOwn is how much of its own pre-trust an auditor's word carries by default.
const DefaultOwn = 0.5

// DefaultFullBacking is the settled value, in ETH, at which a backed audit counts in full.
const DefaultFullBacking = 1.0

// priorMean is the score of an agent without audits.
func (p Params) priorMean() float64 {
	d := p.withDefaults()
	return d.PriorA / (d.PriorA + d.PriorB)
}

// maxWordPerStake caps what an auditor's word weighs, and the standing it hands on to those it
// trusts, as a multiple of its own stake that counts (in ETH): an honest market trusted by its
// workers speaks with up to about three times its stake (TestSybilSimulation's world); a
// relay, a DID a staked hub hands its trust to, speaks and passes on no more than three times
// what it put at stake itself (and one without stake that counts, nothing).
const maxWordPerStake = 3

// maxStanding caps what an auditor's word weighs (Scores.Relative), in ETH.
const maxStanding = 10

func (p Params) withDefaults() Params {
	d := DefaultParams
	if p.Alpha != 0 {
		d.Alpha = p.Alpha
	}
	if p.HalfLife != 0 {
		d.HalfLife = p.HalfLife
	}
	if p.Unbacked != 0 {
		d.Unbacked = p.Unbacked
	}
	if p.PriorA != 0 {
		d.PriorA = p.PriorA
	}
	if p.PriorB != 0 {
		d.PriorB = p.PriorB
	}
	if p.Tolerance != 0 {
		d.Tolerance = p.Tolerance
	}
	if p.MaxIter != 0 {
		d.MaxIter = p.MaxIter
	}
	if p.MinStake != 0 {
		d.MinStake = p.MinStake
	}
	if p.FullBacking != 0 {
		d.FullBacking = p.FullBacking
	}
	if p.Own != 0 {
		d.Own = p.Own
	}
	return d
}

// backing is what settlement puts behind audit e: Unbacked without it, and from Unbacked up
// to 1 as the settled value grows to FullBacking.
func (p Params) backing(e *Edge) float64 {
	switch {
	case !e.Backed:
		return p.Unbacked
	case p.FullBacking < 0:
		return 1
	}
	return p.Unbacked + float64((1-p.Unbacked)*min(1, max(e.Settled, 0)/p.FullBacking))
}

// minStake is the minimum in force: MinStake, or none when it is negative.
func (p Params) minStake() float64 { return max(p.MinStake, 0) }

// preTrust is an agent's unnormalized pre-trust: its stake above the minimum, or 0.
func (p Params) preTrust(eth float64) float64 { return max(p.counted(eth)-p.minStake(), 0) }

// counted is the stake that counts: none below the minimum.
func (p Params) counted(eth float64) float64 {
	if eth <= 0 || eth < p.minStake() {
		return 0
	}
	return eth
}

// Edge is one counted audit: indices into Graph.Stake.
type Edge struct {
	Auditor, Subject int32
	Score            float64 // in [0, 1]
	Age              float64 // seconds since the audit, at scoring time
	Backed           bool    // a finished settlement stands behind it
	Settled          float64 // the value that settlement settled, in ETH (amount + FeeWeight·fee)
}

// Graph is what scoring reads: every agent's stake (ETH; 0 for none), indexed in DID order,
// and the audits that count (one per auditor, subject and target).
type Graph struct {
	Stake  []float64
	Audits []Edge
	// External is the imported ERC-8004 feedback that counts (Rules.External): it adds to
	// its subject's sums, never to standing.
	External []ExternalEdge
}

// Scores is the outcome, by agent index.
type Scores struct {
	Standing   []float64 // sums to 1 when anyone is staked
	Score      []float64 // beta mean in [0, 1]; the prior mean for the unaudited
	Confidence []float64 // in [0, 1)
	Weight     []float64 // Σ w of the audits of each subject, and of its imported feedback
	// External is the part of Weight that imported ERC-8004 feedback gives (nil: none).
	External []float64
	// Relative is what each agent's word weighs as an auditor, in ETH, before the cap of
	// maxStanding: its net trust plus Own of its pre-trust (Params.relative), at most
	// maxWordPerStake times its own stake that counts.
	Relative   []float64
	Iterations int
	// Scale is the total pre-trust, in ETH of stake above the minimum (or the number of
	// agents when nobody is staked above it): Standing times Scale is an agent's standing in
	// ETH.
	Scale float64
	// Everyone says pre-trust was spread over every agent: nobody was staked above the
	// minimum.
	Everyone bool

	pos, all []fixed // Σ w·score and Σ w per subject: what an incremental update adjusts
	ext      []ExternalEdge
	pairs    []pairEntry // every auditor pair's sums, by auditor then subject
}

// fixed is a fixed-point accumulator: exact, so order-independent.
type fixed int64

const fixedOne = 1 << 32

func toFixed(x float64) fixed  { return fixed(math.Round(x * fixedOne)) }
func (f fixed) float() float64 { return float64(float64(f) / fixedOne) }

// Compute scores g.
func Compute(g *Graph, params Params) *Scores {
	p := params.withDefaults()
	return computePairs(collectPairs(g, p), g.Stake, g.External, p)
}

// collectPairs sums g's valid audits per (auditor, subject) pair, in CSR order (auditor,
// then subject): a counting sort by auditor (each audit's evidence computed on the way, in
// the audits' order), then each auditor's few audits by subject, the auditors split among
// the CPUs by their audits (each pair summed by one goroutine, the list in the same order).
func collectPairs(g *Graph, p Params) []pairEntry {
	n := len(g.Stake)
	at := make([]int, n+1)
	for i := range g.Audits {
		if e := &g.Audits[i]; e.valid(n) {
			at[e.Auditor+1]++
		}
	}
	for i := range n {
		at[i+1] += at[i]
	}
	type audit struct {
		subject int32
		sum     pairSum
	}
	edges := make([]audit, at[n])
	fill := slices.Clone(at[:n])
	pending := -1 // a valid audit whose evidence waits for the next one's (evidence2)
	for i := range g.Audits {
		e := &g.Audits[i]
		switch {
		case !e.valid(n):
			continue
		case pending < 0:
			pending = i
			continue
		}
		a := &g.Audits[pending]
		ea, ee := p.evidence2(a, e)
		edges[fill[a.Auditor]] = audit{a.Subject, ea}
		fill[a.Auditor]++
		edges[fill[e.Auditor]] = audit{e.Subject, ee}
		fill[e.Auditor]++
		pending = -1
	}
	if pending >= 0 {
		a := &g.Audits[pending]
		edges[fill[a.Auditor]] = audit{a.Subject, p.evidence(a)}
	}
	fill = nil
	bounds := split(at[n], runtime.GOMAXPROCS(0), parallelChunk)
	for i := range bounds { // at auditors' bounds
		bounds[i], _ = slices.BinarySearch(at[:n], bounds[i])
	}
	bounds[len(bounds)-1] = n
	bounds = slices.Compact(bounds)
	counts := make([]int, len(bounds))
	run(bounds, func(part, lo, hi int) {
		count := 0
		for a := lo; a < hi; a++ {
			row := edges[at[a]:at[a+1]]
			slices.SortFunc(row, func(x, y audit) int { return int(x.subject - y.subject) })
			for k := range row {
				if k == 0 || row[k].subject != row[k-1].subject {
					count++
				}
			}
		}
		counts[part+1] = count
	})
	for part := range len(counts) - 1 {
		counts[part+1] += counts[part]
	}
	pairs := make([]pairEntry, counts[len(counts)-1]) // every pair, by auditor then subject
	run(bounds, func(part, lo, hi int) {
		out := pairs[counts[part]:counts[part]:counts[part+1]]
		for a := lo; a < hi; a++ {
			row := edges[at[a]:at[a+1]]
			for k := 0; k < len(row); {
				var ps pairSum
				j := row[k].subject
				for ; k < len(row) && row[k].subject == j; k++ {
					ps.add(row[k].sum) // exact: the order of one pair's audits does not matter
				}
				out = append(out, pairEntry{pairKey{int32(a), j}, ps})
			}
		}
	})
	return pairs
}

// computePairs scores n = len(stake) agents from their audits' pair sums (pairs, in CSR
// order: by auditor, then subject; kept as Scores.pairs) and the imported feedback ext.
func computePairs(pairs []pairEntry, stake []float64, ext []ExternalEdge, p Params) *Scores {
	n := len(stake)
	if n == 0 {
		// nobody is staked: the first agents share pre-trust evenly
		return &Scores{Standing: []float64{}, Score: []float64{}, Confidence: []float64{}, Weight: []float64{}, Everyone: true}
	}
	// The outcome's arrays are made as they are filled: the standing is the power iteration's
	// last vector, and the scores' come after it, when its vectors and the trust matrix are
	// garbage (at 1M agents they are 8 MB each, on top of the matrix and two pair lists).
	out := &Scores{}

	pre, scale, everyone := p.preShares(stake)
	out.Scale, out.Everyone = scale, everyone

	// Local trust: s_ij per (auditor, subject) pair. As in the scores, one auditor's audits
	// of one subject count as at most one full audit: repeated bounties between two wallets
	// do not move trust between them. C_ij = s_ij / Σ_k s_ik, laid out by subject at once
	// (no matrix by auditor in between). Only the rows of auditors that can hand anything on
	// are laid out (speakers): one without stake that counts hands on +0 in every round (its
	// limit, below, is 0), and a sum of non-negative terms is the same without its +0 terms,
	// so leaving them out changes no bit. Free DIDs, most of a world's agents, cost the power
	// iteration nothing.
	procs := runtime.GOMAXPROCS(0) // read once: the runtime may change it meanwhile
	speaks := p.speakers(stake)
	m := trustMatrix(pairs, pre, p, procs, speaks)

	// What each agent may hold and hand on, as a share: maxWordPerStake times its own stake
	// that counts. Standing above it goes back to pre-trust, as an auditor's with no trust to
	// give does: so a hub's trust handed around a mesh of relays at the minimum stake stays at
	// what the relays put at stake (the relay mesh; before, it circulated among them in full).
	// None when nobody is staked above the minimum: nothing was put at stake to hold to.
	// (The cap is the round's limit, below.)

	// Power iteration. Each agent's next standing is the sum of what its auditors hand it,
	// taken in auditor order (m lists each subject's auditors in index order), plus its share
	// of what goes back to pre-trust: the same additions in the same order as pushing each
	// auditor's row in turn, so the same bits, whichever goroutine sums which subjects. The
	// goroutine that sums a subject also works out what it hands on in the next round: keep ·
	// min(t, limit), limit its cap, +Inf without one. Only the two totals are summed on
	// one goroutine, in index order, as they always were: the change since the last round,
	// and what goes back to pre-trust, max(t − limit, 0) with a limit of 0 for an auditor with
	// no trust to give (all of its standing), which is the standing above its cap otherwise
	// and +0 where it had nothing to add (+0 leaves a sum of non-negative terms as it was).
	parts := m.parts(procs)
	r := &round{pre: pre, limit: make([]float64, n), keep: 1 - p.Alpha,
		t: slices.Clone(pre), next: make([]float64, n), give: make([]float64, m.speakers), handed: make([]float64, m.speakers)}
	for i, g := range m.gives[:n] {
		switch {
		case g == 0:
			r.limit[i] = 0
		case !out.Everyone:
			r.limit[i] = maxWordPerStake * p.counted(stake[i]) / out.Scale
		default:
			r.limit[i] = math.Inf(1)
		}
	}
	dangling := 0.0
	for i, x := range r.t {
		if m.gives[i] == 0 {
			dangling += x
			continue
		}
		ti := r.keep * x
		if x > r.limit[i] {
			dangling += x - r.limit[i]
			ti = r.keep * r.limit[i]
		}
		r.give[m.place(i)] = ti
	}
	for out.Iterations = 1; out.Iterations <= p.MaxIter; out.Iterations++ {
		r.toPre = p.Alpha + float64(r.keep*dangling)
		m.step(r, parts)
		change := 0.0
		dangling = 0
		next, last, limit := r.next, r.t[:len(r.next)], r.limit[:len(r.next)]
		for _, j := range m.subjects { // any other subject adds +0 to both
			x := next[j]
			change += math.Abs(x - last[j])
			dangling += max(x-limit[j], 0)
		}
		r.t, r.next = r.next, r.t
		r.give, r.handed = r.handed, r.give
		if change < p.Tolerance {
			break
		}
	}
	t := r.t
	r = nil
	out.Iterations = min(out.Iterations, p.MaxIter)
	out.Standing = t

	out.Relative = make([]float64, n)
	for i := range n {
		out.Relative[i] = p.relative(t[i], pre[i], out.Scale)
		if !out.Everyone {
			// No agent speaks with more than maxWordPerStake times its own stake: trust a
			// staked hub hands to DIDs of its own without stake would speak for it at full
			// weight (its own pre-trust only at Own), and a DID without stake that counts
			// moves nothing, however trusted.
			out.Relative[i] = min(out.Relative[i], maxWordPerStake*p.counted(stake[i]))
		}
	}
	out.pairs = pairs
	out.ext = ext
	out.Score, out.Confidence, out.Weight = make([]float64, n), make([]float64, n), make([]float64, n)
	out.sumPairs(pairs, n, p, out.Relative, procs)
	return out
}

// preShares is every agent's pre-trust, as shares summing to 1: over the staked, in
// proportion to stake above the minimum; over everyone evenly when nobody is staked above it
// (everyone: a world where nothing was put at stake, such as a dev chain before anyone
// stakes, the one case where a free DID holds any). Standings are read in ETH, times scale:
// the total stake above the minimum (or the number of agents pre-trusted evenly), so what an
// agent stands at is the stake behind it, not its share of a total that free DIDs could pad
// (it was times the number of agents in the graph, and a thousand junk DIDs put every staked
// auditor at the cap).
func (p Params) preShares(stake []float64) (pre []float64, scale float64, everyone bool) {
	pre = make([]float64, len(stake))
	total := p.preTotal(stake, pre)
	if total == 0 {
		for i := range pre {
			pre[i] = 1
		}
		total, everyone = float64(len(stake)), true
	}
	for i := range pre {
		pre[i] /= total
	}
	return pre, total, everyone
}

// preTotal sums stake's pre-trust, in index order, writing each agent's into pre when it is
// not nil.
func (p Params) preTotal(stake, pre []float64) float64 {
	total := 0.0
	for i, s := range stake {
		x := p.preTrust(s)
		if pre != nil {
			pre[i] = x
		}
		total += x
	}
	return total
}

// speakers says which agents' words can hand trust on: those with stake that counts. It is
// nil when nobody is staked above the minimum (preShares' everyone): every word may then.
func (p Params) speakers(stake []float64) []bool {
	if p.preTotal(stake, nil) == 0 {
		return nil
	}
	speaks := make([]bool, len(stake))
	for i, s := range stake {
		speaks[i] = p.counted(s) > 0
	}
	return speaks
}

// speaking is how many of pairs the trust matrix can hold: those whose auditor speaks
// (speakers; nil: every pair).
func speaking(pairs []pairEntry, speaks []bool) int {
	if speaks == nil {
		return len(pairs)
	}
	count := 0
	for _, e := range pairs {
		if a := int(e.key.auditor); a < len(speaks) && speaks[a] {
			count++
		}
	}
	return count
}

// incoming is the trust matrix by subject, over the subjects whose standing can be other
// than 0 (live): the k-th of them is subjects[k], in index order, and its auditors are
// from[start[k]:start[k+1]], in index order, with their weights C_ij.
type incoming struct {
	subjects []int32
	start    []int32
	from     []int32 // the auditors' places among those that speak (rank)
	weight   []float64
	gives    []int32 // how many subjects each auditor trusts
	// rank is each agent's place among those that speak, in index order (-1: it does not;
	// nil: each speaks, at its own index), and ranks the subjects', alike (subjects[k]'s is
	// ranks[k]); speakers is how many speak. What auditors hand on is kept by place: the
	// power iteration reads it at random, and the staked are a few of a world's agents, so
	// the array it reads is a few times smaller (in a cache, not in memory, at 1M agents).
	rank, ranks []int32
	speakers    int
}

// place is auditor i's place among those that speak.
func (m *incoming) place(i int) int {
	if m.rank == nil {
		return i
	}
	return int(m.rank[i])
}

// trustMatrix lays out C by subject from the pairs (in CSR order: by auditor, then
// subject), so each subject's auditors come in index order: C_ij = s_ij / Σ_k s_ik, each
// auditor's total summed in fixed point first. The pairs are split among procs goroutines
// at auditors' bounds, in two passes: each part counts its weights per subject and sums its
// auditors' totals, then files its weights after those of the parts before it (so in
// auditor order), computing s_ij again rather than keeping it (8 bytes a pair). Auditors
// for whom speaks is false are left out, rows and gives (nil speaks: none is). A subject
// is live when some auditor trusts it or it holds pre-trust (pre, as shares); any other's
// standing is +0 in every round (no term, and toPre·0), so the power iteration skips it:
// agents no staked agent trusts, most of a world's, cost it nothing.
func trustMatrix(pairs []pairEntry, pre []float64, p Params, procs int, speaks []bool) *incoming {
	n := len(pre)
	bounds := split(len(pairs), procs, parallelChunk)
	for i := 1; i < len(bounds)-1; i++ { // no auditor's pairs in two parts
		for bounds[i] = max(bounds[i], bounds[i-1]); bounds[i] > 0 && bounds[i] < len(pairs) && pairs[bounds[i]].key.auditor == pairs[bounds[i]-1].key.auditor; {
			bounds[i]++
		}
	}
	total := make([]fixed, n)
	m := &incoming{start: make([]int32, 0, n+1), gives: make([]int32, n), speakers: n}
	if speaks != nil {
		m.rank, m.speakers = make([]int32, n), 0
		for i, ok := range speaks {
			m.rank[i] = -1
			if ok {
				m.rank[i] = int32(m.speakers)
				m.speakers++
			}
		}
	}
	fills := make([][]int32, len(bounds)-1) // per part: its weights per subject, then where they go
	run(bounds, func(part, lo, hi int) {
		fill := make([]int32, n)
		for _, e := range pairs[lo:hi] {
			if speaks != nil && !speaks[e.key.auditor] {
				continue
			}
			if s := e.sum.trust(p); s > 0 {
				total[e.key.auditor] += s
				m.gives[e.key.auditor]++
				fill[e.key.subject]++
			}
		}
		fills[part] = fill
	})
	at := int32(0)
	for j := range n {
		begin := at
		for _, fill := range fills {
			at, fill[j] = at+fill[j], at
		}
		if at > begin || pre[j] > 0 {
			m.subjects = append(m.subjects, int32(j))
			m.ranks = append(m.ranks, int32(m.place(j)))
			m.start = append(m.start, begin)
		}
	}
	m.start = append(m.start, at)
	m.from, m.weight = make([]int32, at), make([]float64, at)
	run(bounds, func(part, lo, hi int) {
		fill := fills[part]
		for _, e := range pairs[lo:hi] {
			if speaks != nil && !speaks[e.key.auditor] {
				continue
			}
			if s := e.sum.trust(p); s > 0 {
				j := e.key.subject
				m.from[fill[j]] = int32(m.place(int(e.key.auditor)))
				m.weight[fill[j]] = float64(s) / float64(total[e.key.auditor])
				fill[j]++
			}
		}
	})
	return m
}

// parallelChunk is how much work (subjects' weights, pairs) one goroutine takes at least.
const parallelChunk = 1 << 14

// split divides [0, n) into at most procs parts of about n/procs, each at least chunk long
// (one part when n is smaller): the parts' bounds.
func split(n, procs, chunk int) []int {
	k := max(1, min(procs, n/max(chunk, 1)))
	bounds := make([]int, k+1)
	for i := range bounds {
		bounds[i] = int(int64(n) * int64(i) / int64(k))
	}
	return bounds
}

// run calls f on every part [bounds[i], bounds[i+1]) at once, each in a goroutine of its own
// (the last in the caller's), and returns when all are done.
func run(bounds []int, f func(part, lo, hi int)) {
	last := len(bounds) - 2
	if last < 0 {
		return
	}
	var wg sync.WaitGroup
	for i := range last {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(i, bounds[i], bounds[i+1])
		}()
	}
	f(last, bounds[last], bounds[last+1])
	wg.Wait()
}

// parts splits the live subjects among procs goroutines for the power iteration, once for
// all its rounds (bounds are places in m.subjects): each part sums about as many weights (at
// least parallelChunk).
func (m *incoming) parts(procs int) []int {
	n := len(m.start) - 1
	edges := split(int(m.start[n]), procs, parallelChunk)
	bounds := make([]int, len(edges))
	for i, e := range edges[1 : len(edges)-1] {
		bounds[i+1], _ = slices.BinarySearch(m.start, int32(e))
	}
	bounds[len(bounds)-1] = n
	return slices.Compact(bounds)
}

// round is one round of the power iteration: what step reads (t, give, pre, toPre,
// limit) and what it writes, by subject (next, handed).
type round struct {
	t      []float64 // the standing after the last round
	next   []float64 // the standing after this one
	give   []float64 // what each auditor hands on in this round, before its weights, by place
	handed []float64 // what each hands on in the next, by place
	pre    []float64 // pre-trust, as shares
	// limit is the standing each agent hands on at most (its cap, +Inf without one; 0 for an
	// auditor with no trust to give): the rest goes back to pre-trust.
	limit []float64
	keep  float64 // 1 − Alpha
	toPre float64 // what goes to pre-trust in this round
}

// step sets next[j] to Σ_i give[i]·C_ij (in auditor order) + toPre·pre[j] for every j, and
// handed[j] to keep · min(next[j], limit[j]), the subjects split among goroutines at bounds
// (parts): each sum is one goroutine's, in one order.
func (m *incoming) step(r *round, bounds []int) {
	run(bounds, func(_, lo, hi int) { m.stepRange(r, lo, hi) })
}

func (m *incoming) stepRange(r *round, lo, hi int) {
	start, subjects, next, pre := m.start[lo:hi+1], m.subjects[lo:hi], r.next, r.pre
	from, weight, give, toPre := m.from, m.weight[:len(m.from)], r.give, r.toPre
	// Two subjects at a time: their sums are two chains of additions the CPU overlaps, each
	// still in its own auditor order.
	j := 0
	for ; j+1 < len(subjects); j += 2 {
		a, b, c := start[j], start[j+1], start[j+2]
		f0, w0 := from[a:b], weight[a:b]
		f1, w1 := from[b:c], weight[b:c]
		both := min(len(f0), len(f1))
		w0, w1 = w0[:len(f0)], w1[:len(f1)]
		s0, s1 := 0.0, 0.0
		for k := range both {
			s0 += float64(give[f0[k]] * w0[k])
			s1 += float64(give[f1[k]] * w1[k])
		}
		for k := both; k < len(f0); k++ {
			s0 += float64(give[f0[k]] * w0[k])
		}
		for k := both; k < len(f1); k++ {
			s1 += float64(give[f1[k]] * w1[k])
		}
		j0, j1 := subjects[j], subjects[j+1]
		next[j0] = s0 + float64(toPre*pre[j0])
		next[j1] = s1 + float64(toPre*pre[j1])
	}
	for ; j < len(subjects); j++ {
		a, b := start[j], start[j+1]
		sum := 0.0
		for k, i := range from[a:b] {
			sum += float64(give[i] * weight[int(a)+k])
		}
		j0 := subjects[j]
		next[j0] = sum + float64(toPre*pre[j0])
	}
	handed, limit, keep := r.handed, r.limit, r.keep
	for k, at := range m.ranks[lo:hi] {
		if at >= 0 {
			j := subjects[k]
			handed[at] = keep * min(next[j], limit[j])
		}
	}
}

// relative is what an auditor's word weighs, in ETH, before the cap: the trust others hand it
// beyond its own pre-trust (net trust, max(0, t − p)), plus Own of its own pre-trust; t and
// pre as shares, scale the total pre-trust in ETH. A ring whose members audit one another
// gets back the trust it gives and nets nothing, so its members speak with Own of their
// stake; an agent many others trust speaks with what they put behind it.
func (p Params) relative(t, pre, scale float64) float64 {
	if p.Own < 0 {
		return t * scale
	}
	return (max(0, t-pre) + float64(p.Own*min(t, pre))) * scale
}

// valid says whether e can count among n agents.
func (e *Edge) valid(n int) bool {
	return e.Auditor >= 0 && int(e.Auditor) < n && e.Subject >= 0 && int(e.Subject) < n && e.Auditor != e.Subject && e.Score >= 0 && e.Score <= 1
}

// sum computes the beta scores of g's subjects from what the auditors' words weigh (rel,
// Scores.Relative), summing in fixed point, so in any order.
func (s *Scores) sum(g *Graph, p Params, rel []float64) {
	var pairs []pairEntry
	for k, ps := range pairSums(g, p) {
		pairs = append(pairs, pairEntry{k, ps})
	}
	s.ext = g.External
	s.sumPairs(pairs, len(g.Stake), p, rel, 1)
}

// sumPairs computes the beta scores from the auditor pairs' sums, in any order: the pairs
// are split among procs goroutines, each summing into sums of its own, added up after (in
// fixed point, so the same bits however they are split).
func (s *Scores) sumPairs(pairs []pairEntry, n int, p Params, rel []float64, procs int) {
	bounds := split(len(pairs), procs, parallelChunk)
	all, pos := make([][]fixed, len(bounds)-1), make([][]fixed, len(bounds)-1)
	run(bounds, func(part, lo, hi int) {
		a, b := make([]fixed, n), make([]fixed, n)
		for _, e := range pairs[lo:hi] {
			r := rel[e.key.auditor]
			if r == 0 {
				continue // its contribution is 0 and 0: a free DID's audits, most of them
			}
			w, ws := p.contribution(e.sum, r)
			a[e.key.subject] += w
			b[e.key.subject] += ws
		}
		all[part], pos[part] = a, b
	})
	s.all, s.pos = all[0], pos[0]
	for part := 1; part < len(all); part++ {
		for j, w := range all[part] {
			s.all[j] += w
			s.pos[j] += pos[part][j]
		}
	}
	if len(s.ext) > 0 {
		// Imported feedback: summed in fixed point per subject, then capped at ExternalCap
		// (every rating of a subject scaled down alike), then added.
		s.External = make([]float64, n)
		w, ws := make([]fixed, n), make([]fixed, n)
		for i := range s.ext {
			if e := &s.ext[i]; e.Subject >= 0 && int(e.Subject) < n && e.Score >= 0 && e.Score <= 1 {
				a, b := p.external(e)
				w[e.Subject] += a
				ws[e.Subject] += b
			}
		}
		limit := toFixed(ExternalCap)
		for j := range n {
			if w[j] > limit {
				ws[j] = toFixed(ws[j].float() * (ExternalCap / w[j].float()))
				w[j] = limit
			}
			s.all[j] += w[j]
			s.pos[j] += ws[j]
			s.External[j] = w[j].float()
		}
	}
	for j := range n {
		s.beta(p, j)
	}
}

// pairEntry is one pair's sums under its key.
type pairEntry struct {
	key pairKey
	sum pairSum
}

// less orders pairs by auditor, then subject, as Compute lists them.
func (k pairKey) less(o pairKey) bool {
	return k.auditor < o.auditor || k.auditor == o.auditor && k.subject < o.subject
}

// compare orders pairs as less does.
func (k pairKey) compare(o pairKey) int {
	switch {
	case k.less(o):
		return -1
	case o.less(k):
		return 1
	}
	return 0
}

// pairKey names one auditor's audits of one subject.
type pairKey struct{ auditor, subject int32 }

// pairSum is what one auditor's audits of one subject add up to, in fixed point (exact, so in
// any order, and invertible, so an audit can be taken out again): the floor every counted
// audit gives (decay·Unbacked), the value settlement adds above it (decay·(backing −
// Unbacked)), and both times the audit's score.
type pairSum struct{ floor, value, scored fixed }

func (ps *pairSum) add(o pairSum) { ps.floor += o.floor; ps.value += o.value; ps.scored += o.scored }
func (ps *pairSum) sub(o pairSum) { ps.floor -= o.floor; ps.value -= o.value; ps.scored -= o.scored }

// pairSums groups g's valid audits by auditor and subject.
func pairSums(g *Graph, p Params) map[pairKey]pairSum {
	n := len(g.Stake)
	out := make(map[pairKey]pairSum, len(g.Audits))
	for i := range g.Audits {
		if e := &g.Audits[i]; e.valid(n) {
			k := pairKey{e.Auditor, e.Subject}
			ps := out[k]
			ps.add(p.evidence(e))
			out[k] = ps
		}
	}
	return out
}

// evidence is what audit e says, in fixed point, as its pair sums it.
func (p Params) evidence(e *Edge) pairSum {
	return p.decayed(e, halving(max(e.Age, 0)/p.HalfLife))
}

// evidence2 is evidence of e0 and of e1, their decays computed side by side (halving2).
func (p Params) evidence2(e0, e1 *Edge) (pairSum, pairSum) {
	d0, d1 := halving2(max(e0.Age, 0)/p.HalfLife, max(e1.Age, 0)/p.HalfLife)
	return p.decayed(e0, d0), p.decayed(e1, d1)
}

// decayed is evidence of e at its decay.
func (p Params) decayed(e *Edge, decay float64) pairSum {
	b := p.backing(e)
	return pairSum{floor: toFixed(decay * p.Unbacked), value: toFixed(decay * (b - p.Unbacked)), scored: toFixed(decay * b * e.Score)}
}

// capped is the pair's evidence as it counts: the floor at most once (Unbacked: however many
// audits one auditor files of one subject, unbacked they count as one), and the settled value
// up to one full audit (1 − Unbacked: however many bounties two wallets settle, they back one
// full audit at most, reached with FullBacking settled in all); and the mean score they carry.
func (ps pairSum) capped(p Params) (evidence, mean float64) {
	total := ps.floor.float() + ps.value.float()
	if total <= 0 {
		return 0, 0
	}
	return min(p.Unbacked, ps.floor.float()) + min(1-p.Unbacked, ps.value.float()), ps.scored.float() / total
}

// contribution is what one auditor's audits of one subject add to the subject's sums, its
// weight and weight times score: what the auditor's word weighs (rel, Scores.Relative,
// capped) times the pair's capped evidence, at its mean score. The cap is what stops wash
// trading: more bounties between the same two wallets add nothing once they back one full
// audit, so weight comes from distinct auditors, whose standing comes from stake. Stake counts
// once, through standing (pre-trust is stake above the minimum): a second, concave stake
// factor here let stake placed straight on a ring's auditors weigh more per ETH than the
// standing honest auditors earn (TestSybilSimulation: the top 10 cost a ring 7.19 ETH with it,
// 8.87 without).
func (p Params) contribution(ps pairSum, rel float64) (w, ws fixed) {
	ev, mean := ps.capped(p)
	x := min(rel, maxStanding) * ev
	return toFixed(x), toFixed(x * mean)
}

// trust is the local trust one auditor's audits of a subject give it: their capped evidence
// times their mean score.
func (ps pairSum) trust(p Params) fixed {
	ev, mean := ps.capped(p)
	return toFixed(ev * mean)
}

// weigh is the weight of audit e alone, and its weight times its score, in fixed point: what
// it adds to its subject's sums when it is its auditor's only audit of the subject.
func (p Params) weigh(e *Edge, rel float64) (w, ws fixed) {
	return p.contribution(p.evidence(e), rel)
}

// rankZ is the normal quantile of the rank bound: the score's 10% lower credible bound.
const rankZ = 1.2816

// RankBound is what the ranking orders by: a conservative estimate of a subject's score, the
// 10% lower bound of its beta posterior (normal approximation) for score (the posterior
// mean) and weight (Σ w). A subject with little evidence does not outrank one with much at a
// slightly lower mean, so a cheap cluster of colluders rating each other 1 needs as much
// evidence, that is as much stake behind its auditors, as the agents it overtakes.
func (p Params) RankBound(score, weight float64) float64 {
	d := p.withDefaults()
	n := d.PriorA + d.PriorB + max(weight, 0)
	return score - float64(rankZ*math.Sqrt(score*(1-score)/(n+1)))
}

// beta sets subject j's weight, score and confidence from its sums.
func (s *Scores) beta(p Params, j int) {
	w := s.all[j].float()
	s.Weight[j] = w
	s.Score[j] = (p.PriorA + s.pos[j].float()) / (p.PriorA + p.PriorB + w)
	s.Confidence[j] = w / (w + p.PriorA + p.PriorB)
}
