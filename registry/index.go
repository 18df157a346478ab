package registry

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"math/big"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/surety-ioa/surety/a2a"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/units"
	"github.com/surety-ioa/surety/registry/search"
	"github.com/surety-ioa/surety/registry/semantic"
)

var migrations = []sqlite.Migration{{Version: 1, SQL: `
CREATE TABLE registry_cards (
	chain    INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	did      TEXT    NOT NULL,
	seq      INTEGER NOT NULL,
	name     TEXT    NOT NULL,
	wallet   TEXT    NOT NULL,
	stake    TEXT    NOT NULL,
	weight   REAL    NOT NULL,
	staked   INTEGER NOT NULL,
	card     TEXT    NOT NULL,
	jws      TEXT    NOT NULL,
	received INTEGER NOT NULL,
	fts_row  INTEGER NOT NULL,
	PRIMARY KEY (chain, did)
) STRICT;
CREATE TABLE registry_capabilities (
	chain      INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	capability TEXT    NOT NULL,
	did        TEXT    NOT NULL,
	PRIMARY KEY (chain, capability, did)
) STRICT;
CREATE INDEX registry_cards_fts ON registry_cards (fts_row);
CREATE INDEX registry_capabilities_did ON registry_capabilities (chain, did);
CREATE VIRTUAL TABLE registry_fts USING fts5(did UNINDEXED, chain UNINDEXED, name, description, capabilities, tokenize = 'unicode61');
`}, {Version: 2, SQL: `
-- Search reads matches in rank order and stops early: a card's search row id is its rank
-- (see rankRow), and capability rows carry it too, indexed. tags holds each capability as
-- one exact token ('c' || hex(capability)), so text and capability match in one FTS5 query.
CREATE VIRTUAL TABLE registry_fts_ranked USING fts5(did UNINDEXED, chain UNINDEXED, name, description, capabilities, tags, tokenize = 'unicode61');
INSERT INTO registry_fts_ranked (rowid, did, chain, name, description, capabilities, tags)
	SELECT ` + rankRowSQL + `, f.did, f.chain, f.name, f.description, f.capabilities,
		coalesce((SELECT group_concat('c' || hex(k.capability), ' ') FROM registry_capabilities k WHERE k.chain = c.chain AND k.did = c.did), '')
	FROM registry_cards c JOIN registry_fts f ON f.rowid = c.fts_row;
UPDATE registry_cards AS c SET fts_row = ` + rankRowSQL + `;
DROP TABLE registry_fts;
ALTER TABLE registry_fts_ranked RENAME TO registry_fts;
ALTER TABLE registry_capabilities ADD COLUMN rank INTEGER NOT NULL DEFAULT 0;
UPDATE registry_capabilities SET rank = (SELECT c.fts_row FROM registry_cards c WHERE c.chain = registry_capabilities.chain AND c.did = registry_capabilities.did);
CREATE INDEX registry_capabilities_rank ON registry_capabilities (chain, capability, rank DESC);
DROP INDEX registry_cards_fts;
-- Covering what ranking reads, so candidates never touch the (large) card rows.
CREATE INDEX registry_cards_rank ON registry_cards (chain, fts_row DESC, did, staked, weight);
`}, {Version: 3, SQL: `
CREATE TABLE registry_gone (
	chain   INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	did     TEXT    NOT NULL,
	wallet  TEXT    NOT NULL,
	status  TEXT    NOT NULL CHECK (status IN ('revoked', 'rotated')),
	noticed INTEGER NOT NULL,
	PRIMARY KEY (chain, did)
) STRICT;
`}, {Version: 4, SQL: `
-- Who left on chain is the stake index's to say (Config.Keys), no longer a table of notices.
DROP TABLE registry_gone;
`}, {Version: 5, SQL: `
-- Unstaked cards are a class with a quota (Config.MaxUnstaked), the oldest received going
-- first; the sync window lists staked cards first, then the newest received.
CREATE INDEX registry_cards_received ON registry_cards (chain, staked, received);
`}, {Version: 6, SQL: `
-- Text search runs on an in-memory index built from registry_cards (package search); the
-- FTS5 table is no longer read or written. fts_row stays: it is the card's rank key, which
-- registry_cards_rank and registry_capabilities.rank order by, and deletions go by it.
DROP TABLE registry_fts;
`}}

// A card's rank key (registry_cards.fts_row, named when it was the row id of the FTS5
// table that migration 6 dropped): rankRow(staked, weight, serial) puts every staked card
// above every unstaked one, then orders by stake weight (in steps of 1/1000), then newest
// first; serial (the card's row id in registry_cards) keeps it unique. rankRowSQL is the
// same formula over registry_cards' columns, for migration 2.
const (
	weightSteps = 1<<21 - 1
	rankRowSQL  = `(((1 + (c.staked << 21) + min(CAST(round((c.weight - 1) * 1000) AS INTEGER), 2097151)) << 32) | c.rowid)`
)

