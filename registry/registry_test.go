package registry_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/registry"
)

var now = time.Unix(1_800_000_000, 0)

// stakes is a StakeReader over a map: the thing under test is the registry, and the chain's
// index (package stake) is tested against the embedded chain there.
type stakes map[string]*big.Int

func (s stakes) StakeOf(_ context.Context, did string, _ common.Address) (*big.Int, error) {
	if v, ok := s[did]; ok {
		return v, nil
	}
	return new(big.Int), nil
}

// ledger is a stand-in for the chain's index (package stake, tested against the chain
// there): agents in gone read as that key state and hold no stake, as the index answers for a
// revoked or rotated DID.
type ledger struct {
	stakes
	mu   sync.Mutex
	gone map[string]identity.KeyState
}

func newLedger(st stakes) *ledger {
	return &ledger{stakes: st, gone: map[string]identity.KeyState{}}
}

func (l *ledger) set(did string, s identity.KeyState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gone[did] = s
}

func (l *ledger) StakeOf(ctx context.Context, did string, w common.Address) (*big.Int, error) {
	l.mu.Lock()
	_, gone := l.gone[did]
	l.mu.Unlock()
	if gone {
		return new(big.Int), nil
	}
	return l.stakes.StakeOf(ctx, did, w)
}

func (l *ledger) KeyStatus(_ context.Context, did string) (identity.KeyStatus, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := l.gone[did]; ok {
		return identity.KeyStatus{State: s}, nil
	}
	return identity.KeyStatus{State: identity.KeyActive}, nil
}

