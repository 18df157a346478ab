package contracts_test

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/google/go-cmp/cmp"

	"github.com/surety-ioa/surety/contracts"
)

// TestEncodePlanIsWhatPlanOfReturns: the setBudget optParams decode as planOf's return value,
// field for field, and take the eight words abi.encode(Plan) takes.
func TestEncodePlanIsWhatPlanOfReturns(t *testing.T) {
	p := contracts.ISuretyHookPlan{Arbiter: common.HexToAddress("0xa1"), ReviewWindow: 3600, ArbiterTime: 7200, MaxEntries: 3,
		MaxWinners: 2, MinStake: big.NewInt(1e17), Worker: common.HexToAddress("0xb2"), PrevPart: big.NewInt(7)}
	enc, err := contracts.EncodePlan(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(enc) != 8*32 {
		t.Fatalf("%d bytes, want 256", len(enc))
	}
	back, err := contracts.NewSuretyHook().UnpackPlanOf(enc)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, back, cmp.Comparer(func(a, b *big.Int) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}
