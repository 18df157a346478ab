package escrow

import (
	"testing"

	"github.com/surety-ioa/surety/internal/testutil"
)

// TestStatusNamesFollowTheSolidityEnum: the Go names of a bounty's status are read by index
// from the chain (a uint8), so they must list the Solidity enum's members in its order: a
// member added or moved there must move here too.
func TestStatusNamesFollowTheSolidityEnum(t *testing.T) {
	var names []string
	for _, s := range statusNames {
		names = append(names, string(s))
	}
	testutil.SameNames(t, "contracts/src/IBountyEscrow.sol", "Status", names)
}
