package identity

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// W3C Verifiable Credentials Data Model 2.0, secured with JOSE as VC-JOSE-COSE §3.1 says: the
// JWS payload is the credential itself (no "vc" claim, unlike VC-JWT 1.1), the protected
// header says typ "vc+jwt" and cty "vc", and the media type is application/vc+jwt. Surety
// also states the window in the JWT claims nbf and exp (and the issuer in iss, the subject in
// sub), which VC-JOSE-COSE allows when they agree with the credential, so a plain JWT library
// (jose's jwtVerify) checks the window too.
const (
	// CredentialsV2Context is the base context of every VC 2.0 credential. Surety's own terms
	// need no context of their own: the v2 context's @vocab maps them (issuer-dependent).
	CredentialsV2Context = "https://www.w3.org/ns/credentials/v2"
	// VCJWTMediaType is the media type of a credential secured with JOSE.
	VCJWTMediaType = "application/vc+jwt"
	// VCJWTType is the protected header's typ of a credential.
	VCJWTType = "vc+jwt"
	// VCContentType is the protected header's cty of a credential.
	VCContentType = "vc"
	// VerifiableCredentialType is the first type of every credential.
	VerifiableCredentialType = "VerifiableCredential"
	// StakeCredentialType is the type of the credential that states an agent's stake at a block.
	StakeCredentialType = "SuretyStakeCredential"
	// StatusListCredentialType, StatusListType and StatusListEntryType are Bitstring Status
	// List v1.0's types: the list's credential, its subject, and a credential's entry.
	StatusListCredentialType = "BitstringStatusListCredential"
	StatusListType           = "BitstringStatusList"
	StatusListEntryType      = "BitstringStatusListEntry"
	// StatusPurposeRevocation is the one status purpose Surety publishes: the bit is set once
	// the chain closed the subject's DID (revoked, or rotated away).
	StatusPurposeRevocation = "revocation"
)

// Why a credential was refused. A *CredentialError wraps exactly one of these.
var (
	// ErrCredentialMalformed: not a compact JWS, the wrong typ or cty, an unsupported alg, a
	// kid that is not the issuer's key, claims that disagree with the credential, or a
	// payload that is not a VC 2.0 credential (context, type, issuer, validFrom).
	ErrCredentialMalformed = errors.New("malformed credential")
	// ErrCredentialBadSignature: the signature does not verify with the issuer's key.
	ErrCredentialBadSignature = errors.New("bad signature")
	// ErrCredentialWrongIssuer: the credential verifies but another DID issued it than the
	// verifier expects (the node's).
	ErrCredentialWrongIssuer = errors.New("issued by another DID")
	// ErrCredentialExpired: validUntil has passed.
	ErrCredentialExpired = errors.New("expired")
	// ErrCredentialNotYetValid: validFrom is still ahead.
	ErrCredentialNotYetValid = errors.New("not yet valid")
	// ErrCredentialRevoked: the credential's bit in its revocation status list is set.
	ErrCredentialRevoked = errors.New("revoked")
	// ErrCredentialStatus: the status list cannot be read (not the credential's list, not by
	// its issuer, the index out of range, a bitstring that does not decode).
	ErrCredentialStatus = errors.New("status list unusable")
)

// CredentialError says why a credential was refused.
type CredentialError struct {
	Reason error // one of the sentinels above
	Detail string
}

