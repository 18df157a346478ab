package groups

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/p2p"
	"github.com/surety-ioa/surety/internal/sqlite"
)

// MembersKind is the body kind of a membership envelope: {"kind": MembersKind, "members":
// [DIDs]}. The creator is always a member.
const MembersKind = "surety.group.members/1"

// States are the conversation states an envelope in a thread may carry (or none).
var States = []string{"discussion", "task_assignment", "execution", "conclusion"}

var groupIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Group errors; Error carries the detail.
var (
	// ErrBadGroup reports a malformed group request: a bad group id, a group_id that is not
	// the group's, a bad membership body or state.
	ErrBadGroup = errors.New("groups: bad group request")
	// ErrUnknownGroup reports a group this node does not know.
	ErrUnknownGroup = errors.New("groups: unknown group")
	// ErrNotMember reports a sender that is not a member of the group.
	ErrNotMember = errors.New("groups: sender is not a member of the group")
	// ErrReservedGroup reports a group id reserved for others: bounty-N belongs to bounty N's
	// poster and worker.
	ErrReservedGroup = errors.New("groups: this group id is reserved")
	// ErrNotCreator reports a membership envelope from someone other than the creator.
	ErrNotCreator = errors.New("groups: only the group's creator sets its members")
	// ErrStaleMembers reports a membership envelope older than the one in force.
	ErrStaleMembers = errors.New("groups: a newer membership is in force")
	// ErrDuplicateEnvelope reports an envelope the thread already holds.
	ErrDuplicateEnvelope = errors.New("groups: the envelope is already in the thread")
	// ErrUnbound reports a sender whose DID no wallet binds on chain, where one is needed: to
	// create a group or set its members, and to post to a group whose creator is not bound
	// (a bound creator admits the unbound DIDs it names as members).
	ErrUnbound = errors.New("groups: the sender's DID is not bound to a wallet on chain")
	// ErrQuota reports an envelope beyond what one identity may store here (Quotas).
	ErrQuota = errors.New("groups: quota reached")
	// ErrTooLarge reports an envelope larger than MaxPostSize (a post) or MaxMembersSize (a
	// membership).
	ErrTooLarge = errors.New("groups: the envelope is too large")
)

// errClaimKept marks a membership envelope older than the one in force that the node kept
// as its creator's earliest claim: anti-entropy took it.
var errClaimKept = errors.New("kept as the creator's earliest claim to the group id")

// Error says why a group request was refused. It matches Kind with errors.Is.
type Error struct {
	Kind   error
	Detail string // safe to show the client
}

// Error reads like `identity: bad group request: state "done" is not one of ...`.
func (e *Error) Error() string { return e.Kind.Error() + ": " + e.Detail }

// Unwrap returns the kind.
func (e *Error) Unwrap() error { return e.Kind }

func groupErr(kind error, format string, args ...any) error {
	return &Error{Kind: kind, Detail: fmt.Sprintf(format, args...)}
}

// Group is a group's membership as this node knows it.
type Group struct {
	ID      string   `json:"id"`
	Creator string   `json:"creator"`
	Members []string `json:"members"` // sorted
	// Updated is the iat of the membership envelope in force.
	Updated int64 `json:"updated"`
	// Envelopes is how many envelopes the thread holds here.
	Envelopes int64 `json:"envelopes"`
}

// Envelope is one envelope of a thread.
type Envelope struct {
	Group    string `json:"group_id"`
	Seq      int64  `json:"seq"` // arrival order on this node
	ID       string `json:"id"`
	Sender   string `json:"sender"`
	State    string `json:"state,omitempty"`
	IssuedAt int64  `json:"iat"`
	Received int64  `json:"received"` // unix seconds
	// Envelope is the envelope as signed (compact JWS, or the JSON serialization): verify
	// it yourself with any JOSE library.
	Envelope string `json:"envelope"`
}

