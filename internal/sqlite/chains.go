package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// chainMigrations create the table that scopes chain-derived state. Tables whose rows come
// from a chain (indexed bounties, stake caches, anchored roots) carry a `chain` column that
// references chains(id) ON DELETE CASCADE, so rows of one chain never meet another's.
var chainMigrations = []Migration{{Version: 1, SQL: `
CREATE TABLE chains (
	id         INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused: a new chain never inherits an old id
	key        TEXT    NOT NULL UNIQUE,
	chain_id   INTEGER NOT NULL,
	genesis    TEXT    NOT NULL,
	contracts  TEXT    NOT NULL,
	ephemeral  INTEGER NOT NULL CHECK (ephemeral IN (0, 1)),
	first_seen INTEGER NOT NULL DEFAULT (unixepoch()),
	last_seen  INTEGER NOT NULL DEFAULT (unixepoch())
) STRICT;
`}}

// Chain describes the chain a node runs against, as recorded in the chains table.
type Chain struct {
	// Key identifies the chain and its deployment: see chain.Key.
	Key     string
	ChainID uint64
	// Genesis is the hex hash of block 0.
	Genesis string
	// Contracts is a stable text form of the contract addresses (JSON).
	Contracts string
	// Ephemeral chains (the embedded one) vanish with the process that ran them.
	Ephemeral bool
}

// EnterChain records c and returns its row id, the scope that chain-derived rows are stored
// under. Entering an ephemeral chain deletes every other ephemeral chain and, by cascade,
// their rows: those chains are gone for good, and their state must not be read as current.
func EnterChain(ctx context.Context, db *sql.DB, c Chain) (int64, error) {
	if err := Migrate(ctx, db, "chains", chainMigrations); err != nil {
		return 0, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("enter chain: %w", err)
	}
	defer tx.Rollback()
	if c.Ephemeral {
		if _, err := tx.ExecContext(ctx, `DELETE FROM chains WHERE ephemeral = 1 AND key <> ?`, c.Key); err != nil {
			return 0, fmt.Errorf("enter chain: drop stale embedded chains: %w", err)
		}
	}
	var id int64
	err = tx.QueryRowContext(ctx, `
		INSERT INTO chains (key, chain_id, genesis, contracts, ephemeral) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET last_seen = unixepoch()
		RETURNING id`,
		c.Key, c.ChainID, c.Genesis, c.Contracts, c.Ephemeral,
	).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("enter chain: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("enter chain: %w", err)
	}
	return id, nil
}

// Chains lists the recorded chains, oldest first.
func Chains(ctx context.Context, db *sql.DB) ([]Chain, error) {
	rows, err := db.QueryContext(ctx, `SELECT key, chain_id, genesis, contracts, ephemeral FROM chains ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list chains: %w", err)
	}
	defer rows.Close()
	var out []Chain
	for rows.Next() {
		var c Chain
		if err := rows.Scan(&c.Key, &c.ChainID, &c.Genesis, &c.Contracts, &c.Ephemeral); err != nil {
			return nil, fmt.Errorf("list chains: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