func rankRow(staked bool, weight float64, serial int64) int64 {
	key := 1 + min(int64(math.Round((weight-1)*1000)), weightSteps)
	if staked {
		key += 1 << 21
	}
	return key<<32 | serial
}

// ErrNoFTS5 reports a build without SQLite's FTS5 (build with -tags sqlite_fts5; the Makefile
// does): the registry's first migrations create FTS5 tables (migration 6 drops the last).
var ErrNoFTS5 = errors.New("registry: SQLite was built without FTS5: build with -tags sqlite_fts5 (make does)")

// ReputationReader gives an agent's reputation weight (1 = neutral) for ranking. Until the
// reputation service exists, the registry uses Neutral.
type ReputationReader interface {
	Weight(ctx context.Context, did string) (float64, error)
}

// StakeWatcher is told when the staked agents or their stakes may have changed (a staked
// card stored, a card dropped), so that what starts from stake (reputation's pre-trust) is
// recomputed. A ReputationReader that is one is told.
type StakeWatcher interface {
	StakesChanged()
}

// stakesChanged tells the reputation reader, when it watches stake. The caller holds r.mu.
func (r *Registry) stakesChanged() {
	if w, ok := r.cfg.Reputation.(StakeWatcher); ok {
		w.StakesChanged()
	}
}

// Neutral weighs everyone 1.
type Neutral struct{}

// Weight is 1.
func (Neutral) Weight(context.Context, string) (float64, error) { return 1, nil }

// Config sets up a Registry.
type Config struct {
	DB *sql.DB
	// Chain is the chains-table row that scopes the registry (stake is per chain).
	Chain  int64
	Stakes StakeReader
	// Keys reads DIDs' key status from the chain's index: a revoked or rotated DID's card is
	// refused and dropped. nil treats every DID as active.
	Keys       identity.KeyStatusReader
	Reputation ReputationReader
	// MinStake is the stake (base units) below which a card ranks as unstaked and is rate
	// limited; nil means any stake counts. Every node of a deployment uses the same.
	MinStake *big.Int
	// StakeToken is the token agents stake (its decimals turn stake into whole tokens for
	// ranking); the zero value means ETH.
	StakeToken units.Token
	// UnstakedPerMinute bounds unstaked registrations per DID and per source; 0 means 6.
	UnstakedPerMinute int
	// MaxUnstaked bounds the unstaked cards held; 0 means MaxUnstakedCards.
	MaxUnstaked int
	// MaxSearches bounds the searches that run at once, clients', followers' and peers'
	// together; 0 means 2×GOMAXPROCS. Past it a search waits at most searchWait for room,
	// then fails with ErrBusy.
	MaxSearches int
	Now         func() time.Time
	Logger      *slog.Logger
}

// Registry keeps the valid Agent Cards this node has seen, in SQLite, and searches them in
// an in-memory index (package search).
type Registry struct {
	cfg     Config
	mu      sync.Mutex // serializes writes, so sequence checks and upserts are atomic
	limiter *limiter
	net     *Network // set by Attach; nil for a node without peers
	index   *search.Index
	// vectors and unstakedVectors hold the staked and the unstaked cards' vectors of
	// meaning, by the same ids as index.
	vectors, unstakedVectors *semantic.Index
	// verified remembers the cards stored lately, so that the DHT's validator does not check
	// their signatures again when this node puts them.
	verified *verifiedCards
	// searches holds a slot per search running (Config.MaxSearches): each holds scratch
	// proportional to the index and CPU, whoever asks.
	searches chan struct{}
	// semantic is the hook of the hybrid ranking's semantic part (docs/SEARCH.md): the
	// semantic scores (cosine, clamped at 0) of the cards nearest to a query's text, among
	// the cards whose registry_cards row ids the bitmap among holds (nil: all), by row id;
	// nil ranks by text alone. New sets it to nearest.
	semantic semanticHook
	// answers keeps the index's answers to recent queries while no card changes; cards the
	// cards search answers read, decoded, while their rows do not change.
	answers answerCache
	cards   cardCache
}

