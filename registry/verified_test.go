package registry

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/p2p"
)

// stakeMap is a StakeReader over a fixed map (registry_test has its own).
type stakeMap map[string]*big.Int

func (s stakeMap) StakeOf(_ context.Context, did string, _ common.Address) (*big.Int, error) {
	if v, ok := s[did]; ok {
		return v, nil
	}
	return new(big.Int), nil
}

// signedCard signs a card of k for the package's own tests.
func signedCard(t *testing.T, k *identity.Key, seq uint64, name string, caps ...string) []byte {
	t.Helper()
	sc, err := Sign(Card{DID: k.DID.String(), Name: name, Description: "does things", Capabilities: caps,
		Endpoints: []Endpoint{{Kind: "a2a", URL: "https://agent.example/a2a"}}, Wallet: common.HexToAddress("0x01"), Seq: seq, Updated: time.Now().Unix()}, k)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(sc.JWS)
}

func newTestRegistry(t *testing.T, st StakeReader) *Registry {
	t.Helper()
	db, row := chainDB(t)
	r, err := New(context.Background(), Config{DB: db, Chain: row, Stakes: st, UnstakedPerMinute: 1000})
	skipWithoutFTS5(t, err)
	return r
}

// TestDHTValidatorRemembersOnlyWhatItChecked: the DHT's validator takes a card stored here
// without checking its signature again, but still checks its stake (which can change), and
// checks in full any other bytes: a copy of a stored card with its signature altered is
// refused as forged (issue 31: gossip and DHT puts of our own cards skip the second check).
func TestDHTValidatorRemembersOnlyWhatItChecked(t *testing.T) {
	ctx := context.Background()
	k, _ := identity.GenerateKey(identity.Ed25519)
	did := k.DID.String()
	st := stakeMap{did: big.NewInt(1e18)}
	r := newTestRegistry(t, st)
	raw := signedCard(t, k, 1, "Agent", "audit")
	if _, err := r.Register(ctx, raw, "test"); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.verified.by[sha256Of(raw)]; !ok {
		t.Fatal("a stored card is not remembered as checked")
	}
	v := dhtValidator{r}
	if err := v.Validate(cardKey(did), raw); err != nil {
		t.Fatalf("the stored card: %v", err)
	}
	// Flip a character of the signature: other bytes, checked in full.
	forged := []byte(string(raw[:len(raw)-2]) + flip(raw[len(raw)-2]) + string(raw[len(raw)-1:]))
	if err := v.Validate(cardKey(did), forged); !errors.Is(err, ErrForged) && !errors.Is(err, ErrMalformed) {
		t.Errorf("a forged copy: %v, want forged or malformed", err)
	}
	if err := v.Validate(cardKey("did:key:z6MkOther"), raw); !errors.Is(err, ErrWrongDID) {
		t.Errorf("the card under another DID's key: %v, want %v", err, ErrWrongDID)
	}
	delete(st, did)
	if err := v.Validate(cardKey(did), raw); !errors.Is(err, ErrUnstaked) {
		t.Errorf("the remembered card once its stake is gone: %v, want %v", err, ErrUnstaked)
	}
	// Select ranks a remembered card and a checked one as registration does.
	st[did] = big.NewInt(1e18)
	newer := signedCard(t, k, 2, "Agent v2", "audit")
	if i, err := v.Select(cardKey(did), [][]byte{raw, newer, forged}); err != nil || i != 1 {
		t.Errorf("Select = %d, %v; want the sequence 2 card (1)", i, err)
	}
}

