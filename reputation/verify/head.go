package verify

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/surety-ioa/surety/reputation/merkle"
)

// HeadType is the JWS typ of a signed tree head (reputation.HeadType is this constant).
const HeadType = "surety-sth+jws"

// Hash is a SHA-256 digest in the log: a leaf hash or a root (hex in JSON).
type Hash = merkle.Hash

// Head is a tree head whose signature verified: the log's size and root after an epoch
// closed, as the node signed them.
type Head struct {
	Size   uint64 `json:"size"`
	Root   Hash   `json:"root"`
	Epoch  int64  `json:"epoch"`
	Closed int64  `json:"closed"`
	// Signer is the DID that signed the head.
	Signer string `json:"-"`
}

// OpenHead verifies signed, the "signed" field of a node's head (GET /v1/log/head): a compact
// JWS of type HeadType whose kid is a key of node (a did:key) and whose signature verifies
// under it; and it returns the head the JWS signed. The head's other fields as the node
// serves them beside "signed" are not signed: use the ones OpenHead returns.
func OpenHead(signed, node string) (Head, error) {
	if len(signed) > MaxHeadSize {
		return Head{}, fmt.Errorf("%w: head larger than %d bytes", ErrMalformed, MaxHeadSize)
	}
	signed = strings.TrimSpace(signed)
	parts := strings.Split(signed, ".")
	if len(parts) != 3 {
		return Head{}, fmt.Errorf("%w: a compact JWS has three dot-separated parts", ErrMalformed)
	}
	enc := base64.RawURLEncoding
	hdrJSON, err := enc.DecodeString(parts[0])
	if err != nil {
		return Head{}, fmt.Errorf("%w: protected header: %v", ErrMalformed, err)
	}
	payload, err := enc.DecodeString(parts[1])
	if err != nil {
		return Head{}, fmt.Errorf("%w: payload: %v", ErrMalformed, err)
	}
	sig, err := enc.DecodeString(parts[2])
	if err != nil {
		return Head{}, fmt.Errorf("%w: signature: %v", ErrMalformed, err)
	}
	var hdr struct {
		Alg  string          `json:"alg"`
		Kid  string          `json:"kid"`
		Typ  string          `json:"typ"`
		Crit json.RawMessage `json:"crit"`
		B64  *bool           `json:"b64"`
	}
	if err := json.Unmarshal(hdrJSON, &hdr); err != nil {
		return Head{}, fmt.Errorf("%w: protected header: %v", ErrMalformed, err)
	}
	if hdr.Crit != nil || (hdr.B64 != nil && !*hdr.B64) {
		return Head{}, fmt.Errorf("%w: critical headers are not supported", ErrMalformed)
	}
	if hdr.Typ != HeadType {
		return Head{}, fmt.Errorf("%w: typ %q, want %q", ErrWrongType, truncate(hdr.Typ, 40), HeadType)
	}
	did, frag, ok := strings.Cut(hdr.Kid, "#")
	if !ok || frag != strings.TrimPrefix(did, "did:key:") {
		return Head{}, fmt.Errorf("%w: kid %q is not a did:key URL", ErrMalformed, truncate(hdr.Kid, 80))
	}
	if node != "" && did != node {
		return Head{}, fmt.Errorf("%w: the head is signed by %s, not %s", ErrWrongSigner, truncate(did, 80), node)
	}
	key, err := parseKey(did)
	if err != nil {
		return Head{}, err
	}
	if hdr.Alg != key.alg() {
		return Head{}, fmt.Errorf("%w: alg %q for a key that signs %s", ErrUnsupportedKey, truncate(hdr.Alg, 20), key.alg())
	}
	if !key.verify([]byte(parts[0]+"."+parts[1]), sig) {
		return Head{}, fmt.Errorf("%w: head signed as %s", ErrBadSignature, did)
	}
	var body struct {
		Size   *uint64 `json:"size"`
		Root   *Hash   `json:"root"`
		Epoch  int64   `json:"epoch"`
		Closed int64   `json:"closed"`
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	if err := dec.Decode(&body); err != nil {
		return Head{}, fmt.Errorf("%w: head payload: %v", ErrMalformed, err)
	}
	if body.Size == nil || body.Root == nil {
		return Head{}, fmt.Errorf("%w: head payload has no size or root", ErrMalformed)
	}
	return Head{Size: *body.Size, Root: *body.Root, Epoch: body.Epoch, Closed: body.Closed, Signer: did}, nil
}
