package escrow

import (
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/txn"
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
	// ErrTooEarly: a deadline, review window, claim window or arbiter timeout has not passed
	// yet.
	ErrTooEarly = errors.New("escrow: too early")
	// ErrInvalid: an argument the contract refuses (amount, deadline, split, ...).
	ErrInvalid = errors.New("escrow: invalid argument")
	// ErrInsufficientStake: the worker's agent holds less stake than the bounty asks.
	ErrInsufficientStake = errors.New("escrow: insufficient stake")
	// ErrNothingToWithdraw: the account is owed nothing in that token.
	ErrNothingToWithdraw = errors.New("escrow: nothing to withdraw")
	// ErrAgentNotStaked: a claim's agent is not bound to the claiming wallet on chain, so it
	// has no stake to lock.
	ErrAgentNotStaked = errors.New("escrow: the agent has no stake under this wallet")
	// ErrAgentClosed: a claim's agent is revoked or rotated under the claiming wallet.
	ErrAgentClosed = errors.New("escrow: the agent is revoked or rotated on chain")
	// ErrTransferFailed: a token or ETH transfer failed.
	ErrTransferFailed = errors.New("escrow: transfer failed")
	// ErrReverted: the contract refused for a reason not listed above, or the transaction
	// reverted when mined. It is txn's sentinel, so both read alike.
	ErrReverted = txn.ErrReverted
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

// DecodeRevert maps an escrow custom error to a *BountyError (err unchanged when it carries
// none): the txn.Call.Decode of escrow calls, for clients sending from their own wallets.
func DecodeRevert(err error) error { return decodeRevert(err) }

// decodeRevert maps an escrow (or stake registry) custom error (from a gas estimate or a call)
// to a package error with a message for people; it returns err unchanged when it carries no
// custom error.
func decodeRevert(err error) error {
	ce := contracts.DecodeRevert(err)
	if ce == nil {
		return err
	}
	if ce.Contract == "StakeRegistry" {
		return decodeRegistryRevert(ce)
	}
	be := func(id *big.Int, sentinel error, format string, args ...any) error {
		n := uint64(0)
		if id.IsUint64() {
			n = id.Uint64()
		}
		return &BountyError{ID: n, Err: sentinel, Msg: fmt.Sprintf(format, args...)}
	}
	invalid := func() error { return &BountyError{Err: ErrInvalid, Msg: "invalid argument: " + ce.Error()} }
	switch e := ce.Value.(type) {
	case *contracts.BountyEscrowUnknownBounty:
		return be(e.Id, ErrUnknownBounty, "bounty %v does not exist", e.Id)
	case *contracts.BountyEscrowAlreadyPosted:
		return be(e.Id, ErrAlreadyPosted, "this poster already posted bounty %v with this salt (the same request, sent again)", e.Id)
	case *contracts.BountyEscrowTermsMismatch:
		return be(e.Id, ErrInvalid, "bounty %v: the terms or worker given do not match the bounty (is the index behind?)", e.Id)
	case *contracts.BountyEscrowWrongStatus:
		name := Status(fmt.Sprint(e.Status))
		if int(e.Status) < len(statusNames) {
			name = statusNames[e.Status]
		}
		if name.Terminal() {
			return be(e.Id, ErrBountyClosed, "bounty %v is already %s", e.Id, name)
		}
		return be(e.Id, ErrWrongStatus, "bounty %v is %s: that call is not possible now", e.Id, name)
	case *contracts.BountyEscrowNotPoster:
		return be(e.Id, ErrNotAllowed, "bounty %v: only the poster may do this (caller %s)", e.Id, e.Caller.Hex())
	case *contracts.BountyEscrowNotWorker:
		return be(e.Id, ErrNotAllowed, "bounty %v: only the worker may do this (caller %s)", e.Id, e.Caller.Hex())
	case *contracts.BountyEscrowNotArbiter:
		return be(e.Id, ErrNotAllowed, "bounty %v: only the arbiter may do this (caller %s)", e.Id, e.Caller.Hex())
	case *contracts.BountyEscrowNotParty:
		return be(e.Id, ErrNotAllowed, "bounty %v: only the poster or the worker may do this", e.Id)
	case *contracts.BountyEscrowDeadlinePassed:
		return be(e.Id, ErrTooLate, "bounty %v: the deadline has passed", e.Id)
	case *contracts.BountyEscrowDeadlineNotPassed:
		return be(e.Id, ErrTooEarly, "bounty %v: the deadline has not passed yet", e.Id)
	case *contracts.BountyEscrowReviewWindowOpen:
		return be(e.Id, ErrTooEarly, "bounty %v: the review window is still open", e.Id)
	case *contracts.BountyEscrowReviewWindowClosed:
		return be(e.Id, ErrTooLate, "bounty %v: the review window has closed", e.Id)
	case *contracts.BountyEscrowArbiterTimeNotUp:
		return be(e.Id, ErrTooEarly, "bounty %v: the arbiter still has time to resolve", e.Id)
	case *contracts.BountyEscrowClaimWindowOpen:
		return be(e.Id, ErrTooEarly, "bounty %v: its worker has until %s to submit; only after that may the poster unclaim it", e.Id, unixTime(e.EndsAt))
	case *contracts.BountyEscrowClaimsNotOpen:
		return be(e.Id, ErrTooEarly, "bounty %v was unclaimed: until %s only its poster may assign or cancel it; claims reopen then", e.Id, unixTime(e.OpensAt))
	case *contracts.BountyEscrowStakedClaim:
		return be(e.Id, ErrWrongStatus, "bounty %v has a minimum stake (%v): its worker keeps it until the deadline (then refund); only a bounty without one can be unclaimed", e.Id, e.MinStake)
	case *contracts.BountyEscrowInsufficientStake:
		return &BountyError{Err: ErrInsufficientStake, Msg: fmt.Sprintf("the agent's free stake %v (bound to this wallet, not locked by other claims) is below the %v the bounty locks", e.Stake, e.Required)}
	case *contracts.BountyEscrowArbiterIsParty:
		return &BountyError{Err: ErrInvalid, Msg: fmt.Sprintf("invalid argument: the arbiter %s cannot also be the poster or the worker", e.Arbiter.Hex())}
	case *contracts.BountyEscrowNotSubmitted:
		return be(e.Id, ErrWrongStatus, "bounty %v: only a submission can be disputed, and nothing was submitted (after the deadline, refund)", e.Id)
	case *contracts.BountyEscrowSlashAboveLock:
		return be(e.Id, ErrInvalid, "invalid argument: bounty %v locks %v of the worker's stake; a ruling cannot slash %v", e.Id, e.MinStake, e.Slash)
	case *contracts.BountyEscrowNothingToWithdraw:
		return &BountyError{Err: ErrNothingToWithdraw, Msg: "nothing to withdraw in that token"}
	case *contracts.BountyEscrowTransferFailed:
		return &BountyError{Err: ErrTransferFailed, Msg: fmt.Sprintf("transfer of %v of token %s failed (allowance or balance?)", e.Amount, e.Token.Hex())}
	case *contracts.BountyEscrowInvalidAmount, *contracts.BountyEscrowInvalidValue, *contracts.BountyEscrowInvalidDeadline,
		*contracts.BountyEscrowInvalidReviewWindow, *contracts.BountyEscrowInvalidSplit, *contracts.BountyEscrowZeroAddress,
		*contracts.BountyEscrowFeeTooHigh:
		return invalid()
	}
	return &BountyError{Err: ErrReverted, Msg: "the escrow refused: " + ce.Error(), cause: ce}
}

// unixTime renders a chain timestamp (seconds) for people, in UTC.
func unixTime(sec *big.Int) string {
	if !sec.IsInt64() {
		return sec.String()
	}
	return time.Unix(sec.Int64(), 0).UTC().Format(time.RFC3339)
}

// decodeRegistryRevert maps the StakeRegistry errors a bounty call can meet (a claim locks
// the worker's stake, a ruling slashes it) to bounty errors.
func decodeRegistryRevert(ce *contracts.CustomError) error {
	switch e := ce.Value.(type) {
	case *contracts.StakeRegistryWrongStatus:
		if e.Status == 0 {
			return &BountyError{Err: ErrAgentNotStaked, Msg: fmt.Sprintf("agent %s is not bound to wallet %s on chain: it has no stake to lock", common.Hash(e.AgentId).Hex(), e.Controller.Hex())}
		}
		return &BountyError{Err: ErrAgentClosed, Msg: fmt.Sprintf("agent %s is revoked or rotated under wallet %s: its stake cannot back a claim", common.Hash(e.AgentId).Hex(), e.Controller.Hex())}
	case *contracts.StakeRegistryUnknownLock:
		return &BountyError{Err: ErrInvalid, Msg: fmt.Sprintf("invalid argument: bounty %v locked no stake (the poster assigned its worker), so there is nothing to slash", e.LockId)}
	}
	return &BountyError{Err: ErrReverted, Msg: "the stake registry refused: " + ce.Error(), cause: ce}
}
