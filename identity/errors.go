package identity

import (
	"errors"
	"fmt"
)

// Sentinel errors. Functions wrap them with detail; callers match with errors.Is.
var (
	// ErrInvalidDID reports a string that is not a well-formed DID of a method we know.
	ErrInvalidDID = errors.New("identity: invalid DID")
	// ErrUnsupportedMethod reports a well-formed DID of a method Surety does not resolve.
	ErrUnsupportedMethod = errors.New("identity: unsupported DID method")
	// ErrUnsupportedKey reports a did:key whose key type Surety does not handle.
	ErrUnsupportedKey = errors.New("identity: unsupported key type")
	// ErrNotFound reports a DID or key the node does not know.
	ErrNotFound = errors.New("identity: not found")
	// ErrDeactivated reports a DID its controller revoked.
	ErrDeactivated = errors.New("identity: DID deactivated")
	// ErrBadKeyFile reports a key file that cannot be read as a private key.
	ErrBadKeyFile = errors.New("identity: bad key file")
	// ErrWrongPassphrase reports a keystore entry that does not open with the passphrase.
	ErrWrongPassphrase = errors.New("identity: wrong passphrase")
	// ErrBadChallenge reports an unknown, used or expired registration challenge.
	ErrBadChallenge = errors.New("identity: bad or expired challenge")
	// ErrBadProof reports a proof of possession or binding signature that does not verify.
	ErrBadProof = errors.New("identity: proof does not verify")
	// ErrAlreadyRegistered reports a DID the node already knows.
	ErrAlreadyRegistered = errors.New("identity: DID already registered")
)

// DIDError says which DID failed to parse and why. It matches its Kind with errors.Is.
type DIDError struct {
	DID    string
	Reason string
	Kind   error // ErrInvalidDID, ErrUnsupportedMethod or ErrUnsupportedKey
}

// Error reads like `invalid DID "did:key:x": multibase must be base58btc ('z')`.
func (e *DIDError) Error() string {
	return fmt.Sprintf("%v %q: %s", e.Kind, truncate(e.DID, 120), e.Reason)
}

// Unwrap returns the kind, so errors.Is(err, ErrInvalidDID) works.
func (e *DIDError) Unwrap() error { return e.Kind }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
