package reputation

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"reflect"
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
	f.Add(hugeCountBody())
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

// TestSavedScoresKeepFollowedAgents: an agent the computation did not know, added by a
// followed audit, reads the same from stored scores as from the snapshot they were stored from.
func TestSavedScoresKeepFollowedAgents(t *testing.T) {
	g := liveGraph{ids: map[string]int32{}, loaded: true}
	now := int64(1_800_000_000)
	g.put(&Audit{Auditor: "did:key:zb", Subject: "did:key:zc", Envelope: "1", Score: 0.9, Time: now - 50}, true, 1)
	computed, dids := g.graph(now, map[string]float64{"did:key:zb": 2})
	snap := newSnapshot(time.Unix(now, 0).UTC(), computed, dids, Params{})
	snap.follow(g.put(&Audit{Auditor: "did:key:zb", Subject: "did:key:za", Envelope: "2", Score: 0.2, Time: now - 10}, false, 0))
	got, err := decodeSnapshot(snap.encode(), DefaultParams)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"did:key:za", "did:key:zb", "did:key:zc", "did:key:zz"} {
		if w, r := snap.reputation(d), got.reputation(d); !reflect.DeepEqual(w, r) {
			t.Errorf("%s: stored %+v, snapshot %+v", d, r, w)
		}
	}
	if r := got.reputation("did:key:za"); r.Audits != 1 || r.Score == got.prior {
		t.Errorf("the followed subject reads %+v from stored scores", r)
	}
}

// hugeCountBody is stored scores, checksum aside, that say the computation had 2^63 agents
// (a negative int once converted) and are otherwise well formed: no agents, no figures.
func hugeCountBody() []byte {
	var b []byte
	for _, x := range []uint64{savedScoresVersion, 1_800_000_000, 0, 1 << 63, 0, 0, 2} {
		b = binary.AppendUvarint(b, x)
	}
	b = append(b, make([]byte, 16)...) // the scale and the newcomer's word
	for range 8 {                      // six score lists, the stakes, the audit counts: empty
		b = binary.AppendUvarint(b, 0)
	}
	return b
}

// TestDecodeRefusesAHugeCount (review 31): a count of agents past what the data holds is
// refused, not turned into a negative length that panics at every start.
func TestDecodeRefusesAHugeCount(t *testing.T) {
	body := hugeCountBody()
	sum := sha256.Sum256(body)
	if got, err := decodeSnapshot(append(body, sum[:]...), DefaultParams); err == nil {
		t.Fatalf("decoded %+v", got)
	}
}

// TestSavedCopyIsItsOwn: the copy saveScores takes under the lock encodes as the snapshot
// did when it was taken, whatever audits the snapshot follows after (review 31, finding 3:
// the encoding runs outside the lock now).
func TestSavedCopyIsItsOwn(t *testing.T) {
	g := liveGraph{ids: map[string]int32{}, loaded: true}
	now := int64(1_800_000_000)
	g.put(&Audit{Auditor: "did:key:zb", Subject: "did:key:zc", Envelope: "1", Score: 0.9, Time: now - 50}, true, 1)
	computed, dids := g.graph(now, map[string]float64{"did:key:zb": 2})
	snap := newSnapshot(time.Unix(now, 0).UTC(), computed, dids, Params{})
	want := snap.encode()
	saved := snap.saved()
	snap.follow(g.put(&Audit{Auditor: "did:key:zb", Subject: "did:key:zc", Envelope: "2", Score: 0.1, Time: now - 10}, false, 0))
	snap.follow(g.put(&Audit{Auditor: "did:key:zb", Subject: "did:key:za", Envelope: "3", Score: 0.2, Time: now - 10}, false, 0))
	if !bytes.Equal(saved.encode(), want) {
		t.Fatal("the saved copy changed with the audits its snapshot followed")
	}
	if bytes.Equal(snap.encode(), want) {
		t.Fatal("the snapshot did not follow the audits")
	}
}
