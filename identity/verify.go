package identity

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	ethcrypto "github.com/ethereum/go-ethereum/crypto"
	gojson "github.com/goccy/go-json"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jws"
)

// Why an envelope was refused. A *VerifyError wraps exactly one of these.
var (
	// ErrMalformed: not a JWS, not a JSON payload, or a required field missing.
	ErrMalformed = errors.New("malformed envelope")
	// ErrUnsupportedAlg: alg is not EdDSA or ES256K, or does not fit the key.
	ErrUnsupportedAlg = errors.New("unsupported algorithm")
	// ErrBadSignature: the signature does not verify with the kid's key.
	ErrBadSignature = errors.New("bad signature")
	// ErrKidNotSender: no signature is by the payload's sender.
	ErrKidNotSender = errors.New("kid is not the sender")
	// ErrExpired: exp has passed.
	ErrExpired = errors.New("expired")
	// ErrNotYetValid: iat is in the future, beyond the allowed clock skew.
	ErrNotYetValid = errors.New("issued in the future")
	// ErrTooLong: exp is too far after iat.
	ErrTooLong = errors.New("lifetime too long")
	// ErrReplayed: the sender already used this nonce.
	ErrReplayed = errors.New("replayed")
	// ErrIssuedBeforeStart: issued before this node started, so its nonce may have been
	// seen by the previous run; the sender should send a fresh envelope.
	ErrIssuedBeforeStart = errors.New("issued before this node started")
	// ErrRevoked: a signer's DID was revoked on chain by a controller it bound.
	ErrRevoked = errors.New("revoked")
	// ErrRotated: a signer's DID was rotated away on chain; its successor acts now.
	ErrRotated = errors.New("rotated away")
	// ErrWrongAudience: a state-changing envelope names another node in aud, or none.
	ErrWrongAudience = errors.New("addressed to another node")
	// ErrWrongChain: a state-changing envelope names another chain in chain_id, or none.
	ErrWrongChain = errors.New("for another chain")
	// ErrReplayCacheFull: the node remembers as many live nonces as it may; try later.
	ErrReplayCacheFull = errors.New("replay cache full")
	// ErrReplayBudget: this sender already has as many live envelopes at the node as one
	// sender may; its envelopes are refused until some expire, and no one else's are.
	ErrReplayBudget = errors.New("sender's replay budget spent")
	// ErrIngressBudget: the peer or client address the envelope came from (WithIngress) sent
	// more envelopes than the node checks from one source; refused before any signature
	// is checked, until its budget refills.
	ErrIngressBudget = errors.New("ingress budget spent")
)

// VerifyError says why an envelope was refused, and whose key was involved.
type VerifyError struct {
	Reason error  // one of the sentinels above
	KeyID  string // the kid concerned, when there is one
	Detail string
	// Authentic holds the envelope when its only fault is freshness (replayed, or issued
	// before this node started), or, for CheckArchived, a key the chain closed since: it is
	// genuine, so a caller that recognizes a retried request (an Idempotency-Key) may still
	// answer it from what it stored, and one replaying a log may still count it.
	Authentic *Verified
}

// Error reads like "envelope refused: bad signature (kid did:key:z6Mk...#z6Mk...)".
func (e *VerifyError) Error() string {
	s := "envelope refused: " + e.Reason.Error()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.KeyID != "" {
		s += " (kid " + truncate(e.KeyID, 140) + ")"
	}
	return s
}

// Unwrap returns the reason.
func (e *VerifyError) Unwrap() error { return e.Reason }

func refuse(reason error, kid, format string, args ...any) error {
	return &VerifyError{Reason: reason, KeyID: kid, Detail: fmt.Sprintf(format, args...)}
}

// KeyState is what the chain says of a DID's key.
type KeyState string

// Key states.
const (
	// KeyActive: no controller the DID bound on chain closed it (or it was never bound).
	KeyActive KeyState = "active"
	// KeyRevoked: a controller the DID bound revoked it.
	KeyRevoked KeyState = "revoked"
	// KeyRotated: a controller the DID bound moved it to a successor DID.
	KeyRotated KeyState = "rotated"
)

// KeyStatus is a DID's key state with the successor a rotation named.
type KeyStatus struct {
	State KeyState
	// Successor is the DID a rotation moved to; empty for a revocation, or for a rotation
	// whose new binding did not verify.
	Successor string
}

