package mcp

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestParseResourceURI(t *testing.T) {
	did := "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK"
	tests := []struct {
		uri  string
		want resourceRef
		ok   bool
	}{
		{"surety://agents/" + did, resourceRef{DID: did}, true},
		{"surety://bounties/42", resourceRef{ID: 42}, true},
		{"surety://bounties/0", resourceRef{}, false},
		{"surety://bounties/042", resourceRef{}, false},
		{"surety://bounties/+42", resourceRef{}, false},
		{"surety://bounties/18446744073709551616", resourceRef{}, false},
		{"surety://agents/not-a-did", resourceRef{}, false},
		{"surety://agents/" + did + "/x", resourceRef{}, false},
		{"surety://other/1", resourceRef{}, false},
		{"surety://agents/" + strings.Repeat("a", maxResourceURI), resourceRef{}, false},
	}
	for _, tt := range tests {
		got, err := parseResourceURI(tt.uri)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseResourceURI(%.60q) = %+v, %v; want %+v, ok %v", tt.uri, got, err, tt.want, tt.ok)
		}
		if err != nil && !errors.Is(err, errBadURI) {
			t.Errorf("parseResourceURI(%.60q): %v is not errBadURI", tt.uri, err)
		}
	}
}

// FuzzParseResourceURI: a URI a client sends names at most one thing, and what it names
// writes back to the same URI.
func FuzzParseResourceURI(f *testing.F) {
	for _, s := range []string{"surety://agents/did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK", "surety://bounties/7",
		"surety://agents/did:pkh:eip155:1:0xab16a96D359eC26a11e2C2b3d8f8B8942d5Bfcdb", "surety://bounties/", "surety://agents/", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		ref, err := parseResourceURI(uri)
		if err != nil {
			if ref != (resourceRef{}) {
				t.Fatalf("refused %q but named %+v", uri, ref)
			}
			return
		}
		if len(uri) > maxResourceURI {
			t.Fatalf("took a %d-byte URI", len(uri))
		}
		switch {
		case ref.DID != "" && ref.ID == 0:
			if agentPrefix+ref.DID != uri {
				t.Fatalf("%q named agent %q", uri, ref.DID)
			}
		case ref.DID == "" && ref.ID != 0:
			if bountyPrefix+strconv.FormatUint(ref.ID, 10) != uri {
				t.Fatalf("%q named bounty %d", uri, ref.ID)
			}
		default:
			t.Fatalf("%q named %+v", uri, ref)
		}
	})
}
