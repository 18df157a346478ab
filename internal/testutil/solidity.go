package testutil

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/surety-ioa/surety/internal/tools"
)

// SolidityEnum reads the members of enum name in a Solidity file (relative to the
// repository root), in order: Go code that names a contract's enum by index checks itself
// against it.
func SolidityEnum(t testing.TB, file, name string) []string {
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

// SameNames reports, as test errors, where the Go names of a Solidity enum's members differ
// from the enum (case aside), in order.
func SameNames(t testing.TB, file, enum string, goNames []string) {
	t.Helper()
	sol := SolidityEnum(t, file, enum)
	if len(sol) != len(goNames) {
		t.Errorf("%s: Solidity has %v, Go %v", file, sol, goNames)
		return
	}
	for i := range sol {
		if !strings.EqualFold(sol[i], goNames[i]) {
			t.Errorf("%s: member %d is %s in Solidity, %s in Go", file, i, sol[i], goNames[i])
		}
	}
}

// ZeroRevert is the revert data of custom error e with every (static) argument zero.
func ZeroRevert(e abi.Error) RevertError {
	return append(append(RevertError{}, e.ID[:4]...), make([]byte, 32*len(e.Inputs))...)
}

// RevertError is a JSON-RPC error carrying revert data, as a node's RPC layer returns it for
// a call or gas estimate the contract refused.
type RevertError []byte

// Error is what the node says.
func (e RevertError) Error() string { return "execution reverted" }

// ErrorCode is JSON-RPC's code for a revert.
func (e RevertError) ErrorCode() int { return 3 }

// ErrorData is the revert data, hex as the node sends it.
func (e RevertError) ErrorData() any { return hexutil.Encode(e) }
