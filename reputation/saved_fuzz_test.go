package reputation

import (
	"crypto/sha256"
	"testing"
	"time"
)

// FuzzDecodeSavedScores: stored scores of any shape, checksum made to match, decode to a
// snapshot whose lists agree in length, or to an error; never a panic.
func FuzzDecodeSavedScores(f *testing.F) {
	g := &Graph{Stake: []float64{2, 0, 1}, Audits: []Edge{{Auditor: 0, Subject: 1, Score: 0.8}, {Auditor: 2, Subject: 1, Score: 0.3, Backed: true, Settled: 1}}}
	snap := newSnapshot(time.Unix(1_800_000_000, 0), g, []string{"did:key:za", "did:key:zb", "did:key:zc"}, Params{})
	data := snap.encode()
	f.Add(data[:len(data)-sha256.Size])
	f.Add([]byte{1, 0, 0})
	f.Fuzz(func(t *testing.T, body []byte) {
		sum := sha256.Sum256(body)
		got, err := decodeSnapshot(append(body, sum[:]...), DefaultParams)
		if err != nil {
			return
		}
		m := len(got.dids)
		if len(got.scores.Score) != m || len(got.audits) != m || len(got.stake) != m || got.n > m {
			t.Fatalf("decoded lists disagree: %d agents, %d scores, %d counts, %d stakes, n %d", m, len(got.scores.Score), len(got.audits), len(got.stake), got.n)
		}
		for _, d := range got.dids {
			got.reputation(d)
		}
	})
}
