package reputation

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/reputation/merkle"
)

var migrations = []sqlite.Migration{{Version: 1, SQL: `
CREATE TABLE reputation_audits (
	chain         INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	leaf          TEXT    NOT NULL,  -- hex RFC 6962 leaf hash of the signed envelope
	auditor       TEXT    NOT NULL,
	subject       TEXT    NOT NULL,
	target        TEXT    NOT NULL,
	score         REAL    NOT NULL,
	time          INTEGER NOT NULL,
	backed        INTEGER NOT NULL,
	evidence_hash TEXT    NOT NULL,
	evidence_uri  TEXT    NOT NULL,
	envelope      BLOB    NOT NULL,
	superseded_by TEXT,              -- the leaf of the later audit of the same target
	PRIMARY KEY (chain, leaf)
) STRICT;
CREATE INDEX reputation_audits_target ON reputation_audits (chain, auditor, subject, target) WHERE superseded_by IS NULL;
CREATE INDEX reputation_audits_subject ON reputation_audits (chain, subject, time) WHERE superseded_by IS NULL;
`}, logMigration, anchorMigration, heldMigration, sideMigration, settledMigration, nonceMigration, heldByMigration, windowMigration, refusedMigration, leavesMigration, scoredMigration, countingMigration, savedMigration, didsMigration}

// windowMigration records whether a wallet binds each audit's auditor (version 9): the
// anti-entropy window lists bound auditors' audits first, each auditor's newest in turn.
// Recheck keeps it current as bindings change.
var windowMigration = sqlite.Migration{Version: 9, SQL: `
ALTER TABLE reputation_audits ADD COLUMN auditor_bound INTEGER NOT NULL DEFAULT 0;
UPDATE reputation_audits SET auditor_bound = 1 WHERE side != '';
CREATE INDEX reputation_audits_auditor ON reputation_audits (chain, auditor);
`}

// countingMigration adds a covering index of the audits that count (version 13): the graph
// a node loads at start reads it alone, about a tenth of the table's bytes (no envelopes),
// in auditor order. Version 15 (didsMigration) replaces it with one of the DIDs' ids.
var countingMigration = sqlite.Migration{Version: 13, SQL: `
CREATE INDEX reputation_audits_counting ON reputation_audits (chain, auditor, subject, target, score, time, backed, settled)
	WHERE superseded_by IS NULL AND refused = '';
`}

// didsMigration numbers the DIDs (version 15): reputation_dids gives each auditor and subject
// an integer id, every audit names its two by id too, and the covering index of the audits
// that count (reputation_audits_counting_ids) holds the ids instead of the DIDs. The graph a
// node loads at start reads integers, which it maps to its own ids through an array, where a
// DID read as text had to be looked up in a hash table per audit (at ten million audits, most
// of the load's time); the DIDs themselves are read once each, from reputation_dids. The
// migration numbers the DIDs of every audit stored so far. An id is never reused: a DID
// stays in the table once it has one.
var didsMigration = sqlite.Migration{Version: 15, SQL: `
CREATE TABLE reputation_dids (
	id  INTEGER PRIMARY KEY,
	did TEXT NOT NULL UNIQUE
) STRICT;
INSERT INTO reputation_dids (did) SELECT auditor FROM reputation_audits UNION SELECT subject FROM reputation_audits;
ALTER TABLE reputation_audits ADD COLUMN auditor_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE reputation_audits ADD COLUMN subject_id INTEGER NOT NULL DEFAULT 0;
UPDATE reputation_audits SET auditor_id = (SELECT id FROM reputation_dids WHERE did = auditor), subject_id = (SELECT id FROM reputation_dids WHERE did = subject);
DROP INDEX reputation_audits_counting;
CREATE INDEX reputation_audits_counting_ids ON reputation_audits (chain, auditor_id, subject_id, target, score, time, backed, settled)
	WHERE superseded_by IS NULL AND refused = '';
`}

