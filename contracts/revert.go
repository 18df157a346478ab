package contracts

import (
	"errors"
	"strings"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"
)

// RevertData extracts the ABI-encoded revert data (a custom error's selector and arguments)
// from an error returned by a call, a gas estimate or a transaction, as the node's JSON-RPC
// layer reports it. It returns false when err carries no revert data.
func RevertData(err error) ([]byte, bool) {
	var de rpc.DataError
	if !errors.As(err, &de) {
		return nil, false
	}
	s, ok := de.ErrorData().(string)
	if !ok || !strings.HasPrefix(s, "0x") {
		return nil, false
	}
	b, decErr := hexutil.Decode(s)
	if decErr != nil || len(b) < 4 {
		return nil, false
	}
	return b, true
}
