package reputation_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/reputation/merkle"
)

// leavesFixture is a log of three closed epochs of four audits each, about three subjects in
// turn: epoch 0 anchored by its own head, epochs 1 and 2 by epoch 2's.
type leavesFixture struct {
	*logFixture
	heads     []reputation.Head
	bySubject map[string][]merkle.Hash // the logged leaves of each subject
}

var leafSubjects = []string{"did:key:z6MkSubjectA", "did:key:z6MkSubjectB", "did:key:z6MkSubjectC"}

func newLeavesFixture(t *testing.T) *leavesFixture {
	t.Helper()
	ctx := context.Background()
	node, _ := identity.GenerateKey(identity.Ed25519)
	f := &leavesFixture{logFixture: newLogFixture(t, keySigner{node}), bySubject: map[string][]merkle.Hash{}}
	audits := epochAudits()
	for i, x := range audits {
		x.a.Subject = leafSubjects[i%len(leafSubjects)]
		if _, err := f.store.Add(ctx, x.a, x.raw, reputation.Verdict{}); err != nil {
			t.Fatal(err)
		}
		f.bySubject[x.a.Subject] = append(f.bySubject[x.a.Subject], merkle.LeafHash(x.raw))
	}
	// An audit of an epoch still open: in the store, not in the log.
	open, raw := auditAt("did:key:z6MkLate", audits[0].a.Time+5*3600, 0.5)
	open.Subject = leafSubjects[0]
	if _, err := f.store.Add(ctx, open, raw, reputation.Verdict{}); err != nil {
		t.Fatal(err)
	}
	day := time.Unix(audits[0].a.Time, 0)
	anchor := &fakeAnchorer{}
	for _, at := range []time.Duration{80 * time.Minute, 200 * time.Minute} {
		heads, err := f.log.CloseEpochs(ctx, day.Add(at))
		if err != nil {
			t.Fatal(err)
		}
		f.heads = append(f.heads, heads...)
		if _, err := reputation.AnchorLatest(ctx, f.log, anchor); err != nil {
			t.Fatal(err)
		}
	}
	if len(f.heads) != 3 || f.log.Head().Size != 12 {
		t.Fatalf("heads %+v", f.heads)
	}
	// The heads as the log keeps them now (with their anchors).
	var err error
	if f.heads, err = f.log.HeadsFrom(ctx, 0, 10); err != nil {
		t.Fatal(err)
	}
	return f
}

