package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/identity"
)

// CardType is the `typ` of a signed Agent Card.
const CardType = "surety-card+jws"

// Sentinel errors of cards. A *CardError wraps one of them.
var (
	// ErrMalformed: not a signed card, or a field out of shape.
	ErrMalformed = errors.New("registry: malformed card")
	// ErrOversize: the signed card is larger than MaxCardSize.
	ErrOversize = errors.New("registry: card too large")
	// ErrForged: the signature does not verify.
	ErrForged = errors.New("registry: forged card")
	// ErrWrongDID: the card is signed by another DID than the one it describes.
	ErrWrongDID = errors.New("registry: card signed by another DID")
	// ErrStale: the node has a card for this DID with the same or a higher sequence number.
	ErrStale = errors.New("registry: stale card")
	// ErrRateLimited: too many unstaked cards from this DID or this source.
	ErrRateLimited = errors.New("registry: rate limited")
	// ErrUnknownAgent: no card for this DID.
	ErrUnknownAgent = errors.New("registry: unknown agent")
	// ErrBusy: the node runs as many searches at once as it takes (Config.MaxSearches), and
	// none ended within searchWait; nothing of this one ran.
	ErrBusy = errors.New("registry: too many searches at once")
)

// CardError says why a card was refused.
type CardError struct {
	DID    string
	Err    error
	Detail string
}

// Error reads like "registry: stale card: sequence 3 is not above 5 (did:key:...)".
func (e *CardError) Error() string {
	s := e.Err.Error()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.DID != "" {
		s += " (" + e.DID + ")"
	}
	return s
}

// Unwrap returns the sentinel.
func (e *CardError) Unwrap() error { return e.Err }

func cardErr(did string, err error, format string, args ...any) error {
	return &CardError{DID: did, Err: err, Detail: fmt.Sprintf(format, args...)}
}

// Endpoint is where an agent can be reached.
type Endpoint struct {
	// Kind is a2a, mcp or http.
	Kind string `json:"kind"`
	URL  string `json:"url"`
}

// Card is an Agent Card: who an agent is, what it can do and how to reach it. The agent
// signs it with its DID key; a higher Seq replaces a lower one, and a lower one never comes
// back.
type Card struct {
	DID          string         `json:"did"`
	Name         string         `json:"name"`
	Description  string         `json:"description,omitempty"`
	Capabilities []string       `json:"capabilities"`
	Endpoints    []Endpoint     `json:"endpoints,omitempty"`
	Wallet       common.Address `json:"wallet"`
	Seq          uint64         `json:"seq"`
	Updated      int64          `json:"updated"`
}

// SignedCard is a card with the JWS it came in.
type SignedCard struct {
	Card
	// JWS is the signed card as the agent signed it: a compact JWS, or a signed A2A card
	// (a JSON object, in canonical form, with the one signature that verified).
	JWS string `json:"jws"`
}

// Sign signs the card with its agent's key.
func Sign(c Card, k *identity.Key) (*SignedCard, error) {
	if c.DID != k.DID.String() {
		return nil, cardErr(c.DID, ErrWrongDID, "the key is %s", k.DID)
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	jws, err := k.SignDocument(payload, CardType)
	if err != nil {
		return nil, err
	}
	return &SignedCard{Card: c, JWS: jws}, nil
}

// Parse verifies a signed card, in Surety's JWS form or as a signed A2A card (a JSON object,
// see a2a.go): size, signature by the card's own DID, shape. now bounds how far in the
// future Updated may be (skew included).
func Parse(raw []byte, now time.Time) (*SignedCard, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > MaxCardSize {
		return nil, cardErr("", ErrOversize, "%d bytes, at most %d", len(raw), MaxCardSize)
	}
	if len(raw) > 0 && raw[0] == '{' {
		return parseA2A(raw, now)
	}
	payload, signer, err := identity.VerifyJWS(raw, CardType)
	if err != nil {
		switch {
		case errors.Is(err, identity.ErrBadSignature):
			return nil, cardErr("", ErrForged, "signature does not verify")
		default:
			return nil, cardErr("", ErrMalformed, "%v", err)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	var c Card
	if err := dec.Decode(&c); err != nil {
		return nil, cardErr(signer, ErrMalformed, "not a card: %v", err)
	}
	if c.DID != signer {
		return nil, cardErr(c.DID, ErrWrongDID, "signed by %s", signer)
	}
	if err := c.validate(now); err != nil {
		return nil, err
	}
	return &SignedCard{Card: c, JWS: string(raw)}, nil
}

func (c *Card) validate(now time.Time) error {
	bad := func(format string, args ...any) error { return cardErr(c.DID, ErrMalformed, format, args...) }
	switch {
	case c.Seq == 0:
		return bad("seq must be at least 1")
	case strings.TrimSpace(c.Name) == "" || utf8.RuneCountInString(c.Name) > maxName:
		return bad("name must be 1 to %d characters", maxName)
	case utf8.RuneCountInString(c.Description) > maxDescription:
		return bad("description is longer than %d characters", maxDescription)
	case len(c.Capabilities) > maxCapabilities:
		return bad("more than %d capabilities", maxCapabilities)
	case len(c.Endpoints) > maxEndpoints:
		return bad("more than %d endpoints", maxEndpoints)
	case c.Updated <= 0 || c.Updated > now.Add(maxCardAhead).Unix():
		return bad("updated must be a unix time, not in the future")
	}
	seen := map[string]bool{}
	for _, cap := range c.Capabilities {
		if !validCapability(cap) {
			return bad("capability %q: use 1 to %d of a-z 0-9 . - : /", truncateStr(cap, 70), maxCapability)
		}
		if seen[cap] {
			return bad("capability %q listed twice", cap)
		}
		seen[cap] = true
	}
	for _, e := range c.Endpoints {
		switch e.Kind {
		case "a2a", "mcp", "http":
		default:
			return bad("endpoint kind %q: use a2a, mcp or http", truncateStr(e.Kind, 20))
		}
		u, err := url.Parse(e.URL)
		if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http" && u.Scheme != "wss" && u.Scheme != "ws") || len(e.URL) > 512 {
			return bad("endpoint URL %q is not an http(s) or ws(s) URL", truncateStr(e.URL, 80))
		}
	}
	return nil
}

func validCapability(s string) bool {
	if s == "" || len(s) > maxCapability {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && !strings.ContainsRune(".-:/", r) {
			return false
		}
	}
	return true
}

func truncateStr(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
