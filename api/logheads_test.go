package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/reputation/verify"
)

// TestLogHeadsRoute: GET /v1/log/heads, through the typed client, pages through the log's
// heads newest first, each signed by the node over the size and root it serves beside the
// JWS; out-of-bounds requests are refused as problems.
func TestLogHeadsRoute(t *testing.T) {
	ctx := context.Background()
	c, db, ids, store, log := newLogFixture(t, "heads")
	day := int64(1_800_000_000 / 86400 * 86400)
	for i := range 5 {
		a := &reputation.Audit{Auditor: fmt.Sprintf("did:key:z6MkAuditor%02d", i), Subject: "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK",
			Envelope: "m1", Score: 0.5, Evidence: reputation.Evidence{Hash: common.Hash{1}}, Time: day + int64(i)*3600}
		if _, err := store.Add(ctx, a, fmt.Appendf(nil, "audit envelope %d", i), reputation.Verdict{}); err != nil {
			t.Fatal(err)
		}
	}
	heads, err := log.CloseEpochs(ctx, time.Unix(day, 0).Add(6*time.Hour))
	if err != nil || len(heads) != 5 {
		t.Fatalf("closing the epochs: %v, %v", heads, err)
	}
	s, err := api.New(api.Config{Chain: api.ChainInfo{ID: chain.EmbeddedChainID, Kind: "embedded"}, Blocks: c, DB: db, Identity: ids, AuditLog: log,
		LeafPageRate: 1e9, LeafPageBurst: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := client.New("http://node.test")
	if err != nil {
		t.Fatal(err)
	}
	cl = cl.WithHTTP(&http.Client{Transport: &handlerTransport{h: s.Handler()}})

	for _, limit := range []int{0, 1, 2, 5} {
		var got []int64
		before := int64(0)
		for pages := 0; ; pages++ {
			page, err := cl.LogHeads(ctx, before, limit)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range page.Heads {
				v, err := verify.OpenHead(h.Signed, ids.NodeDID())
				if err != nil || v.Size != h.Size || v.Root != h.Root || v.Epoch != h.Epoch {
					t.Fatalf("head of epoch %d does not verify as served: %v", h.Epoch, err)
				}
				got = append(got, h.Epoch)
			}
			if page.Next == nil {
				break
			}
			if pages > 10 {
				t.Fatal("paging does not end")
			}
			before = *page.Next
		}
		if want := fmt.Sprint([]int64{heads[4].Epoch, heads[3].Epoch, heads[2].Epoch, heads[1].Epoch, heads[0].Epoch}); fmt.Sprint(got) != want {
			t.Errorf("limit %d: epochs %v, want %s", limit, got, want)
		}
	}
	for _, tt := range []struct {
		query  string
		status int
	}{
		{"limit=0", http.StatusBadRequest},
		{fmt.Sprintf("limit=%d", reputation.MaxHeadsPage+1), http.StatusBadRequest},
		{"before=-1", http.StatusBadRequest},
		{"before=9223372036854775808", http.StatusBadRequest},
		{"limit=x", http.StatusBadRequest},
	} {
		rec := do(t, s.Handler(), http.MethodGet, "/v1/log/heads?"+tt.query, "", nil)
		if rec.Code != tt.status || rec.Header().Get("Content-Type") != "application/problem+json" ||
			!strings.Contains(rec.Body.String(), `"type":"https://surety.dev/problems/bad-request"`) {
			t.Errorf("%s: %d %s, want %d bad-request", tt.query, rec.Code, rec.Body, tt.status)
		}
	}
	if rec := do(t, s.Handler(), http.MethodGet, fmt.Sprintf("/v1/log/heads?limit=%d&before=9223372036854775807", reputation.MaxHeadsPage), "", nil); rec.Code != http.StatusOK {
		t.Errorf("within the bounds: %d %s", rec.Code, rec.Body)
	}
}
