package api_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/reputation/merkle"
	"github.com/surety-ioa/surety/reputation/verify"
)

// newLogFixture is what the log routes' tests serve from: an embedded chain, the node's
// identity, and the reputation store and log of one chain row (key) of a fresh database.
func newLogFixture(t *testing.T, key string) (*chain.Embedded, *sql.DB, *identity.Service, *reputation.Store, *reputation.Log) {
	t.Helper()
	ctx := context.Background()
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	db := testutil.DB(t)
	ids := newIdentity(t, db)
	row, err := sqlite.EnterChain(ctx, db, sqlite.Chain{Key: key, ChainID: chain.EmbeddedChainID, Genesis: "g", Contracts: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	store, err := reputation.OpenStore(ctx, db, row)
	if err != nil {
		t.Fatal(err)
	}
	log, err := reputation.OpenLog(ctx, db, row, reputation.LogConfig{Signer: ids})
	if err != nil {
		t.Fatal(err)
	}
	return c, db, ids, store, log
}

// TestLogLeavesRoute: GET /v1/log/leaves, through the typed client, serves the log's
// contents. Paged by index the leaves cover the log once, each the leaf hash of its envelope,
// and they build each signed head's root; by subject a page holds exactly that subject's
// logged audits; out-of-bounds requests are refused as problems.
func TestLogLeavesRoute(t *testing.T) {
	ctx := context.Background()
	c, db, ids, store, log := newLogFixture(t, "leaves")
	subjects := []string{"did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK", "did:key:z6MkpTHR8VNsBxYAAWHut2Geadd9jSwuBV8xRoAnwWsdvktH"}
	day := int64(1_800_000_000 / 86400 * 86400)
	want := map[string][]merkle.Hash{}
	for i := range 30 {
		a := &reputation.Audit{Auditor: fmt.Sprintf("did:key:z6MkAuditor%02d", i), Subject: subjects[i%3/2], Envelope: "m1", Score: 0.5,
			Evidence: reputation.Evidence{Hash: common.Hash{1}}, Time: day + int64(i/10)*3600 + int64(i)}
		raw := fmt.Appendf(nil, "audit envelope %d", i)
		if _, err := store.Add(ctx, a, raw, reputation.Verdict{}); err != nil {
			t.Fatal(err)
		}
		want[a.Subject] = append(want[a.Subject], verify.EnvelopeLeaf(raw))
	}
	heads, err := log.CloseEpochs(ctx, time.Unix(day, 0).Add(4*time.Hour))
	if err != nil || len(heads) != 3 {
		t.Fatalf("closing the epochs: %v, %v", heads, err)
	}
	s, err := api.New(api.Config{Chain: api.ChainInfo{ID: chain.EmbeddedChainID, Kind: "embedded"}, Blocks: c, DB: db, Identity: ids, AuditLog: log,
		LeafPageRate: 1e9, LeafPageBurst: 1 << 30}) // it pages through everything many times
	if err != nil {
		t.Fatal(err)
	}
	cl, err := client.New("http://node.test")
	if err != nil {
		t.Fatal(err)
	}
	cl = cl.WithHTTP(&http.Client{Transport: &handlerTransport{h: s.Handler()}})

	// readAll pages with limit and returns the leaves and the heads the pages named.
	readAll := func(t *testing.T, size uint64, subject string, limit int) ([]merkle.Hash, map[int64]verify.Head) {
		t.Helper()
		var leaves []merkle.Hash
		signed := map[int64]verify.Head{}
		from := uint64(0)
		for pages := 0; ; pages++ {
			page, err := cl.LogLeaves(ctx, from, size, subject, limit)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range page.Heads {
				v, err := verify.OpenHead(h.Signed, ids.NodeDID())
				if err != nil || v.Size != h.Size || v.Root != h.Root {
					t.Fatalf("a head of the page does not verify: %v", err)
				}
				signed[h.Epoch] = v
			}
			for _, x := range page.Leaves {
				if subject == "" && x.Index != uint64(len(leaves)) {
					t.Fatalf("leaf %d where %d was due: paging skipped or repeated", x.Index, len(leaves))
				}
				if verify.EnvelopeLeaf(x.Envelope) != x.Leaf {
					t.Errorf("leaf %d is not the hash of its envelope", x.Index)
				}
				if _, ok := signed[x.Epoch]; !ok {
					t.Errorf("leaf %d names epoch %d, whose head the page lacks", x.Index, x.Epoch)
				}
				leaves = append(leaves, x.Leaf)
			}
			if page.Next == nil {
				return leaves, signed
			}
			if pages > 100 {
				t.Fatal("paging does not end")
			}
			from = *page.Next
		}
	}
	t.Run("range", func(t *testing.T) {
		for _, limit := range []int{0, 1, 7} {
			leaves, signed := readAll(t, 0, "", limit)
			if len(leaves) != 30 {
				t.Fatalf("limit %d: %d leaves, want 30", limit, len(leaves))
			}
			var tree merkle.Tree
			for _, l := range leaves {
				tree.Append(l)
			}
			for _, h := range heads {
				root, _ := tree.Root(h.Size)
				if v, ok := signed[h.Epoch]; !ok || root != v.Root {
					t.Errorf("limit %d: the leaves give root %s at size %d, the signed head %s", limit, root, h.Size, v.Root)
				}
			}
		}
		if leaves, _ := readAll(t, heads[0].Size, "", 4); len(leaves) != int(heads[0].Size) {
			t.Errorf("below the first head's size: %d leaves, want %d", len(leaves), heads[0].Size)
		}
	})
	t.Run("subject", func(t *testing.T) {
		for _, subject := range subjects {
			got, _ := readAll(t, 0, subject, 3)
			w := slices.Clone(want[subject])
			for _, l := range [][]merkle.Hash{got, w} {
				slices.SortFunc(l, func(a, b merkle.Hash) int { return strings.Compare(a.String(), b.String()) })
			}
			if !slices.Equal(got, w) {
				t.Errorf("%s: %d leaves, want its %d audits", subject, len(got), len(w))
			}
		}
	})
	t.Run("bounds", func(t *testing.T) {
		for _, tt := range []struct {
			query  string
			status int
			slug   string
		}{
			{"limit=0", http.StatusBadRequest, "bad-request"},
			{fmt.Sprintf("limit=%d", reputation.MaxLeavesPage+1), http.StatusBadRequest, "bad-request"},
			{"from=-1", http.StatusBadRequest, "bad-request"},
			{"from=31", http.StatusBadRequest, "bad-request"},
			{"size=x", http.StatusBadRequest, "bad-request"},
			{"size=31", http.StatusNotFound, "not-logged"},
			{"subject=nobody", http.StatusBadRequest, "bad-request"},
		} {
			rec := do(t, s.Handler(), http.MethodGet, "/v1/log/leaves?"+tt.query, "", nil)
			if rec.Code != tt.status || rec.Header().Get("Content-Type") != "application/problem+json" ||
				!strings.Contains(rec.Body.String(), `"type":"https://surety.dev/problems/`+tt.slug+`"`) {
				t.Errorf("%s: %d %s %s, want %d %s", tt.query, rec.Code, rec.Header().Get("Content-Type"), rec.Body, tt.status, tt.slug)
			}
		}
		for _, q := range []string{"from=30", fmt.Sprintf("limit=%d", reputation.MaxLeavesPage), "size=30&from=30"} {
			if rec := do(t, s.Handler(), http.MethodGet, "/v1/log/leaves?"+q, "", nil); rec.Code != http.StatusOK {
				t.Errorf("%s, within the bounds: %d %s", q, rec.Code, rec.Body)
			}
		}
	})
}

// TestLogScoresRoute: GET /v1/log/scores serves a scored head's figures as the store keeps
// them (bit for bit through JSON), by page and by DID, and GET /v1/reputation/{did}/history an
// agent's points; a head not scored is 404 not-scored, and bad parameters 400 bad-request.
func TestLogScoresRoute(t *testing.T) {
	ctx := context.Background()
	c, db, ids, store, _ := newLogFixture(t, "scores")
	s, err := api.New(api.Config{Chain: api.ChainInfo{ID: chain.EmbeddedChainID, Kind: "embedded"}, Blocks: c, DB: db, Identity: ids, ScoredHeads: store,
		LeafPageRate: 1e9, LeafPageBurst: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	if rec := do(t, h, http.MethodGet, "/v1/log/scores", "", nil); rec.Code != http.StatusNotFound || !strings.HasSuffix(problemOf(t, rec).Type, "/not-scored") {
		t.Fatalf("before any head is scored: %d %s", rec.Code, rec.Body)
	}
	sh := &reputation.ScoredHead{Size: 9, Epoch: 4, Root: merkle.Hash{9}, At: 300, Block: 17, AnchorTx: "0x01", Params: reputation.DefaultParams,
		Inputs: &reputation.ScoreInputs{Stake: map[string]float64{}, Audits: []reputation.ScoredAudit{}}}
	dids := []string{"did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK", "did:key:z6MkpTHR8VNsBxYAAWHut2Geadd9jSwuBV8xRoAnwWsdvktH"}
	for i, did := range dids {
		x := 0.1 + 0.2 + float64(i) // 0.30000000000000004: a double that a lossy encoding would round
		sh.Scores = append(sh.Scores, reputation.HeadScore{DID: did, Score: x, Confidence: x / 3, Weight: x * 3, Standing: x / 7, Relative: x * 1.1})
	}
	if err := store.SaveScoredHead(ctx, sh); err != nil {
		t.Fatal(err)
	}
	cl, err := client.New("http://node.test")
	if err != nil {
		t.Fatal(err)
	}
	cl = cl.WithHTTP(&http.Client{Transport: &handlerTransport{h: h}})
	got, err := cl.LogScores(ctx, 0, "", "", 1, true)
	if err != nil || got.Size != 9 || got.Block != 17 || len(got.Scores) != 1 || got.Next != dids[0] || got.Inputs == nil || got.Params.HalfLife != reputation.DefaultParams.HalfLife {
		t.Fatalf("the first page: %+v %v", got, err)
	}
	if r := got.Scores[0]; r.Score != sh.Scores[0].Score || r.Confidence != sh.Scores[0].Confidence || r.Relative != sh.Scores[0].Relative {
		t.Errorf("the figures changed on the way: %+v, saved %+v", r, sh.Scores[0])
	}
	next, err := cl.LogScores(ctx, 9, "", got.Next, 1, false)
	if err != nil || len(next.Scores) != 1 || next.Scores[0].DID != dids[1] || next.Next != "" {
		t.Fatalf("the second page: %+v %v", next, err)
	}
	hist, err := cl.ScoreHistory(ctx, dids[1])
	if err != nil || len(hist.Points) != 1 || hist.Points[0].Score != sh.Scores[1].Score || hist.Points[0].Size != 9 {
		t.Fatalf("history: %+v %v", hist, err)
	}
	for _, tt := range []struct{ path, slug string }{
		{"/v1/log/scores?size=8", "not-scored"},
		{"/v1/log/scores?limit=0", "bad-request"},
		{"/v1/log/scores?limit=1001", "bad-request"},
		{"/v1/log/scores?size=-1", "bad-request"},
		{"/v1/log/scores?did=nobody", "bad-request"},
		{"/v1/log/scores?after=nobody", "bad-request"},
		{"/v1/log/scores?inputs=yes", "bad-request"},
		{"/v1/reputation/nobody/history", "bad-request"},
	} {
		rec := do(t, h, http.MethodGet, tt.path, "", nil)
		if p := problemOf(t, rec); !strings.HasSuffix(p.Type, "/"+tt.slug) {
			t.Errorf("%s: %d %s, want %s", tt.path, rec.Code, rec.Body, tt.slug)
		}
	}
}
