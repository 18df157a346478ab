package verify

import (
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"
	"strings"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
	"github.com/mr-tron/base58"
)

// A node signs with a did:key (W3C CCG did:key: multibase base58btc of a multicodec varint and
// the public key): Ed25519 (0xed) or compressed secp256k1 (0xe7). This is identity's parsing
// and checking of the two, without identity's key store (and its SQLite).

// keyType is a DID key's algorithm.
type keyType int

const (
	ed25519Key keyType = iota + 1
	secp256k1Key
)

// nodeKey is a node's public key, read from its DID.
type nodeKey struct {
	did  string
	typ  keyType
	pub  []byte // 32 bytes Ed25519, 33 bytes compressed secp256k1
	ecPK *secp256k1.PublicKey
}

// parseKey reads the public key of a did:key.
func parseKey(did string) (*nodeKey, error) {
	id, ok := strings.CutPrefix(did, "did:key:")
	if !ok || len(id) < 2 || id[0] != 'z' {
		return nil, fmt.Errorf("%w: %q is not a did:key in base58btc", ErrMalformed, truncate(did, 80))
	}
	raw, err := base58.Decode(id[1:])
	if err != nil || len(raw) < 2 {
		return nil, fmt.Errorf("%w: %q: bad base58", ErrMalformed, truncate(did, 80))
	}
	k := &nodeKey{did: did}
	switch {
	case raw[0] == 0xed && raw[1] == 0x01 && len(raw) == 2+ed25519.PublicKeySize:
		k.typ, k.pub = ed25519Key, raw[2:]
	case raw[0] == 0xe7 && raw[1] == 0x01 && len(raw) == 2+33:
		k.typ, k.pub = secp256k1Key, raw[2:]
		if k.ecPK, err = secp256k1.ParsePubKey(k.pub); err != nil {
			return nil, fmt.Errorf("%w: %q: secp256k1 key is not on the curve", ErrMalformed, truncate(did, 80))
		}
	default:
		return nil, fmt.Errorf("%w: %q is not an Ed25519 or compressed secp256k1 did:key", ErrUnsupportedKey, truncate(did, 80))
	}
	return k, nil
}

// alg is the key's JWS alg.
func (k *nodeKey) alg() string {
	if k.typ == ed25519Key {
		return "EdDSA"
	}
	return "ES256K"
}

// verify checks sig over msg: Ed25519 (RFC 8032) over msg, or ES256K (RFC 8812: R || S, 64
// bytes, over SHA-256 of msg; high S accepted, as identity does).
func (k *nodeKey) verify(msg, sig []byte) bool {
	if k.typ == ed25519Key {
		return ed25519.Verify(ed25519.PublicKey(k.pub), msg, sig)
	}
	if len(sig) != 64 {
		return false
	}
	var r, s secp256k1.ModNScalar
	if r.SetByteSlice(sig[:32]) || s.SetByteSlice(sig[32:]) || r.IsZero() || s.IsZero() {
		return false
	}
	h := sha256.Sum256(msg)
	return ecdsa.NewSignature(&r, &s).Verify(h[:], k.ecPK)
}

// truncate cuts s for an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
