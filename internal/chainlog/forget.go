package chainlog

import (
	"context"
	"database/sql"
)

// ForgetAfter is the first half of a handler's Rollback for an index that keeps its logs in
// one events table: it deletes the rows of table (chain and block columns) of blocks after
// block, and returns the distinct non-null values of column key among them: the records the
// handler then rebuilds from the rows that remain. table and key are the caller's constants.
func ForgetAfter(ctx context.Context, tx *sql.Tx, table, key string, chain int64, block uint64) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT `+key+` FROM `+table+` WHERE chain = ? AND block > ? AND `+key+` IS NOT NULL`, chain, block)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE chain = ? AND block > ?`, chain, block); err != nil {
		return nil, err
	}
	return ids, nil
}
