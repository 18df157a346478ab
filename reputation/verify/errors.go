package verify

import (
	"errors"

	"github.com/surety-ioa/surety/reputation/merkle"
)

// Errors of verification. Every error the package returns wraps one of them.
var (
	// ErrMalformed: the head, checkpoint or DID does not parse.
	ErrMalformed = errors.New("verify: malformed")
	// ErrWrongType: a JWS of another type than a tree head (its typ is not HeadType).
	ErrWrongType = errors.New("verify: not a signed tree head")
	// ErrUnsupportedKey: the signer's key is neither Ed25519 nor secp256k1, or its alg does
	// not fit the key.
	ErrUnsupportedKey = errors.New("verify: unsupported key or algorithm")
	// ErrWrongSigner: signed by another DID than the node the caller trusts.
	ErrWrongSigner = errors.New("verify: signed by another key")
	// ErrBadSignature: the signature does not verify under the signer's key.
	ErrBadSignature = errors.New("verify: bad signature")
	// ErrNoSignature: a checkpoint carries no signature by the node's key.
	ErrNoSignature = errors.New("verify: no signature by the node's key")
	// ErrWrongOrigin: a checkpoint of another log (another node, chain or deployment).
	ErrWrongOrigin = errors.New("verify: checkpoint of another log")
	// ErrProofMismatch: a proof of another leaf or tree size than the one checked.
	ErrProofMismatch = errors.New("verify: the proof is for another leaf or tree")
	// ErrProofInvalid: the proof does not lead to the root (merkle.ErrProofInvalid).
	ErrProofInvalid = merkle.ErrProofInvalid
	// ErrProofShape: the proof has the wrong length or names an impossible position
	// (merkle.ErrProofShape).
	ErrProofShape = merkle.ErrProofShape
)
