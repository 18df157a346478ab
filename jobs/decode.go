package jobs

import (
	"fmt"

	"github.com/surety-ioa/surety/contracts"
)

// decodeValue maps a generated custom error value to a *JobError about job id (nil for one it
// has no sentinel for).
func decodeValue(v any, id uint64, status Status) *JobError {
	je := func(sentinel error, format string, args ...any) *JobError {
		return &JobError{ID: id, Err: sentinel, Msg: jobPrefix(id) + fmt.Sprintf(format, args...)}
	}
	switch e := v.(type) {
	case *contracts.JobEscrowInvalidJob:
		if id != 0 {
			return &JobError{ID: id, Err: ErrUnknownJob, Msg: fmt.Sprintf("job %d does not exist", id)}
		}
		return je(ErrUnknownJob, "no such job")
	case *contracts.JobEscrowWrongStatus:
		switch {
		case status.Terminal():
			return je(ErrWrongStatus, "the job is already %s", status)
		case status != "":
			return je(ErrWrongStatus, "the job is %s (or expired): that call is not possible now", status)
		}
		return je(ErrWrongStatus, "the job's status does not allow that call now (or it expired)")
	case *contracts.JobEscrowUnauthorized:
		return je(ErrNotAllowed, "this wallet is not the party that call needs (the client funds, rejects an open job and refunds; the provider submits; the evaluator completes and rejects)")
	case *contracts.JobEscrowGracePeriodActive:
		return je(ErrTooEarly, "the provider submitted: the evaluator has a grace period (EVALUATION_GRACE_PERIOD) after the expiry before a refund")
	case *contracts.JobEscrowBudgetMismatch:
		return je(ErrBudgetMismatch, "the job's budget is not the one you expected: it changed since you read it; read the job again (surety job show) and fund what it says")
	case *contracts.JobEscrowProviderNotSet:
		return je(ErrInvalid, "invalid argument: the job has no provider yet: set one first (surety job provider)")
	case *contracts.JobEscrowZeroAddress:
		return je(ErrInvalid, "invalid argument: an address is zero (the evaluator, the provider or the token)")
	case *contracts.JobEscrowExpiryTooShort:
		return je(ErrInvalid, "invalid argument: the expiry must be more than 5 minutes ahead")
	case *contracts.JobEscrowZeroBudget:
		return je(ErrInvalid, "invalid argument: the budget is zero")
	case *contracts.JobEscrowHookNotWhitelisted:
		return je(ErrInvalid, "invalid argument: the hook is not whitelisted on this JobEscrow")
	case *contracts.JobEscrowInvalidHook:
		return je(ErrInvalid, "invalid argument: the hook does not implement IERC8183Hook (ERC-165)")
	case *contracts.JobEscrowProviderCannotBeEvaluator:
		return je(ErrInvalid, "invalid argument: the provider cannot also be the evaluator")
	case *contracts.JobEscrowExpiryTooLong:
		return je(ErrInvalid, "invalid argument: the expiry %v is too far ahead", e.ExpiredAt)
	case *contracts.JobEscrowPaymentTokenLocked:
		return je(ErrInvalid, "invalid argument: the payment token is %s and only the client may change it", e.Token.Hex())
	case *contracts.JobEscrowTransferFailed:
		return je(ErrTransferFailed, "the transfer of %v of token %s to %s failed (allowance or balance?)", e.Amount, e.Token.Hex(), e.To.Hex())
	case *contracts.JobEscrowDescriptionTooLong:
		return je(ErrInvalid, "invalid argument: the description is %v bytes, more than JobEscrow stores (65535)", e.Length)
	case *contracts.JobEscrowNotOwner, *contracts.JobEscrowNotPendingOwner:
		return je(ErrNotAllowed, "only JobEscrow's owner may change its fees and hook allowlist")
	case *contracts.JobEscrowFeesTooHigh:
		return je(ErrInvalid, "invalid argument: the fees add up to more than 100%%")
	}
	return decodeHookValue(v, id, status)
}
