package reputation

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/reputation/merkle"
	"github.com/surety-ioa/surety/reputation/verify"
)

// The audit log. Every accepted audit (superseded ones too: the log is the record of what was
// said) becomes a leaf, the RFC 6962 hash of its signed envelope. Leaves are appended one
// closed epoch at a time, each epoch's sorted by leaf hash, so two nodes that accepted the
// same audits build the same tree whatever order the audits reached them in. An epoch closes
// Grace after its end, Grace being longer than an envelope's lifetime plus the clock skew, so
// no valid audit for it can still arrive; an audit of a closed epoch is refused (ErrLate).

var logMigration = sqlite.Migration{Version: 2, SQL: `
CREATE TABLE reputation_log (
	chain INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	idx   INTEGER NOT NULL,
	leaf  TEXT    NOT NULL,
	epoch INTEGER NOT NULL,
	PRIMARY KEY (chain, idx)
) STRICT;
CREATE UNIQUE INDEX reputation_log_leaf ON reputation_log (chain, leaf);
CREATE TABLE reputation_heads (
	chain  INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	epoch  INTEGER NOT NULL,
	size   INTEGER NOT NULL,
	root   TEXT    NOT NULL,
	closed INTEGER NOT NULL,
	signed TEXT    NOT NULL,
	PRIMARY KEY (chain, epoch)
) STRICT;
CREATE INDEX reputation_audits_time ON reputation_audits (chain, time);
`}

// HeadType is the JWS typ of a signed tree head (defined beside its verifier).
const HeadType = verify.HeadType

// ErrLate refuses an audit whose epoch is already closed in the log.
var ErrLate = errors.New("reputation: the audit's epoch is closed in the log")

// HeadSigner signs tree heads as the node (identity.Service.SignAsNode).
type HeadSigner interface {
	SignAsNode(payload []byte, typ string) (string, error)
}

// LogConfig sets up a Log.
type LogConfig struct {
	// Epoch is how much audit time one append covers (0: one hour).
	Epoch time.Duration
	// Grace is how long after an epoch's end it closes (0: 15 minutes; it must exceed the
	// envelope lifetime plus the clock skew).
	Grace  time.Duration
	Signer HeadSigner
}

// Head is a tree head: the log's size and root after an epoch closed, signed by the node.
type Head struct {
	Size   uint64      `json:"size"`
	Root   merkle.Hash `json:"root"`
	Epoch  int64       `json:"epoch"`
	Closed int64       `json:"closed"`
	// Signed is the JWS (typ HeadType) by the node's DID over size, root, epoch and closed.
	Signed string `json:"signed"`
	// AnchorTx is the transaction that anchored this head on chain ("" until then).
	AnchorTx string `json:"anchorTx,omitempty"`
}

// Log is the append-only Merkle log of accepted audits.
type Log struct {
	db    *sql.DB
	chain int64
	cfg   LogConfig

	mu   sync.RWMutex
	tree merkle.Tree
	last int64 // the last closed epoch, -1 before the first
	head Head
}

