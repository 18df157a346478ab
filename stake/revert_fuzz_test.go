package stake

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/txn"
)

// FuzzDecodeRevert feeds the stake service's revert decoding any data behind any of the
// registry's error selectors: it never panics, and what it decodes becomes a stake error or
// txn's ErrReverted, with a message.
func FuzzDecodeRevert(f *testing.F) {
	parsed, err := contracts.StakeRegistryMetaData.ParseABI()
	if err != nil {
		f.Fatal(err)
	}
	var errs []abi.Error
	for _, name := range slices.Sorted(maps.Keys(parsed.Errors)) {
		errs = append(errs, parsed.Errors[name])
	}
	for i, e := range errs {
		f.Add(uint16(i), make([]byte, 32*len(e.Inputs)))
	}
	f.Fuzz(func(t *testing.T, which uint16, args []byte) {
		e := errs[int(which)%len(errs)]
		in := testutil.RevertError(append(append([]byte{}, e.ID[:4]...), args...))
		out := decodeRevert(in)
		if contracts.DecodeRevert(in) == nil {
			if _, same := out.(testutil.RevertError); !same {
				t.Fatalf("undecodable data became %v", out)
			}
			return
		}
		var se *Error
		switch {
		case errors.As(out, &se) && se.Err != nil && se.Msg != "":
		case errors.Is(out, txn.ErrReverted) && out.Error() != "":
		default:
			t.Fatalf("%s decoded to %T %v", e.Name, out, out)
		}
	})
}

// TestRevertsKeepTheirSentinels: registry errors that share a selector with the escrow's
// (TransferFailed, InvalidAmount) still decode to the stake service's own sentinels.
func TestRevertsKeepTheirSentinels(t *testing.T) {
	parsed, err := contracts.StakeRegistryMetaData.ParseABI()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]error{"TransferFailed": ErrTransferFailed, "InvalidAmount": ErrInvalid,
		"StillBonded": ErrStillBonded, "StakeLocked": ErrStakeLocked, "InsufficientStake": ErrStakeTooLow} {
		e := parsed.Errors[name]
		if got := decodeRevert(testutil.ZeroRevert(e)); !errors.Is(got, want) {
			t.Errorf("%s decoded to %v, want %v", name, got, want)
		}
	}
}