// Posted is the outcome of posting into a thread.
type Posted struct {
	// Envelope is the stored envelope, nil when the group lives on another node.
	Envelope *Envelope `json:"envelope,omitempty"`
	// Forwarded says the envelope went to the network (Topic).
	Forwarded bool `json:"forwarded"`
}

// Config wires Service.
type Config struct {
	// Verify checks envelopes arriving by gossip (Service.VerifyEnvelope).
	Verify func(ctx context.Context, raw []byte) (*identity.Verified, error)
	// MayCreate, when set, is asked before sender creates group id, whether it came through
	// the API or by gossip; an error wrapping ErrReservedGroup refuses it (bounty-N is for
	// bounty N's parties).
	MayCreate func(ctx context.Context, id, sender string) error
	// Bound says whether a wallet binds did on chain (stake.Index.WalletsOf lists one). Only
	// bound DIDs create groups and set members; an unbound DID posts only to a group whose
	// creator is bound and names it a member. nil: no DID is bound.
	Bound func(ctx context.Context, did string) (bool, error)
	// Quotas bound what one identity may store here; zero fields take the defaults.
	Quotas Quotas
	Now    func() time.Time
	Logger *slog.Logger
}

// Quotas bound what one identity makes a node store (defaults: DefaultGroupsPerCreator,
// DefaultPostsPerSender, DefaultPostsPerCreator).
type Quotas struct {
	// GroupsPerCreator bounds the groups one DID creates.
	GroupsPerCreator int
	// PostsPerSender bounds the thread envelopes one DID posts into one group.
	PostsPerSender int
	// PostsPerCreator bounds the thread envelopes of all the groups one DID created.
	PostsPerCreator int
}

// Service keeps group memberships and threads in the identity_group* tables.
type Service struct {
	db  *sql.DB
	cfg Config

	write sync.Mutex // one writer: seq is arrival order

	mu       sync.Mutex
	watchers map[string]map[chan struct{}]struct{}
	topic    *p2p.Topic // set by Attach
}

// migrations are the groups' tables. Until groups had a package of its own, identity's
// migration 3 created them under these names; IF NOT EXISTS keeps such databases as they are.
var migrations = []sqlite.Migration{{Version: 1, SQL: `
CREATE TABLE IF NOT EXISTS identity_groups (
	id          TEXT    PRIMARY KEY,
	creator     TEXT    NOT NULL,
	members     TEXT    NOT NULL, -- JSON array of DIDs, the creator included
	members_iat INTEGER NOT NULL, -- iat and id of the membership envelope in force
	members_id  TEXT    NOT NULL,
	members_env BLOB    NOT NULL,
	created     INTEGER NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS identity_group_envelopes (
	group_id TEXT    NOT NULL,
	seq      INTEGER NOT NULL, -- arrival order on this node, from 1
	id       TEXT    NOT NULL,
	sender   TEXT    NOT NULL,
	state    TEXT    NOT NULL,
	iat      INTEGER NOT NULL,
	received INTEGER NOT NULL,
	envelope BLOB    NOT NULL,
	PRIMARY KEY (group_id, seq),
	UNIQUE (group_id, sender, id)
) STRICT;
`}, {Version: 2, SQL: `
-- Each envelope's SHA-256, its id in anti-entropy, kept when it is stored: a listing reads
-- no envelope (New hashes the rows of older databases once).
ALTER TABLE identity_groups ADD COLUMN members_hash BLOB;
ALTER TABLE identity_group_envelopes ADD COLUMN hash BLOB;
-- The creator's claim: its earliest membership envelope for the group. Of two creators'
-- claims, the earlier (by iat, then by hash) creates the group, on every node.
ALTER TABLE identity_groups ADD COLUMN claim_iat INTEGER;
ALTER TABLE identity_groups ADD COLUMN claim_hash BLOB;
ALTER TABLE identity_groups ADD COLUMN claim_env BLOB;
CREATE INDEX identity_groups_creator ON identity_groups (creator, members_iat);
CREATE INDEX identity_groups_members_hash ON identity_groups (members_hash);
CREATE INDEX identity_groups_claim_hash ON identity_groups (claim_hash);
CREATE INDEX identity_group_envelopes_hash ON identity_group_envelopes (hash);
CREATE INDEX identity_group_envelopes_iat ON identity_group_envelopes (iat);
`}}

