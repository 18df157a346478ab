package identity

import (
	"crypto/ed25519"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"filippo.io/edwards25519"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/mr-tron/base58"
)

// KeyType is the type of an agent key.
type KeyType string

// Supported key types.
const (
	Ed25519   KeyType = "ed25519"
	Secp256k1 KeyType = "secp256k1"
)

// Multicodec codes (unsigned varints) of the public keys did:key carries.
const (
	codecEd25519   = 0xed
	codecSecp256k1 = 0xe7
	codecX25519    = 0xec
)

// DID is a parsed decentralized identifier: a did:key (agent keys) or a did:pkh (wallets).
type DID struct {
	// Method is "key" or "pkh".
	Method string
	// KeyType and PublicKey are set for did:key: the raw Ed25519 key (32 bytes) or the
	// compressed secp256k1 key (33 bytes).
	KeyType   KeyType
	PublicKey []byte
	// ChainID and Address are set for did:pkh:eip155.
	ChainID uint64
	Address common.Address

	str string
}

// String is the DID's canonical text.
func (d DID) String() string { return d.str }

// Fragment is the fragment of the DID's verification method: for did:key the multibase key,
// for did:pkh "blockchainAccountId".
func (d DID) Fragment() string {
	if d.Method == "key" {
		return strings.TrimPrefix(d.str, "did:key:")
	}
	return "blockchainAccountId"
}

// KeyID is the DID URL of the DID's verification method: the `kid` an envelope carries.
func (d DID) KeyID() string { return d.str + "#" + d.Fragment() }

// ParseDID parses a did:key (Ed25519 or secp256k1) or did:pkh:eip155 DID. The errors are
// *DIDError values that say exactly what is wrong.
func ParseDID(s string) (DID, error) {
	bad := func(kind error, format string, args ...any) (DID, error) {
		return DID{}, &DIDError{DID: s, Reason: fmt.Sprintf(format, args...), Kind: kind}
	}
	if len(s) > maxDIDLength {
		return bad(ErrInvalidDID, "longer than %d characters", maxDIDLength)
	}
	rest, ok := strings.CutPrefix(s, "did:")
	if !ok {
		return bad(ErrInvalidDID, `must start with "did:"`)
	}
	method, id, ok := strings.Cut(rest, ":")
	if !ok || method == "" || id == "" {
		return bad(ErrInvalidDID, "must be did:<method>:<id>")
	}
	for _, r := range method {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') {
			return bad(ErrInvalidDID, "method %q must be lowercase letters and digits", method)
		}
	}
	if strings.ContainsAny(id, "#?/") {
		return bad(ErrInvalidDID, "a DID has no path, query or fragment (that is a DID URL)")
	}
	switch method {
	case "key":
		return parseKeyDID(s, id)
	case "pkh":
		return parsePKH(s, id)
	}
	return bad(ErrUnsupportedMethod, "method %q is not supported (use did:key or did:pkh)", method)
}

func parseKeyDID(s, id string) (DID, error) {
	bad := func(kind error, format string, args ...any) (DID, error) {
		return DID{}, &DIDError{DID: s, Reason: fmt.Sprintf(format, args...), Kind: kind}
	}
	codec, key, err := decodeMultikey(id)
	if err != nil {
		return bad(ErrInvalidDID, "%v", err)
	}
	switch codec {
	case codecEd25519:
		if len(key) != ed25519.PublicKeySize {
			return bad(ErrInvalidDID, "Ed25519 key is %d bytes, want %d", len(key), ed25519.PublicKeySize)
		}
		if _, err := new(edwards25519.Point).SetBytes(key); err != nil {
			return bad(ErrInvalidDID, "Ed25519 key is not a point on the curve")
		}
		return DID{Method: "key", KeyType: Ed25519, PublicKey: key, str: s}, nil
	case codecSecp256k1:
		if len(key) != 33 {
			return bad(ErrInvalidDID, "secp256k1 key is %d bytes, want 33 (compressed)", len(key))
		}
		if _, err := crypto.DecompressPubkey(key); err != nil {
			return bad(ErrInvalidDID, "secp256k1 key is not a point on the curve")
		}
		return DID{Method: "key", KeyType: Secp256k1, PublicKey: key, str: s}, nil
	}
	if otherKeyCodecs[codec] {
		return bad(ErrUnsupportedKey, "multicodec 0x%x is a key type this node does not support: use Ed25519 (0xed) or secp256k1 (0xe7)", codec)
	}
	// Anything else is no key multicodec at all: most often a did:key cut short, whose
	// base58 decodes to arbitrary leading bytes.
	return bad(ErrInvalidDID, "multicodec 0x%x is not a public key type", codec)
}

