package escrow

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/contracts"
)

// Sentinel errors, decoded from the escrow's custom errors or found before sending.
var (
	// ErrUnknownBounty: no bounty has this id.
	ErrUnknownBounty = errors.New("escrow: unknown bounty")
	// ErrAlreadyPosted: the poster already posted a bounty with this salt (a replayed post).
	ErrAlreadyPosted = errors.New("escrow: already posted with this salt")
	// ErrBountyClosed: the bounty is in a terminal status.
	ErrBountyClosed = errors.New("escrow: bounty is closed")
	// ErrWrongStatus: the bounty's status does not allow the call.
	ErrWrongStatus = errors.New("escrow: wrong status for this call")
	// ErrNotAllowed: the caller is not the party this call needs (poster, worker, arbiter).
	ErrNotAllowed = errors.New("escrow: caller not allowed")
	// ErrTooLate: a deadline or review window has passed.
	ErrTooLate = errors.New("escrow: too late")
	// ErrTooEarly: a deadline, review window or arbiter timeout has not passed yet.
	ErrTooEarly = errors.New("escrow: too early")
	// ErrInvalid: an argument the contract refuses (amount, deadline, split, ...).
	ErrInvalid = errors.New("escrow: invalid argument")
	// ErrInsufficientStake: the worker's agent holds less stake than the bounty asks.
	ErrInsufficientStake = errors.New("escrow: insufficient stake")
	// ErrNothingToWithdraw: the account is owed nothing in that token.
	ErrNothingToWithdraw = errors.New("escrow: nothing to withdraw")
	// ErrTransferFailed: a token or ETH transfer failed.
	ErrTransferFailed = errors.New("escrow: transfer failed")
	// ErrReverted: the contract refused for a reason not listed above.
	ErrReverted = errors.New("escrow: transaction reverted")
)

// BountyError is an error about one bounty, with a message for people ("bounty 7 is
// already accepted"). It matches its Err with errors.Is.
type BountyError struct {
	ID  uint64
	Err error
	Msg string
	// cause is the decoded revert behind Err, when it carries one (contracts.CustomError).
	cause error
}

// Error is the message for people.
func (e *BountyError) Error() string {
	if e.Msg != "" {
		return e.Msg
	}
	return fmt.Sprintf("bounty %d: %v", e.ID, e.Err)
}

// Unwrap returns the sentinel, and the decoded revert behind it when there is one.
func (e *BountyError) Unwrap() []error {
	if e.cause != nil {
		return []error{e.Err, e.cause}
	}
	return []error{e.Err}
}

var statusNames = []Status{StatusOpen, StatusAssigned, StatusSubmitted, StatusDisputed, StatusAccepted, StatusReleased, StatusResolved, StatusRefunded, StatusCancelled}

// decodeRevert maps an escrow (or stake registry) custom error (from a gas estimate or a call) to a package
// error with a message for people; it returns err unchanged when it carries no custom error.
func decodeRevert(err error) error {
	ce := contracts.DecodeRevert(err)
	if ce == nil {
		return err
	}
	if ce.Contract == "StakeRegistry" {
		return decodeStakeRevert(ce)
	}
	id := uint64(0)
	if len(ce.Args) > 0 {
		if b, ok := ce.Args[0].(*big.Int); ok && b.IsUint64() {
			id = b.Uint64()
		}
	}
	be := func(sentinel error, format string, args ...any) error {
		return &BountyError{ID: id, Err: sentinel, Msg: fmt.Sprintf(format, args...)}
	}
	switch ce.Name {
	case "UnknownBounty":
		return be(ErrUnknownBounty, "bounty %d does not exist", id)
	case "AlreadyPosted":
		return be(ErrAlreadyPosted, "this poster already posted bounty %d with this salt (the same request, sent again)", id)
	case "TermsMismatch":
		return be(ErrInvalid, "bounty %d: the terms or worker given do not match the bounty (is the index behind?)", id)
	case "WrongStatus":
		st := ce.Args[1].(uint8)
		name := Status(fmt.Sprint(st))
		if int(st) < len(statusNames) {
			name = statusNames[st]
		}
		if name.Terminal() {
			return be(ErrBountyClosed, "bounty %d is already %s", id, name)
		}
		return be(ErrWrongStatus, "bounty %d is %s: that call is not possible now", id, name)
	case "NotPoster":
		return be(ErrNotAllowed, "bounty %d: only the poster may do this (caller %s)", id, ce.Args[1].(common.Address).Hex())
	case "NotWorker":
		return be(ErrNotAllowed, "bounty %d: only the worker may do this (caller %s)", id, ce.Args[1].(common.Address).Hex())
	case "NotArbiter":
		return be(ErrNotAllowed, "bounty %d: only the arbiter may do this (caller %s)", id, ce.Args[1].(common.Address).Hex())
	case "NotParty":
		return be(ErrNotAllowed, "bounty %d: only the poster or the worker may do this", id)
	case "DeadlinePassed":
		return be(ErrTooLate, "bounty %d: the deadline has passed", id)
	case "DeadlineNotPassed":
		return be(ErrTooEarly, "bounty %d: the deadline has not passed yet", id)
	case "ReviewWindowOpen":
		return be(ErrTooEarly, "bounty %d: the review window is still open", id)
	case "ReviewWindowClosed":
		return be(ErrTooLate, "bounty %d: the review window has closed", id)
	case "ArbiterTimeNotUp":
		return be(ErrTooEarly, "bounty %d: the arbiter still has time to resolve", id)
	case "InsufficientStake":
		return &BountyError{Err: ErrInsufficientStake, Msg: fmt.Sprintf("the agent's free stake %v (bound to this wallet, not locked by other claims) is below the %v the bounty locks", ce.Args[1], ce.Args[2])}
	case "ArbiterIsParty":
		return &BountyError{Err: ErrInvalid, Msg: fmt.Sprintf("invalid argument: the arbiter %s cannot also be the poster or the worker", ce.Args[0].(common.Address).Hex())}
	case "NotSubmitted":
		return be(ErrWrongStatus, "bounty %d: only a submission can be disputed, and nothing was submitted (after the deadline, refund)", id)
	case "SlashAboveLock":
		return be(ErrInvalid, "invalid argument: bounty %d locks %v of the worker's stake; a ruling cannot slash %v", id, ce.Args[1], ce.Args[2])
	case "NothingToWithdraw":
		return &BountyError{Err: ErrNothingToWithdraw, Msg: "nothing to withdraw in that token"}
	case "TransferFailed":
		return &BountyError{Err: ErrTransferFailed, Msg: fmt.Sprintf("transfer of %v of token %s failed (allowance or balance?)", ce.Args[2], ce.Args[0].(common.Address).Hex())}
	case "InvalidAmount", "InvalidValue", "InvalidDeadline", "InvalidReviewWindow", "InvalidSplit", "ZeroAddress", "FeeTooHigh":
		return &BountyError{Err: ErrInvalid, Msg: "invalid argument: " + ce.Error()}
	}
	return &BountyError{Err: ErrReverted, Msg: "the escrow refused: " + ce.Error(), cause: ce}
}