// New keeps groups in db, creating their tables if need be.
func New(ctx context.Context, db *sql.DB, cfg Config) (*Service, error) {
	if err := sqlite.Migrate(ctx, db, "groups", migrations); err != nil {
		return nil, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Bound == nil {
		cfg.Bound = func(context.Context, string) (bool, error) { return false, nil }
	}
	cfg.Quotas = cfg.Quotas.withDefaults()
	if err := hashRows(ctx, db); err != nil {
		return nil, err
	}
	return &Service{db: db, cfg: cfg, watchers: map[string]map[chan struct{}]struct{}{}}, nil
}

func (q Quotas) withDefaults() Quotas {
	if q.GroupsPerCreator <= 0 {
		q.GroupsPerCreator = DefaultGroupsPerCreator
	}
	if q.PostsPerSender <= 0 {
		q.PostsPerSender = DefaultPostsPerSender
	}
	if q.PostsPerCreator <= 0 {
		q.PostsPerCreator = DefaultPostsPerCreator
	}
	return q
}

// hashRows stores the hashes of rows from before migration 2, once: the membership in force
// is also the creator's claim, the earliest this node knows.
func hashRows(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	type row struct {
		key any
		raw []byte
	}
	read := func(q string) ([]row, error) {
		rows, err := tx.QueryContext(ctx, q)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.key, &r.raw); err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		return out, rows.Err()
	}
	grps, err := read(`SELECT id, members_env FROM identity_groups WHERE members_hash IS NULL`)
	if err != nil {
		return fmt.Errorf("groups: hash memberships: %w", err)
	}
	for _, r := range grps {
		h := sha256.Sum256(r.raw)
		if _, err := tx.ExecContext(ctx, `UPDATE identity_groups SET members_hash = ?1,
			claim_iat = coalesce(claim_iat, members_iat), claim_hash = coalesce(claim_hash, ?1), claim_env = coalesce(claim_env, members_env) WHERE id = ?2`, h[:], r.key); err != nil {
			return fmt.Errorf("groups: hash memberships: %w", err)
		}
	}
	posts, err := read(`SELECT rowid, envelope FROM identity_group_envelopes WHERE hash IS NULL`)
	if err != nil {
		return fmt.Errorf("groups: hash thread envelopes: %w", err)
	}
	for _, r := range posts {
		h := sha256.Sum256(r.raw)
		if _, err := tx.ExecContext(ctx, `UPDATE identity_group_envelopes SET hash = ? WHERE rowid = ?`, h[:], r.key); err != nil {
			return fmt.Errorf("groups: hash thread envelopes: %w", err)
		}
	}
	return tx.Commit()
}

// CheckID returns an ErrBadGroup error unless id is 1–64 letters, digits, '-' or '_'.
func CheckID(id string) error {
	if !groupIDPattern.MatchString(id) {
		return groupErr(ErrBadGroup, "group id %q must be 1-64 letters, digits, '-' or '_'", truncate(id, 80))
	}
	return nil
}

// membersBody is a membership envelope's body.
type membersBody struct {
	Kind    string   `json:"kind"`
	Members []string `json:"members"`
}

// IsMembership says whether v is a membership envelope.
func IsMembership(v *identity.Verified) bool {
	var b membersBody
	return json.Unmarshal(v.Envelope.Body, &b) == nil && b.Kind == MembersKind
}

