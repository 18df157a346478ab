package reputation_test

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/surety-ioa/surety/reputation"
)

// TestComputeKeepsItsBits: Compute gives, to the last bit, what it gave when these sums were
// taken (the engine at e976a61), over graphs that take every path of the power iteration: one
// large enough to be summed by several goroutines, the rule before issue 25 (Own < 0), nobody
// staked, many repeated pairs, the Sybil world and imported feedback. Any change to how the
// engine lays out or sums its work must leave every float as it was: nodes, clients and the
// explorer recompute these bits.
func TestComputeKeepsItsBits(t *testing.T) {
	unstaked := randomGraph(3_000, 30_000)
	clear(unstaked.Stake)
	withFeedback := randomGraph(2_000, 20_000)
	r := rand.New(rand.NewPCG(11, 12))
	for range 3_000 {
		withFeedback.External = append(withFeedback.External, reputation.ExternalEdge{Subject: int32(r.IntN(2_000)), Score: r.Float64(), Age: r.Float64() * 1e7, Settled: r.Float64() * 2})
	}
	tests := []struct {
		name   string
		g      *reputation.Graph
		params reputation.Params
		want   string
	}{
		{"40k agents, several goroutines", randomGraph(40_000, 300_000), reputation.Params{}, "1fccc4ce09c740ba834bbed734bdb0f6"},
		{"Own < 0", randomGraph(20_000, 150_000), reputation.Params{Own: -1}, "f520ebab9f5f8b31e3d3025966d3aa6a"},
		{"nobody staked", unstaked, reputation.Params{}, "077b0b03fa9f2e3fa9df323922ecff4e"},
		{"repeated pairs", randomGraph(300, 30_000), reputation.Params{}, "881be0f000739883e2974e85e5afa2d6"},
		{"Sybil world", sybilWorld(true), reputation.Params{}, "3fd30b5cb3cc7b47ec4ec455014a8643"},
		{"imported feedback", withFeedback, reputation.Params{FullBacking: -1}, "2dd84ca14eaa849ecb8a0caeac9b9004"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := scoreBits(reputation.Compute(tt.g, tt.params)); got != tt.want {
				t.Errorf("scores hash to %s, want %s", got, tt.want)
			}
		})
	}
}

// scoreBits hashes every float of s, bit for bit, and its iteration count.
func scoreBits(s *reputation.Scores) string {
	h := sha256.New()
	var b [8]byte
	for _, xs := range [][]float64{s.Standing, s.Score, s.Confidence, s.Weight, s.External, s.Relative, {s.Scale, float64(s.Iterations)}} {
		binary.LittleEndian.PutUint64(b[:], uint64(len(xs)))
		h.Write(b[:])
		for _, x := range xs {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(x))
			h.Write(b[:])
		}
	}
	if s.Everyone {
		h.Write([]byte{1})
	}
	return fmt.Sprintf("%x", h.Sum(nil)[:16])
}
