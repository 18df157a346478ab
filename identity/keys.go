package identity

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"sync"

	ethcrypto "github.com/ethereum/go-ethereum/crypto"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jws"
)

// Key is an agent's private key and the did:key it controls.
type Key struct {
	Type KeyType
	// Private is an ed25519.PrivateKey or a *ecdsa.PrivateKey on secp256k1.
	Private crypto.Signer
	DID     DID

	headerOnce sync.Once
	header     string // encoded protected header of this key's envelopes
}

// Algorithm is the JWS algorithm the key signs with: EdDSA or ES256K.
func (k *Key) Algorithm() jwa.SignatureAlgorithm {
	if k.Type == Secp256k1 {
		return jwa.ES256K
	}
	return jwa.EdDSA
}

// GenerateKey makes a new random key of type t.
func GenerateKey(t KeyType) (*Key, error) {
	seed := make([]byte, 32)
	if _, err := rand.Read(seed); err != nil {
		return nil, err
	}
	return KeyFromSeed(t, seed)
}

// KeyFromSeed derives a key from 32 bytes: the Ed25519 seed (RFC 8032), or the secp256k1
// private scalar. The did:key spec's test vectors are given this way.
func KeyFromSeed(t KeyType, seed []byte) (*Key, error) {
	if len(seed) != 32 {
		return nil, fmt.Errorf("%w: seed is %d bytes, want 32", ErrBadKeyFile, len(seed))
	}
	switch t {
	case Ed25519:
		priv := ed25519.NewKeyFromSeed(seed)
		d, err := KeyDID(Ed25519, priv.Public().(ed25519.PublicKey))
		if err != nil {
			return nil, err
		}
		return &Key{Type: Ed25519, Private: priv, DID: d}, nil
	case Secp256k1:
		priv, err := ethcrypto.ToECDSA(seed)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadKeyFile, err)
		}
		d, err := KeyDID(Secp256k1, ethcrypto.CompressPubkey(&priv.PublicKey))
		if err != nil {
			return nil, err
		}
		return &Key{Type: Secp256k1, Private: priv, DID: d}, nil
	}
	return nil, fmt.Errorf("%w: %q (use ed25519 or secp256k1)", ErrUnsupportedKey, t)
}

// Seed returns the 32 bytes the key derives from (see KeyFromSeed).
func (k *Key) Seed() []byte {
	if k.Type == Ed25519 {
		return bytes.Clone(k.Private.(ed25519.PrivateKey).Seed())
	}
	return ethcrypto.FromECDSA(k.Private.(*ecdsa.PrivateKey))
}

// keyFile is the on-disk form of a key: a private JWK whose kid is the key's DID URL.
type keyFile struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	D   string `json:"d"`
	X   string `json:"x"`
	Y   string `json:"y,omitempty"`
	Kid string `json:"kid"`
}