// SetMembers applies the membership envelope v (raw: as received) to group id: the first
// one creates the group with its sender as creator; later ones must come from the creator
// and be newer (iat, then id) than the one in force. Its sender must be bound on chain. Of
// two creators' claims to one id, the earlier one (iat, then hash: earlierClaim) creates the
// group, on every node: a later-arriving claim that is earlier takes the group over. The
// envelope then goes to the network.
func (g *Service) SetMembers(ctx context.Context, id string, v *identity.Verified, raw []byte) (*Group, error) {
	grp, err := g.setMembers(ctx, id, v, raw)
	if err != nil {
		return nil, err
	}
	g.spread(ctx, raw)
	return grp, nil
}

// earlierClaim says whether a claim issued at iat with envelope hash h comes before the one
// issued at iat0 with hash h0: every node orders two claims to a group id alike.
func earlierClaim(iat int64, h []byte, iat0 int64, h0 []byte) bool {
	return iat < iat0 || iat == iat0 && bytes.Compare(h, h0) < 0
}

// held is a group as stored, for the checks of a membership envelope.
type held struct {
	creator              string
	inForceIAT           int64
	inForceID            string
	claimIAT             int64
	claimHash            []byte
	groupsOfSender       int // groups the envelope's sender created
	takeOver, ownEarlier bool
}

