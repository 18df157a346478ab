package jobs_test

import (
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/jobs"
)

// TestCallsRefuseBeforeSending: a call the contracts would refuse, as the index shows the job,
// is refused while it is built, with the reason, and nothing is sent.
func TestCallsRefuseBeforeSending(t *testing.T) {
	open := &jobs.Job{ID: 3, Status: jobs.StatusOpen, Budget: "5"}
	done := &jobs.Job{ID: 4, Status: jobs.StatusCompleted}
	settled := &jobs.Job{ID: 5, Status: jobs.StatusCompleted, Surety: &jobs.Surety{Phase: "settled", Settlement: &jobs.Settlement{Outcome: "approved"}}}
	staked := &jobs.Job{ID: 6, Status: jobs.StatusFunded, Surety: &jobs.Surety{Phase: "open", Plan: []byte(`{"minStake":"100"}`)}}
	w := common.Address{7}
	for _, tt := range []struct {
		name string
		call func() error
		want error
		msg  string
	}{
		{"refund of a completed job", func() error { _, err := jobs.ActionData(done, jobs.ActionRefund, jobs.ActionArgs{}); return err }, jobs.ErrWrongStatus, "job 4 is already completed"},
		{"fund without a provider", func() error { _, err := jobs.ActionData(open, jobs.ActionFund, jobs.ActionArgs{}); return err }, jobs.ErrInvalid, "job 3 has no provider yet: set one first (surety job provider 3 --provider ADDR)"},
		{"a budget in ETH", func() error {
			_, err := jobs.ActionData(open, jobs.ActionBudget, jobs.ActionArgs{Amount: big.NewInt(1)})
			return err
		}, jobs.ErrInvalid, "invalid argument: ERC-8183 pays in an ERC-20: name it (--token ADDR)"},
		{"a provider on a funded job", func() error {
			_, err := jobs.ActionData(&jobs.Job{ID: 8, Status: jobs.StatusFunded}, jobs.ActionProvider, jobs.ActionArgs{Provider: w})
			return err
		}, jobs.ErrWrongStatus, "job 8 is funded: only an open job takes that call"},
		{"no evaluator", func() error { _, err := jobs.CreateData(jobs.CreateRequest{Provider: w}); return err }, jobs.ErrInvalid, "invalid argument: a job needs an evaluator (--evaluator ADDR)"},
		{"provider is evaluator", func() error { _, err := jobs.CreateData(jobs.CreateRequest{Provider: w, Evaluator: w}); return err }, jobs.ErrInvalid, "invalid argument: the provider cannot also be the evaluator"},
		{"a pick on a settled job", func() error {
			_, err := jobs.HookActionData(settled, jobs.ActionPick, jobs.HookArgs{Winners: []common.Address{w}, Bps: []uint16{10_000}})
			return err
		}, jobs.ErrWrongStatus, "job 5 is already settled (approved)"},
		{"a pick short of the whole", func() error {
			_, err := jobs.HookActionData(&jobs.Job{ID: 9}, jobs.ActionPick, jobs.HookArgs{Winners: []common.Address{w}, Bps: []uint16{9000}})
			return err
		}, jobs.ErrInvalid, "invalid argument: the shares add up to 9000 basis points (a pick: exactly 10000; a ruling: at most 10000, the rest to the client)"},
		{"a join that names no agent on a staked plan", func() error {
			_, err := jobs.HookActionData(staked, jobs.ActionJoin, jobs.HookArgs{})
			return err
		}, jobs.ErrInsufficientStake, "job 6 locks 100 (base units) of a worker's agent stake: name the agent whose stake it locks (surety job join --key or --agent)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if !errors.Is(err, tt.want) || err.Error() != tt.msg {
				t.Errorf("got %v, want %v: %q", err, tt.want, tt.msg)
			}
		})
	}
	// What passes is the contract's own encoding.
	if _, err := jobs.HookActionData(&jobs.Job{ID: 9}, jobs.ActionResolve, jobs.HookArgs{Winners: []common.Address{w}, Bps: []uint16{4000}}); err != nil {
		t.Errorf("a ruling of 40%%: %v", err)
	}
}
