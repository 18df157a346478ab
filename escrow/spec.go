package escrow

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/internal/sqlite"
)

// specMigration keeps bounty task texts, content-addressed by the keccak256 the contract
// records as specHash, so any node can hold a spec and anyone can check it.
var specMigration = sqlite.Migration{Version: 4, SQL: `
CREATE TABLE escrow_specs (
	chain     INTEGER NOT NULL REFERENCES chains(id) ON DELETE CASCADE,
	spec_hash TEXT    NOT NULL,
	text      TEXT    NOT NULL,
	PRIMARY KEY (chain, spec_hash)
) STRICT;
`}

// MaxSpecBytes bounds a bounty's task text. A spec is a task statement with links, not a
// data set: 64 KiB is plenty, and it bounds what an unauthenticated spec upload can store.
const MaxSpecBytes = 64 << 10

// ErrSpecMismatch reports a spec text whose keccak256 is not the specHash it was given for.
var ErrSpecMismatch = errors.New("escrow: spec does not match the bounty's specHash")

// SpecHash is the hash the contract records for a spec text.
func SpecHash(text string) common.Hash { return crypto.Keccak256Hash([]byte(text)) }

// CheckSpec reports whether text can be stored as the spec of hash: UTF-8, at most
// MaxSpecBytes, and hashing to hash.
func CheckSpec(text string, hash common.Hash) error {
	switch {
	case len(text) > MaxSpecBytes:
		return &BountyError{Err: ErrInvalid, Msg: fmt.Sprintf("invalid argument: the spec is %d bytes, more than %d", len(text), MaxSpecBytes)}
	case !utf8.ValidString(text):
		return &BountyError{Err: ErrInvalid, Msg: "invalid argument: the spec is not UTF-8 text"}
	case SpecHash(text) != hash:
		return &BountyError{Err: ErrSpecMismatch, Msg: fmt.Sprintf("the spec hashes to %s, not %s", SpecHash(text).Hex(), hash.Hex())}
	}
	return nil
}

// PutSpec stores text as the spec of hash, after CheckSpec. Storing one twice is a no-op.
func (ix *Indexer) PutSpec(ctx context.Context, hash common.Hash, text string) error {
	if err := CheckSpec(text, hash); err != nil {
		return err
	}
	if _, err := ix.cfg.DB.ExecContext(ctx, `INSERT INTO escrow_specs (chain, spec_hash, text) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`,
		ix.cfg.Chain, hash.Hex(), text); err != nil {
		return fmt.Errorf("store spec: %w", err)
	}
	return nil
}

// PutBountySpec stores text as the spec of bounty id: it must hash to that bounty's specHash.
// Anyone may call it (the hash is the check), so it stores at most one text per indexed
// bounty; ErrUnknownBounty when the index does not have the bounty yet.
func (ix *Indexer) PutBountySpec(ctx context.Context, id uint64, text string) error {
	var hash string
	err := ix.cfg.DB.QueryRowContext(ctx, `SELECT spec_hash FROM escrow_bounties WHERE chain = ? AND id = ?`, ix.cfg.Chain, int64(id)).Scan(&hash)
	if errors.Is(err, sql.ErrNoRows) {
		return &BountyError{ID: id, Err: ErrUnknownBounty, Msg: fmt.Sprintf("bounty %d does not exist (yet) in this node's index", id)}
	}
	if err != nil {
		return fmt.Errorf("bounty %d spec: %w", id, err)
	}
	return ix.PutSpec(ctx, common.HexToHash(hash), text)
}
