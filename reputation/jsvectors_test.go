package reputation

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/surety-ioa/surety/reputation/merkle"
)

// The explorer (explorer/web) recomputes scores and checks proofs in the browser, in
// JavaScript: lib/score.js and lib/merkle.js. Its unit tests (node --test explorer/web/test)
// hold them to what this package computes, bit for bit, through the vectors written here.
// TestJSVectors fails when the committed vectors drift from the Go code; -update-js rewrites
// them.
var updateJS = flag.Bool("update-js", false, "rewrite explorer/web/test/testdata from reputation.Compute and reputation/merkle")

const jsVectorDir = "../explorer/web/test/testdata"

func TestJSVectors(t *testing.T) {
	for name, v := range map[string]any{"score.json": scoreVectors(), "merkle.json": merkleVectors()} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, '\n')
		path := filepath.Join(jsVectorDir, name)
		if *updateJS {
			if err := os.MkdirAll(jsVectorDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		old, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./reputation -run TestJSVectors -update-js writes it)", err)
		}
		if !bytes.Equal(old, b) {
			t.Errorf("%s drifted from the Go code: go test ./reputation -run TestJSVectors -update-js", path)
		}
	}
}

// jsAudit is one audit as GET /v1/log/scores lists a score's inputs.
type jsAudit struct {
	Auditor string  `json:"auditor"`
	Subject string  `json:"subject"`
	Target  string  `json:"target"`
	Score   float64 `json:"score"`
	Time    int64   `json:"time"`
	Backed  bool    `json:"backed"`
	Settled float64 `json:"settled"`
	Counts  bool    `json:"counts"`
}

type jsScore struct {
	DID        string  `json:"did"`
	Score      float64 `json:"score"`
	Confidence float64 `json:"confidence"`
	Weight     float64 `json:"weight"`
	Standing   float64 `json:"standing"`
	Relative   float64 `json:"relative"`
}

type jsWorld struct {
	Name   string             `json:"name"`
	At     int64              `json:"at"`
	Params map[string]float64 `json:"params,omitempty"`
	Stake  map[string]float64 `json:"stake"`
	Audits []jsAudit          `json:"audits"`
	// What Compute gives.
	Iterations int       `json:"iterations"`
	Scale      float64   `json:"scale"`
	Everyone   bool      `json:"everyone"`
	Scores     []jsScore `json:"scores"`
}

