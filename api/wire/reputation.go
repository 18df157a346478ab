package wire

import (
	"fmt"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/reputation/merkle"
)

// Reputation is an agent's standing and score, and the audits that fed it
// (reputation.Reputation): GET /v1/reputation/{did}.
type Reputation struct {
	DID        string  `json:"did"`
	Score      float64 `json:"score"`
	Confidence float64 `json:"confidence"`
	Weight     float64 `json:"weight"` // Σ of its audits' weights, and of its imported feedback's
	// External is the part of Weight imported ERC-8004 feedback gives.
	External float64 `json:"external,omitempty"`
	// Rank is what the top list orders by: the 10% lower bound of the score, so little
	// evidence does not outrank much.
	Rank     float64        `json:"rank"`
	Standing float64        `json:"standing"` // what its word weighs as an auditor, in ETH
	Audits   int            `json:"audits"`   // audits that count
	Computed time.Time      `json:"computed"`
	Feeding  []*StoredAudit `json:"feeding,omitempty"`
	// Imported is the ERC-8004 feedback that counts about it (GET /v1/reputation/{did} only).
	Imported []*ImportedFeedback `json:"imported,omitempty"`
}

// ImportedFeedback is one client's ERC-8004 feedback as reputation counts it
// (reputation.ExternalSignal).
type ImportedFeedback struct {
	Subject string         `json:"subject"`
	Client  common.Address `json:"client"`
	Score   float64        `json:"score"`
	Time    int64          `json:"time"`
	Settled float64        `json:"settled"` // ETH paid between the client and the subject (payout + 200 × fee)
	Block   uint64         `json:"block"`
}

// ReputationList is the body of GET /v1/reputation?top=n.
type ReputationList struct {
	Agents []*Reputation `json:"agents"`
}

// Submitted is the answer of POST /v1/audits: the outcome of an accepted audit
// (reputation.Submitted).
type Submitted struct {
	Audit   *StoredAudit `json:"audit"`
	Current bool         `json:"current"` // it is the audit that counts for its target
	// Counted says what the audit weighs now, and why.
	Counted Counted `json:"counted"`
}

// Audit is an auditor's signed judgement of a subject's work: a score in [0, 1] for a bounty
// or for an envelope the subject sent, with evidence (reputation.Audit).
type Audit struct {
	Auditor  string     `json:"auditor"`
	Subject  string     `json:"subject"`
	Bounty   *BountyRef `json:"bounty,omitempty"`
	Envelope string     `json:"envelope,omitempty"`
	Score    float64    `json:"score"`
	Evidence Evidence   `json:"evidence"`
	Time     int64      `json:"time"`
}

// Target is what the audit judges, as the node names it: "bounty:<chain>:<escrow>:<id>" or
// "envelope:<id>" (reputation.Audit.Target). A StoredAudit's "envelope" is its signed
// envelope, not the judged envelope's id, so a decoded one names "envelope:" alone.
func (a *Audit) Target() string {
	if a.Bounty != nil {
		return fmt.Sprintf("bounty:%d:%s:%d", a.Bounty.ChainID, strings.ToLower(a.Bounty.Escrow), a.Bounty.ID)
	}
	return "envelope:" + a.Envelope
}

// BountyRef points at a bounty in an escrow contract.
type BountyRef struct {
	ChainID uint64 `json:"chain_id"`
	Escrow  string `json:"escrow"`
	ID      uint64 `json:"id"`
}

// Evidence backs an audit: a hash of what was examined, and where to find it.
type Evidence struct {
	Hash common.Hash `json:"hash"`
	URI  string      `json:"uri,omitempty"`
}

// Side is the side of a settled bounty an audit speaks for: "" (none), "poster" or
// "worker".
type Side string

