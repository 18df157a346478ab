package identity

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"golang.org/x/crypto/scrypt"

	"github.com/surety-ioa/surety/internal/sqlite"
)

// migrations are the identity package's tables.
var migrations = []sqlite.Migration{{Version: 1, SQL: `
CREATE TABLE identity_keys (
	did        TEXT    PRIMARY KEY,
	key_type   TEXT    NOT NULL,
	role       TEXT    NOT NULL CHECK (role IN ('node', 'hosted')),
	kdf        TEXT    NOT NULL,
	nonce      BLOB    NOT NULL,
	ciphertext BLOB    NOT NULL,
	created    INTEGER NOT NULL
) STRICT;
CREATE UNIQUE INDEX identity_keys_one_node ON identity_keys (role) WHERE role = 'node';

CREATE TABLE identity_dids (
	did         TEXT    PRIMARY KEY,
	kind        TEXT    NOT NULL CHECK (kind IN ('node', 'hosted', 'registered')),
	created     INTEGER NOT NULL,
	deactivated INTEGER,
	credential  TEXT
) STRICT;

CREATE TABLE identity_challenges (
	challenge TEXT    PRIMARY KEY,
	expires   INTEGER NOT NULL
) STRICT;
`}, {Version: 2, SQL: `
CREATE TABLE identity_bindings (
	did      TEXT    NOT NULL,
	wallet   TEXT    NOT NULL,
	chain_id INTEGER NOT NULL,
	registry TEXT    NOT NULL,
	binding  TEXT    NOT NULL,
	created  INTEGER NOT NULL,
	PRIMARY KEY (did, wallet, chain_id, registry)
) STRICT;
CREATE INDEX identity_bindings_wallet ON identity_bindings (wallet);
`}, {Version: 3, SQL: `
-- Version 3 created the group tables; package groups keeps them now (its migration 1).
SELECT 1;
`}, {Version: 4, SQL: `
-- Bindings are chain state (package stake); deactivation too.
DROP TABLE identity_bindings;
ALTER TABLE identity_dids DROP COLUMN deactivated;
`}, {Version: 5, SQL: `
-- A DID's place in the node's revocation status lists (VC 2.0 credentials): position pos is
-- bit pos % 131072 of list pos / 131072. Given once, to a DID staked on chain, and kept.
CREATE TABLE identity_status (
	pos     INTEGER PRIMARY KEY,
	did     TEXT    NOT NULL UNIQUE,
	created INTEGER NOT NULL
) STRICT;
`}}

// KDFParams are scrypt's cost parameters for keys at rest.
type KDFParams struct {
	N, R, P int
}

// DefaultKDF is scrypt's interactive setting (2^15, 8, 1): about 100 ms and 32 MiB per open.
var DefaultKDF = KDFParams{N: 1 << 15, R: 8, P: 1}

