package reputation

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/surety-ioa/surety/internal/sqlite"
)

// savedMigration keeps the latest computed scores (version 14): a node that restarts
// answers with them, at their own computed time, until its first recomputation ends, instead
// of the prior for everyone. They are stored in parts, with a checksum: a copy that does not
// decode, or whose checksum fails, is ignored.
var savedMigration = sqlite.Migration{Version: 14, SQL: `
CREATE TABLE reputation_saved_scores (
	chain INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	part  INTEGER NOT NULL,
	data  BLOB    NOT NULL,
	PRIMARY KEY (chain, part)
) STRICT;
`}

// savedScoresVersion is the layout of the stored scores; another layout is ignored.
const savedScoresVersion = 1

// encode writes what answering needs of the snapshot: its time, the agents, their scores,
// standings, audits and stakes. Not the auditor pairs' sums: a restored snapshot answers
// every agent's figures, not each feeding audit's weight, until the first recomputation. It
// writes into one buffer sized up front.
func (snap *snapshot) encode() []byte {
	sc := snap.scores
	size := 10*6 + 8*2 + sha256.Size
	for _, d := range snap.dids {
		size += binary.MaxVarintLen64 + len(d)
	}
	size += 8 * (7 + len(sc.Standing) + len(sc.Score) + len(sc.Confidence) + len(sc.Weight) + len(sc.External) + len(sc.Relative) + len(snap.stake))
	size += binary.MaxVarintLen64 * (8 + len(snap.audits))
	b := make([]byte, 0, size)
	u := func(x uint64) { b = binary.AppendUvarint(b, x) }
	f := func(xs []float64) {
		u(uint64(len(xs)))
		for _, x := range xs {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
	}
	u(savedScoresVersion)
	u(uint64(snap.at.Unix()))
	u(uint64(len(snap.dids)))
	for _, d := range snap.dids {
		u(uint64(len(d)))
		b = append(b, d...)
	}
	u(uint64(snap.n))
	var flags uint64
	if sc.Everyone {
		flags |= 1
	}
	u(flags)
	u(uint64(sc.Iterations))
	f([]float64{sc.Scale, snap.newcomer})
	f(sc.Standing)
	f(sc.Score)
	f(sc.Confidence)
	f(sc.Weight)
	f(sc.External)
	f(sc.Relative)
	f(snap.stake)
	u(uint64(len(snap.audits)))
	for _, a := range snap.audits {
		u(uint64(a))
	}
	sum := sha256.Sum256(b)
	return append(b, sum[:]...)
}

// saved is a copy of what encode reads of the snapshot, which follow changes: taken under
// the service's lock (a few copies of memory), so the encoding runs without it and holds
// back neither the readers nor the audits that follow.
func (snap *snapshot) saved() *snapshot {
	sc := snap.scores
	return &snapshot{at: snap.at, dids: slices.Clone(snap.dids), n: snap.n, newcomer: snap.newcomer, stake: slices.Clone(snap.stake), audits: slices.Clone(snap.audits),
		scores: &Scores{Everyone: sc.Everyone, Iterations: sc.Iterations, Scale: sc.Scale, Standing: slices.Clone(sc.Standing), Score: slices.Clone(sc.Score),
			Confidence: slices.Clone(sc.Confidence), Weight: slices.Clone(sc.Weight), External: slices.Clone(sc.External), Relative: slices.Clone(sc.Relative)}}
}

var errSavedScores = errors.New("reputation: stored scores do not decode")

// decodeSnapshot reads what encode wrote, with params (defaults set) for what was not
// stored; a snapshot it gives follows nothing and is never carried over (exact is false).
func decodeSnapshot(data []byte, p Params) (*snapshot, error) {
	if len(data) < sha256.Size {
		return nil, errSavedScores
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return nil, errSavedScores
	}
	r := bytes.NewReader(body)
	var bad bool
	u := func() uint64 {
		x, err := binary.ReadUvarint(r)
		bad = bad || err != nil
		return x
	}
	count := func(size int) int { // a length that the rest of the data can hold
		n := u()
		if n > uint64(r.Len()/size) {
			bad = true
			return 0
		}
		return int(n)
	}
	f := func() []float64 {
		n := count(8)
		if n == 0 {
			return nil
		}
		xs := make([]float64, n)
		var w [8]byte
		for i := range xs {
			_, _ = r.Read(w[:])
			xs[i] = math.Float64frombits(binary.LittleEndian.Uint64(w[:]))
		}
		return xs
	}
	if u() != savedScoresVersion {
		return nil, errSavedScores
	}
	at := time.Unix(int64(u()), 0).UTC()
	dids := make([]string, count(1))
	for i := range dids {
		s := make([]byte, count(1))
		_, _ = r.Read(s)
		dids[i] = string(s)
	}
	computed := u() // the agents the computation had; those after it were followed
	if computed > uint64(len(dids)) {
		return nil, errSavedScores
	}
	n := int(computed)
	sc := &Scores{}
	flags := u()
	sc.Everyone = flags&1 != 0
	sc.Iterations = int(u())
	head := f()
	sc.Standing, sc.Score, sc.Confidence, sc.Weight, sc.External, sc.Relative = f(), f(), f(), f(), f(), f()
	stake := f()
	audits := make([]int, count(1))
	for i := range audits {
		audits[i] = int(u())
	}
	m := len(dids)
	if bad || r.Len() != 0 || n > m || !slices.IsSorted(dids[:n]) || len(head) != 2 || n > m || len(sc.Standing) != m || len(sc.Score) != m || len(sc.Confidence) != m || len(sc.Weight) != m ||
		(sc.External != nil && len(sc.External) != m) || len(sc.Relative) != m || len(stake) != m || len(audits) != m {
		return nil, errSavedScores
	}
	sc.Scale = head[0]
	sc.pos, sc.all = make([]fixed, m), make([]fixed, m) // unused: a restored snapshot follows nothing
	snap := wrapSnapshot(at, sc, stake, dids, audits, p)
	snap.n, snap.newcomer, snap.restored = n, head[1], true
	for i := n; i < m; i++ {
		if snap.added == nil {
			snap.added = map[string]int{}
		}
		snap.added[dids[i]] = i
	}
	return snap, nil
}

// saveScores stores the snapshot readers get, replacing the last one stored.
func (s *Service) saveScores(ctx context.Context) error {
	s.mu.RLock()
	snap := s.snapshot
	if snap.at.IsZero() {
		s.mu.RUnlock()
		return nil
	}
	snap = snap.saved()
	s.mu.RUnlock()
	data := snap.encode()
	st := s.cfg.Store
	tx, err := st.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM reputation_saved_scores WHERE chain = ?`, st.chain); err != nil {
		return fmt.Errorf("reputation: save scores: %w", err)
	}
	for part := 0; len(data) > 0; part++ {
		n := min(len(data), savedScoresPart)
		if _, err := tx.ExecContext(ctx, `INSERT INTO reputation_saved_scores (chain, part, data) VALUES (?, ?, ?)`, st.chain, part, data[:n]); err != nil {
			return fmt.Errorf("reputation: save scores: %w", err)
		}
		data = data[n:]
	}
	return tx.Commit()
}

// restoreScores makes the stored scores the ones readers get, while no computation has
// replaced the empty snapshot NewService starts with; it says whether it did. Stored scores
// that do not decode are ignored (the first recomputation replaces them anyway).
func (s *Service) restoreScores(ctx context.Context) (bool, error) {
	st := s.cfg.Store
	rows, err := st.db.QueryContext(ctx, `SELECT data FROM reputation_saved_scores WHERE chain = ? ORDER BY part`, st.chain)
	if err != nil {
		return false, fmt.Errorf("reputation: read saved scores: %w", err)
	}
	defer rows.Close()
	var data []byte
	for rows.Next() {
		var part sql.RawBytes
		if err := rows.Scan(&part); err != nil {
			return false, err
		}
		data = append(data, part...)
	}
	if err := rows.Err(); err != nil || len(data) == 0 {
		return false, err
	}
	snap, err := decodeSnapshot(data, s.cfg.Params.withDefaults())
	if err != nil {
		s.cfg.Logger.Warn("reputation: stored scores ignored", "err", err)
		return false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.snapshot.at.IsZero() {
		return false, nil // a computation came first
	}
	s.snapshot = snap
	return true, nil
}