// readAll pages through q with limit, checking that the pages join up, and returns every
// leaf read with the heads the pages named, by epoch.
func readAll(t *testing.T, l *reputation.Log, q reputation.LeafQuery) ([]reputation.LoggedLeaf, map[int64]reputation.Head, int) {
	t.Helper()
	var out []reputation.LoggedLeaf
	heads := map[int64]reputation.Head{}
	pages := 0
	for {
		page, err := l.Leaves(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(page.Leaves) > q.Limit {
			t.Fatalf("a page of %d leaves past the limit %d", len(page.Leaves), q.Limit)
		}
		for _, h := range page.Heads {
			heads[h.Epoch] = h
		}
		for _, x := range page.Leaves {
			if x.Index < q.From {
				t.Fatalf("leaf %d before from %d", x.Index, q.From)
			}
			if _, ok := heads[x.Epoch]; !ok {
				t.Errorf("leaf %d names epoch %d, whose head the page lacks", x.Index, x.Epoch)
			}
			if x.AnchorEpoch != nil {
				if _, ok := heads[*x.AnchorEpoch]; !ok {
					t.Errorf("leaf %d names anchor epoch %d, whose head the page lacks", x.Index, *x.AnchorEpoch)
				}
			}
		}
		out = append(out, page.Leaves...)
		if page.Next == nil {
			return out, heads, pages
		}
		if len(page.Leaves) == 0 || *page.Next != page.Leaves[len(page.Leaves)-1].Index+1 {
			t.Fatalf("next %d after a page ending %v", *page.Next, page.Leaves)
		}
		q.From = *page.Next
		if pages > 100 {
			t.Fatal("paging does not end")
		}
	}
}

// TestLogLeaves: paged by index, the leaves cover the log once, each the hash of its
// envelope, and the tree they build has each head's root; by subject, a page holds exactly
// that subject's logged audits; every leaf names its head and the first anchored one.
func TestLogLeaves(t *testing.T) {
	f := newLeavesFixture(t)
	ctx := context.Background()
	for _, limit := range []int{1, 5, 12, reputation.MaxLeavesPage} {
		t.Run(fmt.Sprintf("range, %d a page", limit), func(t *testing.T) {
			leaves, heads, pages := readAll(t, f.log, reputation.LeafQuery{Limit: limit})
			if want := (12 + limit - 1) / limit; pages != want {
				t.Errorf("%d pages, want %d", pages, want)
			}
			var tree merkle.Tree
			for i, x := range leaves {
				if x.Index != uint64(i) {
					t.Fatalf("leaf %d at position %d: paging skipped or repeated", x.Index, i)
				}
				if merkle.LeafHash(x.Envelope) != x.Leaf {
					t.Errorf("leaf %d is not the hash of its envelope", i)
				}
				tree.Append(x.Leaf)
			}
			if len(leaves) != 12 {
				t.Fatalf("%d leaves, want 12", len(leaves))
			}
			for _, h := range f.heads {
				root, err := tree.Root(h.Size)
				if err != nil || root != h.Root {
					t.Errorf("the leaves give root %s at size %d, the head says %s (%v)", root, h.Size, h.Root, err)
				}
				if got := heads[h.Epoch]; got != h {
					t.Errorf("the pages' head of epoch %d: %s", h.Epoch, cmp.Diff(h, got))
				}
			}
			// Epoch 0's leaves were anchored by its own head, epoch 1's and 2's by epoch 2's.
			for _, x := range leaves {
				want := f.heads[0].Epoch
				if x.Index >= 4 {
					want = f.heads[2].Epoch
				}
				if x.AnchorEpoch == nil || *x.AnchorEpoch != want || x.Epoch != f.heads[x.Index/4].Epoch {
					t.Errorf("leaf %d: epoch %d, anchor epoch %v; want %d, %d", x.Index, x.Epoch, x.AnchorEpoch, f.heads[x.Index/4].Epoch, want)
				}
			}
		})
	}
	for _, subject := range append(slices.Clone(leafSubjects), "did:key:z6MkNobody") {
		t.Run("subject "+subject, func(t *testing.T) {
			leaves, _, _ := readAll(t, f.log, reputation.LeafQuery{Subject: subject, Limit: 2})
			var got []merkle.Hash
			for _, x := range leaves {
				if !bytes.Contains(x.Envelope, []byte("envelope ")) {
					t.Errorf("leaf %d has no envelope", x.Index)
				}
				got = append(got, x.Leaf)
			}
			want := f.bySubject[subject]
			slices.SortFunc(got, func(a, b merkle.Hash) int { return strings.Compare(a.String(), b.String()) })
			slices.SortFunc(want, func(a, b merkle.Hash) int { return strings.Compare(a.String(), b.String()) })
			if !slices.Equal(got, want) {
				t.Errorf("the subject's leaves: got %v, want %v", got, want)
			}
		})
	}
	t.Run("subjects named by the migration", func(t *testing.T) {
		// A log from before migration 11 names no subjects; the migration names them from
		// the audits, and by subject reads find them again.
		if _, err := f.db.Exec(`UPDATE reputation_log SET subject = ''`); err != nil {
			t.Fatal(err)
		}
		if leaves, _, _ := readAll(t, f.log, reputation.LeafQuery{Subject: leafSubjects[0], Limit: 10}); len(leaves) != 0 {
			t.Fatalf("%d leaves of a subject the log does not name", len(leaves))
		}
		if _, err := f.db.Exec(reputation.BackfillSubjects); err != nil {
			t.Fatal(err)
		}
		if leaves, _, _ := readAll(t, f.log, reputation.LeafQuery{Subject: leafSubjects[0], Limit: 10}); len(leaves) != len(f.bySubject[leafSubjects[0]]) {
			t.Errorf("after the migration's backfill: %d leaves of %s, want %d", len(leaves), leafSubjects[0], len(f.bySubject[leafSubjects[0]]))
		}
	})
	t.Run("within a head's size", func(t *testing.T) {
		leaves, _, _ := readAll(t, f.log, reputation.LeafQuery{Size: 8, Limit: 3})
		if len(leaves) != 8 {
			t.Errorf("%d leaves within size 8", len(leaves))
		}
		page, err := f.log.Leaves(ctx, reputation.LeafQuery{From: 8, Size: 8})
		if err != nil || len(page.Leaves) != 0 || page.Next != nil {
			t.Errorf("from the size: %+v, %v", page, err)
		}
		if _, err := f.log.Leaves(ctx, reputation.LeafQuery{Size: 13}); !errors.Is(err, reputation.ErrNotLogged) {
			t.Errorf("past the latest head: %v, want ErrNotLogged", err)
		}
	})
}

// TestLeavesPageBytes: a page stops before its envelopes pass MaxLeavesPageBytes, and the
// next page goes on from there.
func TestLeavesPageBytes(t *testing.T) {
	ctx := context.Background()
	node, _ := identity.GenerateKey(identity.Ed25519)
	f := newLogFixture(t, keySigner{node})
	day := int64(1_800_000_000 / 86400 * 86400)
	const big = 300 << 10 // three fit in a page's bytes, not four
	n := 7
	for i := range n {
		a, raw := auditAt(fmt.Sprintf("did:key:z6MkBig%02d", i), day+int64(i), 0.5)
		raw = append(raw, bytes.Repeat([]byte{' '}, big)...)
		if _, err := f.store.Add(ctx, a, raw, reputation.Verdict{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.log.CloseEpochs(ctx, time.Unix(day, 0).Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	leaves, _, _ := readAll(t, f.log, reputation.LeafQuery{Limit: reputation.MaxLeavesPage})
	for from := uint64(0); ; {
		page, err := f.log.Leaves(ctx, reputation.LeafQuery{From: from})
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, x := range page.Leaves {
			total += len(x.Envelope)
		}
		if total > reputation.MaxLeavesPageBytes {
			t.Errorf("a page of %d bytes of envelopes", total)
		}
		sizes = append(sizes, len(page.Leaves))
		if page.Next == nil {
			break
		}
		from = *page.Next
	}
	if want := []int{3, 3, 1}; !slices.Equal(sizes, want) || len(leaves) != n {
		t.Errorf("pages of %v leaves (%d in all), want %v", sizes, len(leaves), want)
	}
}

// TestLeavesReadIndexes: every query of a page reads an index in log order, never the whole
// log or all of a subject's audits, and sorts nothing.
func TestLeavesReadIndexes(t *testing.T) {
	f := newLeavesFixture(t)
	for name, q := range reputation.LeafQueries {
		t.Run(name, func(t *testing.T) {
			args := map[string][]any{
				"leavesInRange":   {f.chain, 0, 12, 5},
				"leavesOfSubject": {f.chain, leafSubjects[0], 0, 12, 5},
				"subjectHasMore":  {f.chain, leafSubjects[0], 0, 12},
				"firstAnchored":   {f.chain, 0},
				"headsBefore":     {f.chain, 1 << 40, 5},
			}[name]
			rows, err := f.db.Query("EXPLAIN QUERY PLAN "+q, args...)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			text := strings.Join(plan, "; ")
			if strings.Contains(text, "SCAN") || strings.Contains(text, "TEMP B-TREE") || !strings.Contains(text, "SEARCH") {
				t.Errorf("the plan reads more than the page: %s", text)
			}
			for _, want := range map[string][]string{
				"leavesOfSubject": {"reputation_log_subject"}, "subjectHasMore": {"reputation_log_subject"},
				"firstAnchored": {"reputation_heads_anchored"},
			}[name] {
				if !strings.Contains(text, want) {
					t.Errorf("the plan does not use %s: %s", want, text)
				}
			}
		})
	}
}