func newRegistry(t testing.TB, st registry.StakeReader) *registry.Registry {
	t.Helper()
	db := testutil.DB(t)
	ctx := context.Background()
	row, err := sqlite.EnterChain(ctx, db, sqlite.Chain{Key: "t", ChainID: 1, Genesis: "g", Contracts: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := registry.Config{DB: db, Chain: row, Stakes: st, Now: func() time.Time { return now }, UnstakedPerMinute: 1000}
	if kr, ok := st.(identity.KeyStatusReader); ok {
		cfg.Keys = kr
	}
	r, err := registry.New(ctx, cfg)
	requireFTS5(t, err)
	return r
}

// requireFTS5 skips outside CI when SQLite lacks FTS5 (a plain `go test` without
// -tags sqlite_fts5); in CI, and for any other error, it fails.
func requireFTS5(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, registry.ErrNoFTS5) && !testutil.InCI() {
		t.Skip("skipping: SQLite built without FTS5; run with -tags sqlite_fts5 (make test does)")
	}
	if err != nil {
		t.Fatal(err)
	}
}

func card(t testing.TB, k *identity.Key, seq uint64, name, desc string, caps ...string) []byte {
	t.Helper()
	sc, err := registry.Sign(registry.Card{DID: k.DID.String(), Name: name, Description: desc, Capabilities: caps,
		Endpoints: []registry.Endpoint{{Kind: "a2a", URL: "https://agent.example/a2a"}}, Wallet: common.HexToAddress("0x01"), Seq: seq, Updated: now.Unix()}, k)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(sc.JWS)
}

func TestRegisterAndFind(t *testing.T) {
	ctx := context.Background()
	r := newRegistry(t, stakes{})
	k, _ := identity.GenerateKey(identity.Ed25519)
	a, err := r.Register(ctx, card(t, k, 1, "Summarizer", "summarizes research papers", "summarize", "pdf"), "api")
	if err != nil {
		t.Fatal(err)
	}
	if a.DID != k.DID.String() || a.Staked {
		t.Errorf("registered %+v", a)
	}
	got, err := r.Get(ctx, k.DID.String())
	if err != nil || got.Name != "Summarizer" {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	for _, q := range []registry.Query{{Text: "research papers"}, {Capability: "pdf"}, {Text: "summarizes", Capability: "summarize"}, {}} {
		res, err := r.Search(ctx, q)
		if err != nil || len(res) != 1 || res[0].DID != k.DID.String() {
			t.Errorf("Search(%+v) = %v, %v", q, res, err)
		}
	}
	if res, _ := r.Search(ctx, registry.Query{Text: "weather"}); len(res) != 0 {
		t.Errorf("Search(weather) = %v", res)
	}
	// A newer card replaces the old one; the old one can never come back.
	if _, err := r.Register(ctx, card(t, k, 2, "Summarizer v2", "summarizes papers and books", "summarize"), "api"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Register(ctx, card(t, k, 1, "Summarizer", "old", "summarize"), "api"); !errors.Is(err, registry.ErrStale) {
		t.Errorf("old card: %v", err)
	}
	if res, _ := r.Search(ctx, registry.Query{Capability: "pdf"}); len(res) != 0 {
		t.Errorf("dropped capability still found: %v", res)
	}
}

// TestCapabilityIsExact: a capability filter matches the whole tag, never a part of it,
// with or without text, and follows a card's replacement.
func TestCapabilityIsExact(t *testing.T) {
	ctx := context.Background()
	r := newRegistry(t, stakes{})
	cards := map[string][]string{"both": {"code-review"}, "code": {"code"}, "review": {"review", "code.review"}}
	for name, caps := range cards {
		k, _ := identity.GenerateKey(identity.Ed25519)
		if _, err := r.Register(ctx, card(t, k, 1, name+" agent", "reviews code", caps...), "api"); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		q    registry.Query
		want string // the only card found; "" for none
	}{
		{registry.Query{Capability: "code-review"}, "both"},
		{registry.Query{Text: "agent", Capability: "code-review"}, "both"},
		{registry.Query{Text: "reviews code", Capability: "code"}, "code"},
		{registry.Query{Text: "agent", Capability: "code.review"}, "review"},
		{registry.Query{Text: "agent", Capability: "code-"}, ""},
		{registry.Query{Text: "agent", Capability: "review-code"}, ""},
	}
	for _, tt := range tests {
		res, err := r.Search(ctx, tt.q)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, a := range res {
			got = append(got, a.Name)
		}
		if tt.want == "" && len(got) != 0 || tt.want != "" && (len(got) != 1 || got[0] != tt.want+" agent") {
			t.Errorf("Search(%+v) found %v, want only %q", tt.q, got, tt.want)
		}
	}
}

// TestSearchRefusesBadQueries: text that is not text (NUL and other control characters,
// invalid UTF-8) and capabilities no card can have are refused with a *QueryError naming
// the field; any other syntax in the text is words, OR-ed (summ* is a prefix).
func TestSearchRefusesBadQueries(t *testing.T) {
	ctx := context.Background()
	r := newRegistry(t, stakes{})
	k, _ := identity.GenerateKey(identity.Ed25519)
	if _, err := r.Register(ctx, card(t, k, 1, "Summarizer", "summarizes research papers", "summarize"), "api"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		q     registry.Query
		field string // the field refused; "" when the search runs
		found int
	}{
		{registry.Query{Text: "\x00"}, "q", 0},
		{registry.Query{Text: "summarizes\x00", Capability: "summarize"}, "q", 0},
		{registry.Query{Text: "\xff"}, "q", 0},
		{registry.Query{Text: "a\x1bb"}, "q", 0},
		{registry.Query{Text: strings.Repeat("é", registry.MaxQueryText+1)}, "q", 0},
		{registry.Query{Capability: "\x00"}, "capability", 0},
		{registry.Query{Capability: "Summarize"}, "capability", 0},
		{registry.Query{Capability: strings.Repeat("a", 65)}, "capability", 0},
		{registry.Query{Text: "summarizes", Mode: "semantic"}, "mode", 0},
		{registry.Query{Text: "summarizes", Mode: registry.ModeKeyword}, "", 1},
		{registry.Query{Text: strings.Repeat("é", registry.MaxQueryText)}, "", 0},
		{registry.Query{Text: "summarizes\tresearch\n"}, "", 1},
		{registry.Query{Text: `"summarizes`}, "", 1},
		{registry.Query{Text: "summ* NEAR( -papers : ^research"}, "", 1},
		{registry.Query{Text: "summarizes OR NOT AND"}, "", 1},
		{registry.Query{Text: "NEAR( : ^"}, "", 0},
		{registry.Query{Text: "who can help"}, "", 0},
	}
	for _, tt := range tests {
		res, err := r.Search(ctx, tt.q)
		var qe *registry.QueryError
		switch {
		case tt.field == "" && (err != nil || len(res) != tt.found):
			t.Errorf("Search(%q, %q) = %d cards, %v; want %d", tt.q.Text, tt.q.Capability, len(res), err, tt.found)
		case tt.field != "" && (!errors.As(err, &qe) || qe.Field != tt.field || !errors.Is(err, registry.ErrBadQuery)):
			t.Errorf("Search(%q, %q) = %v, want a *QueryError on %s", tt.q.Text, tt.q.Capability, err, tt.field)
		}
	}
}

// TestRevokedAndRotatedCardsGo: once the chain's index shows a DID revoked or rotated, the
// change it reports drops the card, and the card (or a newer one) is refused from then on;
// an active agent is left alone.
func TestRevokedAndRotatedCardsGo(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		status identity.KeyState
		drop   bool
	}{
		{identity.KeyRevoked, true},
		{identity.KeyRotated, true},
		{identity.KeyActive, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.status), func(t *testing.T) {
			k, _ := identity.GenerateKey(identity.Ed25519)
			did := k.DID.String()
			l := newLedger(stakes{did: big.NewInt(1e18)})
			r := newRegistry(t, l)
			if _, err := r.Register(ctx, card(t, k, 1, "Agent", "does things", "things"), "api"); err != nil {
				t.Fatal(err)
			}
			if tt.status != identity.KeyActive {
				l.set(did, tt.status)
			}
			r.ChainChanged(ctx, []string{did})
			found, _ := r.Search(ctx, registry.Query{Text: "things"})
			if _, err := r.Get(ctx, did); tt.drop != errors.Is(err, registry.ErrRevoked) || tt.drop == (len(found) == 1) {
				t.Fatalf("after the change: Get error %v, search found %d", err, len(found))
			}
			res, err := r.CheckStatus(ctx, did)
			if tt.drop {
				if err != nil || res.Status != tt.status || res.Dropped {
					t.Fatalf("CheckStatus after the drop = %+v, %v; want %s, nothing left to drop", res, err, tt.status)
				}
			} else if err != nil || res.Status != identity.KeyActive || res.Wallet != common.HexToAddress("0x01") {
				t.Fatalf("CheckStatus = %+v, %v", res, err)
			}
			_, err = r.Register(ctx, card(t, k, 2, "Agent", "back again", "things"), "api")
			if tt.drop != errors.Is(err, registry.ErrRevoked) {
				t.Errorf("a newer card after %s: %v", tt.status, err)
			}
		})
	}
	r := newRegistry(t, newLedger(stakes{}))
	if _, err := r.CheckStatus(ctx, "did:key:zNope"); !errors.Is(err, registry.ErrMalformed) {
		t.Errorf("bad DID: %v", err)
	}
	k, _ := identity.GenerateKey(identity.Ed25519)
	if _, err := r.CheckStatus(ctx, k.DID.String()); !errors.Is(err, registry.ErrUnknownAgent) {
		t.Errorf("no card: %v", err)
	}
}

func TestRefusedCards(t *testing.T) {
	ctx := context.Background()
	r := newRegistry(t, stakes{})
	k, _ := identity.GenerateKey(identity.Ed25519)
	other, _ := identity.GenerateKey(identity.Secp256k1)
	good := card(t, k, 1, "A", "a", "x")
	forged := []byte(string(good[:len(good)-4]) + "AAAA")
	wrongDID, _ := other.SignDocument([]byte(fmt.Sprintf(`{"did":%q,"name":"A","capabilities":[],"wallet":"0x0000000000000000000000000000000000000001","seq":1,"updated":%d}`, k.DID, now.Unix())), registry.CardType)
	malformed, _ := k.SignDocument([]byte(`{"did":`), registry.CardType)
	envelope, _ := k.SignCompact([]byte(`{}`))
	tests := []struct {
		name string
		raw  []byte
		want error
	}{
		{"forged signature", forged, registry.ErrForged},
		{"wrong DID", []byte(wrongDID), registry.ErrWrongDID},
		{"oversize", []byte(strings.Repeat("x", registry.MaxCardSize+1)), registry.ErrOversize},
		{"malformed JSON", []byte(malformed), registry.ErrMalformed},
		{"not a card (an envelope)", []byte(envelope), registry.ErrMalformed},
		{"garbage", []byte("hello"), registry.ErrMalformed},
		{"bad capability", card(t, k, 1, "A", "a", "Not Lower"), registry.ErrMalformed},
		{"no name", card(t, k, 1, "", "a"), registry.ErrMalformed},
		{"zero seq", card(t, k, 0, "A", "a"), registry.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := r.Register(ctx, tt.raw, "api"); !errors.Is(err, tt.want) {
				t.Errorf("Register = %v, want %v", err, tt.want)
			}
		})
	}
	if res, _ := r.Search(ctx, registry.Query{}); len(res) != 0 {
		t.Errorf("refused cards were stored: %v", res)
	}
}