// OpenLog loads the log of chain (the reputation tables must exist: OpenStore).
func OpenLog(ctx context.Context, db *sql.DB, chain int64, cfg LogConfig) (*Log, error) {
	if cfg.Epoch == 0 {
		cfg.Epoch = DefaultEpoch
	}
	if cfg.Grace == 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.Epoch < time.Second || cfg.Epoch%time.Second != 0 {
		return nil, fmt.Errorf("reputation: log epoch %s: want whole seconds, at least one", cfg.Epoch)
	}
	l := &Log{db: db, chain: chain, cfg: cfg, last: -1, head: Head{Root: merkle.EmptyRoot}}
	rows, err := db.QueryContext(ctx, `SELECT leaf FROM reputation_log WHERE chain = ? ORDER BY idx`, chain)
	if err != nil {
		return nil, fmt.Errorf("reputation: load log: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		h, err := parseHash(s)
		if err != nil {
			return nil, err
		}
		l.tree.Append(h)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var root string
	switch err := db.QueryRowContext(ctx, `SELECT epoch, size, root, closed, signed FROM reputation_heads WHERE chain = ? ORDER BY epoch DESC LIMIT 1`, chain).
		Scan(&l.head.Epoch, &l.head.Size, &root, &l.head.Closed, &l.head.Signed); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, fmt.Errorf("reputation: load head: %w", err)
	default:
		if l.head.Root, err = parseHash(root); err != nil {
			return nil, err
		}
		l.last = l.head.Epoch
	}
	if l.head.Size != l.tree.Size() {
		return nil, fmt.Errorf("reputation: the log has %d leaves but its last head says %d", l.tree.Size(), l.head.Size)
	}
	if err := l.loadAnchor(ctx); err != nil {
		return nil, fmt.Errorf("reputation: load anchor: %w", err)
	}
	return l, nil
}

// epochOf is the epoch an audit time (unix seconds) falls in.
// EpochEnd is when epoch ends, in unix seconds: the time a scored head's scores are computed
// at (package auditor).
func (l *Log) EpochEnd(epoch int64) int64 { return (epoch + 1) * int64(l.cfg.Epoch/time.Second) }

func (l *Log) epochOf(t int64) int64 { return t / int64(l.cfg.Epoch/time.Second) }

// Accepts says whether an audit made at t can still enter the log.
func (l *Log) Accepts(t int64) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.open(t)
}

// open is Accepts with l.mu held.
func (l *Log) open(t int64) bool { return l.epochOf(t) > l.last }

// admit runs add (which stores an audit made at t) unless t's epoch is closed, and keeps
// epochs from closing meanwhile: an audit either lands before its epoch closes, and is in it,
// or is refused with ErrLate.
func (l *Log) admit(t int64, add func() error) error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if !l.open(t) {
		return &AuditError{Err: ErrLate, Detail: fmt.Sprintf("made at %d, in an epoch the log has closed", t)}
	}
	return add()
}

// closable says whether epoch's grace has passed at now: the epoch may close.
func (l *Log) closable(epoch int64, now time.Time) bool {
	return epoch <= l.epochOf(now.Add(-l.cfg.Grace).Unix())-1
}

// CloseEpochs appends every epoch that has closed by now and holds audits, each with a signed
// head, and returns the new heads.
func (l *Log) CloseEpochs(ctx context.Context, now time.Time) ([]Head, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	epochSec := int64(l.cfg.Epoch / time.Second)
	closable := l.epochOf(now.Add(-l.cfg.Grace).Unix()) - 1 // the last epoch whose end+grace has passed (see closable)
	var heads []Head
	for {
		// The next epoch after the last closed one that has audits.
		var next sql.NullInt64
		if err := l.db.QueryRowContext(ctx, `SELECT MIN(time) FROM reputation_audits WHERE chain = ? AND time >= ?`,
			l.chain, (l.last+1)*epochSec).Scan(&next); err != nil {
			return heads, fmt.Errorf("reputation: next epoch: %w", err)
		}
		if !next.Valid || l.epochOf(next.Int64) > closable {
			return heads, nil
		}
		h, err := l.closeEpoch(ctx, l.epochOf(next.Int64), now)
		if err != nil {
			return heads, err
		}
		heads = append(heads, h)
	}
}

func (l *Log) closeEpoch(ctx context.Context, epoch int64, now time.Time) (Head, error) {
	epochSec := int64(l.cfg.Epoch / time.Second)
	rows, err := l.db.QueryContext(ctx, `SELECT leaf FROM reputation_audits WHERE chain = ? AND time >= ? AND time < ? ORDER BY leaf`,
		l.chain, epoch*epochSec, (epoch+1)*epochSec)
	if err != nil {
		return Head{}, fmt.Errorf("reputation: epoch %d: %w", epoch, err)
	}
	var leaves []merkle.Hash
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return Head{}, err
		}
		h, err := parseHash(s)
		if err != nil {
			rows.Close()
			return Head{}, err
		}
		leaves = append(leaves, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return Head{}, err
	}
	return l.appendEpoch(ctx, epoch, leaves, now)
}