// StoredAudit is an audit as a node keeps it: what it says, whether settlement backs it,
// and the leaf hash of the signed envelope it came in (reputation.StoredAudit).
type StoredAudit struct {
	Audit
	Leaf   merkle.Hash `json:"leaf"`
	Backed bool        `json:"backed"`
	// Side is the side of a settled bounty the audit speaks for (empty: none); of the audits
	// of one bounty and side, one is backed.
	Side Side `json:"side,omitempty"`
	// Settled is what the bounty of its side settled, in ETH: the backed audit's weight
	// scales with it.
	Settled      float64      `json:"settled,omitempty"`
	SupersededBy *merkle.Hash `json:"supersededBy,omitempty"`
	// Refused is why the acceptance rules refuse an audit the node keeps anyway: it counts 0.
	// Empty for one that passes.
	Refused string `json:"refused,omitempty"`
	// Weight, in an agent's reputation, is what the audit's auditor's audits of the subject
	// add to its Σ w now (one voice per auditor and subject).
	Weight float64 `json:"weight,omitempty"`
	// Raw is the signed envelope, exactly as received (base64 in JSON): anyone can verify it.
	Raw []byte `json:"envelope"`
}

// Counted is what an audit weighs in its subject's score at the time it is filed, with the
// parts of that weight (docs/REPUTATION.md).
type Counted struct {
	// Weight is what the audit adds to its subject's Σ w now; 0 when it does not count.
	Weight float64 `json:"weight"`
	// Backing is what settlement behind the audit multiplies its weight by.
	Backing float64 `json:"backing"`
	// Settled is what the audit's bounty settled, in ETH, when the audit speaks for a side.
	Settled float64 `json:"settled,omitempty"`
	// Standing is what the auditor's word weighs, in ETH; Stake the auditor's stake that
	// counts (none below the minimum).
	Standing float64 `json:"standing"`
	Stake    float64 `json:"stake"`
	// Why says in words what holds the weight where it is.
	Why string `json:"why"`
}

// Head is the audit log's tree head after an epoch closed, signed by the node
// (reputation.Head): GET /v1/log/head.
type Head struct {
	Size   uint64      `json:"size"`
	Root   merkle.Hash `json:"root"`
	Epoch  int64       `json:"epoch"`
	Closed int64       `json:"closed"`
	// Signed is the JWS by the node's DID over size, root, epoch and closed.
	Signed string `json:"signed"`
	// AnchorTx is the transaction that anchored this head on chain ("" until then).
	AnchorTx string `json:"anchorTx,omitempty"`
}

// InclusionProof is the answer of GET /v1/log/proof/inclusion.
type InclusionProof struct {
	Leaf  merkle.Hash   `json:"leaf"`
	Index uint64        `json:"index"`
	Size  uint64        `json:"size"`
	Path  []merkle.Hash `json:"path"`
}

// ConsistencyProof is the answer of GET /v1/log/proof/consistency.
type ConsistencyProof struct {
	From uint64        `json:"from"`
	To   uint64        `json:"to"`
	Path []merkle.Hash `json:"path"`
}

// LoggedLeaf is one leaf of the audit log with the signed audit envelope it is the hash of
// (reputation.LoggedLeaf).
type LoggedLeaf struct {
	Index uint64      `json:"index"`
	Leaf  merkle.Hash `json:"leaf"`
	// Epoch is the head that first included the leaf; AnchorEpoch the first head including
	// it whose root was anchored on chain by its own transaction (absent until one is). Both
	// heads are in the page's Heads.
	Epoch       int64  `json:"epoch"`
	AnchorEpoch *int64 `json:"anchorEpoch,omitempty"`
	// Envelope is the signed audit envelope exactly as logged (base64 in JSON):
	// SHA-256(0x00 ‖ Envelope) is Leaf (reputation/verify.EnvelopeLeaf).
	Envelope []byte `json:"envelope,omitempty"`
}

