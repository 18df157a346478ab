package benchref

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/surety-ioa/surety/internal/sqlite"
)

// payloadSize is about the length of an envelope's JWS signing input (protected header and
// payload, base64url, joined by a dot) in identity's benchmarks.
const payloadSize = 768

func payload() []byte {
	p := make([]byte, payloadSize)
	for i := range p {
		p[i] = 'a' + byte(i%26)
	}
	return p
}

func key() ed25519.PrivateKey {
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = 1
	return ed25519.NewKeyFromSeed(seed)
}

func BenchmarkEd25519Sign(b *testing.B) {
	k, msg := key(), payload()
	b.ReportAllocs()
	for b.Loop() {
		ed25519.Sign(k, msg)
	}
}

func BenchmarkEd25519Verify(b *testing.B) {
	k, msg := key(), payload()
	sig := ed25519.Sign(k, msg)
	pub := k.Public().(ed25519.PublicKey)
	b.ReportAllocs()
	for b.Loop() {
		if !ed25519.Verify(pub, msg, sig) {
			b.Fatal("verify failed")
		}
	}
}

// openDB opens a fresh database file with the node's pragmas and a table shaped like a
// small signed record: a text key, a few columns and a blob of about an envelope's size.
func openDB(b *testing.B) *sql.DB {
	db, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE records (
		id    TEXT    PRIMARY KEY,
		owner TEXT    NOT NULL,
		seq   INTEGER NOT NULL,
		body  BLOB    NOT NULL
	) STRICT`); err != nil {
		b.Fatal(err)
	}
	return db
}

// BenchmarkSQLiteInsert is one INSERT per operation, each its own transaction (autocommit),
// through a prepared statement: the least a write that must be durable on return costs.
func BenchmarkSQLiteInsert(b *testing.B) {
	db := openDB(b)
	ctx := context.Background()
	ins, err := db.PrepareContext(ctx, `INSERT INTO records (id, owner, seq, body) VALUES (?, ?, ?, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	defer ins.Close()
	body := payload()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ins.ExecContext(ctx, "rec-"+strconv.Itoa(i), "did:key:z6MkOwner", i, body); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkSQLiteRead is one SELECT by primary key per operation, among 100,000 rows, at
// random keys.
func BenchmarkSQLiteRead(b *testing.B) {
	const rows = 100_000
	db := openDB(b)
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	body := payload()
	for i := range rows {
		if _, err := tx.ExecContext(ctx, `INSERT INTO records (id, owner, seq, body) VALUES (?, ?, ?, ?)`, "rec-"+strconv.Itoa(i), "did:key:z6MkOwner", i, body); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	sel, err := db.PrepareContext(ctx, `SELECT owner, seq, body FROM records WHERE id = ?`)
	if err != nil {
		b.Fatal(err)
	}
	defer sel.Close()
	r := rand.New(rand.NewPCG(1, 2))
	var owner string
	var seq int
	var got []byte
	b.ReportAllocs()
	for b.Loop() {
		if err := sel.QueryRowContext(ctx, "rec-"+strconv.Itoa(r.IntN(rows))).Scan(&owner, &seq, &got); err != nil {
			b.Fatal(err)
		}
	}
}

// infoBody has the shape of api.Info, the body of GET /v1/info, with values of the same
// length: the reference serializes as much JSON as the node does.
type infoBody struct {
	Version string `json:"version"`
	Chain   struct {
		ID          uint64 `json:"id"`
		Kind        string `json:"kind"`
		Genesis     string `json:"genesis"`
		BlockNumber uint64 `json:"blockNumber"`
		StateKey    string `json:"stateKey"`
	} `json:"chain"`
	Contracts map[string]string `json:"contracts"`
	NodeDID   string            `json:"nodeDid,omitempty"`
}

// BenchmarkEchoHandler serves GET /v1/info from a bare echo instance (no middleware, no
// chain read) the way api's BenchmarkInfo serves the node's: ServeHTTP into a recorder.
func BenchmarkEchoHandler(b *testing.B) {
	e := echo.New()
	var body infoBody
	body.Version = "v-test"
	body.Chain.ID, body.Chain.Kind, body.Chain.BlockNumber, body.Chain.StateKey = 1337, "embedded", 2, "1337-k"
	body.Chain.Genesis = fmt.Sprintf("0x%064x", 0xabc)
	body.Contracts = map[string]string{"RootAnchor": fmt.Sprintf("0x%040x", 0xaa)}
	body.NodeDID = "did:key:z6MkjchhfUsD6mmvni8mCdXHw216Xrm9bQe2mBH1P5RDjVJG"
	e.GET("/v1/info", func(c echo.Context) error { return c.JSON(http.StatusOK, body) })
	req := httptest.NewRequest(http.MethodGet, "/v1/info", nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
	}
}
