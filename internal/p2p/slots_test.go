package p2p

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"

	"github.com/surety-ioa/surety/internal/testutil"
)

// bigSet is a memSet of n items of size bytes each, and the ids of them all.
func bigSet(n, size int) (*memSet, []ID) {
	m := &memSet{items: map[ID][]byte{}}
	var ids []ID
	for i := range n {
		it := []byte(fmt.Sprintf("%d-%s", i, strings.Repeat("x", size)))
		id := sha256.Sum256(it)
		m.items[id] = it
		ids = append(ids, id)
	}
	return m, ids
}

// stallOn opens a sync stream from n to target asking for ids, and never reads the answer:
// the Sybil reader that holds a serving slot. It reports whether target began to answer
// (false: the stream was refused).
func stallOn(t *testing.T, n *Node, target *Node, ids []ID) (served bool, st network.Stream) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := n.Host.NewStream(ctx, target.Host.ID(), SyncProtocol)
	if err != nil {
		return false, nil
	}
	body, _ := json.Marshal(getRequest{IDs: ids})
	line, _ := json.Marshal(syncRequest{Kind: "things.get", Body: body})
	if _, err := st.Write(append(line, '\n')); err != nil {
		st.Reset()
		return false, nil
	}
	_ = st.CloseWrite()
	// One byte shows the answer is on its way; the rest (megabytes) is never read.
	_ = st.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := st.Read(make([]byte, 1)); err != nil {
		st.Reset()
		return false, nil
	}
	return true, st
}

// TestSyncStalledReadersFreeTheirSlots: as many Sybil peers as a node has serving slots ask
// it for megabytes and never read; within the write stall bound the slots are free again, so
// an honest peer's request is answered, and each staller is penalized: one that keeps
// stalling is graylisted and served no more. At 409c49a the Sybils held every slot for the
// whole request timeout (20 s), and an honest confirmer was refused all that time.
func TestSyncStalledReadersFreeTheirSlots(t *testing.T) {
	if testing.Short() {
		t.Skip("starts libp2p hosts")
	}
	set, ids := bigSet(24, 128<<10) // a 4 MB answer
	na, _, _, sb := syncPair(t, set, newMemSet())
	var sybils []*Node
	for range maxServing {
		s := startNode(t, na.Info())
		served, st := stallOn(t, s, na, ids)
		if !served {
			t.Fatal("a Sybil's first request was not served")
		}
		defer st.Reset()
		sybils = append(sybils, s)
	}
	// While the Sybils hold every slot, and after: the honest peer's request is answered
	// within the stall bound.
	start := time.Now()
	var err error
	for time.Since(start) < 3*syncWriteStall {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		var d digests
		err = Asker{s: sb, peer: na.Host.ID()}.Ask(ctx, "things.digests", nil, &d)
		cancel()
		if err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("an honest peer's request while %d Sybils stall their answers, for %s: %v", len(sybils), time.Since(start).Round(time.Millisecond), err)
	}
	testutil.Eventually(t, "A penalizes every staller", 3*syncWriteStall, func() bool {
		for _, s := range sybils {
			if na.Penalty(s.Host.ID()) < StallPenalty/2 { // it decays from the moment it is given
				return false
			}
		}
		return true
	})
	// One that keeps stalling is graylisted within a few stalls, and then refused.
	repeat := sybils[0]
	for i := 1; ; i++ {
		if na.Penalty(repeat.Host.ID()) >= graylist {
			break
		}
		if i > 5 {
			t.Fatalf("a peer that stalled %d times is not graylisted (penalty %.0f)", i, na.Penalty(repeat.Host.ID()))
		}
		served, st := stallOn(t, repeat, na, ids)
		if !served {
			t.Fatalf("stall %d: refused before its penalty (%.0f) reached the graylist", i, na.Penalty(repeat.Host.ID()))
		}
		defer st.Reset()
		before := na.Penalty(repeat.Host.ID())
		testutil.Eventually(t, "A penalizes the stall", 3*syncWriteStall, func() bool { return na.Penalty(repeat.Host.ID()) > before })
	}
	if served, _ := stallOn(t, repeat, na, ids); served {
		t.Error("a graylisted staller was served again")
	}
}

// TestSyncOneSlotPerPeer: a peer has one request served at a time, so one peer id cannot take
// every serving slot by itself: while its first request stalls, its second is refused, and
// another peer's is served.
func TestSyncOneSlotPerPeer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts libp2p hosts")
	}
	set, ids := bigSet(24, 128<<10) // a 4 MB answer
	na, _, _, _ := syncPair(t, set, newMemSet())
	greedy := startNode(t, na.Info())
	served, st := stallOn(t, greedy, na, ids)
	if !served {
		t.Fatal("the peer's first request was not served")
	}
	defer st.Reset()
	if served, st2 := stallOn(t, greedy, na, ids); served {
		st2.Reset()
		t.Error("a second request of a peer whose first is still being served was served too")
	}
	other := startNode(t, na.Info())
	served, st3 := stallOn(t, other, na, ids)
	if !served {
		t.Fatal("another peer's request was refused")
	}
	st3.Reset()
}
