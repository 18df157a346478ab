package testutil

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"
)

// FillAudits writes audits random current audits among agents agents (did(i) names agent i)
// straight into the reputation store's table of chain row, and the agents' DIDs into
// reputation_dids, in one transaction, then checkpoints the write-ahead log: an audit history without the signing, for benchmarks
// and tests that need a large one. The table's secondary indexes are dropped for the fill and
// built again after it (a sort each, not ten million random inserts), and leaves ascend, so
// the primary key's inserts append. The same arguments write the same audits, but for their
// times, which count back from now.
func FillAudits(ctx context.Context, db *sql.DB, row int64, audits, agents int, did func(int) string) error {
	if agents < 2 {
		return fmt.Errorf("fill audits: %d agents, want at least 2", agents)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	rows, err := conn.QueryContext(ctx, `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'reputation_audits' AND sql IS NOT NULL`)
	if err != nil {
		return err
	}
	var names, indexes []string
	for rows.Next() {
		var name, create string
		if err := rows.Scan(&name, &create); err != nil {
			rows.Close()
			return err
		}
		names, indexes = append(names, name), append(indexes, create)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, name := range names {
		if _, err := tx.ExecContext(ctx, `DROP INDEX `+name); err != nil {
			return err
		}
	}
	// The agents' ids in reputation_dids, as the store numbers the DIDs it records.
	ids := make([]int64, agents)
	for i := range ids {
		if err := tx.QueryRowContext(ctx, `INSERT INTO reputation_dids (did) VALUES (?) ON CONFLICT (did) DO UPDATE SET did = excluded.did RETURNING id`, did(i)).Scan(&ids[i]); err != nil {
			return err
		}
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO reputation_audits (chain, leaf, auditor, subject, target, score, time, backed, evidence_hash, evidence_uri, envelope, auditor_id, subject_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, '', x'00', ?, ?)`)
	if err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(7, 8))
	now := time.Now().Unix()
	for i := range audits {
		a, s := r.IntN(agents), r.IntN(agents)
		if a == s {
			s = (s + 1) % agents
		}
		leaf := fmt.Sprintf("%064x", i)
		if _, err := ins.ExecContext(ctx, row, leaf, did(a), did(s), "envelope:"+strconv.Itoa(i), r.Float64(), now-int64(r.IntN(1e7)), r.IntN(2), "0x"+leaf, ids[a], ids[s]); err != nil {
			return err
		}
	}
	for _, create := range indexes {
		if _, err := tx.ExecContext(ctx, create); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	// A node reads its audits at start from a database whose write-ahead log was checkpointed
	// when the last run closed it; so does what reads after the fill, not through gigabytes of
	// log.
	_, err = conn.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}
