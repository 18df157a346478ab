package identity

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jws"
)

// EnvelopeType is the `typ` header Surety puts on envelopes.
const EnvelopeType = "surety-envelope+jws"

// Envelope states.
const (
	StateDiscussion     = "discussion"
	StateTaskAssignment = "task_assignment"
	StateExecution      = "execution"
	StateConclusion     = "conclusion"
)

// BountyRef points at a bounty in an escrow contract.
type BountyRef struct {
	ChainID uint64 `json:"chain_id"`
	Escrow  string `json:"escrow"`
	ID      uint64 `json:"id"`
}

// Envelope is the JSON payload of a signed message. Fields this version does not know are
// kept: a verified envelope carries its payload exactly as signed (Verified.Payload).
type Envelope struct {
	ID      string   `json:"id"`
	GroupID string   `json:"group_id,omitempty"`
	Sender  string   `json:"sender"`
	To      []string `json:"to,omitempty"`
	// Aud and ChainID name the one node and chain a state-changing envelope is for (see
	// CheckAudience), so that it causes one effect, at one node, on one chain.
	Aud      string          `json:"aud,omitempty"`
	ChainID  uint64          `json:"chain_id,omitempty"`
	State    string          `json:"state,omitempty"`
	TaskDesc string          `json:"task_desc,omitempty"`
	Bounty   *BountyRef      `json:"bounty,omitempty"`
	Body     json.RawMessage `json:"body,omitempty"`
	IssuedAt int64           `json:"iat"`
	Expires  int64           `json:"exp"`
	Nonce    string          `json:"nonce"`
}

// NewNonce returns 16 random bytes in hex: a fresh envelope nonce or id.
func NewNonce() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("identity: no randomness: %v", err))
	}
	return hex.EncodeToString(b)
}

// FillEnvelope completes a JSON payload for signing by k: it sets sender (to k's DID),
// iat (now), exp (now + ttl), nonce and id where they are missing, keeping every other field
// as it is. A sender that is set must be k's DID.
func FillEnvelope(payload []byte, k *Key, now time.Time, ttl time.Duration) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(payload, &m); err != nil {
		return nil, fmt.Errorf("%w: payload is not a JSON object: %v", ErrMalformed, err)
	}
	if m == nil {
		return nil, fmt.Errorf("%w: payload is not a JSON object", ErrMalformed)
	}
	set := func(name string, v any) {
		if _, ok := m[name]; !ok {
			b, _ := json.Marshal(v)
			m[name] = b
		}
	}
	if s, ok := m["sender"]; ok {
		var sender string
		if err := json.Unmarshal(s, &sender); err != nil || sender != k.DID.String() {
			return nil, fmt.Errorf("%w: sender %s is not the signing key's DID %s", ErrKidNotSender, s, k.DID)
		}
	}
	set("sender", k.DID.String())
	set("iat", now.Unix())
	set("exp", now.Add(ttl).Unix())
	set("nonce", NewNonce())
	set("id", NewNonce())
	return json.Marshal(m)
}

// perAlg builds one value per algorithm (a jws.Signer or jws.Verifier) and keeps it.
type perAlg[T any] struct {
	mu    sync.Mutex
	made  map[jwa.SignatureAlgorithm]T
	build func(jwa.SignatureAlgorithm) (T, error)
}

func (p *perAlg[T]) get(alg jwa.SignatureAlgorithm) (T, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := p.made[alg]; ok {
		return v, nil
	}
	v, err := p.build(alg)
	if err != nil {
		return v, err
	}
	if p.made == nil {
		p.made = map[jwa.SignatureAlgorithm]T{}
	}
	p.made[alg] = v
	return v, nil
}

var signers = perAlg[jws.Signer]{build: jws.NewSigner}

// protectedHeader is the encoded protected header of k's envelopes: the same for every
// envelope, so it is built once.
func (k *Key) protectedHeader() string {
	k.headerOnce.Do(func() {
		h, _ := json.Marshal(struct {
			Alg string `json:"alg"`
			Kid string `json:"kid"`
			Typ string `json:"typ"`
		}{string(k.Algorithm()), k.DID.KeyID(), EnvelopeType})
		k.header = base64.RawURLEncoding.EncodeToString(h)
	})
	return k.header
}