// otherKeyCodecs are the multicodec public key types besides Ed25519 and secp256k1: a did:key
// of one of them is well formed, just unsupported here (501, not 400).
var otherKeyCodecs = map[uint64]bool{
	0xe8: true, 0xeb: true, 0xec: true, // bls12_381-g1, bls12_381-g2, x25519
	0x1200: true, 0x1201: true, 0x1202: true, // p256, p384, p521
	0x1203: true, 0x1204: true, 0x1205: true, 0x1206: true, // ed448, x448, rsa, sm2
}

// decodeMultikey decodes a base58btc multibase string holding a multicodec-prefixed key.
func decodeMultikey(mb string) (codec uint64, key []byte, err error) {
	if mb == "" || mb[0] != 'z' {
		return 0, nil, fmt.Errorf("multibase must be base58btc ('z')")
	}
	raw, err := base58.Decode(mb[1:])
	if err != nil || len(raw) == 0 {
		return 0, nil, fmt.Errorf("not valid base58btc")
	}
	codec, n := binary.Uvarint(raw)
	if n <= 0 {
		return 0, nil, fmt.Errorf("no multicodec prefix")
	}
	return codec, raw[n:], nil
}

// encodeMultikey is the base58btc multibase text of key under a multicodec prefix.
func encodeMultikey(codec uint64, key []byte) string {
	buf := binary.AppendUvarint(make([]byte, 0, len(key)+2), codec)
	return "z" + base58.Encode(append(buf, key...))
}

func parsePKH(s, id string) (DID, error) {
	bad := func(kind error, format string, args ...any) (DID, error) {
		return DID{}, &DIDError{DID: s, Reason: fmt.Sprintf(format, args...), Kind: kind}
	}
	parts := strings.Split(id, ":")
	if len(parts) != 3 {
		return bad(ErrInvalidDID, "must be did:pkh:eip155:<chainId>:<address>")
	}
	if parts[0] != "eip155" {
		return bad(ErrUnsupportedMethod, "namespace %q is not supported (use eip155)", parts[0])
	}
	chainID, err := strconv.ParseUint(parts[1], 10, 64)
	if err != nil || chainID == 0 || parts[1][0] == '0' {
		return bad(ErrInvalidDID, "chain id %q must be a positive decimal number", parts[1])
	}
	if !common.IsHexAddress(parts[2]) || !strings.HasPrefix(parts[2], "0x") {
		return bad(ErrInvalidDID, "address %q must be 0x and 40 hex digits", parts[2])
	}
	addr := common.HexToAddress(parts[2])
	// CAIP-10 leaves case to the namespace; EIP-55 mixed case must then be the right one.
	if parts[2] != strings.ToLower(parts[2]) && parts[2] != addr.Hex() {
		return bad(ErrInvalidDID, "address %q has a wrong EIP-55 checksum", parts[2])
	}
	return DID{Method: "pkh", ChainID: chainID, Address: addr, str: s}, nil
}

// KeyDID is the did:key of a public key of the given type (Ed25519: 32 raw bytes;
// secp256k1: 33 compressed or 65 uncompressed bytes).
func KeyDID(t KeyType, pub []byte) (DID, error) {
	var codec uint64
	switch t {
	case Ed25519:
		if len(pub) != ed25519.PublicKeySize {
			return DID{}, fmt.Errorf("%w: Ed25519 public key is %d bytes", ErrUnsupportedKey, len(pub))
		}
		codec = codecEd25519
	case Secp256k1:
		switch len(pub) {
		case 65:
			k, err := crypto.UnmarshalPubkey(pub)
			if err != nil {
				return DID{}, fmt.Errorf("%w: %v", ErrUnsupportedKey, err)
			}
			pub = crypto.CompressPubkey(k)
		case 33:
		default:
			return DID{}, fmt.Errorf("%w: secp256k1 public key is %d bytes", ErrUnsupportedKey, len(pub))
		}
		codec = codecSecp256k1
	default:
		return DID{}, fmt.Errorf("%w: %q", ErrUnsupportedKey, t)
	}
	return ParseDID("did:key:" + encodeMultikey(codec, pub))
}

// PKHDID is the did:pkh of an EVM account on a chain.
func PKHDID(chainID uint64, addr common.Address) DID {
	s := fmt.Sprintf("did:pkh:eip155:%d:%s", chainID, addr.Hex())
	return DID{Method: "pkh", ChainID: chainID, Address: addr, str: s}
}

// ParseKeyID splits a DID URL such as an envelope's kid into its DID and fragment.
func ParseKeyID(kid string) (DID, string, error) {
	base, frag, ok := strings.Cut(kid, "#")
	if !ok || frag == "" {
		return DID{}, "", &DIDError{DID: kid, Reason: "a key id is a DID URL with a #fragment", Kind: ErrInvalidDID}
	}
	d, err := ParseDID(base)
	if err != nil {
		return DID{}, "", err
	}
	return d, frag, nil
}
