package registry

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzAgentsProtocol feeds peer bytes to both sides of AgentsProtocol: neither may panic, a
// request taken is always a valid capability with a limit in range, and an answer taken never
// carries more than maxServed cards.
func FuzzAgentsProtocol(f *testing.F) {
	f.Add([]byte(`{"capability":"audit","limit":5}`))
	f.Add([]byte(`{"capability":"Audit"}`))
	f.Add([]byte(`{"capability":"` + strings.Repeat("a", 65) + `","limit":-1}`))
	f.Add([]byte(`{"cards":["a.b.c"]}`))
	f.Add([]byte(`{"cards":null}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if req, err := readRequest(bytes.NewReader(data)); err == nil {
			if !validCapability(req.Capability) || req.Limit < 1 || req.Limit > maxServed {
				t.Fatalf("request taken: %+v", req)
			}
		}
		if cards, err := readAnswer(bytes.NewReader(data)); err == nil && len(cards) > maxServed {
			t.Fatalf("answer with %d cards taken", len(cards))
		}
	})
}