func (g *Service) setMembers(ctx context.Context, id string, v *identity.Verified, raw []byte) (*Group, error) {
	if len(raw) > MaxMembersSize {
		return nil, groupErr(ErrTooLarge, "a membership envelope of %d bytes; at most %d", len(raw), MaxMembersSize)
	}
	if err := checkEnvelopeGroup(id, v); err != nil {
		return nil, err
	}
	var body membersBody
	if err := json.Unmarshal(v.Envelope.Body, &body); err != nil || body.Kind != MembersKind {
		return nil, groupErr(ErrBadGroup, "the body must be {\"kind\": %q, \"members\": [DIDs]}", MembersKind)
	}
	sender := v.Envelope.Sender
	members := []string{sender}
	for i, m := range body.Members {
		if _, err := identity.ParseDID(m); err != nil {
			return nil, groupErr(ErrBadGroup, "member %d: %v", i, err)
		}
		members = append(members, m)
	}
	slices.Sort(members)
	members = slices.Compact(members)
	if len(members) > MaxMembers {
		return nil, groupErr(ErrBadGroup, "%d members; at most %d", len(members), MaxMembers)
	}
	list, _ := json.Marshal(members)
	sum := sha256.Sum256(raw)
	hash := sum[:]
	iat := v.Envelope.IssuedAt

	g.write.Lock()
	defer g.write.Unlock()
	var h held
	err := g.db.QueryRowContext(ctx, `SELECT creator, members_iat, members_id, claim_iat, claim_hash FROM identity_groups WHERE id = ?`, id).
		Scan(&h.creator, &h.inForceIAT, &h.inForceID, &h.claimIAT, &h.claimHash)
	exists := err == nil
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, fmt.Errorf("groups: read group: %w", err)
	case sender != h.creator && !earlierClaim(iat, hash, h.claimIAT, h.claimHash):
		return nil, groupErr(ErrNotCreator, "group %s was created by %s", id, h.creator)
	case sender != h.creator:
		h.takeOver = true // an earlier claim than the creator's: it created the group
	default:
		h.ownEarlier = earlierClaim(iat, hash, h.claimIAT, h.claimHash)
	}
	if ok, err := g.cfg.Bound(ctx, sender); err != nil {
		return nil, fmt.Errorf("groups: read %s's binding: %w", sender, err)
	} else if !ok {
		return nil, groupErr(ErrUnbound, "%s is bound to no wallet on chain; only a bound DID creates a group or sets its members", sender)
	}
	if !exists || h.takeOver {
		if g.cfg.MayCreate != nil {
			if err := g.cfg.MayCreate(ctx, id, sender); err != nil {
				return nil, err
			}
		}
		if err := g.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM identity_groups WHERE creator = ?`, sender).Scan(&h.groupsOfSender); err != nil {
			return nil, fmt.Errorf("groups: count groups: %w", err)
		}
		if h.groupsOfSender >= g.cfg.Quotas.GroupsPerCreator {
			return nil, groupErr(ErrQuota, "%s has created %d groups here; at most %d", sender, h.groupsOfSender, g.cfg.Quotas.GroupsPerCreator)
		}
	}

	tx, err := g.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var refusal error
	switch {
	case !exists:
		_, err = tx.ExecContext(ctx, `INSERT INTO identity_groups (id, creator, members, members_iat, members_id, members_env, members_hash, claim_iat, claim_hash, claim_env, created)
			VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?4, ?7, ?6, ?8)`,
			id, sender, string(list), iat, v.Envelope.ID, raw, hash, g.cfg.Now().Unix())
		if err != nil {
			return nil, fmt.Errorf("groups: create group: %w", err)
		}
	case h.takeOver:
		// The thread keeps what the new creator's members posted, as on a node that saw
		// this claim first.
		if _, err := tx.ExecContext(ctx, `UPDATE identity_groups SET creator = ?2, members = ?3, members_iat = ?4, members_id = ?5, members_env = ?6, members_hash = ?7,
			claim_iat = ?4, claim_hash = ?7, claim_env = ?6 WHERE id = ?1`, id, sender, string(list), iat, v.Envelope.ID, raw, hash); err != nil {
			return nil, fmt.Errorf("groups: take group over: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM identity_group_envelopes WHERE group_id = ? AND sender NOT IN (SELECT value FROM json_each(?))`, id, string(list)); err != nil {
			return nil, fmt.Errorf("groups: take group over: %w", err)
		}
		g.cfg.Logger.Info("groups: an earlier claim created the group", "group", id, "creator", sender, "was", h.creator)
	default:
		if h.ownEarlier {
			// The creator's own earlier claim (this node learned the group from a later
			// membership): it is what other claims are measured against.
			if _, err := tx.ExecContext(ctx, `UPDATE identity_groups SET claim_iat = ?, claim_hash = ?, claim_env = ? WHERE id = ?`, iat, hash, raw, id); err != nil {
				return nil, fmt.Errorf("groups: update claim: %w", err)
			}
		}
		switch {
		case iat == h.inForceIAT && v.Envelope.ID == h.inForceID:
			refusal = groupErr(ErrDuplicateEnvelope, "membership envelope %s is the one in force", truncate(v.Envelope.ID, 80))
		case iat < h.inForceIAT:
			refusal = groupErr(ErrStaleMembers, "the membership in force was issued at %d, after this one (%d)", h.inForceIAT, iat)
		case iat == h.inForceIAT && v.Envelope.ID < h.inForceID:
			// Every node must pick the same of two lists signed in one second: the larger id.
			refusal = groupErr(ErrStaleMembers, "another membership was issued in the same second (%d) and wins; sign this one again", h.inForceIAT)
		default:
			if _, err := tx.ExecContext(ctx, `UPDATE identity_groups SET members = ?, members_iat = ?, members_id = ?, members_env = ?, members_hash = ? WHERE id = ?`,
				string(list), iat, v.Envelope.ID, raw, hash, id); err != nil {
				return nil, fmt.Errorf("groups: update group: %w", err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	if h.takeOver {
		g.notify(id)
	}
	if refusal != nil && h.ownEarlier {
		return nil, fmt.Errorf("%w (%w)", refusal, errClaimKept)
	}
	if refusal != nil {
		return nil, refusal
	}
	return g.Group(ctx, id)
}

// checkEnvelopeGroup checks that id is a group id and v names it.
func checkEnvelopeGroup(id string, v *identity.Verified) error {
	if err := CheckID(id); err != nil {
		return err
	}
	if v.Envelope.GroupID != id {
		return groupErr(ErrBadGroup, "the envelope's group_id is %q, not %q", truncate(v.Envelope.GroupID, 80), id)
	}
	return nil
}

// Group is group id's membership and thread size; ErrUnknownGroup if the node does not know
// it.
func (g *Service) Group(ctx context.Context, id string) (*Group, error) {
	if err := CheckID(id); err != nil {
		return nil, err
	}
	grp := &Group{ID: id}
	var list string
	err := g.db.QueryRowContext(ctx, `SELECT creator, members, members_iat, (SELECT COUNT(*) FROM identity_group_envelopes WHERE group_id = g.id)
		FROM identity_groups g WHERE id = ?`, id).Scan(&grp.Creator, &list, &grp.Updated, &grp.Envelopes)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, groupErr(ErrUnknownGroup, "no group %s here", id)
	}
	if err != nil {
		return nil, fmt.Errorf("groups: read group: %w", err)
	}
	if err := json.Unmarshal([]byte(list), &grp.Members); err != nil {
		return nil, fmt.Errorf("groups: group %s members: %w", id, err)
	}
	return grp, nil
}

// Post adds the verified envelope v (raw: as received) to group id's thread and sends it to
// the network. A group this node does not know may live on another node: when attached to a
// network the envelope is forwarded there (Posted.Forwarded, no Envelope); otherwise Post
// returns ErrUnknownGroup.
func (g *Service) Post(ctx context.Context, id string, v *identity.Verified, raw []byte) (*Posted, error) {
	e, err := g.post(ctx, id, v, raw)
	if errors.Is(err, ErrUnknownGroup) && g.attached() {
		return &Posted{Forwarded: g.spread(ctx, raw)}, nil
	}
	if err != nil {
		return nil, err
	}
	return &Posted{Envelope: e, Forwarded: g.spread(ctx, raw)}, nil
}

func (g *Service) post(ctx context.Context, id string, v *identity.Verified, raw []byte) (*Envelope, error) {
	if len(raw) > MaxPostSize {
		return nil, groupErr(ErrTooLarge, "a thread envelope of %d bytes; at most %d: a post is text and a few links, evidence goes by hash", len(raw), MaxPostSize)
	}
	if err := checkEnvelopeGroup(id, v); err != nil {
		return nil, err
	}
	if IsMembership(v) {
		return nil, groupErr(ErrBadGroup, "a membership envelope sets members: post it to /v1/groups/%s/members", id)
	}
	if s := v.Envelope.State; s != "" && !slices.Contains(States, s) {
		return nil, groupErr(ErrBadGroup, "state %q is not one of %v", truncate(s, 40), States)
	}
	// One writer from the membership check to the insert: a takeover in between would leave
	// the post of a member the new creator did not name.
	g.write.Lock()
	defer g.write.Unlock()
	grp, err := g.Group(ctx, id)
	if err != nil {
		return nil, err
	}
	if _, ok := slices.BinarySearch(grp.Members, v.Envelope.Sender); !ok {
		return nil, groupErr(ErrNotMember, "%s is not a member of group %s", v.Envelope.Sender, id)
	}
	// A bound creator admits the members it names; otherwise each member answers for itself.
	for _, did := range []string{grp.Creator, v.Envelope.Sender} {
		ok, err := g.cfg.Bound(ctx, did)
		if err != nil {
			return nil, fmt.Errorf("groups: read %s's binding: %w", did, err)
		}
		if ok {
			break
		}
		if did == v.Envelope.Sender {
			return nil, groupErr(ErrUnbound, "group %s's creator is no longer bound on chain, so only bound members post; %s is bound to no wallet", id, did)
		}
	}
	sum := sha256.Sum256(raw)
	e := &Envelope{Group: id, ID: v.Envelope.ID, Sender: v.Envelope.Sender, State: v.Envelope.State, IssuedAt: v.Envelope.IssuedAt,
		Received: g.cfg.Now().Unix(), Envelope: string(raw)}
	tx, err := g.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM identity_group_envelopes WHERE group_id = ? AND sender = ? AND id = ?`, id, e.Sender, e.ID).Scan(&n); err != nil {
		return nil, fmt.Errorf("groups: read thread: %w", err)
	}
	if n > 0 {
		return nil, groupErr(ErrDuplicateEnvelope, "envelope %s from %s", truncate(e.ID, 80), e.Sender)
	}
	var creator string
	var bySender, byCreator int
	if err := tx.QueryRowContext(ctx, `SELECT creator, (SELECT COUNT(*) FROM identity_group_envelopes WHERE group_id = g.id AND sender = ?),
		(SELECT COUNT(*) FROM identity_group_envelopes e JOIN identity_groups c ON c.id = e.group_id WHERE c.creator = g.creator)
		FROM identity_groups g WHERE id = ?`, e.Sender, id).Scan(&creator, &bySender, &byCreator); err != nil {
		return nil, fmt.Errorf("groups: count thread: %w", err)
	}
	if bySender >= g.cfg.Quotas.PostsPerSender {
		return nil, groupErr(ErrQuota, "%s has posted %d envelopes in group %s; at most %d", e.Sender, bySender, id, g.cfg.Quotas.PostsPerSender)
	}
	if byCreator >= g.cfg.Quotas.PostsPerCreator {
		return nil, groupErr(ErrQuota, "the groups %s created hold %d envelopes; at most %d", creator, byCreator, g.cfg.Quotas.PostsPerCreator)
	}
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM identity_group_envelopes WHERE group_id = ?`, id).Scan(&e.Seq); err != nil {
		return nil, fmt.Errorf("groups: read thread: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO identity_group_envelopes (group_id, seq, id, sender, state, iat, received, envelope, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, e.Seq, e.ID, e.Sender, e.State, e.IssuedAt, e.Received, raw, sum[:]); err != nil {
		return nil, fmt.Errorf("groups: store thread envelope: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	g.notify(id)
	return e, nil
}

// Envelopes is a page of group id's thread: up to limit envelopes (MaxPage at most)
// after seq after, in order.
func (g *Service) Envelopes(ctx context.Context, id string, after int64, limit int) ([]*Envelope, error) {
	if _, err := g.Group(ctx, id); err != nil {
		return nil, err
	}
	if limit <= 0 || limit > MaxPage {
		limit = MaxPage
	}
	rows, err := g.db.QueryContext(ctx, `SELECT seq, id, sender, state, iat, received, envelope FROM identity_group_envelopes
		WHERE group_id = ? AND seq > ? ORDER BY seq LIMIT ?`, id, after, limit)
	if err != nil {
		return nil, fmt.Errorf("groups: read thread: %w", err)
	}
	defer rows.Close()
	out := []*Envelope{}
	for rows.Next() {
		e := &Envelope{Group: id}
		var raw []byte
		if err := rows.Scan(&e.Seq, &e.ID, &e.Sender, &e.State, &e.IssuedAt, &e.Received, &raw); err != nil {
			return nil, err
		}
		e.Envelope = string(raw)
		out = append(out, e)
	}
	return out, rows.Err()
}

// Watch signals on the returned channel (coalesced) whenever group id's thread grows, until
// stop is called.
func (g *Service) Watch(id string) (<-chan struct{}, func()) {
	c := make(chan struct{}, 1)
	g.mu.Lock()
	if g.watchers[id] == nil {
		g.watchers[id] = map[chan struct{}]struct{}{}
	}
	g.watchers[id][c] = struct{}{}
	g.mu.Unlock()
	return c, func() {
		g.mu.Lock()
		delete(g.watchers[id], c)
		if len(g.watchers[id]) == 0 {
			delete(g.watchers, id)
		}
		g.mu.Unlock()
	}
}

func (g *Service) notify(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for c := range g.watchers[id] {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// truncate bounds s, from a client or a peer, in messages.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
