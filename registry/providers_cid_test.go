package registry

import "testing"

// TestCapabilityCID pins the provider-CID rule docs/PROTOCOL.md gives another implementation:
// CIDv1, raw codec, sha2-256 of CapabilityPrefix + the capability.
func TestCapabilityCID(t *testing.T) {
	const want = "bafkreihspuixjvopvw2lfnsnzz5yb7tdll6apyrg36n5ds3ps6uh4femqy" // docs/PROTOCOL.md's example
	if got := capabilityCID("translate").String(); got != want {
		t.Errorf("capabilityCID(translate) = %s, want %s", got, want)
	}
	if capabilityCID("translate") == capabilityCID("summarize") {
		t.Error("two capabilities share a CID")
	}
}
