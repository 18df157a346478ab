package registry

import (
	"context"
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/units"
)

// TestMigrationToRankedSearch: cards stored by the first schema (search rows numbered in
// arrival order) are still found, best first, after every migration (the FTS5 table gone,
// search on the in-memory index built from the cards).
func TestMigrationToRankedSearch(t *testing.T) {
	ctx := context.Background()
	db, chain := chainDB(t)
	skipWithoutFTS5(t, sqlite.Migrate(ctx, db, "registry", migrations[:1]))
	// What version 1 wrote: an unstaked card first, then a staked one, both "audit" agents.
	old := []struct {
		did, name string
		caps      []string
		stake     *big.Int
	}{
		{"did:key:zUnstaked", "audit helper", []string{"audit"}, new(big.Int)},
		{"did:key:zStaked", "audit firm", []string{"audit", "legal"}, big.NewInt(5e18)},
	}
	for i, c := range old {
		ftsRow := int64(i + 1)
		if _, err := db.Exec(`INSERT INTO registry_fts (rowid, did, chain, name, description, capabilities) VALUES (?, ?, ?, ?, '', ?)`,
			ftsRow, c.did, chain, c.name, strings.Join(c.caps, " ")); err != nil {
			t.Fatal(err)
		}
		card, _ := json.Marshal(Card{DID: c.did, Name: c.name, Capabilities: c.caps, Seq: 1})
		if _, err := db.Exec(`INSERT INTO registry_cards (chain, did, seq, name, wallet, stake, weight, staked, card, jws, received, fts_row) VALUES (?, ?, 1, ?, '0x', ?, ?, ?, ?, 'jws', 0, ?)`,
			chain, c.did, c.name, c.stake.String(), (&Registry{cfg: Config{StakeToken: units.Ether}}).stakeWeight(c.stake), c.stake.Sign() > 0, string(card), ftsRow); err != nil {
			t.Fatal(err)
		}
		for _, k := range c.caps {
			if _, err := db.Exec(`INSERT INTO registry_capabilities (chain, capability, did) VALUES (?, ?, ?)`, chain, k, c.did); err != nil {
				t.Fatal(err)
			}
		}
	}
	r, err := New(ctx, Config{DB: db, Chain: chain})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		q    Query
		want []string
	}{
		{"text", Query{Text: "audit"}, []string{"did:key:zStaked", "did:key:zUnstaked"}},
		{"capability", Query{Capability: "audit"}, []string{"did:key:zStaked", "did:key:zUnstaked"}},
		{"text and capability", Query{Text: "audit", Capability: "legal"}, []string{"did:key:zStaked"}},
		{"everything", Query{}, []string{"did:key:zStaked", "did:key:zUnstaked"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.Search(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			var dids []string
			for _, a := range got {
				dids = append(dids, a.DID)
			}
			if len(dids) != len(tt.want) {
				t.Fatalf("found %v, want %v", dids, tt.want)
			}
			for i := range dids {
				if dids[i] != tt.want[i] {
					t.Fatalf("found %v, want %v", dids, tt.want)
				}
			}
		})
	}
	var stale int
	if err := db.QueryRow(`SELECT COUNT(*) FROM registry_capabilities WHERE rank = 0`).Scan(&stale); err != nil || stale != 0 {
		t.Errorf("%d capability rows without a rank (%v)", stale, err)
	}
	var fts int
	if err := db.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'registry_fts%'`).Scan(&fts); err != nil || fts != 0 {
		t.Errorf("%d FTS5 tables left after migration 6 (%v)", fts, err)
	}
}

// TestStakeWeightCountsTheTokensDecimals: one whole token weighs 2 whatever its decimals, so
// a 6-decimal stake token ranks like ETH, not a million times lighter.
func TestStakeWeightCountsTheTokensDecimals(t *testing.T) {
	for _, tok := range []units.Token{units.Ether, {Symbol: "USDC", Decimals: 6}, {Symbol: "WBTC", Decimals: 8}} {
		one := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(tok.Decimals)), nil)
		r := &Registry{cfg: Config{StakeToken: tok}}
		if got := r.stakeWeight(one); got != 2 {
			t.Errorf("one %s (%s base units) weighs %v, want 2", tok.Symbol, one, got)
		}
	}
}
