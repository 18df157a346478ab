package reputation

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/reputation/merkle"
)

// Scored heads (issue 28). The node computes the scores of each head anchored on chain from
// the log's leaves and the chain's facts at the anchor's block alone (package auditor, ScoreLog)
// and keeps them here: they are the scores an auditor recomputes and compares bit for bit,
// and the points of an agent's score history. REAL columns hold IEEE 754 doubles exactly.

var scoredMigration = sqlite.Migration{Version: 12, SQL: `
CREATE TABLE reputation_scored_heads (
	chain     INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	size      INTEGER NOT NULL,
	epoch     INTEGER NOT NULL,
	root      TEXT    NOT NULL,
	at        INTEGER NOT NULL,  -- the time the scores are computed at (the epoch's end)
	block     INTEGER NOT NULL,  -- the block of the head's first anchor: the chain's facts at it
	anchor_tx TEXT    NOT NULL,
	params    TEXT    NOT NULL,  -- Params, JSON
	inputs    BLOB,              -- ScoreInputs, JSON; kept for the latest KeepScoreInputs heads
	PRIMARY KEY (chain, size)
);
CREATE TABLE reputation_head_scores (
	chain      INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	size       INTEGER NOT NULL,
	did        TEXT    NOT NULL,
	score      REAL    NOT NULL,
	confidence REAL    NOT NULL,
	weight     REAL    NOT NULL,
	standing   REAL    NOT NULL,
	relative   REAL    NOT NULL,
	PRIMARY KEY (chain, did, size)
) WITHOUT ROWID;
CREATE INDEX reputation_head_scores_size ON reputation_head_scores (chain, size, did);
`}

// ScoredHead is a head whose scores the node computed from the log and the chain alone.
type ScoredHead struct {
	Size     uint64      `json:"size"`
	Epoch    int64       `json:"epoch"`
	Root     merkle.Hash `json:"root"`
	At       int64       `json:"at"`
	Block    uint64      `json:"block"`
	AnchorTx string      `json:"anchorTx"`
	Params   Params      `json:"params"`
	Scores   []HeadScore `json:"scores"`
	// Inputs are what the scores were computed from, when still kept (KeepScoreInputs).
	Inputs *ScoreInputs `json:"inputs,omitempty"`
	// Next is the After of the next page of scores (absent at the end).
	Next string `json:"next,omitempty"`
}

// HeadScore is one agent's scores at a scored head (Scores' fields at its index).
type HeadScore struct {
	DID        string  `json:"did"`
	Score      float64 `json:"score"`
	Confidence float64 `json:"confidence"`
	Weight     float64 `json:"weight"`
	Standing   float64 `json:"standing"` // its share of standing (Scores.Standing)
	Relative   float64 `json:"relative"` // what its word weighs, in ETH (Scores.Relative)
}

// ScoreInputs are the engine's inputs at a scored head: the audits that count, with backing
// and settled value as the chain's facts decide, and the stake that counts per DID.
type ScoreInputs struct {
	Stake  map[string]float64 `json:"stake"`
	Audits []ScoredAudit      `json:"audits"`
}

// ScorePoint is one agent's score at one scored head, for its history.
type ScorePoint struct {
	Size       uint64  `json:"size"`
	Epoch      int64   `json:"epoch"`
	At         int64   `json:"at"`
	Score      float64 `json:"score"`
	Confidence float64 `json:"confidence"`
	Standing   float64 `json:"standing"`
}

// ErrNotScored reports a head whose scores the node has not computed (not anchored on chain,
// its anchor not confirmed yet, or pruned: KeepScoredHeads).
var ErrNotScored = errors.New("reputation: the node has no scores for that head")

// NewScoredHead is h's record of ls (the head's size, epoch and root; computed at at with the
// chain's facts at block, whose first anchor of it is tx).
func NewScoredHead(h Head, at int64, block uint64, tx string, ls *LogScores, p Params) *ScoredHead {
	sh := &ScoredHead{Size: h.Size, Epoch: h.Epoch, Root: h.Root, At: at, Block: block, AnchorTx: tx, Params: p.withDefaults(),
		Inputs: &ScoreInputs{Stake: ls.Staked, Audits: ls.Audits}}
	sc := ls.Scores
	for i, did := range ls.DIDs {
		sh.Scores = append(sh.Scores, HeadScore{DID: did, Score: sc.Score[i], Confidence: sc.Confidence[i], Weight: sc.Weight[i],
			Standing: sc.Standing[i], Relative: sc.Relative[i]})
	}
	if sh.Inputs.Stake == nil {
		sh.Inputs.Stake = map[string]float64{}
	}
	return sh
}