// TestVerifiedCardsAreBounded: the memory of checked cards keeps the newest
// verifiedCardsKept, forgetting the oldest first.
func TestVerifiedCardsAreBounded(t *testing.T) {
	v := newVerifiedCards()
	k, _ := identity.GenerateKey(identity.Ed25519)
	first := &SignedCard{Card: Card{DID: k.DID.String(), Seq: 1}, JWS: "first"}
	v.add(first)
	for i := range verifiedCardsKept {
		v.add(&SignedCard{Card: Card{DID: k.DID.String(), Seq: uint64(i + 2)}, JWS: "card " + strings.Repeat("x", i)})
	}
	if len(v.by) != verifiedCardsKept || len(v.ring) != verifiedCardsKept {
		t.Fatalf("%d cards remembered (%d in the ring), want %d", len(v.by), len(v.ring), verifiedCardsKept)
	}
	if _, ok := v.by[sha256Of([]byte("first"))]; ok {
		t.Error("the oldest card is still remembered")
	}
}

// TestStoreKeepsRowIDs: a card's row id (the serial in its rank key) is the one SQLite gave
// before store wrote the rank key in the same statement as the card: a new card takes the
// next id, a card replaced keeps its own, and its capabilities carry its rank.
func TestStoreKeepsRowIDs(t *testing.T) {
	ctx := context.Background()
	st := stakeMap{}
	r := newTestRegistry(t, st)
	keys := make([]*identity.Key, 3)
	for i := range keys {
		keys[i], _ = identity.GenerateKey(identity.Ed25519)
		if _, err := r.Register(ctx, signedCard(t, keys[i], 1, "Agent", "audit"), "test"); err != nil {
			t.Fatal(err)
		}
	}
	st[keys[1].DID.String()] = big.NewInt(3e18)
	if _, err := r.Register(ctx, signedCard(t, keys[1], 2, "Agent v2", "audit", "translate"), "test"); err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		var rowid, rank int64
		var staked bool
		var weight float64
		if err := r.cfg.DB.QueryRowContext(ctx, `SELECT rowid, fts_row, staked, weight FROM registry_cards WHERE did = ?`, k.DID.String()).Scan(&rowid, &rank, &staked, &weight); err != nil {
			t.Fatal(err)
		}
		if rowid != int64(i+1) || rank != rankRow(staked, weight, rowid) {
			t.Errorf("card %d: row %d rank %d, want row %d rank %d", i, rowid, rank, i+1, rankRow(staked, weight, int64(i+1)))
		}
		rows, err := r.cfg.DB.QueryContext(ctx, `SELECT rank FROM registry_capabilities WHERE did = ?`, k.DID.String())
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var capRank int64
			if err := rows.Scan(&capRank); err != nil {
				t.Fatal(err)
			}
			if capRank != rank {
				t.Errorf("card %d: a capability ranks %d, the card %d", i, capRank, rank)
			}
			n++
		}
		rows.Close()
		if want := map[bool]int{true: 2, false: 1}[i == 1]; n != want {
			t.Errorf("card %d: %d capabilities, want %d", i, n, want)
		}
	}
	if _, err := r.cfg.DB.ExecContext(ctx, `DELETE FROM registry_cards WHERE did = ?`, keys[2].DID.String()); err != nil {
		t.Fatal(err)
	}
	k, _ := identity.GenerateKey(identity.Ed25519)
	if _, err := r.Register(ctx, signedCard(t, k, 1, "Late", "audit"), "test"); err != nil {
		t.Fatal(err)
	}
	var rowid int64
	if err := r.cfg.DB.QueryRowContext(ctx, `SELECT rowid FROM registry_cards WHERE did = ?`, k.DID.String()).Scan(&rowid); err != nil || rowid != 3 {
		t.Errorf("a card after the last one went: row %d (%v), want 3 as SQLite gives", rowid, err)
	}
}

func sha256Of(b []byte) [sha256.Size]byte { return sha256.Sum256(b) }

// flip is another base64url character than c.
func flip(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}