// refusedMigration records why an audit the acceptance rules refuse is kept anyway (version
// 10): an audit of an epoch adopted from a quorum of staked nodes, or one whose facts changed
// since it was taken, stays in the store (the log's root needs its leaf) and counts 0.
var refusedMigration = sqlite.Migration{Version: 10, SQL: `
ALTER TABLE reputation_audits ADD COLUMN refused TEXT NOT NULL DEFAULT '';
`}

// setAuditorBound records whether a wallet binds auditor now, for all its audits.
func (s *Store) setAuditorBound(ctx context.Context, auditor string, bound bool) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE reputation_audits SET auditor_bound = ? WHERE chain = ? AND auditor = ? AND auditor_bound != ?`,
		bound, s.chain, auditor, bound); err != nil {
		return fmt.Errorf("reputation: update auditor binding: %w", err)
	}
	return nil
}

// nonceMigration keys audits by auditor and nonce too (version 7): one signed audit is one
// audit, however many ways its envelope can be written (whitespace, a JSON serialization,
// a high-S twin of an ES256K signature), each of which would hash to a leaf of its own.
var nonceMigration = sqlite.Migration{Version: 7, SQL: `
ALTER TABLE reputation_audits ADD COLUMN nonce TEXT;
CREATE UNIQUE INDEX reputation_audits_nonce ON reputation_audits (chain, auditor, nonce) WHERE nonce IS NOT NULL;
`}

// Store keeps accepted audits in SQLite. Of the audits one auditor filed about one subject
// and target, the latest counts (by time, then by leaf hash, so every node picks the same
// one whatever order they arrived in); the others stay, marked superseded by it.
type Store struct {
	db    *sql.DB
	chain int64
	mu    sync.Mutex // serializes adds, so supersede decisions are atomic
}

// StoredAudit is an audit as kept: what it says, whether settlement backs it, and the leaf
// hash of the signed envelope it came in.
type StoredAudit struct {
	Audit
	Leaf   merkle.Hash `json:"leaf"`
	Backed bool        `json:"backed"`
	// Side is the side of a settled bounty the audit speaks for (empty: none); of the audits
	// of one bounty and side, one is backed.
	Side Side `json:"side,omitempty"`
	// Settled is what the bounty of its side settled, in ETH (Verdict.Settled): the backed
	// audit's weight scales with it.
	Settled      float64      `json:"settled,omitempty"`
	SupersededBy *merkle.Hash `json:"supersededBy,omitempty"`
	// Refused is why the acceptance rules refuse an audit the node keeps anyway (its epoch
	// was adopted, or its facts changed since): it counts 0. Empty for one that passes.
	Refused string `json:"refused,omitempty"`
	// Weight, in an agent's reputation (Service.Reputation), is what the audit's auditor's
	// audits of the subject add to its Σ w now: one voice per auditor and subject, so each of
	// one auditor's audits shows the pair's weight.
	Weight float64 `json:"weight,omitempty"`
	// Raw is the signed envelope, exactly as received: anyone can verify it.
	Raw []byte `json:"envelope"`
}

// ErrDuplicate reports an audit the store already holds (the same signed envelope).
var ErrDuplicate = errors.New("reputation: this audit is already recorded")

// Migrate brings the reputation tables to this build's schema, saying on log when each step
// starts and how long it took: version 15 rewrites every stored audit (about a minute per
// three million). A node runs it when it opens its database, before anything else writes.
func Migrate(ctx context.Context, db *sql.DB, log *slog.Logger) error {
	return sqlite.MigrateLogged(ctx, db, "reputation", migrations, log)
}

// OpenStore migrates the reputation tables; chain is the chains-table row that scopes them.
func OpenStore(ctx context.Context, db *sql.DB, chain int64) (*Store, error) {
	if err := sqlite.Migrate(ctx, db, "reputation", migrations); err != nil {
		return nil, err
	}
	return &Store{db: db, chain: chain}, nil
}

// Add records an accepted audit that came in the signed envelope raw. It reports whether
// the audit is now the one that counts for its target.
//
// v is what the rules said of it (Rules.Check): the side of a settlement it speaks for and
// what that settled. It is stored unbacked, and settleSide decides which audit of its bounty
// and side is.
func (s *Store) Add(ctx context.Context, a *Audit, raw []byte, v Verdict) (current bool, err error) {
	leaf := merkle.LeafHash(raw)
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	fail := func(err error) (bool, error) { return false, fmt.Errorf("reputation: record audit: %w", err) }
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM reputation_audits WHERE chain = ? AND (leaf = ? OR (auditor = ? AND nonce = ?))`,
		s.chain, hexHash(leaf), a.Auditor, a.Nonce).Scan(&n); err != nil {
		return fail(err)
	}
	if n > 0 {
		return false, ErrDuplicate
	}
	var prevLeaf string
	var prevTime int64
	switch err := tx.QueryRowContext(ctx, `SELECT leaf, time FROM reputation_audits WHERE chain = ? AND auditor = ? AND subject = ? AND target = ? AND superseded_by IS NULL`,
		s.chain, a.Auditor, a.Subject, a.Target()).Scan(&prevLeaf, &prevTime); {
	case errors.Is(err, sql.ErrNoRows):
		current = true
	case err != nil:
		return fail(err)
	default:
		current = a.Time > prevTime || a.Time == prevTime && hexHash(leaf) > prevLeaf
	}
	var supersededBy any
	if !current {
		supersededBy = prevLeaf
	}
	var nonce any
	if a.Nonce != "" {
		nonce = a.Nonce
	}
	var ids [2]int64
	for i, did := range []string{a.Auditor, a.Subject} {
		if ids[i], err = didID(ctx, tx, did); err != nil {
			return fail(err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO reputation_audits (chain, leaf, auditor, subject, target, score, time, backed, side, settled, evidence_hash, evidence_uri, envelope, superseded_by, nonce, auditor_bound, refused, auditor_id, subject_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.chain, hexHash(leaf), a.Auditor, a.Subject, a.Target(), a.Score, a.Time, string(v.Side), v.Settled, a.Evidence.Hash.Hex(), a.Evidence.URI, raw, supersededBy, nonce, v.AuditorBound, v.Refused, ids[0], ids[1]); err != nil {
		return fail(err)
	}
	if current && prevLeaf != "" {
		// The new audit takes over; everything the old one superseded now points at it too.
		if _, err := tx.ExecContext(ctx, `UPDATE reputation_audits SET superseded_by = ? WHERE chain = ? AND (leaf = ? OR superseded_by = ?)`,
			hexHash(leaf), s.chain, prevLeaf, prevLeaf); err != nil {
			return fail(err)
		}
	}
	return current, tx.Commit()
}

// didID is the id of did in reputation_dids (didsMigration), which it gives one if it has
// none yet.
func didID(ctx context.Context, tx *sql.Tx, did string) (int64, error) {
	var id int64
	err := tx.QueryRowContext(ctx, `SELECT id FROM reputation_dids WHERE did = ?`, did).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		err = tx.QueryRowContext(ctx, `INSERT INTO reputation_dids (did) VALUES (?) RETURNING id`, did).Scan(&id)
	}
	return id, err
}

// Current returns the audits that count about subject, newest first (not those the rules
// refuse: Verdict.Refused).
func (s *Store) Current(ctx context.Context, subject string) ([]*StoredAudit, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT leaf, auditor, subject, target, score, time, backed, side, settled, evidence_hash, evidence_uri, envelope FROM reputation_audits
		WHERE chain = ? AND subject = ? AND superseded_by IS NULL AND refused = '' ORDER BY time DESC, leaf`, s.chain, subject)
	if err != nil {
		return nil, fmt.Errorf("reputation: audits of %s: %w", subject, err)
	}
	defer rows.Close()
	var out []*StoredAudit
	for rows.Next() {
		a, err := scanAudit(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

func scanAudit(rows *sql.Rows) (*StoredAudit, error) {
	var a StoredAudit
	var leaf, target, evidence, side string
	if err := rows.Scan(&leaf, &a.Auditor, &a.Subject, &target, &a.Score, &a.Time, &a.Backed, &side, &a.Settled, &evidence, &a.Evidence.URI, &a.Raw); err != nil {
		return nil, err
	}
	a.Side = Side(side)
	h, err := parseHash(leaf)
	if err != nil {
		return nil, err
	}
	a.Leaf = h
	a.Evidence.Hash = common.HexToHash(evidence)
	if err := setTarget(&a.Audit, target); err != nil {
		return nil, err
	}
	return &a, nil
}

// Graph reads the audits that count into the scoring engine's input: every auditor, subject
// and staked agent, indexed in DID order, with stake (ETH) from staked and ages at now.
// It returns the DIDs by index. (The service keeps the same graph in memory instead.)
func (s *Store) Graph(ctx context.Context, now int64, staked map[string]float64, ext ...ExternalSignal) (*Graph, []string, error) {
	var g liveGraph
	if err := g.load(ctx, s); err != nil {
		return nil, nil, err
	}
	out, dids := g.graph(now, staked, subjects(ext)...)
	out.External = externalEdges(ext, indexOf(dids), now)
	return out, dids, nil
}

// indexOf finds a DID among dids, which are in DID order.
func indexOf(dids []string) func(string) (int32, bool) {
	return func(did string) (int32, bool) {
		i, ok := slices.BinarySearch(dids, did)
		return int32(i), ok
	}
}

func hexHash(h merkle.Hash) string { return h.String() }

func parseHash(s string) (merkle.Hash, error) {
	var h merkle.Hash
	return h, h.UnmarshalText([]byte(s))
}

// unloggedBefore selects (as a) the audits of a chain made before a time that the log does not
// hold: arguments chain, before (unix seconds).
const unloggedBefore = `chain = ? AND time < ? AND NOT EXISTS (SELECT 1 FROM reputation_log g WHERE g.chain = a.chain AND g.leaf = a.leaf)`

// unloggedKey is a target whose audits dropUnlogged changed, with the side of one it dropped.
type unloggedKey struct {
	auditor, subject, target string
	side                     Side
}

// dropUnlogged deletes the audits made before (unix seconds) that are not in the log: audits
// this node took for an epoch the network then closed without them (this node was away, and
// adopted its peers' closing of the epoch). Of each auditor, subject and target it touched,
// the latest audit left counts again. It returns what it touched.
func (s *Store) dropUnlogged(ctx context.Context, before int64) ([]unloggedKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	fail := func(err error) ([]unloggedKey, error) {
		return nil, fmt.Errorf("reputation: drop audits left out of the log: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT leaf, auditor, subject, target, side FROM reputation_audits a WHERE `+unloggedBefore, s.chain, before)
	if err != nil {
		return fail(err)
	}
	var leaves []string
	var keys []unloggedKey
	for rows.Next() {
		var leaf, side string
		var k unloggedKey
		if err := rows.Scan(&leaf, &k.auditor, &k.subject, &k.target, &side); err != nil {
			rows.Close()
			return fail(err)
		}
		k.side = Side(side)
		leaves, keys = append(leaves, leaf), append(keys, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	for _, leaf := range leaves {
		if _, err := tx.ExecContext(ctx, `DELETE FROM reputation_audits WHERE chain = ? AND leaf = ?`, s.chain, leaf); err != nil {
			return fail(err)
		}
	}
	for _, k := range keys {
		// The latest audit left of the target counts; the others point at it.
		var latest string
		switch err := tx.QueryRowContext(ctx, `SELECT leaf FROM reputation_audits WHERE chain = ? AND auditor = ? AND subject = ? AND target = ?
			ORDER BY time DESC, leaf DESC LIMIT 1`, s.chain, k.auditor, k.subject, k.target).Scan(&latest); {
		case errors.Is(err, sql.ErrNoRows):
			continue
		case err != nil:
			return fail(err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE reputation_audits SET superseded_by = CASE WHEN leaf = ? THEN NULL ELSE ? END
			WHERE chain = ? AND auditor = ? AND subject = ? AND target = ?`, latest, latest, s.chain, k.auditor, k.subject, k.target); err != nil {
			return fail(err)
		}
	}
	return keys, tx.Commit()
}
