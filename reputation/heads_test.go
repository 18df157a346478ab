package reputation_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/surety-ioa/surety/reputation"
)

// TestLogHeads: paged newest first, the heads cover the log's heads once each, as the log
// keeps them (signed, with their anchor transactions), pages join up by next, and before
// and limit bound a page.
func TestLogHeads(t *testing.T) {
	f := newLeavesFixture(t)
	ctx := context.Background()
	want := slices.Clone(f.heads)
	slices.Reverse(want)
	if want[0].AnchorTx == "" || want[2].AnchorTx == "" || want[1].AnchorTx != "" {
		t.Fatalf("the fixture's anchors changed: %+v", want)
	}
	for _, limit := range []int{1, 2, 3, 0, reputation.MaxHeadsPage + 1} {
		t.Run(fmt.Sprintf("%d a page", limit), func(t *testing.T) {
			var got []reputation.Head
			before, pages := int64(0), 0
			for {
				page, err := f.log.Heads(ctx, before, limit)
				if err != nil {
					t.Fatal(err)
				}
				pages++
				if limit > 0 && len(page.Heads) > limit {
					t.Fatalf("%d heads past the limit %d", len(page.Heads), limit)
				}
				got = append(got, page.Heads...)
				if page.Next == nil {
					break
				}
				if *page.Next != page.Heads[len(page.Heads)-1].Epoch {
					t.Fatalf("next %d after a page ending at epoch %d", *page.Next, page.Heads[len(page.Heads)-1].Epoch)
				}
				before = *page.Next
				if pages > 10 {
					t.Fatal("paging does not end")
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("heads (-want +got):\n%s", diff)
			}
			if wantPages := map[int]int{1: 3, 2: 2, 3: 1}[limit]; wantPages != 0 && pages != wantPages {
				t.Errorf("%d pages, want %d", pages, wantPages)
			}
		})
	}
	page, err := f.log.Heads(ctx, want[1].Epoch, 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want[2:], page.Heads); diff != "" || page.Next != nil {
		t.Errorf("before epoch %d (-want +got):\n%s next %v", want[1].Epoch, diff, page.Next)
	}
	if page, err = f.log.Heads(ctx, want[2].Epoch, 0); err != nil || len(page.Heads) != 0 || page.Next != nil {
		t.Errorf("before the first epoch: %+v, %v", page, err)
	}
}