// TestSpreadEndsWithTheNode: once the p2p node has closed, its spreading goroutine is gone;
// a registration still stores its card (anti-entropy carries it later) without waiting for
// room in the outbox, and no DHT put counts as under way.
func TestSpreadEndsWithTheNode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a libp2p host")
	}
	ctx := context.Background()
	k, _ := identity.GenerateKey(identity.Ed25519)
	r := newTestRegistry(t, stakeMap{k.DID.String(): big.NewInt(1e18)})
	node, err := p2p.Start(ctx, p2p.Config{Validators: r.DHTValidators(), Topics: []string{CardTopic}})
	if err != nil {
		t.Fatal(err)
	}
	n, err := r.Attach(ctx, node, nil)
	if err != nil {
		t.Fatal(err)
	}
	node.Close()
	<-n.spreadDone
	for i := range spreadQueue + 10 { // more than the outbox holds
		if _, err := r.Register(ctx, signedCard(t, k, uint64(i+1), "Agent", "audit"), "test"); err != nil {
			t.Fatal(err)
		}
	}
	if got := n.PendingPuts(); got != 0 {
		t.Errorf("%d DHT puts under way after the node closed", got)
	}
}

// TestUnstakedCardsNeverWaitToSpread (review 31): free cards neither fill a node's memory in
// the outbox nor make anyone wait for room: an unstaked card is queued only while the queued
// cards weigh under maxUnstakedSpread and the outbox has room, else left to anti-entropy at
// once; a staked card waits for room at most spreadWait.
func TestUnstakedCardsNeverWaitToSpread(t *testing.T) {
	newNet := func() *Network {
		return &Network{out: newOutbox(8), spreadDone: make(chan struct{}), log: slog.New(slog.DiscardHandler)}
	}
	agent := func(i int, jws string, staked bool) *Agent {
		return &Agent{SignedCard: SignedCard{Card: Card{DID: fmt.Sprintf("did:key:z%d", i), Seq: 1}, JWS: jws}, Staked: staked}
	}
	n := newNet()
	big := strings.Repeat("x", maxUnstakedSpread/4)
	for i := range 8 { // the outbox has room for them all, the weight bound does not
		n.publish(context.Background(), agent(i, big, false))
	}
	if got := n.out.line.Len(); got != 4 {
		t.Errorf("%d cards of %d KiB queued, want 4 (the %d KiB bound)", got, len(big)>>10, maxUnstakedSpread>>10)
	}
	if q := n.out.bytes; q != int64(n.out.line.Len()*len(big)) {
		t.Errorf("queued bytes %d for %d cards", q, n.out.line.Len())
	}
	n.out.take() // spread takes one: room for one more
	n.publish(context.Background(), agent(8, big, false))
	if n.out.line.Len() != 4 {
		t.Errorf("after one was taken, %d queued, want 4 again", n.out.line.Len())
	}

	n = newNet()
	for i := range 20 {
		n.publish(context.Background(), agent(i, "x", false)) // returns at once when the outbox is full
	}
	if half := n.out.limit / 2; n.out.line.Len() != half || n.out.bytes != int64(half) {
		t.Errorf("outbox holds %d of %d, %d bytes counted; unstaked cards take half", n.out.line.Len(), n.out.limit, n.out.bytes)
	}
	for i := range n.out.limit / 2 { // staked cards fill the other half
		n.publish(context.Background(), agent(50+i, "s", true))
	}
	if n.out.line.Len() != n.out.limit {
		t.Errorf("outbox holds %d of %d after the staked cards", n.out.line.Len(), n.out.limit)
	}
	// A staked card waits for room at most spreadWait (not until its context ends), and is
	// then not counted.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n.publish(ctx, agent(100, "staked", true))
	if ctx.Err() != nil {
		t.Error("a staked card waited for room in a full outbox until its context ended")
	}
	if n.PendingPuts() != n.out.limit/2 || n.out.bytes != int64(n.out.limit) { // the staked half's puts
		t.Errorf("a staked card that found no room: %d puts, %d bytes queued", n.PendingPuts(), n.out.bytes)
	}
}