// New migrates the registry tables and builds the search index from them.
func New(ctx context.Context, cfg Config) (*Registry, error) {
	if cfg.Reputation == nil {
		cfg.Reputation = Neutral{}
	}
	if cfg.UnstakedPerMinute == 0 {
		cfg.UnstakedPerMinute = defaultUnstakedPerMinute
	}
	if cfg.MaxUnstaked <= 0 {
		cfg.MaxUnstaked = MaxUnstakedCards
	}
	if cfg.MaxSearches <= 0 {
		cfg.MaxSearches = 2 * runtime.GOMAXPROCS(0)
	}
	if cfg.StakeToken == (units.Token{}) {
		cfg.StakeToken = units.Ether
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if err := sqlite.Migrate(ctx, cfg.DB, "registry", migrations); err != nil {
		if strings.Contains(err.Error(), "fts5") {
			return nil, ErrNoFTS5
		}
		return nil, err
	}
	r := &Registry{cfg: cfg, limiter: newLimiter(cfg.UnstakedPerMinute, time.Minute, cfg.Now), index: search.New(),
		vectors: semantic.NewIndex(), unstakedVectors: semantic.NewIndex(), searches: make(chan struct{}, cfg.MaxSearches),
		verified: newVerifiedCards()}
	r.semantic = r.nearest
	r.answers.text, r.answers.unstaked = r.index, r.unstakedVectors
	if err := r.loadIndex(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// staked says whether a stake counts: above zero and at least the minimum.
func (r *Registry) staked(stake *big.Int) bool {
	return stake != nil && stake.Sign() > 0 && (r.cfg.MinStake == nil || stake.Cmp(r.cfg.MinStake) >= 0)
}

// stakeWeight turns a stake in base units into a ranking weight (units.StakeWeight of the
// stake in whole tokens): 1 for no stake or less than the minimum.
func (r *Registry) stakeWeight(stake *big.Int) float64 {
	if !r.staked(stake) {
		return 1
	}
	return units.StakeWeight(r.cfg.StakeToken.Whole(stake))
}

// Register checks a signed card (see Parse), its sequence against what the node holds, and
// the agent's stake, stores it, and hands it to the network when the node has one: gossip
// and the DHT put run on the network's own goroutine (Network.spread), off the request's
// path, and the DHT's validator does not check the card's signature again. The card is
// stored (durable as the database is) when Register returns. source names who sent it (an
// API client, a peer), for rate limiting unstaked cards. It returns the stored card or a
// *CardError.
func (r *Registry) Register(ctx context.Context, raw []byte, source string) (*Agent, error) {
	return r.register(ctx, raw, source, true)
}

func (r *Registry) register(ctx context.Context, raw []byte, source string, spread bool) (*Agent, error) {
	sc, err := Parse(raw, r.cfg.Now())
	if err != nil {
		return nil, err
	}
	stake, err := r.cfg.Stakes.StakeOf(ctx, sc.DID, sc.Wallet)
	if err != nil {
		return nil, err
	}
	if st, err := r.keyStatus(ctx, sc.DID); err != nil {
		return nil, err
	} else if st.Closed() {
		return nil, cardErr(sc.DID, ErrRevoked, "the DID was %s on chain", st.State)
	}
	a, err := r.storeNewer(ctx, sc, stake, source)
	if err != nil {
		return nil, err
	}
	r.verified.add(sc)
	r.mu.Lock()
	n := r.net
	r.mu.Unlock()
	if n != nil {
		if spread {
			n.publish(ctx, a)
		}
		n.provide(a)
	}
	return a, nil
}

// storeNewer stores sc when it is newer than the card held for its DID (ErrStale when not),
// within the unstaked cards' rate (ErrRateLimited). Writes are serialized, so the check and
// the store are atomic.
func (r *Registry) storeNewer(ctx context.Context, sc *SignedCard, stake *big.Int, source string) (*Agent, error) {
	vec := cardVector(indexDoc(&sc.Card, false, 1)) // of the card's text alone: no lock needed
	r.mu.Lock()
	defer r.mu.Unlock()
	var (
		seq uint64
		jws string
	)
	err := r.cfg.DB.QueryRowContext(ctx, `SELECT seq, jws FROM registry_cards WHERE chain = ? AND did = ?`, r.cfg.Chain, sc.DID).Scan(&seq, &jws)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("registry: %w", err)
	}
	if err == nil && !newer(sc, seq, jws) {
		return nil, cardErr(sc.DID, ErrStale, "sequence %d is not above %d", sc.Seq, seq)
	}
	staked := r.staked(stake)
	if !staked && !r.limiter.allow(sc.DID, source) {
		return nil, cardErr(sc.DID, ErrRateLimited, "unstaked cards are limited to %d a minute per DID and per source", r.cfg.UnstakedPerMinute)
	}
	if err := r.store(ctx, sc, stake, vec); err != nil {
		return nil, err
	}
	if staked {
		r.stakesChanged()
	}
	return &Agent{SignedCard: *sc, Stake: stake.String(), Staked: staked}, nil
}

// newer says whether sc replaces the card held (sequence seq, JWS jws): a higher sequence
// does; of two cards an agent signed with one sequence number, every node keeps the one whose
// JWS hashes lower, so they agree whichever reached them first.
func newer(sc *SignedCard, seq uint64, jws string) bool {
	if sc.Seq != seq {
		return sc.Seq > seq
	}
	return newerContent(sc.Seq, signedContent(sc.JWS), seq, signedContent(jws))
}

// newerContent is newer for two cards known by their sequence and signedContent.
func newerContent(seqA uint64, a [sha256.Size]byte, seqB uint64, b [sha256.Size]byte) bool {
	if seqA != seqB {
		return seqA > seqB
	}
	return bytes.Compare(a[:], b[:]) < 0
}

// signedContent is the hash of what the agent signed of a stored card: a compact JWS's
// protected header and payload, or an A2A card's canonical form and its signature's protected
// header; never the signature's bytes (an ES256K signature has a second, high-S encoding) nor
// anything unsigned. Two encodings of one signed card tie, and the held one stays: a third
// party cannot make a copy "newer" by changing bytes the agent did not sign.
func signedContent(stored string) [sha256.Size]byte {
	if IsA2A(stored) {
		ac, canon, err := a2a.Decode([]byte(stored))
		if err == nil && len(ac.Signatures) > 0 {
			return sha256.Sum256(append(append(canon, '.'), ac.Signatures[0].Protected...))
		}
	} else if dot := strings.LastIndexByte(stored, '.'); dot > 0 {
		return sha256.Sum256([]byte(stored[:dot]))
	}
	return sha256.Sum256([]byte(stored))
}

// store writes sc (with the stake read for it) in one transaction, and then the search
// index, under r.mu. vec is the card's vector of meaning (cardVector of its indexDoc),
// computed by the caller, outside r.mu.
func (r *Registry) store(ctx context.Context, sc *SignedCard, stake *big.Int, vec semantic.Vector) error {
	cardJSON, _ := json.Marshal(sc.Card)
	tx, err := r.cfg.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	chain := r.cfg.Chain
	fail := func(err error) error { return fmt.Errorf("registry: store card: %w", err) }
	staked, weight := r.staked(stake), r.stakeWeight(stake)
	// The card's row id (its serial) is known before it is written, so that its rank key is
	// written with it, in one statement: the row it replaces keeps its id; a new card takes
	// the next one, as SQLite would give it.
	var serial int64
	held := true
	err = tx.QueryRowContext(ctx, `SELECT rowid FROM registry_cards WHERE chain = ? AND did = ?`, chain, sc.DID).Scan(&serial)
	if errors.Is(err, sql.ErrNoRows) {
		held = false
		err = tx.QueryRowContext(ctx, `SELECT coalesce(max(rowid), 0) + 1 FROM registry_cards`).Scan(&serial)
	}
	if err != nil {
		return fail(err)
	}
	if serial >= 1<<32 {
		return fail(fmt.Errorf("card row %d is beyond the 2^32 cards a search row id can name", serial))
	}
	rank := rankRow(staked, weight, serial)
	args := []any{sc.Seq, sc.Name, sc.Wallet.Hex(), stake.String(), weight, staked, string(cardJSON), sc.JWS, r.cfg.Now().Unix(), rank, serial}
	if held {
		_, err = tx.ExecContext(ctx, `UPDATE registry_cards SET seq = ?, name = ?, wallet = ?, stake = ?, weight = ?, staked = ?, card = ?, jws = ?, received = ?, fts_row = ?
			WHERE rowid = ?`, args...)
	} else {
		_, err = tx.ExecContext(ctx, `INSERT INTO registry_cards (seq, name, wallet, stake, weight, staked, card, jws, received, fts_row, rowid, chain, did)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, append(args, chain, sc.DID)...)
	}
	if err != nil {
		return fail(err)
	}
	if held {
		if _, err := tx.ExecContext(ctx, `DELETE FROM registry_capabilities WHERE chain = ? AND did = ?`, chain, sc.DID); err != nil {
			return fail(err)
		}
	}
	for _, cap := range sc.Capabilities {
		if _, err := tx.ExecContext(ctx, `INSERT INTO registry_capabilities (chain, capability, did, rank) VALUES (?, ?, ?, ?)`, chain, cap, sc.DID, rank); err != nil {
			return fail(err)
		}
	}
	var evicted []int64
	// The index holds what the table held before this card: the quota can only be passed
	// when it held the quota's worth of unstaked cards already (and the query sorts them all).
	if !staked && r.index.Unstaked() >= r.cfg.MaxUnstaked {
		if evicted, err = r.evictUnstaked(ctx, tx, sc.DID); err != nil {
			return fail(err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	for _, id := range evicted {
		r.indexDelete(id)
	}
	r.indexPut(serial, indexDoc(&sc.Card, staked, weight), vec)
	return nil
}

// evictUnstaked keeps the unstaked cards within Config.MaxUnstaked once kept's card is
// stored: the others received longest ago go, with their capabilities. It returns their
// row ids, for the search index once the transaction commits.
func (r *Registry) evictUnstaked(ctx context.Context, tx *sql.Tx, kept string) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT did, fts_row, rowid FROM registry_cards WHERE chain = ? AND staked = 0 AND did != ?
		ORDER BY received DESC, did LIMIT -1 OFFSET ?`, r.cfg.Chain, kept, r.cfg.MaxUnstaked-1)
	if err != nil {
		return nil, err
	}
	type gone struct {
		did     string
		row, id int64
	}
	var evict []gone
	for rows.Next() {
		var g gone
		if err := rows.Scan(&g.did, &g.row, &g.id); err != nil {
			rows.Close()
			return nil, err
		}
		evict = append(evict, g)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	ids := make([]int64, 0, len(evict))
	for _, g := range evict {
		if _, err := tx.ExecContext(ctx, `DELETE FROM registry_cards WHERE fts_row = ?`, g.row); err != nil {
			return nil, err
		}
		ids = append(ids, g.id)
		if _, err := tx.ExecContext(ctx, `DELETE FROM registry_capabilities WHERE chain = ? AND did = ?`, r.cfg.Chain, g.did); err != nil {
			return nil, err
		}
	}
	if len(evict) > 0 {
		r.cfg.Logger.Debug("registry: unstaked cards over the quota dropped, oldest first", "count", len(evict), "max", r.cfg.MaxUnstaked)
	}
	return ids, nil
}

// Agent is a stored card with the stake it had when the node took it.
type Agent struct {
	SignedCard
	Stake  string `json:"stake"`
	Staked bool   `json:"staked"`
	// Score is the search score (search answers only).
	Score float64 `json:"score,omitempty"`
}

// Get returns the card of did from this node, or from the DHT when the node has peers; it
// returns ErrUnknownAgent when neither has one, and ErrRevoked for a DID that left on chain.
func (r *Registry) Get(ctx context.Context, did string) (*Agent, error) {
	if st, err := r.keyStatus(ctx, did); err != nil {
		return nil, err
	} else if st.Closed() {
		return nil, cardErr(did, ErrRevoked, "the DID was %s on chain", st.State)
	}
	a, err := r.getLocal(ctx, did)
	if !errors.Is(err, ErrUnknownAgent) {
		return a, err
	}
	r.mu.Lock()
	n := r.net
	r.mu.Unlock()
	if n != nil {
		return n.lookup(ctx, did)
	}
	return nil, err
}

func (r *Registry) getLocal(ctx context.Context, did string) (*Agent, error) {
	var a Agent
	var card string
	err := r.cfg.DB.QueryRowContext(ctx, `SELECT card, jws, stake, staked FROM registry_cards WHERE chain = ? AND did = ?`, r.cfg.Chain, did).
		Scan(&card, &a.JWS, &a.Stake, &a.Staked)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, cardErr(did, ErrUnknownAgent, "no card")
	}
	if err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	if err := json.Unmarshal([]byte(card), &a.Card); err != nil {
		return nil, err
	}
	return &a, nil
}

// Query is a discovery search.
type Query struct {
	// Text is matched against name, description and capabilities: words (any match
	// ranks, more matches rank higher), "quoted phrases", prefix* (search.ParseQuery,
	// docs/SEARCH.md); UTF-8 text of at most MaxQueryText characters, without control
	// characters.
	Text string
	// Capability, when set, must be one of the card's capabilities, or an ancestor of one
	// in the hierarchy ("translation" finds "translation/fr-en", not "translations"), so it
	// is written as they are (1 to 64 of a-z 0-9 . - : /).
	Capability string
	// Limit bounds the answer (0 means 20, at most 100).
	Limit int
	// Mode is how Text ranks: ModeHybrid (the default, "" too) mixes the text score with the
	// cards' meaning; ModeKeyword ranks by the text score alone, and only the cards with a
	// word of the query match (faster: no vector is compared).
	Mode string
	// Source is who asks, as Register's source ("api:<client address>"): a capability search
	// starts a network lookup only within its source's budget (lookupSourceEvery,
	// lookupSourceBurst); over it, it answers from the index alone. "" is the node itself,
	// not counted. It does not change the answer.
	Source string
}

// Search modes (Query.Mode).
const (
	ModeHybrid  = "hybrid"
	ModeKeyword = "keyword"
)

// ErrBadQuery refuses a search no card could match as asked; a *QueryError wraps it.
var ErrBadQuery = errors.New("registry: bad query")

// QueryError says which field of a Query is refused, and why.
type QueryError struct {
	// Field is the query's name for it: "q" (Text), "capability" or "mode".
	Field  string
	Detail string
}

// Error reads like "registry: bad query: q must be UTF-8 text without control characters".
func (e *QueryError) Error() string { return ErrBadQuery.Error() + ": " + e.Field + " " + e.Detail }

// Unwrap returns ErrBadQuery.
func (e *QueryError) Unwrap() error { return ErrBadQuery }

// validate refuses text that is not text (invalid UTF-8, control characters: what
// search.ParseQuery refuses), and what no card can match (a capability out of the card
// rules, which would otherwise be looked up in the network too).
func (q Query) validate() error {
	if !utf8.ValidString(q.Text) || strings.ContainsFunc(q.Text, func(r rune) bool { return unicode.IsControl(r) && !unicode.IsSpace(r) }) {
		return &QueryError{Field: "q", Detail: "must be UTF-8 text without control characters"}
	}
	if n := utf8.RuneCountInString(q.Text); n > MaxQueryText {
		return &QueryError{Field: "q", Detail: fmt.Sprintf("is longer than %d characters", MaxQueryText)}
	}
	if q.Capability != "" && !validCapability(q.Capability) {
		return &QueryError{Field: "capability", Detail: fmt.Sprintf("must be 1 to %d of a-z 0-9 . - : / (as cards write them)", maxCapability)}
	}
	switch q.Mode {
	case "", ModeHybrid, ModeKeyword:
	default:
		return &QueryError{Field: "mode", Detail: fmt.Sprintf("must be %s (the default: words and meaning) or %s (words only)", ModeHybrid, ModeKeyword)}
	}
	return nil
}

// Search ranks the cards matching q, or returns a *QueryError (ErrBadQuery) for a q no card
// can match as written. The ranking (docs/SEARCH.md) is
//
//	score = rel × stakeFactor × reputationWeight
//	rel   = 0.75·text/maxText + 0.25·sem   (text/maxText when no query term has a vector)
//
// where text is the card's BM25F score for q.Text (name ×2, capabilities ×2, description ×1;
// k1 1.2, b 0.75; the query's words OR-ed, aliases at half weight; N, df and the average
// lengths of the staked cards) and maxText the best text score among the staked matches (all
// the matches when none is staked); sem is the cosine of the card's and the query's vectors of
// meaning (registry/semantic; 0 under 0.15), and the 200 cards nearest the query match even
// without a text match; without text rel is 1. stakeFactor is units.StakeWeight of the
// stake in whole tokens (≥ 1) for a staked card and 0.5 for an unstaked one, so for equal
// relevance a staked card is above an unstaked one; the reputation weight comes from the
// ReputationReader (1 until reputation exists). Ties go by DID. Text that is only stop
// words and punctuation matches nothing.
//
// The index ranks the matches by rel × stakeFactor and hands over the best 10 × the limit
// of them (at least 200); the reputation weight, read per card, multiplies those only, so a
// card outside them is one that 200 others beat before reputation.
//
// A search by capability that finds fewer cards than the limit here also starts a lookup in
// the network (when the node has one): the capability's providers in the DHT, at most once a
// minute per capability; the valid cards they hand over are stored. Search does not wait for
// it: it answers from this node's index at once, and SearchFollow follows the lookup.
func (r *Registry) Search(ctx context.Context, q Query) ([]*Agent, error) {
	found, _, err := r.SearchFollow(ctx, q)
	return found, err
}

// UseReputation makes the registry rank by rep from now on (it starts with cfg.Reputation).
func (r *Registry) UseReputation(rep ReputationReader) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cfg.Reputation = rep
}

// limit is the answer's size: 20 when unset, at most 100.
func (q Query) limit() int {
	if q.Limit <= 0 {
		return 20
	}
	return min(q.Limit, 100)
}

// enterSearch takes a search slot, waiting at most searchWait (or until ctx ends) for one:
// ErrBusy then. leave gives it back.
func (r *Registry) enterSearch(ctx context.Context) (leave func(), err error) {
	leave = func() { <-r.searches }
	select {
	case r.searches <- struct{}{}:
		return leave, nil
	default:
	}
	t := time.NewTimer(searchWait)
	defer t.Stop()
	select {
	case r.searches <- struct{}{}:
		return leave, nil
	case <-t.C:
		return nil, ErrBusy
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// searchLocal is Search in this node's index only, within the node's bound of searches at
// once (ErrBusy past it).
func (r *Registry) searchLocal(ctx context.Context, q Query) ([]*Agent, error) {
	found, _, err := r.searchKept(ctx, q, nil)
	return found, err
}

// encoder encodes a search's answer for a client (the HTTP edge's body): it must depend on
// nothing but the list, whose cards it must not change.
type encoder func(list []*Agent) ([]byte, error)

// searchKept is searchLocal; with encode, it also gives the body encode makes of the answer,
// the one kept with the index's answer when that is kept and its hits' reputation weights are
// those the body was encoded with (then without a search slot: no card is read and nothing
// encoded), else a new one, kept with the answer. The body is nil when encode is nil or the
// answer is empty.
func (r *Registry) searchKept(ctx context.Context, q Query, encode encoder) ([]*Agent, []byte, error) {
	q.Limit = q.limit()
	iq, rep, err := r.indexQueryOf(q)
	if err != nil || iq == nil {
		return nil, nil, err
	}
	kept := r.answers.get(iq.key)
	if kept == nil {
		// One search computes a missing answer; the others asking meanwhile wait for it and
		// take it if it was kept (no write ran while it was computed), else compute their own.
		done, mine := r.answers.claim(iq.key)
		if mine {
			defer r.answers.release(iq.key)
		} else {
			select {
			case <-done:
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			kept = r.answers.get(iq.key)
		}
	}
	var weights []float64
	if kept != nil && encode != nil {
		if weights, err = hitWeights(ctx, rep, kept.hits); err != nil {
			return nil, nil, err
		}
		if body := r.answers.bodyOf(kept, q.Limit, weights); body != nil {
			return nil, body, nil
		}
	}
	leave, err := r.enterSearch(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer leave()
	// A write while this waited for its slot may have changed the kept answer (review 41):
	// ranked as it was, it would show the new cards the write stored in the old places.
	if kept != nil && r.answers.get(iq.key) != kept {
		kept, weights = nil, nil
	}
	if kept == nil {
		// The epoch is read before the indexes: put checks the answer against the writes
		// that ended since.
		epoch := r.answers.start()
		if kept, err = r.indexHits(ctx, iq); err != nil {
			return nil, nil, err
		}
		r.answers.put(iq.key, epoch, kept)
		weights = nil
	}
	key := iq.key
	if weights == nil {
		if weights, err = hitWeights(ctx, rep, kept.hits); err != nil {
			return nil, nil, err
		}
	}
	list, err := r.agents(ctx, topCandidates(kept.hits, weights, q.Limit))
	// A capability's answer short of the limit may start a network lookup (SearchFollow),
	// and then says so: its body is not kept, nor made here.
	if err != nil || encode == nil || len(list) == 0 || q.Capability != "" && len(list) < q.Limit {
		return list, nil, err
	}
	body, err := encode(list)
	if err != nil {
		return nil, nil, err
	}
	// Kept only with the answer it came from, and only while that is kept (attach): the
	// cards read are those of its hits, which no write changed while it is.
	r.answers.attach(key, kept, q.Limit, weights, body)
	return list, body, nil
}

// indexQuery is a query as the search index answers it.
type indexQuery struct {
	key      answerKey
	pq       search.Query
	opt      search.Options
	semantic semanticHook
}

// semanticHook is Registry.semantic's type: the semantic side of a query's text, as
// search.Options.SemanticLater asks for it.
type semanticHook func(text string) func(among []uint64, side search.Side) (map[int64]float64, func(id int64) float64)

// indexQueryOf reads q (Limit set) for the index, with the reputation to weigh its hits by;
// nil for text of stop words only (nothing asked that a card could answer).
func (r *Registry) indexQueryOf(q Query) (*indexQuery, ReputationReader, error) {
	pq, err := search.ParseQuery(q.Text)
	if err != nil { // validate refuses what ParseQuery does
		return nil, nil, &QueryError{Field: "q", Detail: "must be UTF-8 text without control characters"}
	}
	if pq.Empty() && strings.TrimSpace(q.Text) != "" {
		return nil, nil, nil
	}
	iq := &indexQuery{pq: pq, opt: search.Options{Capability: q.Capability, Limit: min(max(q.Limit*10, minCandidates), maxCandidates)}}
	r.mu.Lock()
	rep, semantic := r.cfg.Reputation, r.semantic
	r.mu.Unlock()
	hybrid := semantic != nil && !pq.Empty() && q.Mode != ModeKeyword
	if hybrid {
		iq.semantic = semantic
	}
	iq.key = answerKey{text: q.Text, capability: q.Capability, hybrid: hybrid, limit: iq.opt.Limit}
	return iq, rep, nil
}

// indexHits is the index's answer to iq, computed, as a kept answer would hold it.
func (r *Registry) indexHits(ctx context.Context, iq *indexQuery) (*answer, error) {
	opt := iq.opt
	// sem gathers the semantic scores the index ranked with: the staked side's, and the
	// unstaked side's when the index asked for it (it does not when the staked cards alone
	// prove the answer, whatever an unstaked card's meaning; answer.changedBy errs towards
	// yes for the unstaked cards of such an answer).
	var (
		sem   map[int64]float64
		semOf func(int64) float64
		asked bool
	)
	if iq.semantic != nil {
		near := iq.semantic(iq.key.text)
		keep := func(m map[int64]float64, of func(int64) float64) {
			switch {
			case sem == nil:
				sem = m
			case len(m) > 0: // the second side: a map of both (the index reads the first)
				both := make(map[int64]float64, len(sem)+len(m))
				maps.Copy(both, sem)
				maps.Copy(both, m)
				sem = both
			}
			semOf = of
		}
		// The semantic side runs while the index scores the text
		// (search.Options.SemanticLater); the index asks for each side at most once, one
		// after the other, and waits for them.
		opt.SemanticLater = func(among []uint64, side search.Side) (map[int64]float64, func(int64) float64) {
			m, of := near(among, side)
			keep(m, of)
			asked = true
			return m, of
		}
		hits := r.index.Search(iq.pq, opt)
		if !asked { // an answer without scoring still keeps its semantic side
			var among []uint64 // no card passes a filter, if there is one
			if filtered(iq.key.capability, iq.pq) {
				among = []uint64{}
			}
			for _, side := range []search.Side{search.Staked, search.Unstaked} {
				keep(near(among, side))
			}
		}
		return newAnswer(r.index, iq.key, iq.pq, hits, sem, semOf), nil
	}
	hits := r.index.Search(iq.pq, opt)
	return newAnswer(r.index, iq.key, iq.pq, hits, sem, semOf), nil
}

// hitWeights reads the reputation weight of each hit, in order.
func hitWeights(ctx context.Context, rep ReputationReader, hits []search.Hit) ([]float64, error) {
	out := make([]float64, len(hits))
	for i, h := range hits {
		w, err := rep.Weight(ctx, h.DID)
		if err != nil {
			return nil, err
		}
		out[i] = w
	}
	return out, nil
}

// candidate is a search match before its card is read.
type candidate struct {
	serial int64 // registry_cards row id
	did    string
	score  float64
}

// topCandidates is the best limit of the hits weighed by weights, best first
// (compareCandidates): the hundreds of hits a kept answer holds are not each made a
// candidate and sorted, to read a page of them.
func topCandidates(hits []search.Hit, weights []float64, limit int) []candidate {
	if limit <= 0 {
		return nil
	}
	top := make([]candidate, 0, min(limit, len(hits))+1)
	for i, h := range hits {
		c := candidate{serial: h.ID, did: h.DID, score: h.Score * weights[i]}
		if len(top) == limit && compareCandidates(c, top[limit-1]) >= 0 {
			continue
		}
		at, _ := slices.BinarySearchFunc(top, c, compareCandidates)
		top = slices.Insert(top, at, c)
		top = top[:min(len(top), limit)]
	}
	return top
}

// compareCandidates orders by score, then by DID for a stable answer.
func compareCandidates(x, y candidate) int {
	if x.score != y.score {
		if x.score > y.score {
			return -1
		}
		return 1
	}
	return strings.Compare(x.did, y.did)
}

// agents reads the cards of the ranked candidates, in their order.
func (r *Registry) agents(ctx context.Context, ranked []candidate) ([]*Agent, error) {
	if len(ranked) == 0 {
		return nil, nil
	}
	// One allocation for the page's cards, and one for a row being read: an Agent scanned
	// into escapes, and one each would be as many objects for the collector as cards shown.
	cards := make([]Agent, len(ranked)+1)
	row := &cards[len(ranked)]
	held := make([]bool, len(ranked))
	at := make(map[int64]int, len(ranked)) // serial → its place in ranked
	var args []any
	for i, c := range ranked {
		if cards[i], held[i] = r.cards.get(c.serial); !held[i] {
			at[c.serial] = i
			args = append(args, c.serial)
		}
	}
	if len(args) > 0 {
		gen := r.cards.generation()
		rows, err := r.cfg.DB.QueryContext(ctx, `SELECT rowid, card, jws, stake, staked FROM registry_cards WHERE rowid IN (?`+strings.Repeat(", ?", len(args)-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("registry: search: %w", err)
		}
		defer rows.Close()
		var card sql.RawBytes // decoded at once: the card copies what it keeps
		var serial int64
		for rows.Next() {
			*row = Agent{}
			if err := rows.Scan(&serial, &card, &row.JWS, &row.Stake, &row.Staked); err != nil {
				return nil, err
			}
			if err := json.Unmarshal(card, &row.Card); err != nil {
				return nil, err
			}
			if i, ok := at[serial]; ok {
				cards[i], held[i] = *row, true
			}
			r.cards.keep(gen, serial, *row, len(card))
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	out := make([]*Agent, 0, len(ranked))
	for i, c := range ranked {
		if held[i] { // not held only if its chain was dropped meanwhile
			cards[i].Score = c.score
			out = append(out, &cards[i])
		}
	}
	return out, nil
}

// limiter counts events per key in a sliding minute.
type limiter struct {
	mu     sync.Mutex
	max    int
	window time.Duration
	now    func() time.Time
	hits   map[string][]time.Time
}

func newLimiter(max int, window time.Duration, now func() time.Time) *limiter {
	return &limiter{max: max, window: window, now: now, hits: map[string][]time.Time{}}
}

// allow records one event for each key and says whether every key is within its budget.
func (l *limiter) allow(keys ...string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if len(l.hits) > 100_000 { // bound memory: forget everyone once in a while
		l.hits = map[string][]time.Time{}
	}
	for _, k := range keys {
		recent := l.hits[k][:0]
		for _, t := range l.hits[k] {
			if now.Sub(t) < l.window {
				recent = append(recent, t)
			}
		}
		l.hits[k] = recent
		if len(recent) >= l.max {
			return false
		}
	}
	for _, k := range keys {
		l.hits[k] = append(l.hits[k], now)
	}
	return true
}

// StakedAgents gives the stake, in whole tokens, of every staked card this node holds (as read when
// the card was stored): the pre-trust of reputation scoring.
func (r *Registry) StakedAgents(ctx context.Context) (map[string]float64, error) {
	rows, err := r.cfg.DB.QueryContext(ctx, `SELECT did, stake FROM registry_cards WHERE chain = ? AND staked = 1`, r.cfg.Chain)
	if err != nil {
		return nil, fmt.Errorf("registry: staked agents: %w", err)
	}
	defer rows.Close()
	out := map[string]float64{}
	for rows.Next() {
		var did, stake string
		if err := rows.Scan(&did, &stake); err != nil {
			return nil, err
		}
		wei, ok := new(big.Int).SetString(stake, 10)
		if !ok {
			return nil, fmt.Errorf("registry: stored stake %q of %s is not a number", stake, did)
		}
		out[did] = r.cfg.StakeToken.Whole(wei)
	}
	return out, rows.Err()
}

// Known says whether the node holds a card for did (revoked DIDs are not known).
func (r *Registry) Known(ctx context.Context, did string) (bool, error) {
	_, err := r.getLocal(ctx, did)
	if errors.Is(err, ErrUnknownAgent) {
		return false, nil
	}
	return err == nil, err
}