// appendEpoch appends epoch's leaves (sorted) and stores and signs the head, with l.mu held.
func (l *Log) appendEpoch(ctx context.Context, epoch int64, leaves []merkle.Hash, now time.Time) (Head, error) {
	var err error
	before := l.tree.Size()
	for _, h := range leaves {
		l.tree.Append(h)
	}
	stored := false
	defer func() {
		if !stored {
			l.tree.Truncate(before) // the epoch did not make it to the database
		}
	}()
	root, _ := l.tree.Root(l.tree.Size())
	head := Head{Size: l.tree.Size(), Root: root, Epoch: epoch, Closed: now.Unix()}
	payload, _ := json.Marshal(struct {
		Size   uint64      `json:"size"`
		Root   merkle.Hash `json:"root"`
		Epoch  int64       `json:"epoch"`
		Closed int64       `json:"closed"`
	}{head.Size, head.Root, head.Epoch, head.Closed})
	if head.Signed, err = l.cfg.Signer.SignAsNode(payload, HeadType); err != nil {
		return Head{}, fmt.Errorf("reputation: sign head: %w", err)
	}
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return Head{}, err
	}
	defer tx.Rollback()
	for i, h := range leaves {
		// The subject from the audit the leaf hashes (stored before its epoch closes or is
		// adopted), for the log's by-subject reads (Leaves).
		if _, err := tx.ExecContext(ctx, `INSERT INTO reputation_log (chain, idx, leaf, epoch, subject)
			VALUES (?, ?, ?, ?, COALESCE((SELECT subject FROM reputation_audits WHERE chain = ? AND leaf = ?), ''))`,
			l.chain, before+uint64(i), h.String(), epoch, l.chain, h.String()); err != nil {
			return Head{}, fmt.Errorf("reputation: append epoch %d: %w", epoch, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO reputation_heads (chain, epoch, size, root, closed, signed) VALUES (?, ?, ?, ?, ?, ?)`,
		l.chain, epoch, head.Size, head.Root.String(), head.Closed, head.Signed); err != nil {
		return Head{}, fmt.Errorf("reputation: store head %d: %w", epoch, err)
	}
	if err := tx.Commit(); err != nil {
		return Head{}, err
	}
	stored = true
	l.last, l.head = epoch, head
	return head, nil
}

// Head is the latest signed tree head (size 0 and the empty root before the first).
func (l *Log) Head() Head {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.head
}

// InclusionProof proves that leaf is in the tree of size (0: the latest head's).
func (l *Log) InclusionProof(ctx context.Context, leaf merkle.Hash, size uint64) (index uint64, proof []merkle.Hash, err error) {
	var idx int64
	switch err := l.db.QueryRowContext(ctx, `SELECT idx FROM reputation_log WHERE chain = ? AND leaf = ?`, l.chain, leaf.String()).Scan(&idx); {
	case errors.Is(err, sql.ErrNoRows):
		return 0, nil, ErrNotLogged
	case err != nil:
		return 0, nil, fmt.Errorf("reputation: find leaf: %w", err)
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	if size == 0 {
		size = l.head.Size
	}
	if uint64(idx) >= size {
		return 0, nil, fmt.Errorf("%w: leaf %d is not in a tree of size %d", ErrNotLogged, idx, size)
	}
	proof, err = l.tree.InclusionProof(uint64(idx), size)
	return uint64(idx), proof, err
}

// ConsistencyProof proves the tree of size from is a prefix of the tree of size to.
func (l *Log) ConsistencyProof(from, to uint64) ([]merkle.Hash, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.tree.ConsistencyProof(from, to)
}

// Root is the root of the tree of size (for proofs against heads older than the latest).
func (l *Log) Root(size uint64) (merkle.Hash, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.tree.Root(size)
}

// ErrNotLogged: the leaf is not (yet) in the log: its epoch has not closed, or it was never
// accepted.
var ErrNotLogged = errors.New("reputation: no such leaf in the log")

// HeadsFrom lists up to limit heads, oldest first, of size at least size: the head of that
// size (when there is one) and those after it. Anti-entropy asks a peer for them.
func (l *Log) HeadsFrom(ctx context.Context, size uint64, limit int) ([]Head, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT epoch, size, root, closed, signed, anchor_tx FROM reputation_heads WHERE chain = ? AND size >= ? ORDER BY epoch LIMIT ?`,
		l.chain, size, limit)
	if err != nil {
		return nil, fmt.Errorf("reputation: read heads: %w", err)
	}
	defer rows.Close()
	heads := []Head{}
	for rows.Next() {
		var h Head
		var root string
		if err := rows.Scan(&h.Epoch, &h.Size, &root, &h.Closed, &h.Signed, &h.AnchorTx); err != nil {
			return nil, err
		}
		if h.Root, err = parseHash(root); err != nil {
			return nil, err
		}
		heads = append(heads, h)
	}
	return heads, rows.Err()
}

// Envelopes are the signed audit envelopes of the leaves from index from up to (not
// including) to, in log order; to is capped at the latest head's size.
func (l *Log) Envelopes(ctx context.Context, from, to uint64) ([][]byte, error) {
	to = min(to, l.Head().Size)
	if from >= to {
		return [][]byte{}, nil
	}
	rows, err := l.db.QueryContext(ctx, `SELECT a.envelope FROM reputation_log g JOIN reputation_audits a ON a.chain = g.chain AND a.leaf = g.leaf
		WHERE g.chain = ? AND g.idx >= ? AND g.idx < ? ORDER BY g.idx`, l.chain, from, to)
	if err != nil {
		return nil, fmt.Errorf("reputation: read leaves: %w", err)
	}
	defer rows.Close()
	out := make([][]byte, 0, to-from)
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			return nil, err
		}
		out = append(out, raw)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if uint64(len(out)) != to-from {
		return nil, fmt.Errorf("reputation: the log names %d leaves from %d whose audits are not all stored here", to-from, from)
	}
	return out, nil
}