// SaveScoredHead records sh, keeping the scores of the latest KeepScoredHeads heads and the
// inputs of the latest KeepScoreInputs.
func (s *Store) SaveScoredHead(ctx context.Context, sh *ScoredHead) error {
	params, err := json.Marshal(sh.Params)
	if err != nil {
		return err
	}
	var inputs []byte
	if sh.Inputs != nil && len(sh.Inputs.Audits) <= MaxScoreInputs {
		if inputs, err = json.Marshal(sh.Inputs); err != nil {
			return err
		}
	}
	// Its own tables, in a transaction of their own: not under s.mu, so audits keep coming in
	// while a large head is written.
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	fail := func(err error) error { return fmt.Errorf("reputation: record the scores of head %d: %w", sh.Size, err) }
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO reputation_scored_heads (chain, size, epoch, root, at, block, anchor_tx, params, inputs)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, s.chain, sh.Size, sh.Epoch, hexHash(sh.Root), sh.At, sh.Block, sh.AnchorTx, string(params), inputs); err != nil {
		return fail(err)
	}
	for _, r := range sh.Scores {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO reputation_head_scores (chain, size, did, score, confidence, weight, standing, relative)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, s.chain, sh.Size, r.DID, r.Score, r.Confidence, r.Weight, r.Standing, r.Relative); err != nil {
			return fail(err)
		}
	}
	// Prune: the heads beyond the kept ones, their scores, and the inputs of older heads.
	if _, err := tx.ExecContext(ctx, `DELETE FROM reputation_head_scores WHERE chain = ? AND size < (SELECT min(size) FROM
		(SELECT size FROM reputation_scored_heads WHERE chain = ? ORDER BY size DESC LIMIT ?))`, s.chain, s.chain, KeepScoredHeads); err != nil {
		return fail(err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM reputation_scored_heads WHERE chain = ? AND size < (SELECT min(size) FROM
		(SELECT size FROM reputation_scored_heads WHERE chain = ? ORDER BY size DESC LIMIT ?))`, s.chain, s.chain, KeepScoredHeads); err != nil {
		return fail(err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE reputation_scored_heads SET inputs = NULL WHERE chain = ? AND inputs IS NOT NULL AND size < (SELECT min(size) FROM
		(SELECT size FROM reputation_scored_heads WHERE chain = ? ORDER BY size DESC LIMIT ?))`, s.chain, s.chain, KeepScoreInputs); err != nil {
		return fail(err)
	}
	return tx.Commit()
}

// Scored reports whether the node holds the scores of the head of that size.
func (s *Store) Scored(ctx context.Context, size uint64) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM reputation_scored_heads WHERE chain = ? AND size = ?`, s.chain, size).Scan(&n)
	return n > 0, err
}

// ScoresQuery selects what ScoredHead reads of a scored head.
type ScoresQuery struct {
	Size uint64 // the head's size; 0: the latest scored head
	// DID selects one agent's scores (none when the head does not name it); otherwise the
	// agents after After, in DID order, at most Limit (0 or more than MaxScoresPage: MaxScoresPage).
	DID, After string
	Limit      int
	// Inputs asks for the head's inputs too, when still kept (not with DID or After).
	Inputs bool
}

// ScoredHead reads a page of the scores of a scored head (ScoresQuery); its Next is the After
// of the following page ("" at the end).
func (s *Store) ScoredHead(ctx context.Context, q ScoresQuery) (sh *ScoredHead, err error) {
	query := `SELECT size, epoch, root, at, block, anchor_tx, params, CASE WHEN ? THEN inputs END FROM reputation_scored_heads WHERE chain = ? AND size = ?`
	inputs := q.Inputs && q.DID == "" && q.After == ""
	args := []any{inputs, s.chain, q.Size}
	if q.Size == 0 {
		query = `SELECT size, epoch, root, at, block, anchor_tx, params, CASE WHEN ? THEN inputs END FROM reputation_scored_heads WHERE chain = ? ORDER BY size DESC LIMIT 1`
		args = args[:2]
	}
	sh = new(ScoredHead)
	var root, params string
	var in []byte
	err = s.db.QueryRowContext(ctx, query, args...).Scan(&sh.Size, &sh.Epoch, &root, &sh.At, &sh.Block, &sh.AnchorTx, &params, &in)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotScored
	}
	if err != nil {
		return nil, fmt.Errorf("reputation: scored head: %w", err)
	}
	if sh.Root, err = parseHash(root); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(params), &sh.Params); err != nil {
		return nil, err
	}
	if in != nil {
		sh.Inputs = new(ScoreInputs)
		if err := json.Unmarshal(in, sh.Inputs); err != nil {
			return nil, err
		}
	}
	limit := q.Limit
	if limit <= 0 || limit > MaxScoresPage {
		limit = MaxScoresPage
	}
	query = `SELECT did, score, confidence, weight, standing, relative FROM reputation_head_scores INDEXED BY reputation_head_scores_size
		WHERE chain = ? AND size = ? AND did > ? ORDER BY did LIMIT ?`
	args = []any{s.chain, sh.Size, q.After, limit + 1}
	if q.DID != "" {
		query = `SELECT did, score, confidence, weight, standing, relative FROM reputation_head_scores WHERE chain = ? AND did = ? AND size = ?`
		args = []any{s.chain, q.DID, sh.Size}
	}
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("reputation: scores of head %d: %w", sh.Size, err)
	}
	defer rows.Close()
	sh.Scores = []HeadScore{}
	for rows.Next() {
		var r HeadScore
		if err := rows.Scan(&r.DID, &r.Score, &r.Confidence, &r.Weight, &r.Standing, &r.Relative); err != nil {
			return nil, err
		}
		sh.Scores = append(sh.Scores, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(sh.Scores) > limit {
		sh.Scores = sh.Scores[:limit]
		sh.Next = sh.Scores[limit-1].DID
	}
	return sh, nil
}

// ScoreHistory is did's score at each scored head the node keeps, oldest first (at most
// KeepScoredHeads points; none for an agent no scored head names).
func (s *Store) ScoreHistory(ctx context.Context, did string) ([]ScorePoint, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT h.size, h.epoch, h.at, r.score, r.confidence, r.standing FROM reputation_head_scores r
		JOIN reputation_scored_heads h ON h.chain = r.chain AND h.size = r.size WHERE r.chain = ? AND r.did = ? ORDER BY r.size`, s.chain, did)
	if err != nil {
		return nil, fmt.Errorf("reputation: score history of %s: %w", did, err)
	}
	defer rows.Close()
	out := []ScorePoint{}
	for rows.Next() {
		var p ScorePoint
		if err := rows.Scan(&p.Size, &p.Epoch, &p.At, &p.Score, &p.Confidence, &p.Standing); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