// scoreVectors are random worlds scored the way the node scores them: the audits that count
// put into a liveGraph one by one, the graph taken at the scoring time with the stakes, and
// Compute. Each world carries audits that do not count too (superseded by a later one of
// the same target), which the JavaScript must leave out as the node does.
func scoreVectors() map[string]any {
	rng := rand.New(rand.NewPCG(28, 5))
	const day = 24 * 3600
	at := int64(1_795_000_000)
	var worlds []jsWorld
	shapes := []struct {
		name          string
		agents, edges int
		staked        float64 // share of agents staked
		params        Params
	}{
		{"two agents", 2, 2, 1, Params{}},
		{"small, all staked", 6, 20, 1, Params{}},
		{"small, some staked", 12, 60, 0.4, Params{}},
		{"nobody staked above the minimum", 8, 30, 0, Params{}},
		{"wider, few staked", 40, 300, 0.15, Params{}},
		{"wider, many repeated pairs", 25, 400, 0.5, Params{}},
		{"own stake whole, full backing for any settlement", 15, 80, 0.5, Params{Own: -1, FullBacking: -1}},
		{"other params", 15, 80, 0.5, Params{Alpha: 0.3, HalfLife: 30 * day, Unbacked: 0.2, PriorA: 2, PriorB: 3, MinStake: 0.5, FullBacking: 2, Own: 0.25, MaxIter: 7}},
	}
	for _, sh := range shapes {
		dids := make([]string, sh.agents)
		for i := range dids {
			dids[i] = jsDID(rng)
		}
		w := jsWorld{Name: sh.name, At: at, Stake: map[string]float64{}}
		if sh.params != (Params{}) {
			p := sh.params
			w.Params = map[string]float64{}
			for k, v := range map[string]float64{"alpha": p.Alpha, "halfLife": p.HalfLife, "unbacked": p.Unbacked, "priorA": p.PriorA, "priorB": p.PriorB,
				"tolerance": p.Tolerance, "maxIter": float64(p.MaxIter), "minStake": p.MinStake, "fullBacking": p.FullBacking, "own": p.Own} {
				if v != 0 {
					w.Params[k] = v
				}
			}
		}
		for _, d := range dids {
			switch {
			case rng.Float64() < sh.staked:
				w.Stake[d] = math.Round((0.1+rng.Float64()*8)*1e6) / 1e6
			case rng.IntN(4) == 0:
				w.Stake[d] = 0.05 // below the minimum: counts as none, but is an agent
			}
		}
		// A staked agent no audit names is an agent too.
		if sh.staked > 0 {
			w.Stake[jsDID(rng)] = 1.5
		}
		for e := range sh.edges {
			a, s := rng.IntN(sh.agents), rng.IntN(sh.agents)
			if a == s {
				s = (s + 1) % sh.agents
			}
			if sh.name == "wider, many repeated pairs" {
				a, s = rng.IntN(5), 5+rng.IntN(3)
			}
			au := jsAudit{Auditor: dids[a], Subject: dids[s], Target: fmt.Sprintf("bounty:31337:0xe7f1:%d", e),
				Score: []float64{0, 1, 0.8, 0.5, math.Round(rng.Float64()*1e4) / 1e4, rng.Float64()}[rng.IntN(6)],
				Time:  at - int64(rng.Float64()*400*day) + int64(rng.IntN(3)-1)*3600, Backed: rng.IntN(3) > 0, Counts: true}
			if au.Backed {
				au.Settled = []float64{1e-18, 0.01, 0.1, 0.5, 1, 2.5, rng.Float64() * 3}[rng.IntN(7)]
			}
			if rng.IntN(8) == 0 { // an earlier audit of the same target, superseded
				old := au
				old.Time -= 3600
				old.Score = 1 - au.Score
				old.Counts = false
				w.Audits = append(w.Audits, old)
			}
			w.Audits = append(w.Audits, au)
		}
		g := &liveGraph{ids: map[string]int32{}}
		for _, au := range w.Audits {
			if au.Counts {
				a := &Audit{Auditor: au.Auditor, Subject: au.Subject, Score: au.Score, Time: au.Time}
				if err := setTarget(a, au.Target); err != nil {
					panic(err)
				}
				g.put(a, au.Backed, au.Settled)
			}
		}
		graph, byIndex := g.graph(at, w.Stake)
		g.release()
		sc := Compute(graph, sh.params)
		w.Iterations, w.Scale, w.Everyone = sc.Iterations, sc.Scale, sc.Everyone
		for i, d := range byIndex {
			w.Scores = append(w.Scores, jsScore{DID: d, Score: sc.Score[i], Confidence: sc.Confidence[i], Weight: sc.Weight[i], Standing: sc.Standing[i], Relative: sc.Relative[i]})
		}
		worlds = append(worlds, w)
	}
	// halving at the arguments decay takes (age / half-life), whole numbers of half-lives,
	// and the ends: the JavaScript runs the same steps.
	var halvings [][2]float64
	for i := range 400 {
		x := rng.Float64() * 5
		switch {
		case i < 40:
			x = float64(i) * 0.37
		case i < 60:
			x = float64(i-50) * 137
		case i < 80:
			x = float64(rng.IntN(400*day)) / (90 * day)
		}
		halvings = append(halvings, [2]float64{x, halving(x)})
	}
	return map[string]any{"halving": halvings, "worlds": worlds}
}

// jsDID is a did:key-shaped DID with random base58 letters, both cases, so the vectors hold
// the JavaScript to Go's byte order of DIDs.
func jsDID(rng *rand.Rand) string {
	const b58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
	b := []byte("did:key:z6Mk")
	for range 8 {
		b = append(b, b58[rng.IntN(len(b58))])
	}
	return string(b)
}

// merkleVectors: a tree of leaves "leaf 0" … with its roots at every size, and inclusion and
// consistency proofs from reputation/merkle.
func merkleVectors() map[string]any {
	const n = 33
	var tr merkle.Tree
	var leaves []string
	for i := range n {
		b := fmt.Appendf(nil, "leaf %d", i)
		leaves = append(leaves, string(b))
		tr.Append(merkle.LeafHash(b))
	}
	type incl struct {
		Index uint64        `json:"index"`
		Size  uint64        `json:"size"`
		Path  []merkle.Hash `json:"path"`
	}
	type cons struct {
		From uint64        `json:"from"`
		To   uint64        `json:"to"`
		Path []merkle.Hash `json:"path"`
	}
	var roots []merkle.Hash
	var incls []incl
	var conss []cons
	for size := uint64(1); size <= n; size++ {
		r, _ := tr.Root(size)
		roots = append(roots, r)
		for i := range size {
			if size <= 17 || i%7 == 0 || i == size-1 {
				p, err := tr.InclusionProof(i, size)
				if err != nil {
					panic(err)
				}
				incls = append(incls, incl{i, size, nonNil(p)})
			}
		}
		for m := uint64(1); m <= size; m++ {
			if size <= 17 || m%5 == 0 || m == size-1 {
				p, err := tr.ConsistencyProof(m, size)
				if err != nil {
					panic(err)
				}
				conss = append(conss, cons{m, size, nonNil(p)})
			}
		}
	}
	return map[string]any{"leaves": leaves, "empty": merkle.EmptyRoot, "roots": roots, "inclusion": incls, "consistency": conss}
}

func nonNil(p []merkle.Hash) []merkle.Hash {
	if p == nil {
		return []merkle.Hash{}
	}
	return p
}
