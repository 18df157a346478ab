package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/testutil"
)

// jobErrors are the custom errors of JobEscrow, SuretyHook and the stake registry behind the
// hook's stake gate.
func jobErrors(t testing.TB) []abi.Error {
	var out []abi.Error
	for _, parse := range []func() (*abi.ABI, error){contracts.JobEscrowMetaData.ParseABI, contracts.SuretyHookMetaData.ParseABI, contracts.StakeRegistryMetaData.ParseABI} {
		parsed, err := parse()
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range slices.Sorted(maps.Keys(parsed.Errors)) {
			out = append(out, parsed.Errors[name])
		}
	}
	return out
}

// FuzzDecodeRevert feeds the job contracts' revert data (or what a lying RPC node makes up)
// to DecodeRevert: it never panics, and what it decodes is a *JobError with a sentinel and a
// message.
func FuzzDecodeRevert(f *testing.F) {
	errs := jobErrors(f)
	for i, e := range errs {
		f.Add(uint16(i), make([]byte, 32*len(e.Inputs)))
	}
	f.Add(uint16(0), []byte{})
	f.Fuzz(func(t *testing.T, which uint16, args []byte) {
		e := errs[int(which)%len(errs)]
		data := append(append([]byte{}, e.ID[:4]...), args...)
		in := testutil.RevertError(data)
		out := DecodeRevert(in, 7, StatusFunded)
		var je *JobError
		if !errors.As(out, &je) {
			if _, same := out.(testutil.RevertError); !same {
				t.Fatalf("%s: data %x became %T %v", e.Name, data, out, out)
			}
			return
		}
		if je.Err == nil || je.Error() == "" {
			t.Fatalf("%s: job error without sentinel or message: %+v", e.Name, je)
		}
	})
}

// TestEveryErrorHasASentinel: each custom error of JobEscrow and SuretyHook decodes to a
// sentinel of its own, never the catch-all ErrReverted: a new error in the contracts fails
// here until it has a message.
func TestEveryErrorHasASentinel(t *testing.T) {
	for _, e := range jobErrors(t) {
		if e.Name == "Reentrancy" {
			continue // the re-entry guard: no call of ours meets it
		}
		out := DecodeRevert(testutil.RevertError(testutil.ZeroRevert(e)), 7, StatusFunded)
		var je *JobError
		if !errors.As(out, &je) {
			t.Errorf("%s decoded to %T %v", e.Sig, out, out)
			continue
		}
		if errors.Is(out, ErrReverted) && !registryOnly(e) {
			t.Errorf("%s decoded to the catch-all: %v", e.Sig, out)
		}
	}
}

// registryOnly says e is a stake registry error a job call never meets (only the lock and its
// refusals reach the hook's callers).
func registryOnly(e abi.Error) bool {
	switch e.Name {
	case "InsufficientStake", "WrongStatus":
		return len(e.Inputs) == 0
	}
	parsed, _ := contracts.StakeRegistryMetaData.ParseABI()
	_, ok := parsed.Errors[e.Name]
	job, _ := contracts.JobEscrowMetaData.ParseABI()
	hook, _ := contracts.SuretyHookMetaData.ParseABI()
	_, inJob := job.Errors[e.Name]
	_, inHook := hook.Errors[e.Name]
	return ok && !inJob && !inHook
}

// FuzzDecodeEvent feeds the index logs at the job contracts' addresses: it never panics, it
// keeps only events of their ABIs, and what it keeps is named after its event and carries
// JSON data.
func FuzzDecodeEvent(f *testing.F) {
	escrowAddr, hookAddr := common.Address{1}, common.Address{2}
	list, err := contractSources(escrowAddr, hookAddr)
	if err != nil {
		f.Fatal(err)
	}
	ix := &Indexer{sources: map[common.Address]source{}}
	type ev struct {
		addr common.Address
		e    abi.Event
	}
	var events []ev
	for _, s := range list {
		ix.sources[s.addr] = s
		for _, name := range slices.Sorted(maps.Keys(s.abi.Events)) {
			events = append(events, ev{s.addr, s.abi.Events[name]})
		}
	}
	for i, e := range events {
		indexed := 0
		for _, a := range e.e.Inputs {
			if a.Indexed {
				indexed++
			}
		}
		f.Add(uint8(i), make([]byte, 32*indexed), make([]byte, 32*(len(e.e.Inputs)-indexed)))
		f.Add(uint8(i), make([]byte, 32*indexed), make([]byte, 32*12))
	}
	f.Fuzz(func(t *testing.T, which uint8, topics, data []byte) {
		e := events[int(which)%len(events)]
		l := &types.Log{Address: e.addr, Topics: []common.Hash{e.e.ID}, Data: data, BlockNumber: 7}
		for i := 0; i+32 <= len(topics) && len(l.Topics) < 4; i += 32 {
			l.Topics = append(l.Topics, common.BytesToHash(topics[i:i+32]))
		}
		got, ok, err := ix.decode(context.Background(), l)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("kept an event with an error: %v", err)
		}
		if got.Name != e.e.Name || !json.Valid(got.Data) || got.Block != 7 {
			t.Fatalf("decoded %s as %+v", e.e.Name, got)
		}
		if _, err := decodeArgs(got.Data); err != nil {
			t.Fatalf("%s: stored data does not read back: %v", e.e.Name, err)
		}
	})
}