// MarshalKeyFile encodes the key as a private JWK (RFC 7517; secp256k1 per RFC 8812) with
// the DID URL as kid. The result is secret: write it with mode 0600.
func (k *Key) MarshalKeyFile() ([]byte, error) {
	jwk, err := k.DID.JWK()
	if err != nil {
		return nil, err
	}
	f := keyFile{Kty: jwk["kty"], Crv: jwk["crv"], X: jwk["x"], Y: jwk["y"], Kid: k.DID.KeyID(),
		D: base64.RawURLEncoding.EncodeToString(k.Seed())}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ParseKeyFile reads a private JWK written by MarshalKeyFile (or any Ed25519/secp256k1
// private JWK). The public parts, when present, must match the private key.
func ParseKeyFile(data []byte) (*Key, error) {
	var f keyFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%w: not a JSON Web Key: %v", ErrBadKeyFile, err)
	}
	var t KeyType
	switch {
	case f.Kty == "OKP" && f.Crv == "Ed25519":
		t = Ed25519
	case f.Kty == "EC" && f.Crv == "secp256k1":
		t = Secp256k1
	default:
		return nil, fmt.Errorf("%w: kty %q crv %q is not an Ed25519 or secp256k1 key", ErrBadKeyFile, f.Kty, f.Crv)
	}
	seed, err := base64.RawURLEncoding.DecodeString(f.D)
	if err != nil || len(seed) != 32 {
		return nil, fmt.Errorf("%w: \"d\" must be 32 bytes of base64url", ErrBadKeyFile)
	}
	k, err := KeyFromSeed(t, seed)
	if err != nil {
		return nil, err
	}
	if f.X != "" {
		jwk, err := k.DID.JWK()
		if err != nil {
			return nil, err
		}
		if jwk["x"] != f.X || jwk["y"] != f.Y {
			return nil, fmt.Errorf("%w: public key does not match the private key", ErrBadKeyFile)
		}
	}
	if f.Kid != "" && f.Kid != k.DID.KeyID() && f.Kid != k.DID.String() {
		return nil, fmt.Errorf("%w: kid %q is not this key's DID", ErrBadKeyFile, f.Kid)
	}
	return k, nil
}

// PublicKeyForJWS returns the key in the form jwx verifiers take: ed25519.PublicKey or
// *ecdsa.PublicKey.
func (d DID) PublicKeyForJWS() (any, error) {
	switch d.KeyType {
	case Ed25519:
		return ed25519.PublicKey(d.PublicKey), nil
	case Secp256k1:
		return ethcrypto.DecompressPubkey(d.PublicKey)
	}
	return nil, fmt.Errorf("%w: %s", ErrUnsupportedKey, d)
}

// ES256K: jwx signs and verifies it only when built with the jwx_es256k tag. Surety registers
// its own signer and verifier instead, on go-ethereum's libsecp256k1 (faster, no build tag).
func init() {
	jws.RegisterSigner(jwa.ES256K, jws.SignerFactoryFn(func() (jws.Signer, error) { return es256k{}, nil }))
	jws.RegisterVerifier(jwa.ES256K, jws.VerifierFactoryFn(func() (jws.Verifier, error) { return es256k{}, nil }))
}

type es256k struct{}

var (
	secp256k1N     = ethcrypto.S256().Params().N
	secp256k1HalfN = new(big.Int).Rsh(secp256k1N, 1)
	// halfNBytes is secp256k1HalfN as 32 big-endian bytes, to compare S with it without
	// allocating.
	halfNBytes = secp256k1HalfN.FillBytes(make([]byte, 32))
)

// Algorithm is ES256K.
func (es256k) Algorithm() jwa.SignatureAlgorithm { return jwa.ES256K }

// Sign produces R || S (64 bytes, low S) over SHA-256 of the signing input (RFC 8812).
func (es256k) Sign(payload []byte, key any) ([]byte, error) {
	priv, ok := key.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("ES256K: key is %T, want *ecdsa.PrivateKey", key)
	}
	h := sha256.Sum256(payload)
	sig, err := ethcrypto.Sign(h[:], priv)
	if err != nil {
		return nil, err
	}
	return sig[:64], nil
}

// Verify checks R || S over SHA-256 of the signing input. High-S signatures (valid ECDSA,
// which other libraries may produce) are accepted by verifying their low-S twin. The key is
// an *ecdsa.PublicKey, or its bytes, compressed (33) or uncompressed (65).
func (es256k) Verify(payload, sig []byte, key any) error {
	var pub []byte
	switch k := key.(type) {
	case *ecdsa.PublicKey:
		pub = ethcrypto.CompressPubkey(k)
	case []byte:
		pub = k
	default:
		return fmt.Errorf("ES256K: key is %T, want *ecdsa.PublicKey", key)
	}
	if len(sig) != 64 {
		return fmt.Errorf("ES256K: signature is %d bytes, want 64", len(sig))
	}
	if bytes.Compare(sig[32:], halfNBytes) > 0 {
		low := make([]byte, 64)
		copy(low, sig[:32])
		new(big.Int).Sub(secp256k1N, new(big.Int).SetBytes(sig[32:])).FillBytes(low[32:])
		sig = low
	}
	h := sha256.Sum256(payload)
	if !ethcrypto.VerifySignature(pub, h[:], sig) {
		return fmt.Errorf("ES256K: signature does not verify")
	}
	return nil
}
