package txn

import (
	"errors"
	"testing"
)

// chainErr is an error the chain answered, with its JSON-RPC code.
type chainErr struct {
	code int
	msg  string
}

func (e chainErr) Error() string  { return e.msg }
func (e chainErr) ErrorCode() int { return e.code }

// TestOnlyRevertsAreTheContractsRefusal: a call's error no decoder knows is the contract's
// refusal (ErrReverted, 422) only when the chain says the call reverted (code 3); a
// provider's rate limit, an internal error or a missing header is not the contract's word,
// and stays as it came (the review of issue 25: every JSON-RPC error read as a revert, so an
// operation failed for good on a provider's hiccup).
func TestOnlyRevertsAreTheContractsRefusal(t *testing.T) {
	for _, tt := range []struct {
		name     string
		err      error
		reverted bool
	}{
		{"execution reverted", chainErr{3, "execution reverted"}, true},
		{"reverted with data", chainErr{3, "execution reverted: 0x08c379a0"}, true},
		{"a provider's rate limit", chainErr{-32005, "rate limit exceeded"}, false},
		{"an internal error", chainErr{-32603, "internal error"}, false},
		{"a missing header", chainErr{-32000, "header not found"}, false},
		{"no answer at all", errors.New("dial tcp: connection refused"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Call{}.decode(tt.err)
			if errors.Is(got, ErrReverted) != tt.reverted {
				t.Errorf("decode(%v) = %v; reverted: want %v", tt.err, got, tt.reverted)
			}
			if !tt.reverted && got != tt.err {
				t.Errorf("decode(%v) = %v; want the error as it came", tt.err, got)
			}
		})
	}
}
