package identity

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestFullReplayPoolServesTheSendersInIt: free keys flooding the pool (each within its
// per-sender budget) lock out only senders the pool has not seen; a sender already in it
// keeps working, within a bound on the pool as a whole. At 409c49a the full pool refused
// every envelope of every sender for the replay window: 256 free keys switched a node off.
func TestFullReplayPoolServesTheSendersInIt(t *testing.T) {
	const max, perSender = 10, 4
	c := newReplayCache(max, perSender, time.Minute)
	if err := c.remember("honest", "h0", testNow); err != nil {
		t.Fatal(err)
	}
	// The flood: fresh keys, each up to its budget, until the pool refuses a fresh one.
	flooded := 0
	for k := 0; ; k++ {
		key := fmt.Sprintf("free-key-%d", k)
		err := c.remember(key, "0", testNow)
		if errors.Is(err, ErrReplayCacheFull) {
			break
		}
		if err != nil || k > max {
			t.Fatalf("flood key %d: %v", k, err)
		}
		flooded++
		for n := 1; n < perSender; n++ {
			if err := c.remember(key, fmt.Sprint(n), testNow); err != nil {
				break
			}
			flooded++
		}
	}
	if err := c.remember("honest", "h1", testNow); err != nil {
		t.Errorf("a sender already in the pool, once the flood (%d nonces) filled it: %v, want accepted", flooded, err)
	}
	if err := c.remember("newcomer", "0", testNow); !errors.Is(err, ErrReplayCacheFull) {
		t.Errorf("a sender the full pool has not seen: %v, want ErrReplayCacheFull", err)
	}
	// The pool stays bounded whoever asks: never more than max nonces.
	for n := range 2 * max {
		_ = c.remember("honest", fmt.Sprint("more-", n), testNow)
	}
	if got := len(c.cur) + len(c.old); got > max {
		t.Errorf("the pool holds %d nonces, more than its bound %d", got, max)
	}
}

// TestLoadRefusalsAreNotMalformed: a refusal that says the node is loaded (a sender's budget
// spent, the pool full) or that its index moved (a key rotated since) is no fault of the
// envelope, so gossip ignores it rather than penalize the peer that forwarded it. At 409c49a
// Malformed said true of all three, and honest forwarders lost gossip score for load.
func TestLoadRefusalsAreNotMalformed(t *testing.T) {
	for _, tt := range []struct {
		reason    error
		malformed bool
	}{
		{ErrReplayBudget, false},
		{ErrReplayCacheFull, false},
		{ErrRotated, false},
		{ErrRevoked, false},
		{ErrReplayed, false},
		{ErrBadSignature, true},
		{ErrMalformed, true},
		{ErrKidNotSender, true},
	} {
		t.Run(tt.reason.Error(), func(t *testing.T) {
			err := &VerifyError{Reason: tt.reason}
			if got := Malformed(err); got != tt.malformed {
				t.Errorf("Malformed(%v) = %v, want %v", err, got, tt.malformed)
			}
		})
	}
}

// TestIngressBudgetComesBeforeTheSignature: one source (a peer, a client address) has at
// most IngressBurst envelopes checked at once, then IngressRate a second; past it even junk
// is refused as over budget, so nothing was parsed or verified for it. Other sources, and
// the node's own calls (no source), are not held back, and anti-entropy's archived checks
// are not counted. Gossip ignores the refusal.
func TestIngressBudgetComesBeforeTheSignature(t *testing.T) {
	now := testNow
	v := NewVerifier(VerifierConfig{Started: testNow.Add(-time.Hour), Now: func() time.Time { return now }, IngressRate: 0.5, IngressBurst: 3})
	k := testKey(t, Ed25519, 21)
	sign := func() []byte {
		s, err := k.SignCompact(payloadFor(t, k, nil))
		if err != nil {
			t.Fatal(err)
		}
		return []byte(s)
	}
	bg := context.Background()
	peerA := WithIngress(bg, "peer A")
	for i := range 3 {
		check := v.Verify
		if i == 1 {
			check = v.Check // a check costs the same signature
		}
		if _, err := check(peerA, sign()); err != nil {
			t.Fatalf("envelope %d from A: %v", i, err)
		}
	}
	_, err := v.Verify(peerA, []byte("not a jws"))
	if !errors.Is(err, ErrIngressBudget) {
		t.Fatalf("junk from A past its budget: %v, want ErrIngressBudget (before any parsing)", err)
	}
	if Malformed(err) {
		t.Errorf("Malformed(%v) = true: gossip would penalize the forwarder for load", err)
	}
	if _, err := v.CheckArchived(peerA, sign()); err != nil {
		t.Errorf("an archived envelope (anti-entropy) from A: %v, want it checked regardless", err)
	}
	if _, err := v.Verify(WithIngress(bg, "addr 192.0.2.7"), sign()); err != nil {
		t.Errorf("another source meanwhile: %v", err)
	}
	if _, err := v.Verify(bg, sign()); err != nil {
		t.Errorf("the node's own call (no source): %v", err)
	}
	now = now.Add(2 * time.Second) // one token back at 0.5 a second
	if _, err := v.Verify(peerA, sign()); err != nil {
		t.Errorf("A once a token is back: %v", err)
	}
	if _, err := v.Verify(peerA, sign()); !errors.Is(err, ErrIngressBudget) {
		t.Errorf("A right after: %v, want ErrIngressBudget", err)
	}
}

// TestIngressBudgetsAreBounded: the buckets are at most max; a full one is dropped first (a
// new one would be the same), then the longest idle.
func TestIngressBudgetsAreBounded(t *testing.T) {
	g := newIngressBudget(0.25, 2, 3)
	take := func(src string, at time.Duration) bool { return g.take(src, testNow.Add(at)) }
	take("refilled", -10*time.Second)
	take("idle", 0)
	take("busy", time.Second)
	take("busy", time.Second)
	// At 2s "refilled" is back to its burst of 2, "idle" has 1.5 tokens, "busy" 0.25.
	take("new-1", 2*time.Second)
	if _, ok := g.buckets["refilled"]; ok || len(g.buckets) != 3 {
		t.Errorf("after a fourth source: %v, want the refilled bucket dropped and 3 left", keys(g.buckets))
	}
	take("new-2", 2*time.Second)
	if _, ok := g.buckets["idle"]; ok || len(g.buckets) != 3 {
		t.Errorf("after a fifth source: %v, want the idlest bucket dropped and 3 left", keys(g.buckets))
	}
	for i := range 100 {
		take(fmt.Sprint("flood-", i), 3*time.Second)
	}
	if len(g.buckets) > 3 {
		t.Errorf("%d buckets, more than the bound 3", len(g.buckets))
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