// ErrDiverged reports a peer's log that is not an extension of this node's: the two closed an
// epoch with different audits (a partition that outlasted the grace period).
var ErrDiverged = errors.New("reputation: the peer's audit log and this node's differ")

// adopt appends epoch h.Epoch with leaves, a peer's closing of it that this node missed, if
// and only if they give h's size and root on top of this node's log; the head is then signed
// by this node like one it closed itself. Audits this node holds in the epochs it skips, or
// in h's epoch beyond leaves, stay out of the log: the network closed them without them.
func (l *Log) adopt(ctx context.Context, h Head, leaves []merkle.Hash, now time.Time) (Head, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h.Epoch <= l.last {
		return Head{}, fmt.Errorf("%w: epoch %d is closed here already", ErrDiverged, h.Epoch)
	}
	root, fits, err := l.rootAppended(leaves, h.Size)
	if !fits {
		return Head{}, fmt.Errorf("reputation: %d leaves on a log of %d do not make the head's size %d", len(leaves), l.tree.Size(), h.Size)
	}
	if err != nil {
		return Head{}, err
	}
	if root != h.Root {
		return Head{}, fmt.Errorf("reputation: the leaves give root %s, the head says %s", root, h.Root)
	}
	return l.appendEpoch(ctx, h.Epoch, leaves, now)
}

// rootWith is the root the log would have with leaves appended; ErrDiverged when they would
// not make size.
func (l *Log) rootWith(leaves []merkle.Hash, size uint64) (merkle.Hash, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	root, fits, err := l.rootAppended(leaves, size)
	if !fits {
		return merkle.Hash{}, fmt.Errorf("%w: %d leaves on a log of %d do not make size %d", ErrDiverged, len(leaves), l.tree.Size(), size)
	}
	return root, err
}

// rootAppended is the root of the tree with leaves appended, leaving the tree as it was;
// fits is false (and nothing computed) when they would not make size. l.mu is held.
func (l *Log) rootAppended(leaves []merkle.Hash, size uint64) (root merkle.Hash, fits bool, err error) {
	before := l.tree.Size()
	if before+uint64(len(leaves)) != size {
		return merkle.Hash{}, false, nil
	}
	for _, x := range leaves {
		l.tree.Append(x)
	}
	root, err = l.tree.Root(size)
	l.tree.Truncate(before)
	return root, true, err
}
