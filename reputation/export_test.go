package reputation

import (
	"context"

	"github.com/surety-ioa/surety/internal/p2p"

	"github.com/surety-ioa/surety/identity"
)

// PublishRaw publishes bytes on the audit topic without checking them: tests play a
// malicious peer with it.
func PublishRaw(ctx context.Context, s *Service, data []byte) error {
	s.mu.RLock()
	topic := s.topic
	s.mu.RUnlock()
	return topic.Publish(ctx, data)
}

// LoadGraph reads the audits that count from the store into s's graph in memory, as its first
// recomputation does (a no-op once read).
func LoadGraph(ctx context.Context, s *Service) error {
	s.live.mu.Lock()
	defer s.live.mu.Unlock()
	return s.live.load(ctx, s.cfg.Store)
}

// RestoreScores makes the stored scores the ones s answers with, as Run does at start.
func RestoreScores(ctx context.Context, s *Service) (bool, error) { return s.restoreScores(ctx) }

// SaveScores stores the scores s answers with, as Run does after its first recomputation.
func SaveScores(ctx context.Context, s *Service) error { return s.saveScores(ctx) }

// MayStand is the standing check an audit by auditor that speaks for no bounty's side meets.
func MayStand(ctx context.Context, s *Service, auditor string) error {
	return s.mayStand(ctx, auditor, Verdict{})
}

// Carried says whether s's last recomputation carried the pair sums of the one before over
// (incremental) instead of summing every audit.
func Carried(s *Service) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.snapshot.carried
}

// Follow is what recording audit a does in memory, without the checks and the store; a backed
// one as if its bounty settled the value of full backing.
func Follow(s *Service, a *Audit, backed bool) { s.follow(a, backed, DefaultFullBacking) }

// Hold keeps an audit as the gossip path does when its facts have not reached this node yet.
func Hold(ctx context.Context, s *Service, v *identity.Verified, raw []byte) error {
	return s.hold(ctx, v, raw)
}

// SettleSide backs one audit of target's side, as submitting one does.
func SettleSide(ctx context.Context, s *Store, target string, side Side) error {
	_, err := s.settleSide(ctx, target, side)
	return err
}

// Kinds of the log's sync requests, for tests that play a lying peer.
const (
	LogHeadsKind  = logHeadsKind
	LogLeavesKind = logLeavesKind
)

// HeldBy counts the held audits by auditor (the sender of each held envelope).
func HeldBy(ctx context.Context, s *Service) (map[string]int, error) {
	rows, err := s.cfg.Store.db.QueryContext(ctx, `SELECT json_extract(payload, '$.sender'), COUNT(*) FROM reputation_held WHERE chain = ? GROUP BY 1`, s.cfg.Store.chain)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var did string
		var n int
		if err := rows.Scan(&did, &n); err != nil {
			return nil, err
		}
		out[did] = n
	}
	return out, rows.Err()
}

// AuditSetWindow is the service's audit set in anti-entropy, listing at most window audits.
func AuditSetWindow(s *Service, check EnvelopeVerifier, window int) p2p.Set {
	return &auditSet{s: s, check: check, window: window}
}

// AnchorLatest anchors the log's latest head with a, as the service does after epochs close.
func AnchorLatest(ctx context.Context, l *Log, a Anchorer) (*Head, error) {
	return l.anchorLatest(ctx, a)
}

// LeafQueries are the SQL of Log.Leaves, by name, for their query plans.
var LeafQueries = map[string]string{"leavesInRange": leavesInRange, "leavesOfSubject": leavesOfSubject,
	"subjectHasMore": subjectHasMore, "firstAnchored": firstAnchored, "headsBefore": headsBefore}

// BackfillSubjects is what migration 11 runs to name the subjects of leaves logged before it.
const BackfillSubjects = backfillSubjects

// Halving is halving, for tests of its values.
var Halving = halving
