package identity

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"time"

	"github.com/hyperledger/aries-framework-go/pkg/doc/signature/verifier"
	"github.com/hyperledger/aries-framework-go/pkg/doc/util"
	"github.com/hyperledger/aries-framework-go/pkg/doc/verifiable"
)

// RegistrationCredentialType is the type of the credential a node issues for a DID it
// issued or registered.
const RegistrationCredentialType = "SuretyRegistrationCredential"

// ErrBadCredential reports a credential that does not parse or verify.
var ErrBadCredential = errors.New("identity: bad credential")

// ed25519Signer adapts an Ed25519 key to aries-framework-go's VC-JWT signer.
type ed25519Signer struct{ key ed25519.PrivateKey }

func (s ed25519Signer) Sign(data []byte) ([]byte, error) { return ed25519.Sign(s.key, data), nil }
func (s ed25519Signer) Alg() string                      { return "EdDSA" }

// IssueRegistrationCredential issues a VC-JWT (W3C VC data model 1.1, JWT encoding) signed by
// the node's Ed25519 key, stating that subject is registered with the node, and how
// ("hosted": the node made and keeps its key; "registered": the agent proved it holds it).
func IssueRegistrationCredential(node *Key, subject DID, kind string, now time.Time) (string, error) {
	priv, ok := node.Private.(ed25519.PrivateKey)
	if !ok {
		return "", fmt.Errorf("identity: node key must be Ed25519 to issue credentials")
	}
	vc := &verifiable.Credential{
		Context: []string{"https://www.w3.org/2018/credentials/v1"},
		ID:      "urn:uuid:" + uuidFrom(NewNonce()),
		Types:   []string{"VerifiableCredential", RegistrationCredentialType},
		Issuer:  verifiable.Issuer{ID: node.DID.String()},
		Issued:  util.NewTime(now.UTC().Truncate(time.Second)),
		Subject: verifiable.Subject{
			ID:           subject.String(),
			CustomFields: verifiable.CustomFields{"registeredWith": node.DID.String(), "registration": kind},
		},
	}
	claims, err := vc.JWTClaims(false)
	if err != nil {
		return "", fmt.Errorf("issue credential: %w", err)
	}
	jwt, err := claims.MarshalJWS(verifiable.EdDSA, ed25519Signer{priv}, node.DID.KeyID())
	if err != nil {
		return "", fmt.Errorf("issue credential: %w", err)
	}
	return jwt, nil
}

// VerifyCredential parses a VC-JWT and checks its signature against the issuer's did:key,
// with aries-framework-go. It returns the credential, or an error wrapping ErrBadCredential.
func VerifyCredential(jwt string) (*verifiable.Credential, error) {
	fetch := func(issuerID, keyID string) (*verifier.PublicKey, error) {
		d, err := ParseDID(issuerID)
		if err != nil {
			return nil, err
		}
		if d.KeyType != Ed25519 {
			return nil, fmt.Errorf("issuer %s has no Ed25519 key", issuerID)
		}
		if keyID != "" && keyID != d.Fragment() && keyID != d.KeyID() && keyID != "#"+d.Fragment() {
			return nil, fmt.Errorf("key %s is not the issuer's", keyID)
		}
		return &verifier.PublicKey{Type: "Ed25519VerificationKey2018", Value: d.PublicKey}, nil
	}
	vc, err := verifiable.ParseCredential([]byte(jwt), verifiable.WithPublicKeyFetcher(fetch))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadCredential, err)
	}
	return vc, nil
}

// uuidFrom formats 32 hex digits as a UUID (version 4 bits set).
func uuidFrom(h string) string {
	b := []byte(h[:32])
	b[12] = '4'
	b[16] = "89ab"[b[16]%4]
	return fmt.Sprintf("%s-%s-%s-%s-%s", b[0:8], b[8:12], b[12:16], b[16:20], b[20:32])
}
