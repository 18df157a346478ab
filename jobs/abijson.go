package jobs

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// Args are an event's arguments by their Solidity names, as JSON shows them: uint256 and
// int256 (any integer wider than 64 bits) as decimal strings, narrower integers as numbers,
// addresses checksummed, bytes32 and bytes as 0x hex, tuples as objects and arrays as arrays.
type Args map[string]any

// unpackLog decodes log as event ev of a contract's ABI, indexed arguments from its topics
// and the rest from its data, into Args.
func unpackLog(ev abi.Event, l *types.Log) (Args, error) {
	out := Args{}
	data := map[string]any{}
	if len(l.Data) > 0 {
		if err := ev.Inputs.NonIndexed().UnpackIntoMap(data, l.Data); err != nil {
			return nil, fmt.Errorf("%s: %w", ev.Name, err)
		}
	}
	var indexed abi.Arguments
	for _, in := range ev.Inputs {
		if in.Indexed {
			indexed = append(indexed, in)
		}
	}
	if len(l.Topics) != len(indexed)+1 {
		return nil, fmt.Errorf("%s: %d topics, want %d", ev.Name, len(l.Topics), len(indexed)+1)
	}
	if err := abi.ParseTopicsIntoMap(data, indexed, l.Topics[1:]); err != nil {
		return nil, fmt.Errorf("%s: %w", ev.Name, err)
	}
	for _, in := range ev.Inputs {
		out[in.Name] = jsonValue(reflect.ValueOf(data[in.Name]))
	}
	return out, nil
}

// jsonValueOf is jsonValue of a Go value.
func jsonValueOf(v any) any { return jsonValue(reflect.ValueOf(v)) }

var (
	bigType     = reflect.TypeFor[*big.Int]()
	addressType = reflect.TypeFor[common.Address]()
	hashType    = reflect.TypeFor[common.Hash]()
)

// jsonValue turns a value the ABI decoder made into what Args holds.
func jsonValue(v reflect.Value) any {
	if !v.IsValid() {
		return nil
	}
	switch v.Type() {
	case bigType:
		if v.IsNil() {
			return "0"
		}
		return v.Interface().(*big.Int).String()
	case addressType:
		return v.Interface().(common.Address).Hex()
	case hashType:
		return v.Interface().(common.Hash).Hex()
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return jsonValue(v.Elem())
	case reflect.Bool:
		return v.Bool()
	case reflect.String:
		return v.String()
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return v.Uint()
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int()
	case reflect.Array, reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			b := make([]byte, v.Len())
			reflect.Copy(reflect.ValueOf(b), v)
			return "0x" + hex.EncodeToString(b)
		}
		list := make([]any, v.Len())
		for i := range list {
			list[i] = jsonValue(v.Index(i))
		}
		return list
	case reflect.Struct:
		m := map[string]any{}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" {
				name = strings.ToLower(f.Name[:1]) + f.Name[1:]
			}
			m[name] = jsonValue(v.Field(i))
		}
		return m
	}
	return fmt.Sprint(v.Interface())
}

// Str is the argument name as a string ("" when absent or not a string).
func (a Args) Str(name string) string {
	s, _ := a[name].(string)
	return s
}

// Address is the argument name as an address (zero when absent).
func (a Args) Address(name string) common.Address {
	s := a.Str(name)
	if !common.IsHexAddress(s) {
		return common.Address{}
	}
	return common.HexToAddress(s)
}

// Uint is the argument name as an integer: a number, or a decimal string that fits.
func (a Args) Uint(name string) (uint64, bool) {
	switch v := a[name].(type) {
	case uint64:
		return v, true
	case json.Number: // after a JSON round trip
		n, err := strconv.ParseUint(string(v), 10, 64)
		return n, err == nil
	case string:
		b, ok := new(big.Int).SetString(v, 10)
		if ok && b.IsUint64() {
			return b.Uint64(), true
		}
	}
	return 0, false
}

// Amount is the argument name as a decimal string ("0" when absent).
func (a Args) Amount(name string) string {
	switch v := a[name].(type) {
	case string:
		if _, ok := new(big.Int).SetString(v, 10); ok {
			return v
		}
	case uint64:
		return fmt.Sprint(v)
	case json.Number:
		if _, ok := new(big.Int).SetString(string(v), 10); ok {
			return string(v)
		}
	}
	return "0"
}
