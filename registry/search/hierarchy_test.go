package search

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestCapabilityAncestorsBounded: empty segments make no ancestors, a tag has at most
// maxCapLevels ancestors, a card at most maxCardCaps keys.
func TestCapabilityAncestorsBounded(t *testing.T) {
	x := New()
	var tags []string
	for i := range 32 {
		tags = append(tags, fmt.Sprintf("r%02d", i)+strings.Repeat("/", 59))
	}
	x.Put(1, Doc{DID: "did:deep", Name: "deep", Capabilities: tags})
	if n := x.capKeys(); n > maxCardCaps {
		t.Errorf("a card of 32 deep tags added %d capability keys, want at most %d", n, maxCardCaps)
	}
	x.Delete(1)
	x.Put(2, Doc{DID: "did:x", Name: "x", Capabilities: []string{"a//b/", "c/d/e/f/g/h/i"}})
	want := []string{"a", "a//b", "a//b/", "c", "c/d", "c/d/e", "c/d/e/f", "c/d/e/f/g/h/i"}
	var got []string
	for k := range x.caps {
		got = append(got, k)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("capability keys %q, want %q", got, want)
	}
	// Every tag the card has is a key, even past the card's bound.
	tags = nil
	for i := range 32 {
		tags = append(tags, fmt.Sprintf("t%02d/a/b/c/d", i))
	}
	x.Put(3, Doc{DID: "did:y", Name: "y", Capabilities: tags})
	for _, tag := range tags {
		if len(x.caps[tag]) == 0 {
			t.Errorf("tag %s not indexed", tag)
		}
	}
	if n := len(x.docs[x.byID[3]].caps); n > maxCardCaps {
		t.Errorf("card holds %d capability keys, want at most %d", n, maxCardCaps)
	}
}
