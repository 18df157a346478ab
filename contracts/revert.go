package contracts

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
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

// CustomError is a Solidity custom error a Surety contract reverted with, decoded.
type CustomError struct {
	// Name is the error's name, e.g. "WrongStatus".
	Name string
	// Contract names the contract that declares the error ("BountyEscrow", "StakeRegistry",
	// "RootAnchor", "SuretyHook", "SuretyPool"). An error two contracts declare alike (same name and arguments, so the
	// same selector) is attributed to the first in that order.
	Contract string
	// Value is the error as abigen generated it, e.g. *BountyEscrowWrongStatus: callers
	// switch on its type (or use [Revert]) and read its named fields.
	Value any
	// Args are the decoded arguments in declaration order, for rendering.
	Args []any
	// Inputs names the arguments.
	Inputs []string
	// Cause is the transport error the revert arrived in.
	Cause error
}

// Error renders the error as Solidity would print it: WrongStatus(id=7, status=4).
func (e *CustomError) Error() string {
	parts := make([]string, len(e.Args))
	for i, a := range e.Args {
		parts[i] = fmt.Sprintf("%s=%v", e.Inputs[i], a)
	}
	return fmt.Sprintf("%s(%s)", e.Name, strings.Join(parts, ", "))
}

// Unwrap returns the transport error.
func (e *CustomError) Unwrap() error { return e.Cause }

// declaredError is a custom error, the contract that declares it and that contract's
// generated decoder.
type declaredError struct {
	abi.Error
	contract string
	unpack   func(raw []byte) (any, error)
}

// errorABIs holds the custom errors of every Surety contract, by selector.
var errorABIs = sync.OnceValues(func() (map[[4]byte]declaredError, error) {
	out := map[[4]byte]declaredError{}
	for _, c := range []struct {
		name   string
		meta   *bind.MetaData
		unpack func(raw []byte) (any, error)
	}{
		{"BountyEscrow", &BountyEscrowMetaData, NewBountyEscrow().UnpackError},
		{"StakeRegistry", &StakeRegistryMetaData, NewStakeRegistry().UnpackError},
		{"RootAnchor", &RootAnchorMetaData, NewRootAnchor().UnpackError},
		{"SuretyHook", &SuretyHookMetaData, NewSuretyHook().UnpackError},
		{"SuretyPool", &SuretyPoolMetaData, NewSuretyPool().UnpackError},
		{"IdentityRegistry", &IdentityRegistryMetaData, NewIdentityRegistry().UnpackError},
		{"ReputationRegistry", &ReputationRegistryMetaData, NewReputationRegistry().UnpackError},
		{"ValidationRegistry", &ValidationRegistryMetaData, NewValidationRegistry().UnpackError},
	} {
		parsed, err := c.meta.ParseABI()
		if err != nil {
			return nil, err
		}
		for _, e := range parsed.Errors {
			var id [4]byte
			copy(id[:], e.ID[:4])
			if _, seen := out[id]; !seen {
				out[id] = declaredError{Error: e, contract: c.name, unpack: c.unpack}
			}
		}
	}
	return out, nil
})

// DecodeRevert turns err into a *CustomError when it carries the revert data of one of the
// Surety contracts' custom errors; otherwise it returns nil.
func DecodeRevert(err error) *CustomError {
	data, ok := RevertData(err)
	if !ok {
		return nil
	}
	errs, perr := errorABIs()
	if perr != nil {
		return nil
	}
	var id [4]byte
	copy(id[:], data[:4])
	e, known := errs[id]
	if !known {
		return nil
	}
	args, uerr := e.Inputs.Unpack(data[4:])
	if uerr != nil {
		return nil
	}
	value, uerr := e.unpack(data)
	if uerr != nil || value == nil {
		return nil
	}
	inputs := make([]string, len(e.Inputs))
	for i, in := range e.Inputs {
		inputs[i] = in.Name
	}
	return &CustomError{Name: e.Name, Contract: e.contract, Value: value, Args: args, Inputs: inputs, Cause: err}
}

// Revert reports whether err is, or carries the revert data of, the custom error T (one of
// the generated error types, e.g. RootAnchorStaleTreeSize), and returns it decoded.
func Revert[T any](err error) (*T, bool) {
	var ce *CustomError
	if !errors.As(err, &ce) {
		if ce = DecodeRevert(err); ce == nil {
			return nil, false
		}
	}
	v, ok := ce.Value.(*T)
	return v, ok
}
