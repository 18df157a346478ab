package reputation

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/identity"
)

// AuditKind marks an envelope body as an audit.
const AuditKind = "surety.audit/1"

// ErrBadAudit refuses an envelope that is not a well-formed audit; the AuditError says why.
var ErrBadAudit = errors.New("reputation: not a valid audit")

// AuditError is a refused audit with the reason, for people.
type AuditError struct {
	Err    error
	Detail string
}

// Error is the sentinel's text and the reason.
func (e *AuditError) Error() string { return e.Err.Error() + ": " + e.Detail }

// Unwrap gives the sentinel.
func (e *AuditError) Unwrap() error { return e.Err }

func badAudit(format string, args ...any) error {
	return &AuditError{Err: ErrBadAudit, Detail: fmt.Sprintf(format, args...)}
}

// Audit is an auditor's signed judgement of a subject's work: a score in [0, 1] for a bounty
// (the envelope's bounty field) or for an envelope the subject sent, with evidence.
//
// The signed envelope carries it as its body:
//
//	{"kind": "surety.audit/1", "subject": "did:…", "envelope": "<id>" (or the envelope's
//	 bounty), "score": 0.8, "evidence": {"hash": "0x<32 bytes>", "uri": "https://…"}}
//
// The auditor is the envelope's sender and the audit's time its iat.
type Audit struct {
	Auditor  string              `json:"auditor"`
	Subject  string              `json:"subject"`
	Bounty   *identity.BountyRef `json:"bounty,omitempty"`
	Envelope string              `json:"envelope,omitempty"`
	Score    float64             `json:"score"`
	Evidence Evidence            `json:"evidence"`
	Time     int64               `json:"time"`
	// Nonce is the envelope's: an auditor's audit is one per nonce, however its envelope is
	// serialized or its signature encoded.
	Nonce string `json:"-"`
}

// Evidence backs an audit: a hash of what was examined, and where to find it.
type Evidence struct {
	Hash common.Hash `json:"hash"`
	URI  string      `json:"uri,omitempty"`
}

// Target names what was audited; one audit per (auditor, subject, target) counts, a later one
// superseding an earlier one.
func (a *Audit) Target() string {
	if a.Bounty != nil {
		return fmt.Sprintf("bounty:%d:%s:%d", a.Bounty.ChainID, strings.ToLower(a.Bounty.Escrow), a.Bounty.ID)
	}
	return "envelope:" + a.Envelope
}

// setTarget is Target read back.
func setTarget(a *Audit, target string) error {
	if id, ok := strings.CutPrefix(target, "envelope:"); ok {
		a.Envelope = id
		return nil
	}
	var ref identity.BountyRef
	var escrow string
	if _, err := fmt.Sscanf(strings.ReplaceAll(target, ":", " "), "bounty %d %s %d", &ref.ChainID, &escrow, &ref.ID); err != nil {
		return fmt.Errorf("reputation: stored target %q: %w", target, err)
	}
	ref.Escrow = common.HexToAddress(escrow).Hex()
	a.Bounty = &ref
	return nil
}

// auditBody is the envelope body as signed.
type auditBody struct {
	Kind     string          `json:"kind"`
	Subject  string          `json:"subject"`
	Envelope string          `json:"envelope"`
	Score    *float64        `json:"score"`
	Evidence json.RawMessage `json:"evidence"`
}

type evidenceBody struct {
	Hash string `json:"hash"`
	URI  string `json:"uri"`
}

// ParseAudit reads the audit in a verified envelope (identity.Verifier checked signature,
// times and replay). It checks the audit's own shape: kind, subject DID (not the auditor),
// exactly one target, a score in [0, 1], a 32-byte evidence hash and an http(s) evidence URI.
func ParseAudit(e *identity.Envelope) (*Audit, error) {
	if len(e.Body) == 0 {
		return nil, badAudit("the envelope has no body")
	}
	dec := json.NewDecoder(bytes.NewReader(e.Body))
	dec.DisallowUnknownFields()
	var b auditBody
	if err := dec.Decode(&b); err != nil {
		return nil, badAudit("body: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, badAudit("body: data after the audit")
	}
	if b.Kind != AuditKind {
		return nil, badAudit("body kind is %q, want %q", truncate(b.Kind, 40), AuditKind)
	}
	if _, err := identity.ParseDID(b.Subject); err != nil {
		return nil, badAudit("subject: %v", err)
	}
	if b.Subject == e.Sender {
		return nil, badAudit("an auditor cannot audit itself")
	}
	switch {
	case e.Bounty != nil && b.Envelope != "":
		return nil, badAudit("name a bounty or an envelope, not both")
	case e.Bounty == nil && b.Envelope == "":
		return nil, badAudit("name what was audited: the envelope's bounty, or an envelope id")
	case e.Bounty != nil && !common.IsHexAddress(e.Bounty.Escrow):
		return nil, badAudit("bounty escrow %q is not an address", truncate(e.Bounty.Escrow, 60))
	case len(b.Envelope) > 128:
		return nil, badAudit("envelope id longer than 128 characters")
	}
	if b.Score == nil || math.IsNaN(*b.Score) || *b.Score < 0 || *b.Score > 1 {
		return nil, badAudit("score must be a number from 0 to 1")
	}
	var ev evidenceBody
	if len(b.Evidence) == 0 {
		return nil, badAudit("evidence is missing: give at least its hash")
	}
	evDec := json.NewDecoder(bytes.NewReader(b.Evidence))
	evDec.DisallowUnknownFields()
	if err := evDec.Decode(&ev); err != nil {
		return nil, badAudit("evidence: %v", err)
	}
	raw, err := hex.DecodeString(strings.TrimPrefix(ev.Hash, "0x"))
	if err != nil || len(raw) != 32 || !strings.HasPrefix(ev.Hash, "0x") {
		return nil, badAudit("evidence hash must be 0x and 32 bytes of hex")
	}
	if ev.URI != "" {
		if len(ev.URI) > maxEvidenceURI {
			return nil, badAudit("evidence URI longer than %d characters", maxEvidenceURI)
		}
		u, err := url.Parse(ev.URI)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, badAudit("evidence URI must be an http(s) URL")
		}
	}
	a := &Audit{Auditor: e.Sender, Subject: b.Subject, Envelope: b.Envelope, Score: *b.Score,
		Evidence: Evidence{Hash: common.BytesToHash(raw), URI: ev.URI}, Time: e.IssuedAt, Nonce: e.Nonce}
	if e.Bounty != nil {
		ref := *e.Bounty
		ref.Escrow = common.HexToAddress(ref.Escrow).Hex()
		a.Bounty = &ref
	}
	return a, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