// TestSybilCardsNeverOutrankStake registers 1,000 unstaked cards that match a query better
// than one staked agent does: the staked agent still comes first.
func TestSybilCardsNeverOutrankStake(t *testing.T) {
	ctx := context.Background()
	honest, _ := identity.GenerateKey(identity.Ed25519)
	st := stakes{honest.DID.String(): big.NewInt(1e18)}
	r := newRegistry(t, st)
	if _, err := r.Register(ctx, card(t, honest, 1, "Translator", "translates documents", "translate"), "honest"); err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		k, _ := identity.GenerateKey(identity.Ed25519)
		if _, err := r.Register(ctx, card(t, k, 1, "Translator translate translation", "translate translate translate translates documents fast", "translate"), fmt.Sprintf("sybil-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []registry.Query{{Text: "translate"}, {Text: "translates documents"}, {Capability: "translate"}} {
		res, err := r.Search(ctx, q)
		if err != nil || len(res) == 0 {
			t.Fatalf("Search(%+v): %v %v", q, res, err)
		}
		if res[0].DID != honest.DID.String() || !res[0].Staked {
			t.Errorf("Search(%+v): first is %s (staked %v), want the staked agent", q, res[0].DID, res[0].Staked)
		}
	}
}

func TestUnstakedCardsAreRateLimited(t *testing.T) {
	ctx := context.Background()
	db := testutil.DB(t)
	row, _ := sqlite.EnterChain(ctx, db, sqlite.Chain{Key: "t", ChainID: 1, Genesis: "g", Contracts: "{}"})
	staked, _ := identity.GenerateKey(identity.Ed25519)
	r, err := registry.New(ctx, registry.Config{DB: db, Chain: row, Stakes: stakes{staked.DID.String(): big.NewInt(1)}, Now: func() time.Time { return now }, UnstakedPerMinute: 2})
	requireFTS5(t, err)
	for i := range 2 {
		k, _ := identity.GenerateKey(identity.Ed25519)
		if _, err := r.Register(ctx, card(t, k, 1, "A", "a"), "flooder"); err != nil {
			t.Fatalf("card %d: %v", i, err)
		}
	}
	k, _ := identity.GenerateKey(identity.Ed25519)
	if _, err := r.Register(ctx, card(t, k, 1, "A", "a"), "flooder"); !errors.Is(err, registry.ErrRateLimited) {
		t.Errorf("third unstaked card from one source: %v", err)
	}
	if _, err := r.Register(ctx, card(t, staked, 1, "A", "a"), "flooder"); err != nil {
		t.Errorf("a staked card is not limited: %v", err)
	}
}

func FuzzParseCard(f *testing.F) {
	k, _ := identity.KeyFromSeed(identity.Ed25519, make([]byte, 32))
	f.Add(card(f, k, 1, "A", "a", "x"))
	f.Add([]byte("e30.e30.e30"))
	f.Add(a2aCard(f, k, 1))
	f.Add([]byte(`{"name":"A","capabilities":{"extensions":[{"uri":"https://surety.dev/ext/trust/v1","params":{"did":"did:key:z6Mk"}}]}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		sc, err := registry.Parse(raw, now)
		if err != nil {
			var ce *registry.CardError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *CardError", err)
			}
			return
		}
		if sc.DID == "" || sc.Seq == 0 || sc.Name == "" {
			t.Fatalf("accepted a card without identity: %+v", sc.Card)
		}
	})
}

// watcher counts StakesChanged calls; it ranks everyone neutral.
type watcher struct {
	registry.Neutral
	calls int
}

func (w *watcher) StakesChanged() { w.calls++ }

// TestStakeChangesAreAnnounced: a reputation reader that watches stake hears of every staked
// card stored and every card dropped, and of nothing else.
func TestStakeChangesAreAnnounced(t *testing.T) {
	ctx := context.Background()
	staked, unstaked := mustKey(t), mustKey(t)
	l := newLedger(stakes{staked.DID.String(): big.NewInt(1e18)})
	r := newRegistry(t, l)
	w := &watcher{}
	r.UseReputation(w)
	steps := []struct {
		name string
		do   func() error
		want int
	}{
		{"unstaked card", func() error {
			_, err := r.Register(ctx, card(t, unstaked, 1, "U", "unstaked", "x"), "api")
			return err
		}, 0},
		{"staked card", func() error {
			_, err := r.Register(ctx, card(t, staked, 1, "S", "staked", "x"), "api")
			return err
		}, 1},
		{"refused card", func() error {
			// The same card again (an agent's other card of one seq may replace it: newer).
			if _, err := r.Register(ctx, card(t, staked, 1, "S", "staked", "x"), "api"); !errors.Is(err, registry.ErrStale) {
				return fmt.Errorf("stale card: %v", err)
			}
			return nil
		}, 1},
		{"dropped card", func() error {
			l.set(staked.DID.String(), identity.KeyRevoked)
			_, err := r.CheckStatus(ctx, staked.DID.String())
			return err
		}, 2},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if w.calls != s.want {
			t.Fatalf("after %s: %d calls, want %d", s.name, w.calls, s.want)
		}
	}
}

// TestStatusCheckRestakes: a status check gives the card the node holds its stake as the
// chain now has it, re-ranking it, and says so; an unchanged stake stores nothing.
func TestStatusCheckRestakes(t *testing.T) {
	ctx := context.Background()
	k := mustKey(t)
	did := k.DID.String()
	l := newLedger(stakes{did: big.NewInt(2e18)})
	r := newRegistry(t, l)
	w := &watcher{}
	r.UseReputation(w)
	if _, err := r.Register(ctx, card(t, k, 1, "Agent", "does things", "things"), "api"); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name     string
		stake    *big.Int
		restaked bool
		staked   bool
	}{
		{"unchanged", big.NewInt(2e18), false, true},
		{"part unbonded", big.NewInt(5e17), true, true},
		{"all unbonded", new(big.Int), true, false},
		{"staked again", big.NewInt(1e18), true, true},
	}
	calls := w.calls
	for _, s := range steps {
		l.mu.Lock()
		l.stakes[did] = s.stake
		l.mu.Unlock()
		res, err := r.CheckStatus(ctx, did)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if res.Stake != s.stake.String() || res.Restaked != s.restaked || res.Status != identity.KeyActive {
			t.Fatalf("%s: %+v", s.name, res)
		}
		a, err := r.Get(ctx, did)
		if err != nil || a.Stake != s.stake.String() || a.Staked != s.staked || a.Seq != 1 {
			t.Fatalf("%s: card %+v, %v", s.name, a, err)
		}
		if s.restaked {
			calls++
		}
		if w.calls != calls {
			t.Errorf("%s: %d stake notices, want %d", s.name, w.calls, calls)
		}
	}
	// Re-ranked: the card is found among unstaked ones by its new place, and searches still
	// find it exactly once.
	if found, err := r.Search(ctx, registry.Query{Capability: "things"}); err != nil || len(found) != 1 || found[0].Stake != "1000000000000000000" {
		t.Errorf("search after restaking: %v, %v", found, err)
	}
}

// TestStakeBelowTheMinimumRanksUnstaked: a card whose stake is below the deployment's minimum
// is an unstaked card: flagged so, ranked after every staked one, rate limited.
func TestStakeBelowTheMinimumRanksUnstaked(t *testing.T) {
	ctx := context.Background()
	dust, real := mustKey(t), mustKey(t)
	db := testutil.DB(t)
	row, err := sqlite.EnterChain(ctx, db, sqlite.Chain{Key: "t", ChainID: 1, Genesis: "g", Contracts: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := registry.New(ctx, registry.Config{DB: db, Chain: row, Now: func() time.Time { return now }, UnstakedPerMinute: 1,
		MinStake: big.NewInt(1e17), Stakes: stakes{dust.DID.String(): big.NewInt(5e16), real.DID.String(): big.NewInt(1e17)}})
	requireFTS5(t, err)
	for _, k := range []*identity.Key{dust, real} {
		a, err := r.Register(ctx, card(t, k, 1, "Agent", "audits", "audit"), "api")
		if err != nil {
			t.Fatal(err)
		}
		if want := k == real; a.Staked != want {
			t.Errorf("%s staked = %v, want %v", a.Stake, a.Staked, want)
		}
	}
	found, err := r.Search(ctx, registry.Query{Capability: "audit"})
	if err != nil || len(found) != 2 || found[0].DID != real.DID.String() {
		t.Errorf("search = %v, %v; want the card at the minimum first", found, err)
	}
	if _, err := r.Register(ctx, card(t, dust, 2, "Agent", "audits more", "audit"), "api"); !errors.Is(err, registry.ErrRateLimited) {
		t.Errorf("a second card under the minimum within the minute: %v, want rate limited", err)
	}
}

// TestStuffedCardsDoNotBuryARelevantStakedCard: 50 unstaked cards stuffed with a query's
// words do not push a staked card that answers it (with the least stake that counts) out of
// the top 3: an unstaked card's stake factor is half a staked one's, and bm25 saturates
// repeated words.
func TestStuffedCardsDoNotBuryARelevantStakedCard(t *testing.T) {
	ctx := context.Background()
	honest, _ := identity.GenerateKey(identity.Ed25519)
	st := stakes{honest.DID.String(): big.NewInt(1)}
	r := newRegistry(t, st)
	if _, err := r.Register(ctx, card(t, honest, 1, "Vault Guard", "Solidity smart contract audits: reentrancy, access control, upgrade safety.", "audit/solidity", "security"), "honest"); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		k, _ := identity.GenerateKey(identity.Ed25519)
		if _, err := r.Register(ctx, card(t, k, 1, "solidity audit reentrancy vault audit",
			"solidity audit solidity audit reentrancy vault launch audit solidity check audit reentrancy solidity vault",
			"audit", "solidity", "reentrancy", "vault"), fmt.Sprintf("stuffer-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, text := range []string{"solidity audit", "I need an audit of my Solidity contract for reentrancy", "smart contract auditor"} {
		res, err := r.Search(ctx, registry.Query{Text: text})
		if err != nil {
			t.Fatal(err)
		}
		at := slices.IndexFunc(res, func(a *registry.Agent) bool { return a.DID == honest.DID.String() })
		if at < 0 || at > 2 {
			t.Errorf("Search(%q): the staked auditor is at %d of %d", text, at, len(res))
		}
	}
}

// TestSameCardsSameRanking: two nodes that received the same cards in opposite orders (one
// of them replacing a card on the way) rank them the same, scores bit for bit.
func TestSameCardsSameRanking(t *testing.T) {
	ctx := context.Background()
	st := stakes{}
	var cards [][]byte
	descs := []string{"translates legal contracts French to English", "Solidity audits and reentrancy reviews", "German VAT returns",
		"localization of apps", "summaries of research papers", "smart contract development", "penetration testing of web apps"}
	var first *identity.Key
	for i := range 21 {
		k, _ := identity.GenerateKey(identity.Ed25519)
		if i == 0 {
			first = k
		}
		if i%3 == 0 {
			st[k.DID.String()] = big.NewInt(int64(i+1) * 1e17)
		}
		cards = append(cards, card(t, k, 1, fmt.Sprintf("Agent %d", i), descs[i%len(descs)], []string{"translation/fr-en", "audit", "tax", "translation", "summarize", "development", "security"}[i%7]))
	}
	a, b := newRegistry(t, st), newRegistry(t, st)
	for i := range cards {
		if _, err := a.Register(ctx, cards[i], "a"); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Register(ctx, cards[len(cards)-1-i], "b"); err != nil {
			t.Fatal(err)
		}
	}
	// b first held another card of the first agent: the same one in the end.
	if _, err := b.Register(ctx, card(t, first, 2, "Agent 0", descs[0], "translation/fr-en"), "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Register(ctx, card(t, first, 2, "Agent 0", descs[0], "translation/fr-en"), "a"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []registry.Query{{Text: "translation"}, {Text: "who can check my solidity contract"}, {Text: `"research papers"`}, {Text: "transl*"}, {Capability: "translation"}, {}} {
		ra, err := a.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := b.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(ra) != len(rb) || len(ra) == 0 {
			t.Fatalf("Search(%+v): %d and %d cards", q, len(ra), len(rb))
		}
		for i := range ra {
			if ra[i].DID != rb[i].DID || math.Float64bits(ra[i].Score) != math.Float64bits(rb[i].Score) {
				t.Errorf("Search(%+v) #%d: %s %v and %s %v", q, i, ra[i].DID, ra[i].Score, rb[i].DID, rb[i].Score)
			}
		}
	}
}

// TestSearchFindsByMeaning: the semantic side of ranking (registry/semantic) finds a card
// that shares no word with the query but its meaning, below a card that has the words; and
// a word near nothing (cosine under the floor) finds nothing through meaning alone.
func TestSearchFindsByMeaning(t *testing.T) {
	ctx := context.Background()
	st := stakes{}
	r := newRegistry(t, st)
	cards := []struct{ name, desc, capability string }{
		{"Garage Bot", "diagnoses automobile engines and books repairs", "repair"},
		{"Wordsmith", "writes product descriptions for online shops", "copywriting"},
	}
	dids := map[string]string{}
	for _, c := range cards {
		k, _ := identity.GenerateKey(identity.Ed25519)
		st[k.DID.String()] = big.NewInt(1e18)
		if _, err := r.Register(ctx, card(t, k, 1, c.name, c.desc, c.capability), "api"); err != nil {
			t.Fatal(err)
		}
		dids[k.DID.String()] = c.name
	}
	names := func(text string) []string {
		t.Helper()
		found, err := r.Search(ctx, registry.Query{Text: text})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range found {
			out = append(out, dids[a.DID])
		}
		return out
	}
	if got := names("my car makes a strange noise"); len(got) != 1 || got[0] != "Garage Bot" {
		t.Errorf("a car (the card says automobile) → %q, want the garage alone", got)
	}
	if got := names("NEAR( : ^"); len(got) != 0 {
		t.Errorf("a word near nothing → %q, want nothing", got)
	}
	// Keyword mode ranks by the words alone: no card says car.
	if found, err := r.Search(ctx, registry.Query{Text: "my car makes a strange noise", Mode: registry.ModeKeyword}); err != nil || len(found) != 0 {
		t.Errorf("keyword mode: %d cards, %v; want none", len(found), err)
	}
}

// TestFreeCardsCannotCrowdOutMeaning: 300 free (unstaked) cards copied from a staked card's
// text take every place among the cards nearest a query's meaning; the staked card, which
// shares no word with the query, must still be a candidate, and rank first (when the 200
// nearest were cut on cosine alone over all cards, ties by row id, it vanished).
func TestFreeCardsCannotCrowdOutMeaning(t *testing.T) {
	r, honest := freeCopiesThenStaked(t, "Garage Bot", "diagnoses automobile engines and books repairs", "repair")
	found, err := r.Search(context.Background(), registry.Query{Text: "my car makes a strange noise", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) == 0 || found[0].DID != honest.DID.String() {
		t.Fatalf("the staked garage is not first among %d answers", len(found))
	}
}

// freeCopiesThenStaked registers 300 free (unstaked) cards saying name and desc under
// capability, then the same card of a staked agent whose DID sorts after every free card's,
// so that no tie-break saves it; it returns the registry and the staked agent's key.
func freeCopiesThenStaked(t *testing.T, name, desc, capability string) (*registry.Registry, *identity.Key) {
	t.Helper()
	ctx := context.Background()
	st := stakes{}
	r := newRegistry(t, st)
	maxJunk := ""
	for i := range 300 {
		k, _ := identity.GenerateKey(identity.Ed25519)
		if _, err := r.Register(ctx, card(t, k, 1, name, desc, capability), fmt.Sprint("junk-", i)); err != nil {
			t.Fatal(err)
		}
		maxJunk = max(maxJunk, k.DID.String())
	}
	var honest *identity.Key
	for honest == nil || honest.DID.String() < maxJunk {
		honest, _ = identity.GenerateKey(identity.Ed25519)
	}
	st[honest.DID.String()] = big.NewInt(1e18)
	if _, err := r.Register(ctx, card(t, honest, 1, name, desc, capability), "honest"); err != nil {
		t.Fatal(err)
	}
	return r, honest
}

// TestFiltersChooseTheNearest: 300 staked cards that say "my car makes a noise" take every
// place among the cards nearest that query; one staked card under the capability legal
// (which shares no word with the query) says it handles automobile claims, farther from
// the query than theirs. Under legal, the nearest are chosen among the legal cards, so it is
// found. With the global nearest, it was not among them, and the filter left nothing.
func TestFiltersChooseTheNearest(t *testing.T) {
	ctx := context.Background()
	st := stakes{}
	r := newRegistry(t, st)
	for i := range 300 {
		k, _ := identity.GenerateKey(identity.Ed25519)
		st[k.DID.String()] = big.NewInt(1e18)
		if _, err := r.Register(ctx, card(t, k, 1, "Garage Bot", "my car makes a noise: we diagnose automobile engines", "repair"), fmt.Sprint("garage-", i)); err != nil {
			t.Fatal(err)
		}
	}
	lawyer, _ := identity.GenerateKey(identity.Ed25519)
	st[lawyer.DID.String()] = big.NewInt(1e18)
	if _, err := r.Register(ctx, card(t, lawyer, 1, "Claims Desk", "handles insurance claims after automobile accidents, strange or plain", "legal"), "lawyer"); err != nil {
		t.Fatal(err)
	}
	found, err := r.Search(ctx, registry.Query{Text: "my car makes a noise", Capability: "legal"})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0].DID != lawyer.DID.String() {
		t.Errorf("under legal: %d cards, want the claims desk alone", len(found))
	}
}

// TestFreeCardsCannotCrowdOutMeaningUnderACapability: the attack on the nearest among the
// cards under a capability. 300 free cards (unstaked did:keys, which cost nothing) copy a
// staked legal card's text under legal, so they take every unstaked place among the legal
// cards nearest the query (which shares no word with them); the staked card keeps its place
// among the staked ones, and ranks first.
func TestFreeCardsCannotCrowdOutMeaningUnderACapability(t *testing.T) {
	r, honest := freeCopiesThenStaked(t, "Claims Desk", "handles insurance claims after automobile accidents", "legal")
	found, err := r.Search(context.Background(), registry.Query{Text: "my car makes a strange noise", Capability: "legal", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) == 0 || found[0].DID != honest.DID.String() {
		t.Fatalf("the staked claims desk is not first among %d answers", len(found))
	}
}

// TestTiesAtTheNearestCutGoByDID: 250 cards of one text have one vector; the cut of the
// nearest cards falls among them. Two registries that took them in opposite orders (so their
// row ids differ) answer with the same cards and scores.
func TestTiesAtTheNearestCutGoByDID(t *testing.T) {
	ctx := context.Background()
	var cards [][]byte
	st := stakes{}
	for range 250 {
		k, _ := identity.GenerateKey(identity.Ed25519)
		st[k.DID.String()] = big.NewInt(1e18)
		cards = append(cards, card(t, k, 1, "Garage Bot", "diagnoses automobile engines and books repairs", "repair"))
	}
	answer := func(order []int) string {
		r := newRegistry(t, st)
		for _, i := range order {
			if _, err := r.Register(ctx, cards[i], "api"); err != nil {
				t.Fatal(err)
			}
		}
		found, err := r.Search(ctx, registry.Query{Text: "my car makes a strange noise", Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		for _, a := range found {
			fmt.Fprintf(&out, "%s %v\n", a.DID, a.Score)
		}
		return out.String()
	}
	forward, backward := make([]int, len(cards)), make([]int, len(cards))
	for i := range cards {
		forward[i], backward[i] = i, len(cards)-1-i
	}
	a, b := answer(forward), answer(backward)
	if a == "" || a != b {
		t.Fatalf("two registries answer differently:\n%s\nvs\n%s", a, b)
	}
}
