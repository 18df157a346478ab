package reputation

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/reputation/merkle"
)

// LogScoring is what the scores of a log's head follow from (issue 28): the head's leaves,
// and the chain's facts at one block. Nothing else goes in, so a node and an auditor that
// read the same leaves and the same blocks compute the same scores, bit for bit.
type LogScoring struct {
	// Leaves are the signed audit envelopes of the log up to the head, in log order.
	Leaves [][]byte
	// Verify checks each envelope's signatures (identity.Verifier.CheckArchived: any age, no
	// nonce); a key closed on chain since still signed its audits while open, and they count.
	Verify EnvelopeVerifier
	// Rules carry the chain's facts at the block: wallet bindings and bounties. Rules.Agents
	// is not asked: a node's cards are not a chain fact, and every logged subject counts.
	Rules *Rules
	// Staked is the stake that counts per DID at the block (stake.Index.StakedAgents).
	Staked map[string]float64
	// At is the time the scores are computed at, in unix seconds: the end of the head's epoch.
	At     int64
	Params Params
	// Feedback reads the ERC-8004 feedback not revoked at the block; it counts by
	// Rules.ImportFeedback (Rules.Settlements set). Nil: none.
	Feedback FeedbackSource
}

// ScoredAudit is one audit as the engine counts it at a head: the inputs of its edge.
type ScoredAudit struct {
	Leaf    merkle.Hash `json:"leaf"`
	Auditor string      `json:"auditor"`
	Subject string      `json:"subject"`
	Target  string      `json:"target"` // "bounty:<chain id>:<escrow>:<id>" or "envelope:<id>" (Audit.Target)
	Score   float64     `json:"score"`
	Time    int64       `json:"time"`
	Backed  bool        `json:"backed"`
	Settled float64     `json:"settled"` // ETH its bounty settled (amount + FeeWeight × fee)
}

// LogScores are the scores of a log's head and what they were computed from.
type LogScores struct {
	DIDs   []string // by engine index (DID order)
	Scores *Scores
	// Audits are the audits that count (the latest of each auditor, subject and target, not
	// refused), with their backing as the chain's facts decide; Staked is the stake input.
	Audits []ScoredAudit
	Staked map[string]float64
	// External is the imported ERC-8004 feedback that counts, by subject then client.
	External []ExternalSignal
}

// ScoreLog computes the scores the leaves give (LogScoring), recording them as the node
// records an adopted epoch's leaves (Service.recordLogged): each verified and parsed, judged
// by the rules (a refusal counts 0, a bounty the facts lack counts unbacked), the latest audit
// of each auditor, subject and target counting, one backed audit per bounty and side. It works
// in db (a scratch database of its own: it writes the reputation tables under chain).
func ScoreLog(ctx context.Context, db *sql.DB, chain int64, in LogScoring) (*LogScores, error) {
	store, err := OpenStore(ctx, db, chain)
	if err != nil {
		return nil, err
	}
	rules := *in.Rules
	rules.Agents = nil
	for i, raw := range in.Leaves {
		if err := scoreLeaf(ctx, store, &rules, in.Verify, raw); err != nil {
			return nil, fmt.Errorf("reputation: leaf %d: %w", i, err)
		}
	}
	p := in.Params.withDefaults()
	ext, err := rules.ImportFeedback(ctx, in.Feedback, func(did string) bool { return p.counted(in.Staked[did]) > 0 })
	if err != nil {
		return nil, err
	}
	g, dids, err := store.Graph(ctx, in.At, in.Staked, ext...)
	if err != nil {
		return nil, err
	}
	out := &LogScores{DIDs: dids, Scores: Compute(g, in.Params), Staked: in.Staked, External: ext}
	rows, err := db.QueryContext(ctx, `SELECT leaf, auditor, subject, target, score, time, backed, settled FROM reputation_audits
		WHERE chain = ? AND superseded_by IS NULL AND refused = '' ORDER BY leaf`, chain)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var a ScoredAudit
		var leaf string
		if err := rows.Scan(&leaf, &a.Auditor, &a.Subject, &a.Target, &a.Score, &a.Time, &a.Backed, &a.Settled); err != nil {
			return nil, err
		}
		if a.Leaf, err = parseHash(leaf); err != nil {
			return nil, err
		}
		out.Audits = append(out.Audits, a)
	}
	return out, rows.Err()
}

// ErrBadLeaf is a leaf of a log that is no audit: a forged signature, or not an audit's body.
// A log holding one was not kept by Surety's rules.
var ErrBadLeaf = errors.New("reputation: the log holds a leaf that is not a signed audit")

func scoreLeaf(ctx context.Context, store *Store, rules *Rules, verify EnvelopeVerifier, raw []byte) error {
	v, err := verify(ctx, raw)
	var ve *identity.VerifyError
	if errors.As(err, &ve) && ve.Authentic != nil {
		v, err = ve.Authentic, nil
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadLeaf, err)
	}
	a, err := ParseAudit(&v.Envelope)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadLeaf, err)
	}
	verdict, err := refusedVerdict(rules.Check(ctx, a))
	if err != nil {
		return err
	}
	if _, err := store.Add(ctx, a, raw, verdict); err != nil && !errors.Is(err, ErrDuplicate) {
		return err
	}
	if verdict.Side != SideNone {
		if _, err := store.settleSide(ctx, a.Target(), verdict.Side); err != nil {
			return err
		}
	}
	return nil
}
