package conformance

import (
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/ethereum/go-ethereum/common"
	ethcrypto "github.com/ethereum/go-ethereum/crypto"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jws"

	"github.com/surety-ioa/surety/identity"
)

// The fixed inputs every generator shares, so that regenerating gives the same bytes.
const (
	// Now is the time vectors are made at and checked at (2025-11-24T16:00:00Z).
	Now int64 = 1764000000
	// ChainID is the chain the vectors' envelopes and bindings name (Anvil's).
	ChainID uint64 = 31337
	// Registry is the StakeRegistry address the vectors' bindings name.
	Registry = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512"
)

// Seed is the 32-byte seed of a named fixture key: SHA-256 of "surety-conformance/" + label.
// The key vectors publish each seed with the DID and public key it gives.
func Seed(label string) []byte {
	h := sha256.Sum256([]byte("surety-conformance/" + label))
	return h[:]
}

// FixtureKey is the did:key key of type t derived from Seed(label).
func FixtureKey(t identity.KeyType, label string) *identity.Key {
	k, err := identity.KeyFromSeed(t, Seed(label))
	if err != nil {
		panic(fmt.Sprintf("conformance: key %s: %v", label, err))
	}
	return k
}

// FixtureWallet is the EVM wallet whose private key is Seed(label).
func FixtureWallet(label string) *ecdsa.PrivateKey {
	k, err := ethcrypto.ToECDSA(Seed(label))
	if err != nil {
		panic(fmt.Sprintf("conformance: wallet %s: %v", label, err))
	}
	return k
}

// The fixture keys: two agents (one per key type), the node the envelopes are addressed
// to, another node, and two wallets.
var (
	alice     = FixtureKey(identity.Ed25519, "alice")
	bob       = FixtureKey(identity.Secp256k1, "bob")
	nodeKey   = FixtureKey(identity.Ed25519, "node")
	otherNode = FixtureKey(identity.Ed25519, "other-node")
	node256k1 = FixtureKey(identity.Secp256k1, "node-secp256k1")
	wallet    = FixtureWallet("wallet")
	thief     = FixtureWallet("thief")
)

func walletAddr(k *ecdsa.PrivateKey) common.Address { return ethcrypto.PubkeyToAddress(k.PublicKey) }

// signRaw makes a compact JWS with exactly the protected header given (any alg, kid, typ),
// signed by k with alg (EdDSA or ES256K, whatever the header says).
func signRaw(k *identity.Key, alg jwa.SignatureAlgorithm, header any, payload []byte) string {
	h, err := json.Marshal(header)
	if err != nil {
		panic(err)
	}
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(h) + "." + enc.EncodeToString(payload)
	s, err := jws.NewSigner(alg)
	if err != nil {
		panic(err)
	}
	sig, err := s.Sign([]byte(input), k.Private)
	if err != nil {
		panic(err)
	}
	return input + "." + enc.EncodeToString(sig)
}

// header is a protected header in the order Surety writes it.
type header struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
	Typ string `json:"typ"`
}

// flipSignature changes one bit of a compact JWS's signature (still valid base64url).
func flipSignature(compact string) string {
	parts := splitJWS(compact)
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		panic(err)
	}
	sig[0] ^= 0x01
	return parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// replacePayload puts another payload under a compact JWS's header and signature.
func replacePayload(compact string, payload []byte) string {
	parts := splitJWS(compact)
	return parts[0] + "." + base64.RawURLEncoding.EncodeToString(payload) + "." + parts[2]
}

func splitJWS(compact string) [3]string {
	var out [3]string
	i := 0
	start := 0
	for j := 0; j < len(compact); j++ {
		if compact[j] == '.' {
			out[i] = compact[start:j]
			i++
			start = j + 1
		}
	}
	out[2] = compact[start:]
	return out
}

// jsonString is s as a JSON string (a vector's input).
func jsonString(s string) json.RawMessage {
	b, _ := marshal(s)
	return b
}

// mustJSON is v as JSON.
func mustJSON(v any) json.RawMessage {
	b, err := marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// inputString reads a vector's input as a JSON string.
func inputString(v Vector) (string, error) {
	var s string
	if err := json.Unmarshal(v.Input, &s); err != nil {
		return "", fmt.Errorf("input is not a JSON string: %w", err)
	}
	return s, nil
}

// ctx is v's context, never nil.
func ctx(v Vector) Context {
	if v.Context == nil {
		return Context{}
	}
	return *v.Context
}

func b64std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func b64stdDecode(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }
