package search

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

// TestChurnLeavesNoTerms: putting and deleting 10,000 cards of unique terms and unique
// capabilities (what free identities can churn) leaves the dictionary, the term table, the
// prefix table and the capability keys and their names as they were, and the remaining
// cards' scores the same bits.
func TestChurnLeavesNoTerms(t *testing.T) {
	x := build(inOrder())
	dict, terms, prefixes := x.sizes()
	caps := x.capKeys()
	before := map[string][]Hit{}
	for _, q := range determinismQueries {
		before[q] = search(t, x, q, "")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	word := func() string {
		b := make([]byte, 8)
		for i := range b {
			b[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[rng.IntN(36)]
		}
		return string(b)
	}
	for i := range 10_000 {
		id := int64(1000 + i)
		// Some staked, so that the collection statistics move during the churn too.
		x.Put(id, Doc{DID: fmt.Sprintf("did:churn:%d", i), Name: word(), Description: word() + " " + word() + " co" + word() + " translation",
			Capabilities: []string{"churn", "churn/" + word()}, Staked: i%4 == 0, StakeWeight: 1})
		if i%2 == 1 {
			x.Delete(id - 1)
			x.Delete(id)
		}
	}
	d, tm, p := x.sizes()
	if d != dict || tm != terms || p != prefixes {
		t.Errorf("after churn: dict %d, terms %d, prefix entries %d; want %d, %d, %d", d, tm, p, dict, terms, prefixes)
	}
	if c := x.capKeys(); c != caps {
		t.Errorf("after churn: %d capability keys, want %d", c, caps)
	}
	if msg := x.postingsOrder(); msg != "" { // one capability name for each key, no more
		t.Errorf("after churn: %s", msg)
	}
	for _, q := range determinismQueries {
		if diff := cmp.Diff(before[q], search(t, x, q, "")); diff != "" {
			t.Errorf("%q after churn (-before +after):\n%s", q, diff)
		}
	}
	// An emptied index holds no terms at all.
	for i := range corpus {
		x.Delete(int64(i + 1))
	}
	if d, tm, p := x.sizes(); d != 0 || tm != 0 || p != 0 || len(x.terms) != 0 {
		t.Errorf("empty index: dict %d, terms %d (table %d), prefix entries %d", d, tm, len(x.terms), p)
	}
}

// TestTermsDoNotPinFieldText: a term kept in the dictionary is its own string, not a slice
// of the folded field it came from (which would keep the whole field alive).
func TestTermsDoNotPinFieldText(t *testing.T) {
	x := New()
	x.Put(1, Doc{DID: "did:x", Description: "x7q3 zz9"}) // Stem keeps both as they are
	a, b := x.terms[x.dict["x7q3"]].text, x.terms[x.dict["zz9"]].text
	if uintptr(unsafe.Pointer(unsafe.StringData(b)))-uintptr(unsafe.Pointer(unsafe.StringData(a))) == 5 {
		t.Error("the terms are slices of one folded text")
	}
	for k := range x.dict {
		if k == "zz9" && unsafe.StringData(k) != unsafe.StringData(b) {
			t.Error("the dictionary key and the term's text are two copies")
		}
	}
}