// Closed reports whether the key may no longer act.
func (k KeyStatus) Closed() bool { return k.State == KeyRevoked || k.State == KeyRotated }

// Err is the verifier's reason for refusing a closed key (nil for an active one).
func (k KeyStatus) Err() error {
	switch k.State {
	case KeyRevoked:
		return ErrRevoked
	case KeyRotated:
		return ErrRotated
	}
	return nil
}

// KeyStatusReader says what the chain's index knows of a DID's key (see package stake). It
// returns an error only when it cannot tell; the verifier then refuses the envelope.
type KeyStatusReader interface {
	KeyStatus(ctx context.Context, did string) (KeyStatus, error)
}

// VerifierConfig sets up a Verifier.
type VerifierConfig struct {
	// Skew is the clock difference tolerated on iat and exp; 0 means 30s.
	Skew time.Duration
	// MaxLifetime bounds exp - iat; 0 means 10 minutes. It also bounds how long nonces
	// are remembered.
	MaxLifetime time.Duration
	// MaxNonces bounds the nonces remembered at once; 0 means 1<<20 (about 40 MB). The last
	// fifth of it is kept for senders the pool already holds: once it is four-fifths full,
	// only their envelopes are taken, so a flood of fresh keys cannot lock them out.
	MaxNonces int
	// MaxNoncesPerSender bounds the nonces one sender may have remembered at once, so one
	// key's flood cannot spend the pool for everyone; 0 means 4096 (about 7 envelopes a
	// second, sustained, over the replay window).
	MaxNoncesPerSender int
	// Started is when this node started: envelopes issued before it are refused, so a
	// restart never reopens the replay window. Zero means now.
	Started time.Time
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Keys, when set, is asked about every signer: a revoked or rotated-away key is refused.
	Keys KeyStatusReader
	// KeyCacheSize bounds the cache of parsed signer keys; 0 means 4096.
	KeyCacheSize int
	// IngressRate (per second) and IngressBurst bound the envelopes Verify and Check take
	// from one source (a peer, a client address: WithIngress), before any signature is
	// checked; 0 means the defaults in limits.go (20 a second, bursts of 200).
	IngressRate  float64
	IngressBurst int
}

// Verifier checks envelopes: signature, kid, times, replay and revocation.
type Verifier struct {
	cfg     VerifierConfig
	replay  *replayCache
	keys    *keyCache
	ingress *ingressBudget
}

