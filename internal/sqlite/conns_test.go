package sqlite_test

import (
	"context"
	"database/sql"
	"testing"
)

// TestIdleConnectionsAreKept (issue 31's memory under attack): connections a burst of
// requests opened are kept for the next ones instead of all but 2 being closed as they are
// put back (database/sql's default), which under a flood opened and closed SQLite
// connections by the thousand and left node 0's C heap mostly free pages.
func TestIdleConnectionsAreKept(t *testing.T) {
	db, _ := open(t)
	ctx := context.Background()
	const burst = 12
	conns := make([]*sql.Conn, burst)
	for i := range conns {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.ExecContext(ctx, `SELECT 1`); err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	for _, c := range conns {
		c.Close() // back to the pool
	}
	if st := db.Stats(); st.Idle != burst || st.MaxIdleClosed != 0 {
		t.Errorf("after a burst of %d connections: %d idle, %d closed for the idle bound", burst, st.Idle, st.MaxIdleClosed)
	}
}