// LeafPage is the answer of GET /v1/log/leaves: a page of the log's leaves in log order,
// with the signed heads they name (reputation.LeafPage).
type LeafPage struct {
	Size   uint64       `json:"size"`
	Leaves []LoggedLeaf `json:"leaves"`
	Heads  []Head       `json:"heads"`
	// Next is the from of the next page; absent when the page reached the end.
	Next *uint64 `json:"next,omitempty"`
}

// ScoredHead is the answer of GET /v1/log/scores: the scores of a head anchored on chain,
// which the node computed from the log's leaves up to it and the chain's facts at the block of
// its first anchor alone, at the end of its epoch (reputation.ScoredHead). An auditor
// recomputes them (package auditor, `surety log verify --recompute`) and compares bit for bit.
type ScoredHead struct {
	Size     uint64      `json:"size"`
	Epoch    int64       `json:"epoch"`
	Root     merkle.Hash `json:"root"`
	At       int64       `json:"at"`
	Block    uint64      `json:"block"`
	AnchorTx string      `json:"anchorTx"`
	Params   ScoreParams `json:"params"`
	Scores   []HeadScore `json:"scores"`
	// Inputs are what the scores were computed from (asked for with inputs=1, kept for the
	// latest heads only).
	Inputs *ScoreInputs `json:"inputs,omitempty"`
	// Next is the after of the next page of scores (absent at the end).
	Next string `json:"next,omitempty"`
}

// ScoreParams are the scoring engine's parameters (reputation.Params; docs/REPUTATION.md).
type ScoreParams struct {
	Alpha       float64 `json:"alpha"`
	HalfLife    float64 `json:"halfLife"`
	Unbacked    float64 `json:"unbacked"`
	PriorA      float64 `json:"priorA"`
	PriorB      float64 `json:"priorB"`
	Tolerance   float64 `json:"tolerance"`
	MaxIter     int     `json:"maxIter"`
	MinStake    float64 `json:"minStake"`
	FullBacking float64 `json:"fullBacking"`
	Own         float64 `json:"own"`
}

// HeadScore is one agent's scores at a scored head (reputation.HeadScore).
type HeadScore struct {
	DID        string  `json:"did"`
	Score      float64 `json:"score"`
	Confidence float64 `json:"confidence"`
	Weight     float64 `json:"weight"`
	Standing   float64 `json:"standing"`
	Relative   float64 `json:"relative"`
}

// ScoreInputs are a scored head's inputs (reputation.ScoreInputs).
type ScoreInputs struct {
	Stake  map[string]float64 `json:"stake"`
	Audits []ScoredAudit      `json:"audits"`
}

// ScoredAudit is one audit that counts at a scored head (reputation.ScoredAudit).
type ScoredAudit struct {
	Leaf    merkle.Hash `json:"leaf"`
	Auditor string      `json:"auditor"`
	Subject string      `json:"subject"`
	Target  string      `json:"target"`
	Score   float64     `json:"score"`
	Time    int64       `json:"time"`
	Backed  bool        `json:"backed"`
	Settled float64     `json:"settled"`
}

// ScoreHistory is the answer of GET /v1/reputation/{did}/history: the agent's score at each
// scored head the node keeps, oldest first.
type ScoreHistory struct {
	DID    string       `json:"did"`
	Points []ScorePoint `json:"points"`
}

// ScorePoint is one point of a score history (reputation.ScorePoint).
type ScorePoint struct {
	Size       uint64  `json:"size"`
	Epoch      int64   `json:"epoch"`
	At         int64   `json:"at"`
	Score      float64 `json:"score"`
	Confidence float64 `json:"confidence"`
	Standing   float64 `json:"standing"`
}

// HeadPage is the answer of GET /v1/log/heads: a page of the log's signed heads, newest
// first, each with the transaction that anchored it on chain (reputation.HeadPage).
type HeadPage struct {
	Heads []Head `json:"heads"`
	// Next is the before of the next, older page; absent when the page reached the first
	// head.
	Next *int64 `json:"next,omitempty"`
}
