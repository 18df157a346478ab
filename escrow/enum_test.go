package escrow

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/surety-ioa/surety/internal/tools"
)

// solidityEnum reads the members of enum name in a Solidity file, in order.
func solidityEnum(t *testing.T, file, name string) []string {
	t.Helper()
	root, err := tools.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)enum\s+` + name + `\s*\{(.*?)\}`).FindSubmatch(src)
	if m == nil {
		t.Fatalf("no enum %s in %s", name, file)
	}
	body := regexp.MustCompile(`//[^\n]*`).ReplaceAllString(string(m[1]), "")
	var members []string
	for _, f := range strings.Split(body, ",") {
		if f = strings.TrimSpace(f); f != "" {
			members = append(members, f)
		}
	}
	return members
}

// TestStatusNamesFollowTheSolidityEnums: the Go names of a bounty's and a stake record's
// status are read by index from the chain (a uint8), so they must list the Solidity enum's
// members in its order: a member added or moved there must move here too.
func TestStatusNamesFollowTheSolidityEnums(t *testing.T) {
	for _, tt := range []struct {
		file, enum string
		goNames    []string
	}{
		{"contracts/src/IBountyEscrow.sol", "Status", func() (out []string) {
			for _, s := range statusNames {
				out = append(out, string(s))
			}
			return out
		}()},
		{"contracts/src/IStakeRegistry.sol", "Status", func() (out []string) {
			for _, s := range stakeStatuses {
				out = append(out, string(s))
			}
			return out
		}()},
	} {
		sol := solidityEnum(t, tt.file, tt.enum)
		if len(sol) != len(tt.goNames) {
			t.Errorf("%s: Solidity has %v, Go %v", tt.file, sol, tt.goNames)
			continue
		}
		for i := range sol {
			if !strings.EqualFold(sol[i], tt.goNames[i]) {
				t.Errorf("%s: member %d is %s in Solidity, %s in Go", tt.file, i, sol[i], tt.goNames[i])
			}
		}
	}
}