// Error reads like "credential refused: expired: validUntil 2026-01-01T00:00:00Z".
func (e *CredentialError) Error() string {
	s := "credential refused: " + e.Reason.Error()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns the reason.
func (e *CredentialError) Unwrap() error { return e.Reason }

func refuseCredential(reason error, format string, args ...any) error {
	return &CredentialError{Reason: reason, Detail: truncate(fmt.Sprintf(format, args...), 300)}
}

// Credential is a VC 2.0 credential as Surety issues and reads it. The subject stays raw: its
// shape depends on the type (RegistrationSubject, StakeSubject, StatusListSubject).
type Credential struct {
	Context           []string        `json:"@context"`
	ID                string          `json:"id,omitempty"`
	Type              []string        `json:"type"`
	Issuer            string          `json:"issuer"`
	ValidFrom         string          `json:"validFrom"`
	ValidUntil        string          `json:"validUntil,omitempty"`
	CredentialSubject json.RawMessage `json:"credentialSubject"`
	CredentialStatus  *StatusEntry    `json:"credentialStatus,omitempty"`

	// The JWT claims that restate the credential (IssueCredential fills them): iss is the
	// issuer, sub the subject's id, nbf validFrom, exp validUntil, iat the signing time.
	Iss string `json:"iss,omitempty"`
	Sub string `json:"sub,omitempty"`
	Iat int64  `json:"iat,omitempty"`
	Nbf int64  `json:"nbf,omitempty"`
	Exp int64  `json:"exp,omitempty"`
}

// HasType reports whether the credential's types include t.
func (c *Credential) HasType(t string) bool { return slices.Contains(c.Type, t) }

// StatusEntry is a credential's place in a Bitstring Status List.
type StatusEntry struct {
	ID              string `json:"id"`
	Type            string `json:"type"`
	StatusPurpose   string `json:"statusPurpose"`
	StatusListIndex string `json:"statusListIndex"`
	// StatusListCredential is the URL of the list's credential (GET /v1/status/{list}).
	StatusListCredential string `json:"statusListCredential"`
}

// RegistrationSubject is the subject of a registration credential: the DID, the node it is
// registered with, and how (node, hosted or registered).
type RegistrationSubject struct {
	ID             string `json:"id"`
	RegisteredWith string `json:"registeredWith"`
	Registration   string `json:"registration"`
}

// StakeSubject is the subject of a stake credential: what StakeRegistry.recordOf(agentId,
// wallet) answered at one block of one chain. Anyone with an RPC checks it against the chain:
// the block's hash, and the call at that block.
type StakeSubject struct {
	ID string `json:"id"` // the agent's DID
	// AgentID is keccak256 of the DID, the registry's key for it.
	AgentID  string `json:"agentId"`
	Wallet   string `json:"wallet"`
	Amount   string `json:"amount"` // staked, in the token's base unit, decimal
	Token    string `json:"token"`
	ChainID  uint64 `json:"chainId"`
	Registry string `json:"stakeRegistry"`
	Block    uint64 `json:"blockNumber"`
	// BlockHash pins the block, so a reorg that dropped it shows.
	BlockHash string `json:"blockHash"`
}

// StatusListSubject is the subject of a status list credential.
type StatusListSubject struct {
	ID            string `json:"id"`
	Type          string `json:"type"`
	StatusPurpose string `json:"statusPurpose"`
	// EncodedList is the bitstring, gzip-compressed, base64url (no padding), with the
	// multibase prefix "u".
	EncodedList string `json:"encodedList"`
}

// credentialTime formats t as the data model's dateTimeStamp, to the second, in UTC.
func credentialTime(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }

// CredentialID is a credential's id, derived from what it says (issuer, subject, kind,
// validFrom), so issuing the same credential twice gives the same bytes.
func CredentialID(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\n")))
	return "urn:uuid:" + uuidFrom(hex.EncodeToString(h[:16]))
}

// NewCredential fills a credential's frame: the v2 context, the types after
// VerifiableCredential, the issuer, the window, and the subject.
func NewCredential(issuer string, types []string, validFrom, validUntil time.Time, subject any) (*Credential, error) {
	raw, err := json.Marshal(subject)
	if err != nil {
		return nil, fmt.Errorf("credential subject: %w", err)
	}
	c := &Credential{
		Context:           []string{CredentialsV2Context},
		Type:              append([]string{VerifiableCredentialType}, types...),
		Issuer:            issuer,
		ValidFrom:         credentialTime(validFrom),
		CredentialSubject: raw,
	}
	if !validUntil.IsZero() {
		c.ValidUntil = credentialTime(validUntil)
	}
	return c, nil
}

// IssueCredential signs c as application/vc+jwt with k, which must be an Ed25519 key (EdDSA:
// what every JOSE library verifies): the protected header is {alg, kid (k's DID URL), typ
// "vc+jwt", cty "vc"}, the payload the credential with its JWT claims filled in. The same
// credential and key give the same bytes.
func (k *Key) IssueCredential(c *Credential) (string, error) {
	priv, ok := k.Private.(ed25519.PrivateKey)
	if !ok {
		return "", fmt.Errorf("identity: credentials are signed with Ed25519 keys, %s is %s", k.DID, k.DID.KeyType)
	}
	if c.Issuer != k.DID.String() {
		return "", fmt.Errorf("identity: the credential's issuer %s is not the signing key's DID", c.Issuer)
	}
	from, err := time.Parse(time.RFC3339, c.ValidFrom)
	if err != nil {
		return "", fmt.Errorf("identity: validFrom: %w", err)
	}
	out := *c
	out.Iss, out.Nbf, out.Iat = c.Issuer, from.Unix(), from.Unix()
	if c.ValidUntil != "" {
		until, err := time.Parse(time.RFC3339, c.ValidUntil)
		if err != nil {
			return "", fmt.Errorf("identity: validUntil: %w", err)
		}
		out.Exp = until.Unix()
	}
	var subj struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(c.CredentialSubject, &subj) == nil {
		out.Sub = subj.ID
	}
	payload, err := json.Marshal(&out)
	if err != nil {
		return "", fmt.Errorf("issue credential: %w", err)
	}
	hdr, _ := json.Marshal(credentialHeader{Alg: "EdDSA", Kid: k.DID.KeyID(), Typ: VCJWTType, Cty: VCContentType})
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(hdr) + "." + enc.EncodeToString(payload)
	return input + "." + enc.EncodeToString(ed25519.Sign(priv, []byte(input))), nil
}

// credentialHeader is the protected header of a vc+jwt.
type credentialHeader struct {
	Alg  string   `json:"alg"`
	Kid  string   `json:"kid"`
	Typ  string   `json:"typ"`
	Cty  string   `json:"cty,omitempty"`
	Crit []string `json:"crit,omitempty"`
}

// CredentialCheck is what a credential's verifier is told besides the credential.
type CredentialCheck struct {
	// Now is the time the window is checked at; zero means time.Now.
	Now time.Time
	// Skew is the clock difference allowed on validFrom and validUntil; 0 means DefaultSkew.
	Skew time.Duration
	// Issuer, when set, is the DID that must have issued the credential (the node's).
	Issuer string
	// SkipWindow leaves validFrom and validUntil unchecked (a verifier that reports the
	// window on its own line).
	SkipWindow bool
}

// VerifiedCredential is a credential whose signature and window verified.
type VerifiedCredential struct {
	Credential Credential
	// Issuer is the issuing DID, whose key signed it.
	Issuer     DID
	ValidFrom  time.Time
	ValidUntil time.Time // zero when the credential has none
	// Raw is the vc+jwt as it came.
	Raw string
}

// Subject decodes the credential's subject into v.
func (v *VerifiedCredential) Subject(out any) error {
	if err := json.Unmarshal(v.Credential.CredentialSubject, out); err != nil {
		return refuseCredential(ErrCredentialMalformed, "credentialSubject: %v", err)
	}
	return nil
}

// ParseCredentialJWT reads a vc+jwt without checking its signature or window: the header
// and the credential, refusing what is not one (ErrCredentialMalformed). Callers that trust
// what it says use VerifyCredentialJWT.
func ParseCredentialJWT(raw string) (*Credential, DID, []byte, []byte, error) {
	if len(raw) > MaxCredentialSize {
		return nil, DID{}, nil, nil, refuseCredential(ErrCredentialMalformed, "%d bytes, over the limit of %d", len(raw), MaxCredentialSize)
	}
	raw = strings.TrimSpace(raw)
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return nil, DID{}, nil, nil, refuseCredential(ErrCredentialMalformed, "not a compact JWS (want header.payload.signature)")
	}
	enc := base64.RawURLEncoding
	hb, err := enc.DecodeString(parts[0])
	if err != nil {
		return nil, DID{}, nil, nil, refuseCredential(ErrCredentialMalformed, "header: %v", err)
	}
	var h credentialHeader
	if err := strictJSON(hb, &h); err != nil {
		return nil, DID{}, nil, nil, refuseCredential(ErrCredentialMalformed, "header: %v", err)
	}
	switch {
	case h.Typ != VCJWTType:
		return nil, DID{}, nil, nil, refuseCredential(ErrCredentialMalformed, "typ is %q, want %q", h.Typ, VCJWTType)
	case h.Cty != "" && h.Cty != VCContentType:
		return nil, DID{}, nil, nil, refuseCredential(ErrCredentialMalformed, "cty is %q, want %q", h.Cty, VCContentType)
	case h.Alg != "EdDSA":
		return nil, DID{}, nil, nil, refuseCredential(ErrCredentialMalformed, "alg is %q; Surety credentials are EdDSA", h.Alg)
	case len(h.Crit) > 0:
		return nil, DID{}, nil, nil, refuseCredential(ErrCredentialMalformed, "crit names extensions this verifier does not know: %v", h.Crit)
	}
	payload, err := enc.DecodeString(parts[1])
	if err != nil {
		return nil, DID{}, nil, nil, refuseCredential(ErrCredentialMalformed, "payload: %v", err)
	}
	sig, err := enc.DecodeString(parts[2])
	if err != nil {
		return nil, DID{}, nil, nil, refuseCredential(ErrCredentialMalformed, "signature: %v", err)
	}
	var c Credential
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, DID{}, nil, nil, refuseCredential(ErrCredentialMalformed, "payload: %v", err)
	}
	switch {
	case len(c.Context) == 0 || c.Context[0] != CredentialsV2Context:
		return nil, DID{}, nil, nil, refuseCredential(ErrCredentialMalformed, "@context must start with %s", CredentialsV2Context)
	case !c.HasType(VerifiableCredentialType):
		return nil, DID{}, nil, nil, refuseCredential(ErrCredentialMalformed, "type must include %s", VerifiableCredentialType)
	case c.ValidFrom == "":
		return nil, DID{}, nil, nil, refuseCredential(ErrCredentialMalformed, "validFrom is required")
	case len(c.CredentialSubject) == 0 || c.CredentialSubject[0] != '{':
		return nil, DID{}, nil, nil, refuseCredential(ErrCredentialMalformed, "credentialSubject must be an object")
	}
	iss, err := ParseDID(c.Issuer)
	if err != nil || iss.Method != "key" || iss.KeyType != Ed25519 {
		return nil, DID{}, nil, nil, refuseCredential(ErrCredentialMalformed, "issuer %q is not an Ed25519 did:key", truncate(c.Issuer, 120))
	}
	if h.Kid != iss.KeyID() {
		return nil, DID{}, nil, nil, refuseCredential(ErrCredentialMalformed, "kid %q is not the issuer's key %s", truncate(h.Kid, 140), iss.KeyID())
	}
	return &c, iss, []byte(parts[0] + "." + parts[1]), sig, nil
}