// NewVerifier builds a Verifier.
func NewVerifier(cfg VerifierConfig) *Verifier {
	if cfg.Skew == 0 {
		cfg.Skew = DefaultSkew
	}
	if cfg.MaxLifetime == 0 {
		cfg.MaxLifetime = DefaultMaxLifetime
	}
	if cfg.MaxNonces == 0 {
		cfg.MaxNonces = defaultMaxNonces
	}
	if cfg.MaxNoncesPerSender == 0 {
		cfg.MaxNoncesPerSender = defaultNoncesPerSender
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Started.IsZero() {
		cfg.Started = cfg.Now()
	}
	if cfg.KeyCacheSize == 0 {
		cfg.KeyCacheSize = defaultCacheSize
	}
	if cfg.IngressRate == 0 {
		cfg.IngressRate = defaultIngressRate
	}
	if cfg.IngressBurst == 0 {
		cfg.IngressBurst = defaultIngressBurst
	}
	return &Verifier{
		cfg:     cfg,
		replay:  newReplayCache(cfg.MaxNonces, cfg.MaxNoncesPerSender, cfg.MaxLifetime+2*cfg.Skew),
		keys:    newKeyCache(cfg.KeyCacheSize),
		ingress: newIngressBudget(cfg.IngressRate, cfg.IngressBurst, maxIngressSources),
	}
}

// CheckKeys refuses, with a *VerifyError (ErrRevoked or ErrRotated), the first DID whose key
// the chain closed. Documents signed outside envelopes (cards, bindings) are checked with it.
func (v *Verifier) CheckKeys(ctx context.Context, dids ...string) error {
	for _, d := range dids {
		st, err := v.KeyStatus(ctx, d)
		if err != nil {
			return err
		}
		if reason := st.Err(); reason != nil {
			return &VerifyError{Reason: reason, Detail: st.describe(d)}
		}
	}
	return nil
}

// KeyStatus is the chain's word on did's key; KeyActive when no reader is configured.
func (v *Verifier) KeyStatus(ctx context.Context, did string) (KeyStatus, error) {
	if v.cfg.Keys == nil {
		return KeyStatus{State: KeyActive}, nil
	}
	st, err := v.cfg.Keys.KeyStatus(ctx, did)
	if err != nil {
		return st, fmt.Errorf("check the key status of %s: %w", did, err)
	}
	return st, nil
}

func (k KeyStatus) describe(did string) string {
	s := did + " was " + string(k.State) + " on chain"
	if k.Successor != "" {
		s += "; its successor is " + k.Successor
	}
	return s
}

// Verified is an envelope that passed every check.
type Verified struct {
	Envelope Envelope
	// Payload is the payload exactly as signed, unknown fields included.
	Payload json.RawMessage
	// Signers are the kids of the signatures, the sender's first.
	Signers []string
}

// signature is one signature to check: its protected header (raw and parsed), and the
// signing input.
type signature struct {
	header protected
	input  []byte
	sig    []byte
}

type protected struct {
	Alg  string   `json:"alg"`
	Kid  string   `json:"kid"`
	Typ  string   `json:"typ"`
	Crit []string `json:"crit"`
	B64  *bool    `json:"b64"`
}

// Verify checks an envelope in compact or JSON serialization. Every signature must verify,
// one of them must be by the payload's sender, the payload must be within its validity
// window and its nonce new, and the sender must not be revoked. The error is a
// *VerifyError whose Reason says exactly why.
func (v *Verifier) Verify(ctx context.Context, raw []byte) (*Verified, error) {
	return v.verify(ctx, raw, spendNonce)
}

// Check is Verify without spending the nonce: every check, and ErrReplayed for an envelope
// this node already accepted, but nothing remembered. A route that only reports on an
// envelope uses it, so checking costs the replay cache nothing and an envelope checked here
// can still be used here.
func (v *Verifier) Check(ctx context.Context, raw []byte) (*Verified, error) {
	return v.verify(ctx, raw, checkNonce)
}

// CheckArchived checks an envelope another node already accepted and kept, which anti-entropy
// hands to a node that missed it: every signature, the kid, the shape, that it was not issued
// in the future, and the chain's word on its keys as Verify does; but not whether it has
// expired since, was issued before this node started, or was seen before. Such envelopes
// change nothing twice: whoever stores them refuses duplicates by their own ids (an audit's
// leaf, a thread envelope's id, a membership's iat), and an audit log refuses closed epochs.
func (v *Verifier) CheckArchived(ctx context.Context, raw []byte) (*Verified, error) {
	return v.verify(ctx, raw, archived)
}

// How verify treats an envelope's time window and nonce.
type verifyMode int

const (
	spendNonce verifyMode = iota // in its window, nonce new and now spent
	checkNonce                   // in its window, nonce new
	archived                     // issued by now; any age; nonce not looked at
)

func (v *Verifier) verify(ctx context.Context, raw []byte, mode verifyMode) (*Verified, error) {
	// What a source may have checked is counted first: parsing and signatures cost far more
	// than a bucket. Archived envelopes come from anti-entropy, which this node asks for.
	if src, ok := ingressOf(ctx); ok && mode != archived && !v.ingress.take(src, v.cfg.Now()) {
		return nil, refuse(ErrIngressBudget, "", "at most %g envelopes a second, in bursts of %d, from one peer or address",
			v.cfg.IngressRate, v.cfg.IngressBurst)
	}
	if len(raw) > MaxEnvelopeSize {
		return nil, refuse(ErrMalformed, "", "larger than %d bytes", MaxEnvelopeSize)
	}
	var (
		sigs    []signature
		payload []byte
		err     error
	)
	if looksCompact(raw) {
		sigs, payload, err = parseCompact(bytes.TrimSpace(raw))
	} else {
		sigs, payload, err = parseJSONSerialization(raw)
	}
	if err != nil {
		return nil, err
	}
	out := &Verified{Payload: payload, Signers: make([]string, 0, len(sigs))}
	signerDIDs := make([]string, 0, len(sigs))
	for _, s := range sigs {
		did, err := v.checkSignature(s)
		if err != nil {
			return nil, err
		}
		// Each kind of signed document has its own typ, so a card, a binding or a plain JWT
		// never passes for an envelope.
		if s.header.Typ != EnvelopeType {
			return nil, refuse(ErrMalformed, s.header.Kid, "typ %q, want %q", truncate(s.header.Typ, 40), EnvelopeType)
		}
		out.Signers = append(out.Signers, s.header.Kid)
		signerDIDs = append(signerDIDs, did)
	}
	if err := exactMembers(payload); err != nil {
		return nil, refuse(ErrMalformed, "", "payload is not an envelope: %v", err)
	}
	if err := gojson.Unmarshal(payload, &out.Envelope); err != nil {
		return nil, refuse(ErrMalformed, "", "payload is not an envelope: %v", err)
	}
	e := &out.Envelope
	if e.Sender == "" || e.Nonce == "" || e.ID == "" || e.IssuedAt == 0 || e.Expires == 0 {
		return nil, refuse(ErrMalformed, "", "payload needs id, sender, iat, exp and nonce")
	}
	senderAt := -1
	for i, d := range signerDIDs {
		if d == e.Sender {
			senderAt = i
			break
		}
	}
	if senderAt < 0 {
		return nil, refuse(ErrKidNotSender, out.Signers[0], "sender is %s", truncate(e.Sender, 120))
	}
	if senderAt > 0 {
		out.Signers[0], out.Signers[senderAt] = out.Signers[senderAt], out.Signers[0]
	}
	if err := v.checkTimes(e, out.Signers[0], mode == archived); err != nil {
		var ve *VerifyError
		// Signed by its sender, only stale: a caller may let it fetch the answer of the request
		// it started (a write the node carries on after a restart, or past the envelope's
		// expiry, is answered this way), never start another.
		if errors.As(err, &ve) && (errors.Is(err, ErrIssuedBeforeStart) || errors.Is(err, ErrExpired)) {
			ve.Authentic = out
		}
		return nil, err
	}
	if err := v.CheckKeys(ctx, signerDIDs...); err != nil {
		var ve *VerifyError
		if mode == archived && errors.As(err, &ve) {
			ve.Authentic = out // signed by a key the chain closed since
		}
		return nil, err
	}
	if mode == archived {
		return out, nil
	}
	remember := v.replay.seen
	if mode == spendNonce {
		remember = v.replay.remember
	}
	if err := remember(e.Sender, e.Nonce, v.cfg.Now()); err != nil {
		ve := &VerifyError{Reason: err, KeyID: out.Signers[0], Detail: "nonce " + truncate(e.Nonce, 80)}
		if errors.Is(err, ErrReplayed) {
			ve.Authentic = out
		}
		return nil, ve
	}
	return out, nil
}

// checkTimes checks an envelope's time window; of an archived one, only that it was well
// formed and issued by now.
func (v *Verifier) checkTimes(e *Envelope, kid string, archived bool) error {
	now := v.cfg.Now()
	skew := int64(v.cfg.Skew / time.Second)
	n := now.Unix()
	switch {
	case e.Expires <= e.IssuedAt:
		return refuse(ErrMalformed, kid, "exp %d is not after iat %d", e.Expires, e.IssuedAt)
	case e.IssuedAt > n+skew:
		return refuse(ErrNotYetValid, kid, "iat %d is %ds ahead of this node's clock", e.IssuedAt, e.IssuedAt-n)
	case e.Expires-e.IssuedAt > int64(v.cfg.MaxLifetime/time.Second):
		return refuse(ErrTooLong, kid, "exp - iat is %ds, at most %s", e.Expires-e.IssuedAt, v.cfg.MaxLifetime)
	case archived:
		return nil
	case e.Expires+skew <= n:
		return refuse(ErrExpired, kid, "exp %d passed %ds ago", e.Expires, n-e.Expires)
	case e.IssuedAt < v.cfg.Started.Unix():
		return refuse(ErrIssuedBeforeStart, kid, "retry with a fresh envelope")
	}
	return nil
}

// checkSignature verifies one signature and returns the DID of its kid.
func (v *Verifier) checkSignature(s signature) (string, error) {
	kid := s.header.Kid
	if len(s.header.Crit) > 0 || (s.header.B64 != nil && !*s.header.B64) {
		return "", refuse(ErrMalformed, kid, "critical headers are not supported")
	}
	var alg jwa.SignatureAlgorithm
	switch s.header.Alg {
	case "EdDSA":
		alg = jwa.EdDSA
	case "ES256K":
		alg = jwa.ES256K
	default:
		return "", refuse(ErrUnsupportedAlg, kid, "alg %q (use EdDSA or ES256K)", s.header.Alg)
	}
	if kid == "" {
		return "", refuse(ErrMalformed, "", "protected header has no kid")
	}
	k, err := v.keys.get(kid)
	if err != nil {
		return "", refuse(ErrMalformed, kid, "kid: %v", err)
	}
	if k.alg != alg {
		return "", refuse(ErrUnsupportedAlg, kid, "alg %s does not fit a %s key", alg, k.keyType)
	}
	verifier, err := verifiers.get(alg)
	if err != nil {
		return "", refuse(ErrUnsupportedAlg, kid, "%v", err)
	}
	if err := verifier.Verify(s.input, s.sig, k.pub); err != nil {
		return "", refuse(ErrBadSignature, kid, "")
	}
	return k.did, nil
}

var verifiers = perAlg[jws.Verifier]{build: jws.NewVerifier}

// b64 decodes strictly: a changed trailing character must not decode to the same bytes.
var b64 = base64.RawURLEncoding.Strict()

func decodeSegment(seg []byte, what string) ([]byte, error) {
	out := make([]byte, b64.DecodedLen(len(seg)))
	n, err := b64.Decode(out, seg)
	if err != nil {
		return nil, refuse(ErrMalformed, "", "%s is not base64url", what)
	}
	return out[:n], nil
}

// headers remembers parsed protected headers by their encoded segment: an agent sends the
// same header (alg, kid, typ) with every envelope, so it is decoded once. Parsing is
// deterministic and only well-formed headers are kept, so the cache decides nothing.
var headers = struct {
	sync.RWMutex
	m map[string]protected
}{m: map[string]protected{}}

func parseProtected(seg []byte) (protected, error) {
	headers.RLock()
	h, ok := headers.m[string(seg)]
	headers.RUnlock()
	if ok {
		return h, nil
	}
	h, err := decodeProtected(seg)
	if err != nil || len(seg) > maxCachedHeader {
		return h, err
	}
	headers.Lock()
	if len(headers.m) >= maxCachedHeaders {
		clear(headers.m)
	}
	headers.m[string(seg)] = h
	headers.Unlock()
	return h, nil
}

func decodeProtected(seg []byte) (protected, error) {
	var h protected
	raw, err := decodeSegment(seg, "protected header")
	if err != nil {
		return h, err
	}
	if err := gojson.Unmarshal(raw, &h); err != nil {
		return h, refuse(ErrMalformed, "", "protected header is not JSON")
	}
	return h, nil
}

func parseCompact(raw []byte) ([]signature, []byte, error) {
	hdr, pay, sig, ok := splitCompact(raw)
	if !ok {
		return nil, nil, refuse(ErrMalformed, "", "a compact JWS has three dot-separated parts")
	}
	h, err := parseProtected(hdr)
	if err != nil {
		return nil, nil, err
	}
	payload, err := decodeSegment(pay, "payload")
	if err != nil {
		return nil, nil, err
	}
	sigBytes, err := decodeSegment(sig, "signature")
	if err != nil {
		return nil, nil, err
	}
	return []signature{{header: h, input: raw[:len(hdr)+1+len(pay)], sig: sigBytes}}, payload, nil
}

// jsonJWS is the general (signatures) or flattened (protected, signature) JSON serialization.
type jsonJWS struct {
	Payload    string         `json:"payload"`
	Protected  string         `json:"protected"`
	Signature  string         `json:"signature"`
	Signatures []jsonSigEntry `json:"signatures"`
}

type jsonSigEntry struct {
	Protected string `json:"protected"`
	Signature string `json:"signature"`
}

func parseJSONSerialization(raw []byte) ([]signature, []byte, error) {
	var j jsonJWS
	if err := gojson.Unmarshal(raw, &j); err != nil {
		return nil, nil, refuse(ErrMalformed, "", "not a compact or JSON JWS")
	}
	entries := j.Signatures
	if len(entries) == 0 && j.Signature != "" {
		entries = []jsonSigEntry{{Protected: j.Protected, Signature: j.Signature}}
	}
	if len(entries) == 0 || j.Payload == "" {
		return nil, nil, refuse(ErrMalformed, "", "JSON JWS needs a payload and at least one signature")
	}
	if len(entries) > maxSigners {
		return nil, nil, refuse(ErrMalformed, "", "more than %d signatures", maxSigners)
	}
	payload, err := decodeSegment([]byte(j.Payload), "payload")
	if err != nil {
		return nil, nil, err
	}
	sigs := make([]signature, 0, len(entries))
	for _, e := range entries {
		if e.Protected == "" {
			return nil, nil, refuse(ErrMalformed, "", "every signature needs a protected header")
		}
		h, err := parseProtected([]byte(e.Protected))
		if err != nil {
			return nil, nil, err
		}
		sigBytes, err := decodeSegment([]byte(e.Signature), "signature")
		if err != nil {
			return nil, nil, err
		}
		input := make([]byte, 0, len(e.Protected)+1+len(j.Payload))
		input = append(append(append(input, e.Protected...), '.'), j.Payload...)
		sigs = append(sigs, signature{header: h, input: input, sig: sigBytes})
	}
	return sigs, payload, nil
}

// resolvedKey is a signer key parsed from its kid, ready for verification.
type resolvedKey struct {
	did     string
	keyType KeyType
	alg     jwa.SignatureAlgorithm
	pub     any
}

// keyCache keeps parsed kids: parsing a did:key means base58 and a curve-point check,
// which would otherwise cost a sizeable part of each verification.
type keyCache struct {
	mu   sync.RWMutex
	max  int
	keys map[string]*resolvedKey
}

func newKeyCache(max int) *keyCache {
	return &keyCache{max: max, keys: make(map[string]*resolvedKey)}
}

func (c *keyCache) get(kid string) (*resolvedKey, error) {
	c.mu.RLock()
	k, ok := c.keys[kid]
	c.mu.RUnlock()
	if ok {
		return k, nil
	}
	d, frag, err := ParseKeyID(kid)
	if err != nil {
		return nil, err
	}
	if d.Method != "key" {
		return nil, fmt.Errorf("%s signs nothing: only did:key keys sign envelopes", d.Method)
	}
	if frag != d.Fragment() {
		return nil, fmt.Errorf("fragment %q is not this did:key's key", truncate(frag, 60))
	}
	pub, err := d.PublicKeyForJWS()
	if err != nil {
		return nil, err
	}
	alg := jwa.EdDSA
	if d.KeyType == Secp256k1 {
		alg = jwa.ES256K
		// es256k.Verify takes the key's bytes as they are. Kept uncompressed (65 bytes),
		// they spare libsecp256k1 the square root that decompressing the DID's 33-byte key
		// costs on every envelope.
		if ek, ok := pub.(*ecdsa.PublicKey); ok {
			pub = ethcrypto.FromECDSAPub(ek)
		}
	}
	k = &resolvedKey{did: d.String(), keyType: d.KeyType, alg: alg, pub: pub}
	c.mu.Lock()
	if len(c.keys) >= c.max {
		for old := range c.keys { // drop an arbitrary entry: any will do for a bound
			delete(c.keys, old)
			break
		}
	}
	c.keys[kid] = k
	c.mu.Unlock()
	return k, nil
}

// replayCache remembers (sender, nonce) pairs for at least window, in two generations that
// rotate every window: a pair lives in the current generation, then the previous one, and is
// forgotten only after both have turned over, by which time its envelope has expired.
type replayCache struct {
	mu           sync.Mutex
	max          int // nonces in all
	perSender    int // nonces of one sender
	window       time.Duration
	rotated      time.Time
	cur, old     map[[16]byte]struct{}
	curBy, oldBy map[string]int // nonces per sender, in each generation
}

func newReplayCache(max, perSender int, window time.Duration) *replayCache {
	return &replayCache{max: max, perSender: perSender, window: window, cur: map[[16]byte]struct{}{}, old: map[[16]byte]struct{}{},
		curBy: map[string]int{}, oldBy: map[string]int{}}
}

func replayKey(sender, nonce string) [16]byte {
	h := sha256.New()
	h.Write([]byte(sender))
	h.Write([]byte{0})
	h.Write([]byte(nonce))
	var key [16]byte
	copy(key[:], h.Sum(nil))
	return key
}

// rotate turns the generations over when a window has passed; the caller holds mu.
func (c *replayCache) rotate(now time.Time) {
	if c.rotated.IsZero() {
		c.rotated = now
	}
	switch elapsed := now.Sub(c.rotated); {
	case elapsed >= 2*c.window: // both generations are past: everything in them has expired
		c.old, c.cur = make(map[[16]byte]struct{}), make(map[[16]byte]struct{})
		c.oldBy, c.curBy = make(map[string]int), make(map[string]int)
		c.rotated = now
	case elapsed >= c.window:
		c.old, c.cur = c.cur, make(map[[16]byte]struct{}, len(c.cur))
		c.oldBy, c.curBy = c.curBy, make(map[string]int, len(c.curBy))
		c.rotated = now
	}
}

// seen reports ErrReplayed for a (sender, nonce) pair already remembered, and remembers
// nothing.
func (c *replayCache) seen(sender, nonce string, now time.Time) error {
	key := replayKey(sender, nonce)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rotate(now)
	if c.known(key) {
		return ErrReplayed
	}
	return nil
}

// known reports whether either generation holds key; the caller holds mu.
func (c *replayCache) known(key [16]byte) bool {
	_, inCur := c.cur[key]
	_, inOld := c.old[key]
	return inCur || inOld
}

// remember records (sender, nonce), refusing one seen before (ErrReplayed), one past the
// sender's budget (ErrReplayBudget) and one past the pool (ErrReplayCacheFull): at max for
// everyone, and for a sender the pool holds nothing of already once only the reserve
// (max/replayReserveDiv) is left.
func (c *replayCache) remember(sender, nonce string, now time.Time) error {
	key := replayKey(sender, nonce)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rotate(now)
	if c.known(key) {
		return ErrReplayed
	}
	held := c.curBy[sender] + c.oldBy[sender]
	if held >= c.perSender {
		return ErrReplayBudget
	}
	// Past the reserve mark only senders already in the pool are taken: fresh keys cost
	// nothing, so a flood of them must not lock out those the node was already serving.
	if n := len(c.cur) + len(c.old); n >= c.max || (held == 0 && n >= c.max-c.max/replayReserveDiv) {
		return ErrReplayCacheFull
	}
	c.cur[key] = struct{}{}
	c.curBy[sender]++
	return nil
}

// VerifyJWS checks a compact JWS of type typ signed by a did:key (kid = the DID URL, alg
// EdDSA or ES256K) and returns its payload and the signer's DID. It carries no envelope
// semantics (times, nonce): signed documents such as Agent Cards use it. Errors are
// *VerifyError.
func VerifyJWS(raw []byte, typ string) (payload []byte, signer string, err error) {
	if len(raw) > MaxEnvelopeSize {
		return nil, "", refuse(ErrMalformed, "", "larger than %d bytes", MaxEnvelopeSize)
	}
	sigs, payload, err := parseCompact(bytes.TrimSpace(raw))
	if err != nil {
		return nil, "", err
	}
	if sigs[0].header.Typ != typ {
		return nil, "", refuse(ErrMalformed, sigs[0].header.Kid, "typ %q, want %q", truncate(sigs[0].header.Typ, 40), typ)
	}
	signer, err = jwsVerifier.checkSignature(sigs[0])
	if err != nil {
		return nil, "", err
	}
	return payload, signer, nil
}

// jwsVerifier holds the key cache VerifyJWS shares across calls.
var jwsVerifier = &Verifier{keys: newKeyCache(4096)}

// Forged says whether an archived envelope failed verification through its sender's fault:
// not a key the chain closed since, a clock ahead of this node's, or a lifetime this node
// bounds more tightly than the one that took it.
func Forged(err error) bool {
	var ve *VerifyError
	return errors.As(err, &ve) && !errors.Is(err, ErrRevoked) && !errors.Is(err, ErrRotated) && !errors.Is(err, ErrNotYetValid) &&
		!errors.Is(err, ErrTooLong)
}

// Malformed says whether an envelope failed verification with err because it is forged or
// malformed (gossip rejects it, which costs the peer that sent it), rather than only stale,
// early, replayed, revoked or rotated away since, refused because this node is loaded (a
// budget spent, the replay pool full), or not checkable here: none of those is the fault of
// an honest peer that forwarded it.
func Malformed(err error) bool {
	var ve *VerifyError
	switch {
	case !errors.As(err, &ve):
		return false
	case errors.Is(err, ErrReplayed), errors.Is(err, ErrIssuedBeforeStart), errors.Is(err, ErrExpired),
		errors.Is(err, ErrNotYetValid), errors.Is(err, ErrRevoked), errors.Is(err, ErrRotated),
		errors.Is(err, ErrReplayBudget), errors.Is(err, ErrReplayCacheFull), errors.Is(err, ErrIngressBudget):
		return false
	}
	return true
}
