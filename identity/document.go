package identity

import (
	"encoding/base64"
	"fmt"

	"filippo.io/edwards25519"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/mr-tron/base58"
)

// DocFormat picks how a DID document writes its verification methods.
type DocFormat string

// Document formats.
const (
	// FormatMultikey writes Multikey methods with publicKeyMultibase (the default).
	FormatMultikey DocFormat = "Multikey"
	// FormatJWK writes JsonWebKey2020 methods with publicKeyJwk.
	FormatJWK DocFormat = "JsonWebKey2020"
	// FormatLegacy writes the 2018/2019 suites with publicKeyBase58, as the did:key spec's
	// published test vectors do.
	FormatLegacy DocFormat = "Legacy"
)

// Document is a DID document.
type Document struct {
	Context              []string             `json:"@context"`
	ID                   string               `json:"id"`
	VerificationMethod   []VerificationMethod `json:"verificationMethod"`
	Authentication       []string             `json:"authentication,omitempty"`
	AssertionMethod      []string             `json:"assertionMethod,omitempty"`
	CapabilityInvocation []string             `json:"capabilityInvocation,omitempty"`
	CapabilityDelegation []string             `json:"capabilityDelegation,omitempty"`
	KeyAgreement         []string             `json:"keyAgreement,omitempty"`
}

// VerificationMethod is one key (or account) of a DID document.
type VerificationMethod struct {
	ID                  string            `json:"id"`
	Type                string            `json:"type"`
	Controller          string            `json:"controller"`
	PublicKeyMultibase  string            `json:"publicKeyMultibase,omitempty"`
	PublicKeyBase58     string            `json:"publicKeyBase58,omitempty"`
	PublicKeyJwk        map[string]string `json:"publicKeyJwk,omitempty"`
	BlockchainAccountID string            `json:"blockchainAccountId,omitempty"`
}

// JWK is the public JSON Web Key of a did:key, as a map (kty, crv, x[, y]).
func (d DID) JWK() (map[string]string, error) {
	b64 := base64.RawURLEncoding.EncodeToString
	switch d.KeyType {
	case Ed25519:
		return map[string]string{"kty": "OKP", "crv": "Ed25519", "x": b64(d.PublicKey)}, nil
	case Secp256k1:
		k, err := crypto.DecompressPubkey(d.PublicKey)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnsupportedKey, err)
		}
		raw := crypto.FromECDSAPub(k) // 0x04 || X || Y
		return map[string]string{"kty": "EC", "crv": "secp256k1", "x": b64(raw[1:33]), "y": b64(raw[33:])}, nil
	}
	return nil, fmt.Errorf("%w: %s has no key", ErrUnsupportedKey, d)
}

// x25519 derives the X25519 key-agreement key of an Ed25519 public key (the Montgomery form
// of the same point), as the did:key spec does for Ed25519 DIDs.
func x25519(edPub []byte) ([]byte, error) {
	p, err := new(edwards25519.Point).SetBytes(edPub)
	if err != nil {
		return nil, fmt.Errorf("%w: Ed25519 key is not a curve point", ErrInvalidDID)
	}
	return p.BytesMontgomery(), nil
}

// Document builds the DID document of d in the given format (empty means Multikey). The
// document of a did:key is derived from the DID alone, as the did:key method specifies.
func (d DID) Document(format DocFormat) (*Document, error) {
	if format == "" {
		format = FormatMultikey
	}
	if d.Method == "pkh" {
		return d.pkhDocument(), nil
	}
	doc := &Document{ID: d.str, Context: []string{"https://www.w3.org/ns/did/v1"}}
	main := VerificationMethod{ID: d.KeyID(), Controller: d.str}
	var agreement *VerificationMethod
	switch format {
	case FormatMultikey:
		doc.Context = append(doc.Context, "https://w3id.org/security/multikey/v1")
		main.Type = "Multikey"
		main.PublicKeyMultibase = d.Fragment()
	case FormatJWK:
		doc.Context = append(doc.Context, "https://w3id.org/security/suites/jws-2020/v1")
		jwk, err := d.JWK()
		if err != nil {
			return nil, err
		}
		main.Type = "JsonWebKey2020"
		main.PublicKeyJwk = jwk
	case FormatLegacy:
		main.PublicKeyBase58 = base58.Encode(d.PublicKey)
		switch d.KeyType {
		case Ed25519:
			doc.Context = append(doc.Context, "https://w3id.org/security/suites/ed25519-2018/v1", "https://w3id.org/security/suites/x25519-2019/v1")
			main.Type = "Ed25519VerificationKey2018"
		case Secp256k1:
			doc.Context = append(doc.Context, "https://w3id.org/security/suites/secp256k1-2019/v1")
			main.Type = "EcdsaSecp256k1VerificationKey2019"
		}
	default:
		return nil, fmt.Errorf("identity: unknown document format %q", format)
	}
	doc.VerificationMethod = []VerificationMethod{main}
	agreementID := main.ID
	if d.KeyType == Ed25519 {
		// Ed25519 keys do not agree keys themselves: the document adds the X25519 form.
		xk, err := x25519(d.PublicKey)
		if err != nil {
			return nil, err
		}
		mb := encodeMultikey(codecX25519, xk)
		agreement = &VerificationMethod{ID: d.str + "#" + mb, Controller: d.str}
		switch format {
		case FormatMultikey:
			agreement.Type, agreement.PublicKeyMultibase = "Multikey", mb
		case FormatJWK:
			agreement.Type = "JsonWebKey2020"
			agreement.PublicKeyJwk = map[string]string{"kty": "OKP", "crv": "X25519", "x": base64.RawURLEncoding.EncodeToString(xk)}
		case FormatLegacy:
			agreement.Type, agreement.PublicKeyBase58 = "X25519KeyAgreementKey2019", base58.Encode(xk)
		}
		doc.VerificationMethod = append(doc.VerificationMethod, *agreement)
		agreementID = agreement.ID
	}
	ref := []string{main.ID}
	doc.Authentication, doc.AssertionMethod = ref, ref
	doc.CapabilityInvocation, doc.CapabilityDelegation = ref, ref
	doc.KeyAgreement = []string{agreementID}
	return doc, nil
}

func (d DID) pkhDocument() *Document {
	vm := VerificationMethod{
		ID:                  d.KeyID(),
		Type:                "EcdsaSecp256k1RecoveryMethod2020",
		Controller:          d.str,
		BlockchainAccountID: fmt.Sprintf("eip155:%d:%s", d.ChainID, d.Address.Hex()),
	}
	ref := []string{vm.ID}
	return &Document{
		Context:            []string{"https://www.w3.org/ns/did/v1", "https://w3id.org/security/suites/secp256k1recovery-2020/v2"},
		ID:                 d.str,
		VerificationMethod: []VerificationMethod{vm},
		Authentication:     ref,
		AssertionMethod:    ref,
	}
}
