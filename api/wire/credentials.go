package wire

import "encoding/json"

// CredentialVerifyRequest is the JSON body of POST /v1/credentials/verify (the route also
// takes the vc+jwt itself as the body, Content-Type application/vc+jwt).
type CredentialVerifyRequest struct {
	// Credential is a compact vc+jwt the node issued.
	Credential string `json:"credential"`
}

// CredentialVerdict is the answer of a successful POST /v1/credentials/verify: the
// credential verified (signature by the node's DID, the window now) and, when it has a
// status entry, its bit in the node's list is clear.
type CredentialVerdict struct {
	Valid      bool            `json:"valid"`
	ID         string          `json:"id,omitempty"`
	Type       []string        `json:"type"`
	Issuer     string          `json:"issuer"`
	ValidFrom  string          `json:"validFrom"`
	ValidUntil string          `json:"validUntil,omitempty"`
	Subject    json.RawMessage `json:"credentialSubject"`
	// Status is "active" (the bit is clear) or "none" (the credential has no status entry).
	Status string `json:"status"`
}