// SignCompact signs payload (an envelope's JSON, used as is) with k and returns the compact
// JWS. The protected header holds alg, kid (k's DID URL) and typ. jwx/v2 computes the
// signature; Surety assembles the compact form itself, with the header encoded once per key.
func (k *Key) SignCompact(payload []byte) (string, error) {
	s, err := signers.get(k.Algorithm())
	if err != nil {
		return "", err
	}
	hdr := k.protectedHeader()
	enc := base64.RawURLEncoding
	buf := make([]byte, 0, len(hdr)+1+enc.EncodedLen(len(payload))+1+enc.EncodedLen(64))
	buf = append(buf, hdr...)
	buf = append(buf, '.')
	buf = enc.AppendEncode(buf, payload)
	sig, err := s.Sign(buf, k.Private)
	if err != nil {
		return "", fmt.Errorf("sign envelope: %w", err)
	}
	buf = append(buf, '.')
	buf = enc.AppendEncode(buf, sig)
	return string(buf), nil
}

// SignDocument signs payload as a compact JWS of type typ (a signed document such as an
// Agent Card, checked with VerifyJWS).
func (k *Key) SignDocument(payload []byte, typ string) (string, error) {
	s, err := signers.get(k.Algorithm())
	if err != nil {
		return "", err
	}
	h, _ := json.Marshal(struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
		Typ string `json:"typ"`
	}{string(k.Algorithm()), k.DID.KeyID(), typ})
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(h) + "." + enc.EncodeToString(payload)
	sig, err := s.Sign([]byte(input), k.Private)
	if err != nil {
		return "", fmt.Errorf("sign document: %w", err)
	}
	return input + "." + enc.EncodeToString(sig), nil
}

// SignJSON signs payload with every key and returns the general JWS JSON serialization,
// one signature per key (jwx/v2 builds it). The first key should be the sender's.
func SignJSON(payload []byte, keys ...*Key) ([]byte, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("sign envelope: no keys")
	}
	opts := []jws.SignOption{jws.WithJSON()}
	for _, k := range keys {
		h := jws.NewHeaders()
		if err := h.Set(jws.KeyIDKey, k.DID.KeyID()); err != nil {
			return nil, err
		}
		if err := h.Set(jws.TypeKey, EnvelopeType); err != nil {
			return nil, err
		}
		opts = append(opts, jws.WithKey(k.Algorithm(), k.Private, jws.WithProtectedHeaders(h)))
	}
	out, err := jws.Sign(payload, opts...)
	if err != nil {
		return nil, fmt.Errorf("sign envelope: %w", err)
	}
	return out, nil
}

// splitCompact splits a compact JWS into its three segments without copying.
func splitCompact(raw []byte) (header, payload, sig []byte, ok bool) {
	i := bytes.IndexByte(raw, '.')
	if i < 0 {
		return nil, nil, nil, false
	}
	j := bytes.IndexByte(raw[i+1:], '.')
	if j < 0 {
		return nil, nil, nil, false
	}
	j += i + 1
	if bytes.IndexByte(raw[j+1:], '.') >= 0 {
		return nil, nil, nil, false
	}
	return raw[:i], raw[i+1 : j], raw[j+1:], true
}

// looksCompact reports whether raw is a compact JWS rather than JSON.
func looksCompact(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] != '{'
}

// CheckAudience refuses, with a *VerifyError, an envelope that does not name aud (the
// receiving node's DID) as its audience and chainID as its chain. Nodes call it on every
// envelope that changes state: an envelope accepted by one node cannot then act at another
// node that holds the same wallet, nor on another chain.
func (e *Envelope) CheckAudience(aud string, chainID uint64) error {
	switch {
	case e.Aud != aud:
		got := e.Aud
		if got == "" {
			got = "none"
		}
		return &VerifyError{Reason: ErrWrongAudience, Detail: fmt.Sprintf("aud is %s; this node is %s", truncate(got, 140), aud)}
	case e.ChainID != chainID:
		return &VerifyError{Reason: ErrWrongChain, Detail: fmt.Sprintf("chain_id is %d; this node is on chain %d", e.ChainID, chainID)}
	}
	return nil
}
