package escrow

import (
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

// declaredErrors are every custom error of the contracts the node calls.
func declaredErrors(t testing.TB) []abi.Error {
	var out []abi.Error
	for _, meta := range []*struct{ m func() (*abi.ABI, error) }{
		{contracts.BountyEscrowMetaData.ParseABI}, {contracts.StakeRegistryMetaData.ParseABI}, {contracts.RootAnchorMetaData.ParseABI},
	} {
		parsed, err := meta.m()
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range slices.Sorted(maps.Keys(parsed.Errors)) {
			out = append(out, parsed.Errors[name])
		}
	}
	return out
}

// FuzzDecodeRevert feeds revert data anyone's contract call can produce (or a lying RPC node
// can make up) to the decoding: it never panics, and an error it decodes becomes a bounty
// error with a sentinel and a message, never the raw transport error.
func FuzzDecodeRevert(f *testing.F) {
	errs := declaredErrors(f)
	for i, e := range errs {
		f.Add(uint16(i), make([]byte, 32*len(e.Inputs))) // the zero value of every (static) argument
	}
	f.Add(uint16(0), []byte{})
	f.Fuzz(func(t *testing.T, which uint16, args []byte) {
		e := errs[int(which)%len(errs)]
		data := append(append([]byte{}, e.ID[:4]...), args...)
		in := testutil.RevertError(data)
		out := decodeRevert(in)
		ce := contracts.DecodeRevert(in)
		if ce == nil {
			if _, same := out.(testutil.RevertError); !same {
				t.Fatalf("undecodable data %x became %v", data, out)
			}
			return
		}
		if ce.Value == nil {
			t.Fatalf("%s decoded without its generated type", ce.Name)
		}
		var be *BountyError
		if !errors.As(out, &be) {
			t.Fatalf("%s decoded to %T %v", ce.Name, out, out)
		}
		if be.Err == nil || be.Error() == "" {
			t.Fatalf("%s: bounty error without sentinel or message: %+v", ce.Name, be)
		}
	})
}

// FuzzDecodeEvent feeds the index logs at the escrow's address: it never panics, it keeps
// only events of the escrow's own ABI, and what it keeps is named after its event and
// carries JSON data.
func FuzzDecodeEvent(f *testing.F) {
	parsed, err := contracts.BountyEscrowMetaData.ParseABI()
	if err != nil {
		f.Fatal(err)
	}
	var events []abi.Event
	for _, name := range slices.Sorted(maps.Keys(parsed.Events)) {
		events = append(events, parsed.Events[name])
	}
	for i, e := range events {
		indexed := 0
		for _, a := range e.Inputs {
			if a.Indexed {
				indexed++
			}
		}
		// Zero words decode as the zero value of every static field (Posted's terms are 9).
		f.Add(uint8(i), make([]byte, 32*indexed), make([]byte, 32*(len(e.Inputs)-indexed)))
		f.Add(uint8(i), make([]byte, 32*indexed), make([]byte, 32*12))
	}
	ix := &Indexer{abi: parsed, escrow: contracts.NewBountyEscrow()}
	f.Fuzz(func(t *testing.T, which uint8, topics, data []byte) {
		e := events[int(which)%len(events)]
		l := &types.Log{Topics: []common.Hash{e.ID}, Data: data, BlockNumber: 7}
		for i := 0; i+32 <= len(topics) && len(l.Topics) < 4; i += 32 {
			l.Topics = append(l.Topics, common.BytesToHash(topics[i:i+32]))
		}
		ev, ok, err := ix.decode(l)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("kept an event with an error: %v", err)
		}
		if ev.Name != e.Name || !json.Valid(ev.Data) || ev.Block != 7 {
			t.Fatalf("decoded %s as %+v", e.Name, ev)
		}
	})
}

// TestClaimRefusalsByTheRegistry: a claim the registry refuses because the agent is not
// bound, or is closed, under the claiming wallet says so (not-staked, agent-closed).
func TestClaimRefusalsByTheRegistry(t *testing.T) {
	parsed, err := contracts.StakeRegistryMetaData.ParseABI()
	if err != nil {
		t.Fatal(err)
	}
	e := parsed.Errors["WrongStatus"]
	for status, want := range map[byte]error{0: ErrAgentNotStaked, 2: ErrAgentClosed, 3: ErrAgentClosed} {
		data := testutil.ZeroRevert(e)
		data[len(data)-1] = status
		if got := decodeRevert(data); !errors.Is(got, want) {
			t.Errorf("WrongStatus(status %d) decoded to %v, want %v", status, got, want)
		}
	}
}