// StoreConfig sets up a Store.
type StoreConfig struct {
	// Passphrase encrypts the private keys at rest (scrypt, then AES-256-GCM).
	Passphrase []byte
	// KDF is scrypt's cost; zero means DefaultKDF. Tests use a cheap one.
	KDF KDFParams
	// ChallengeTTL is how long a registration challenge stays usable; 0 means 5 minutes.
	ChallengeTTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Store keeps the keys a node holds (encrypted) and the DIDs it issued or registered, in the
// identity_* tables of the node's SQLite database.
type Store struct {
	db  *sql.DB
	cfg StoreConfig
}

// OpenStore migrates the identity tables and returns the store.
func OpenStore(ctx context.Context, db *sql.DB, cfg StoreConfig) (*Store, error) {
	if len(cfg.Passphrase) == 0 {
		return nil, errors.New("identity: a passphrase is required to keep keys at rest")
	}
	if cfg.KDF == (KDFParams{}) {
		cfg.KDF = DefaultKDF
	}
	if cfg.ChallengeTTL == 0 {
		cfg.ChallengeTTL = defaultChallengeTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if err := sqlite.Migrate(ctx, db, "identity", migrations); err != nil {
		return nil, err
	}
	return &Store{db: db, cfg: cfg}, nil
}

type kdfRecord struct {
	Alg  string `json:"alg"`
	N    int    `json:"n"`
	R    int    `json:"r"`
	P    int    `json:"p"`
	Salt []byte `json:"salt"`
}

// sealed is a secret encrypted under the store's passphrase, as a file keeps it.
type sealed struct {
	KDF        json.RawMessage `json:"kdf"`
	Nonce      []byte          `json:"nonce"`
	Ciphertext []byte          `json:"ciphertext"`
}

// Seal encrypts secret under the store's passphrase (scrypt, then AES-256-GCM) into a
// self-contained JSON blob, for secrets kept outside the database (the node's libp2p key).
func (s *Store) Seal(secret []byte) ([]byte, error) {
	kdf, nonce, ct, err := s.seal(secret)
	if err != nil {
		return nil, err
	}
	return json.Marshal(sealed{KDF: json.RawMessage(kdf), Nonce: nonce, Ciphertext: ct})
}

// Unseal decrypts a blob from Seal. It returns ErrWrongPassphrase when the passphrase does not
// open it, and ErrNotSealed when blob is not a sealed secret at all.
func (s *Store) Unseal(blob []byte) ([]byte, error) {
	var sb sealed
	if err := json.Unmarshal(blob, &sb); err != nil || len(sb.KDF) == 0 || len(sb.Ciphertext) == 0 {
		return nil, ErrNotSealed
	}
	return s.open(string(sb.KDF), sb.Nonce, sb.Ciphertext)
}

// ErrNotSealed reports a blob that is not a secret sealed by Store.Seal.
var ErrNotSealed = errors.New("identity: not a sealed secret")

func (s *Store) seal(seed []byte) (kdf string, nonce, ct []byte, err error) {
	rec := kdfRecord{Alg: "scrypt+aes-256-gcm", N: s.cfg.KDF.N, R: s.cfg.KDF.R, P: s.cfg.KDF.P, Salt: make([]byte, 16)}
	if _, err := rand.Read(rec.Salt); err != nil {
		return "", nil, nil, err
	}
	aead, err := s.aead(rec)
	if err != nil {
		return "", nil, nil, err
	}
	nonce = make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", nil, nil, err
	}
	b, _ := json.Marshal(rec)
	return string(b), nonce, aead.Seal(nil, nonce, seed, nil), nil
}

func (s *Store) open(kdf string, nonce, ct []byte) ([]byte, error) {
	var rec kdfRecord
	if err := json.Unmarshal([]byte(kdf), &rec); err != nil || rec.Alg != "scrypt+aes-256-gcm" {
		return nil, fmt.Errorf("identity: unknown key encryption %q", kdf)
	}
	aead, err := s.aead(rec)
	if err != nil {
		return nil, err
	}
	seed, err := aead.Open(nil, nonce, ct, nil)
	if err != nil {
		return nil, ErrWrongPassphrase
	}
	return seed, nil
}

func (s *Store) aead(rec kdfRecord) (cipher.AEAD, error) {
	key, err := scrypt.Key(s.cfg.Passphrase, rec.Salt, rec.N, rec.R, rec.P, 32)
	if err != nil {
		return nil, fmt.Errorf("identity: scrypt: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// PutKey stores k encrypted, as the node's key (role "node") or a hosted agent's ("hosted"),
// and records its DID.
func (s *Store) PutKey(ctx context.Context, k *Key, role string) error {
	kdf, nonce, ct, err := s.seal(k.Seed())
	if err != nil {
		return fmt.Errorf("store key: %w", err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store key: %w", err)
	}
	defer tx.Rollback()
	now := s.cfg.Now().Unix()
	if _, err := tx.ExecContext(ctx, `INSERT INTO identity_keys (did, key_type, role, kdf, nonce, ciphertext, created) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		k.DID.String(), string(k.Type), role, kdf, nonce, ct, now); err != nil {
		return fmt.Errorf("store key: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO identity_dids (did, kind, created) VALUES (?, ?, ?)`, k.DID.String(), role, now); err != nil {
		return fmt.Errorf("store key: %w", err)
	}
	return tx.Commit()
}

// Key opens the stored key of did. It returns ErrNotFound or ErrWrongPassphrase.
func (s *Store) Key(ctx context.Context, did string) (*Key, error) {
	return s.loadKey(ctx, `SELECT key_type, kdf, nonce, ciphertext FROM identity_keys WHERE did = ?`, did)
}

func (s *Store) loadKey(ctx context.Context, query string, args ...any) (*Key, error) {
	var typ, kdf string
	var nonce, ct []byte
	err := s.db.QueryRowContext(ctx, query, args...).Scan(&typ, &kdf, &nonce, &ct)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("load key: %w", err)
	}
	seed, err := s.open(kdf, nonce, ct)
	if err != nil {
		return nil, err
	}
	return KeyFromSeed(KeyType(typ), seed)
}

// NodeKey returns the node's own key, creating it (Ed25519) on first start.
func (s *Store) NodeKey(ctx context.Context) (k *Key, created bool, err error) {
	k, err = s.loadKey(ctx, `SELECT key_type, kdf, nonce, ciphertext FROM identity_keys WHERE role = 'node'`)
	if err == nil {
		return k, false, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return nil, false, err
	}
	if k, err = GenerateKey(Ed25519); err != nil {
		return nil, false, err
	}
	if err := s.PutKey(ctx, k, "node"); err != nil {
		return nil, false, err
	}
	return k, true, nil
}

// DIDRecord is what the node knows of a DID it issued or registered.
type DIDRecord struct {
	DID        string    `json:"did"`
	Kind       string    `json:"kind"` // node, hosted or registered
	Created    time.Time `json:"created"`
	Credential string    `json:"credential,omitempty"`
}

// Register records a DID an agent made itself. It returns ErrAlreadyRegistered.
func (s *Store) Register(ctx context.Context, did DID) error {
	res, err := s.db.ExecContext(ctx, `INSERT INTO identity_dids (did, kind, created) VALUES (?, 'registered', ?) ON CONFLICT (did) DO NOTHING`,
		did.String(), s.cfg.Now().Unix())
	if err != nil {
		return fmt.Errorf("register DID: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrAlreadyRegistered
	}
	return nil
}

// SetCredential stores the credential issued for did.
func (s *Store) SetCredential(ctx context.Context, did, vc string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE identity_dids SET credential = ? WHERE did = ?`, vc, did)
	return err
}

// Record returns what the node knows of did, or ErrNotFound.
func (s *Store) Record(ctx context.Context, did string) (*DIDRecord, error) {
	var r DIDRecord
	var created int64
	var cred sql.NullString
	err := s.db.QueryRowContext(ctx, `SELECT did, kind, created, credential FROM identity_dids WHERE did = ?`, did).
		Scan(&r.DID, &r.Kind, &created, &cred)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("DID record: %w", err)
	}
	r.Created = time.Unix(created, 0).UTC()
	r.Credential = cred.String
	return &r, nil
}

// Challenge is a one-time value an agent signs to prove it holds a DID's key.
type Challenge struct {
	Challenge string    `json:"challenge"`
	Expires   time.Time `json:"expires"`
}

// NewChallenge issues a fresh challenge. Expired ones are swept on the way.
func (s *Store) NewChallenge(ctx context.Context) (Challenge, error) {
	now := s.cfg.Now()
	c := Challenge{Challenge: NewNonce(), Expires: now.Add(s.cfg.ChallengeTTL).UTC().Truncate(time.Second)}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM identity_challenges WHERE expires < ?`, now.Unix()); err != nil {
		return Challenge{}, fmt.Errorf("new challenge: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO identity_challenges (challenge, expires) VALUES (?, ?)`, c.Challenge, c.Expires.Unix()); err != nil {
		return Challenge{}, fmt.Errorf("new challenge: %w", err)
	}
	return c, nil
}

// UseChallenge consumes a challenge: it succeeds once, before the challenge expires, and
// returns ErrBadChallenge otherwise.
func (s *Store) UseChallenge(ctx context.Context, challenge string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM identity_challenges WHERE challenge = ? AND expires >= ?`, challenge, s.cfg.Now().Unix())
	if err != nil {
		return fmt.Errorf("use challenge: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrBadChallenge
	}
	return nil
}

// ErrStatusListsFull reports that every index of the node's MaxStatusLists status lists is
// given out.
var ErrStatusListsFull = errors.New("identity: the status lists are full")

// StatusPosition returns did's position in the node's status lists, giving it the next free
// one when it has none. It returns ErrStatusListsFull past MaxStatusLists lists.
func (s *Store) StatusPosition(ctx context.Context, did string) (int64, error) {
	// A read first: a DID asks for its credentials as often as it likes, and the write below
	// takes the database's write lock even when it inserts nothing.
	var pos int64
	switch err := s.db.QueryRowContext(ctx, `SELECT pos FROM identity_status WHERE did = ?`, did).Scan(&pos); {
	case err == nil:
		return pos, nil
	case !errors.Is(err, sql.ErrNoRows):
		return 0, fmt.Errorf("status position of %s: %w", did, err)
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO identity_status (pos, did, created)
		SELECT COALESCE(MAX(pos) + 1, 0), ?, ? FROM identity_status
		HAVING COALESCE(MAX(pos) + 1, 0) < ?
		ON CONFLICT (did) DO NOTHING`, did, s.cfg.Now().Unix(), int64(MaxStatusLists)*StatusListBits)
	if err != nil {
		return 0, fmt.Errorf("status position of %s: %w", did, err)
	}
	err = s.db.QueryRowContext(ctx, `SELECT pos FROM identity_status WHERE did = ?`, did).Scan(&pos)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrStatusListsFull
	}
	if err != nil {
		return 0, fmt.Errorf("status position of %s: %w", did, err)
	}
	return pos, nil
}

// statusHolder is a DID with an index in a status list.
type statusHolder struct {
	did   string
	index int
}

// statusHolders lists the DIDs holding an index in list n, and how many lists are in use.
func (s *Store) statusHolders(ctx context.Context, n int) ([]statusHolder, int, error) {
	var top sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT MAX(pos) FROM identity_status`).Scan(&top); err != nil {
		return nil, 0, fmt.Errorf("status lists: %w", err)
	}
	lists := 1
	if top.Valid {
		l, _ := statusPosition(top.Int64)
		lists = l + 1
	}
	if n >= lists {
		return nil, lists, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT did, pos FROM identity_status WHERE pos >= ? AND pos < ? ORDER BY pos`,
		int64(n)*StatusListBits, int64(n+1)*StatusListBits)
	if err != nil {
		return nil, 0, fmt.Errorf("status list %d: %w", n, err)
	}
	defer rows.Close()
	var out []statusHolder
	for rows.Next() {
		var h statusHolder
		var pos int64
		if err := rows.Scan(&h.did, &pos); err != nil {
			return nil, 0, err
		}
		_, h.index = statusPosition(pos)
		out = append(out, h)
	}
	return out, lists, rows.Err()
}