// VerifyCredentialJWT verifies a vc+jwt: the header (typ vc+jwt, cty vc, alg EdDSA, kid the
// issuer's did:key URL), the signature by the issuer's key, the claims against the credential,
// the issuer against chk.Issuer, and the window at chk.Now. It checks no status (see
// CheckCredentialStatus). It returns a *CredentialError.
func VerifyCredentialJWT(raw string, chk CredentialCheck) (*VerifiedCredential, error) {
	c, iss, input, sig, err := ParseCredentialJWT(raw)
	if err != nil {
		return nil, err
	}
	if !ed25519.Verify(ed25519.PublicKey(iss.PublicKey), input, sig) {
		return nil, refuseCredential(ErrCredentialBadSignature, "the signature does not verify with %s", iss.KeyID())
	}
	if chk.Issuer != "" && c.Issuer != chk.Issuer {
		return nil, refuseCredential(ErrCredentialWrongIssuer, "issued by %s, want %s", c.Issuer, chk.Issuer)
	}
	v := &VerifiedCredential{Credential: *c, Issuer: iss, Raw: strings.TrimSpace(raw)}
	if v.ValidFrom, err = time.Parse(time.RFC3339, c.ValidFrom); err != nil {
		return nil, refuseCredential(ErrCredentialMalformed, "validFrom: %v", err)
	}
	if c.ValidUntil != "" {
		if v.ValidUntil, err = time.Parse(time.RFC3339, c.ValidUntil); err != nil {
			return nil, refuseCredential(ErrCredentialMalformed, "validUntil: %v", err)
		}
		if v.ValidUntil.Before(v.ValidFrom) {
			return nil, refuseCredential(ErrCredentialMalformed, "validUntil is before validFrom")
		}
	}
	var subj struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(c.CredentialSubject, &subj)
	switch {
	case c.Iss != "" && c.Iss != c.Issuer:
		return nil, refuseCredential(ErrCredentialMalformed, "iss %q disagrees with issuer", truncate(c.Iss, 120))
	case c.Sub != "" && c.Sub != subj.ID:
		return nil, refuseCredential(ErrCredentialMalformed, "sub %q disagrees with credentialSubject.id", truncate(c.Sub, 120))
	case c.Nbf != 0 && c.Nbf != v.ValidFrom.Unix():
		return nil, refuseCredential(ErrCredentialMalformed, "nbf disagrees with validFrom")
	case c.Exp != 0 && (v.ValidUntil.IsZero() || c.Exp != v.ValidUntil.Unix()):
		return nil, refuseCredential(ErrCredentialMalformed, "exp disagrees with validUntil")
	}
	if chk.SkipWindow {
		return v, nil
	}
	now, skew := chk.Now, chk.Skew
	if now.IsZero() {
		now = time.Now()
	}
	if skew == 0 {
		skew = DefaultSkew
	}
	if now.Add(skew).Before(v.ValidFrom) {
		return nil, refuseCredential(ErrCredentialNotYetValid, "validFrom %s", c.ValidFrom)
	}
	if !v.ValidUntil.IsZero() && now.Add(-skew).After(v.ValidUntil) {
		return nil, refuseCredential(ErrCredentialExpired, "validUntil %s", c.ValidUntil)
	}
	return v, nil
}

// strictJSON decodes one JSON object into v: no trailing data.
func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	return nil
}

// StatusListPath is where the node publishes its status lists: GET /v1/status/{n}.
const StatusListPath = "/v1/status/"
