package txn

import "errors"

// Sentinels of sending. Error carries them with a message for people.
var (
	// ErrUnknownWallet: the node holds no such wallet.
	ErrUnknownWallet = errors.New("txn: the node holds no such wallet")
	// ErrCannotPay: the wallet cannot pay for the transaction (value plus gas).
	ErrCannotPay = errors.New("txn: the wallet cannot pay for this transaction")
	// ErrReverted: the transaction was mined and reverted, or a call reverted with a reason
	// the caller's decoder does not know.
	ErrReverted = errors.New("txn: transaction reverted")
	// ErrChainUnreachable: the broadcast got no answer from the chain (a lost connection, a
	// timeout); the chain may have the transaction, so a retry with the same Idempotency-Key
	// waits for it rather than sending another.
	ErrChainUnreachable = errors.New("txn: the chain did not answer the broadcast")
	// ErrChainRefused: the chain refused to take the transaction (it is not in its pool, and
	// nothing was spent); the detail is the chain's own message.
	ErrChainRefused = errors.New("txn: the chain refused the transaction")
	// ErrNotMined: the transaction was not mined within the receipt timeout; it may still be.
	ErrNotMined = errors.New("txn: transaction not mined in time")
	// ErrRequestInProgress: a request with the same Idempotency-Key is being processed.
	ErrRequestInProgress = errors.New("txn: a request with this Idempotency-Key is in progress")
	// ErrKeyReused: the Idempotency-Key was used for a different request.
	ErrKeyReused = errors.New("txn: Idempotency-Key reused for a different request")
	// ErrNoSuchRequest: Retry found no earlier request under this Idempotency-Key.
	ErrNoSuchRequest = errors.New("txn: no earlier request with this Idempotency-Key")
	// ErrFeeTooHigh: the fee to offer is out of bounds (a suggested tip above the sender's
	// limit, or a fee cap below the tip); nothing was signed.
	ErrFeeTooHigh = errors.New("txn: the fee is out of bounds")
	// ErrNotRelayable: a signed transaction the relay does not take (not one, not to a
	// contract it relays for, badly signed).
	ErrNotRelayable = errors.New("txn: the node does not relay this transaction")
	// ErrNonceGap: a signed transaction's nonce is above its wallet's next one, so it cannot
	// be mined before the ones below it: the relay neither sends nor waits for it.
	ErrNonceGap = errors.New("txn: the transaction's nonce is above its wallet's next one")
)

// Error is a failed transaction with a message for people. It matches Err with errors.Is.
type Error struct {
	Err error
	Msg string
}

// Error is the message for people.
func (e *Error) Error() string {
	if e.Msg == "" {
		return e.Err.Error()
	}
	return e.Msg
}

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }
