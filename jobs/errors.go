package jobs

import (
	"errors"
	"fmt"
	"sync"

	"github.com/ethereum/go-ethereum/accounts/abi"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/txn"
)

// Sentinel errors, decoded from JobEscrow's and SuretyHook's custom errors or found before
// sending.
var (
	// ErrUnknownJob: no job has this id (or this node has not indexed it yet: the message
	// says which).
	ErrUnknownJob = errors.New("jobs: unknown job")
	// ErrWrongStatus: the job's status does not allow the call.
	ErrWrongStatus = errors.New("jobs: wrong status for this call")
	// ErrNotAllowed: the caller is not the party the call needs (client, provider,
	// evaluator, arbiter, an entered worker).
	ErrNotAllowed = errors.New("jobs: caller not allowed")
	// ErrTooEarly: the job has not expired yet, or the evaluator's grace period, a review
	// window or an arbiter's time is still running.
	ErrTooEarly = errors.New("jobs: too early")
	// ErrTooLate: the job expired, or a window closed.
	ErrTooLate = errors.New("jobs: too late")
	// ErrBudgetMismatch: the budget (or token) the client expected is not the job's any
	// more: it changed between the client's read and fund, and nothing was paid.
	ErrBudgetMismatch = errors.New("jobs: the job's budget is not the one expected")
	// ErrInvalid: an argument the contract refuses (a zero address, a short expiry, a hook
	// that is not whitelisted, a split that does not add up, ...).
	ErrInvalid = errors.New("jobs: invalid argument")
	// ErrInsufficientStake: the worker's agent holds less free stake than the job's plan
	// locks.
	ErrInsufficientStake = errors.New("jobs: insufficient stake")
	// ErrTransferFailed: a token transfer failed (allowance or balance).
	ErrTransferFailed = errors.New("jobs: transfer failed")
	// ErrReverted: the contract refused for a reason not listed above. It is txn's
	// sentinel, so both read alike.
	ErrReverted = txn.ErrReverted
)

// JobError is an error about one job, with a message for people ("job 7 is already
// completed"). It matches its Err with errors.Is.
type JobError struct {
	ID  uint64
	Err error
	Msg string
	// cause is the decoded revert behind Err, when there is one (a contracts.CustomError or
	// the generated error value).
	cause error
}

// Error is the message for people.
func (e *JobError) Error() string {
	if e.Msg != "" {
		return e.Msg
	}
	if e.ID != 0 {
		return fmt.Sprintf("job %d: %v", e.ID, e.Err)
	}
	return e.Err.Error()
}

// Unwrap returns the sentinel, and the revert behind it when there is one.
func (e *JobError) Unwrap() []error {
	if e.cause != nil {
		return []error{e.Err, e.cause}
	}
	return []error{e.Err}
}

// Unknown is the error of a job the index does not hold: behind says the chain's job counter
// is past id (the job exists on chain and this node has not indexed it yet).
func Unknown(id uint64, behind bool) error {
	if behind {
		return &JobError{ID: id, Err: ErrUnknownJob, Msg: fmt.Sprintf("job %d exists on chain but is not indexed yet on this node; try again shortly", id)}
	}
	return &JobError{ID: id, Err: ErrUnknownJob, Msg: fmt.Sprintf("job %d does not exist", id)}
}

// revertName is a custom error the job contracts reverted with, as Solidity writes its
// declaration (JobEscrow.WrongStatus()): the cause of an ErrReverted that no sentinel names.
type revertName string

func (r revertName) Error() string { return string(r) }

// jobErrorNames name the job contracts' custom errors by selector.
var jobErrorNames = sync.OnceValue(func() map[[4]byte]string {
	out := map[[4]byte]string{}
	for _, c := range []struct {
		name  string
		parse func() (*abi.ABI, error)
	}{{"JobEscrow", contracts.JobEscrowMetaData.ParseABI}, {"SuretyHook", contracts.SuretyHookMetaData.ParseABI}} {
		parsed, err := c.parse()
		if err != nil {
			continue
		}
		for _, e := range parsed.Errors {
			var id [4]byte
			copy(id[:], e.ID[:4])
			if _, seen := out[id]; !seen {
				out[id] = c.name + "." + e.Sig
			}
		}
	}
	return out
})

// unpackRevert finds the custom error in err's revert data: JobEscrow's first, then the
// hook's, then the registries' (contracts.DecodeRevert).
func unpackRevert(err error) (any, error) {
	data, ok := contracts.RevertData(err)
	if !ok {
		return nil, nil
	}
	for _, unpack := range revertUnpackers() {
		if v, uerr := unpack(data); uerr == nil && v != nil {
			var id [4]byte
			copy(id[:], data[:4])
			return v, revertName(jobErrorNames()[id])
		}
	}
	if ce := contracts.DecodeRevert(err); ce != nil {
		return ce.Value, ce
	}
	return nil, nil
}

// DecodeRevert maps a JobEscrow or SuretyHook custom error to a *JobError about job id (0
// when the call names none), with a message for people; status, when known, is the job's
// status as the caller last read it, for the message of a WrongStatus. It returns err
// unchanged when it carries no custom error: the txn.Call.Decode of job calls.
func DecodeRevert(err error, id uint64, status Status) error {
	v, cause := unpackRevert(err)
	if v == nil {
		return err
	}
	je := decodeValue(v, id, status)
	if je == nil {
		name := cause.Error()
		if ce, ok := cause.(*contracts.CustomError); ok {
			name = ce.Contract + "." + ce.Error()
		}
		return &JobError{ID: id, Err: ErrReverted, Msg: jobPrefix(id) + "the contract refused: " + name, cause: cause}
	}
	je.cause = cause
	return je
}

// Decoder is DecodeRevert for calls on job id, as a txn.Call.Decode.
func Decoder(id uint64, status Status) func(error) error {
	return func(err error) error { return DecodeRevert(err, id, status) }
}

// jobPrefix is "job 7: ", or "" without a job.
func jobPrefix(id uint64) string {
	if id == 0 {
		return ""
	}
	return fmt.Sprintf("job %d: ", id)
}
