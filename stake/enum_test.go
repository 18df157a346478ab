package stake

import (
	"testing"

	"github.com/surety-ioa/surety/internal/testutil"
)

// TestStatusNamesFollowTheSolidityEnum: the Go names of a stake record's status are read by
// index from the chain (a uint8), so they must list the Solidity enum's members in its order.
func TestStatusNamesFollowTheSolidityEnum(t *testing.T) {
	var names []string
	for _, s := range chainStatuses {
		names = append(names, string(s))
	}
	testutil.SameNames(t, "contracts/src/IStakeRegistry.sol", "Status", names)
}
