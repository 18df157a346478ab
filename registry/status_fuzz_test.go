package registry

import (
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/identity"
)

// FuzzParseNotice: a status notice from a peer never panics the parser, and one it takes
// names a parseable DID and a wallet.
func FuzzParseNotice(f *testing.F) {
	f.Add([]byte(`{"did":"did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp","wallet":"0x0000000000000000000000000000000000000001"}`))
	f.Add([]byte(`{"did":"did:key:z6Mk","wallet":"0x01"}`))
	f.Add([]byte(`{"did":"x","wallet":"0x0000000000000000000000000000000000000001","extra":1}`))
	f.Add([]byte(`{} {}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := parseNotice(data)
		if err != nil {
			return
		}
		if _, err := identity.ParseDID(n.DID); err != nil || n.Wallet == (common.Address{}) || len(data) > maxNotice {
			t.Fatalf("notice taken: %+v from %q", n, data)
		}
	})
}
