package escrow_test

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/internal/testutil"
)

// postWithSpec posts a bounty whose specHash is that of text, and returns its id.
func (f *fixture) postWithSpec(text string) uint64 {
	f.t.Helper()
	head, _ := f.c.HeaderByNumber(context.Background(), nil)
	r := f.send(f.poster, f.abi.PackPost(common.Address{}, big.NewInt(1), f.arbiter.Address(), head.Time+3600, 600, new(big.Int),
		escrow.SpecHash(text), escrow.SpecHash("salt "+text)), big.NewInt(1))
	p, err := f.abi.UnpackPostedEvent(r.Logs[len(r.Logs)-1])
	if err != nil {
		f.t.Fatal(err)
	}
	return p.Id.Uint64()
}

func TestSpecsAreServedOnlyWhenTheyMatchTheChain(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ix := f.indexer(testutil.OpenSQL(t), 0)
	task := "Summarize arXiv:2401.00001 in 200 words.\nCite every claim."
	id := f.postWithSpec(task)
	other := f.postWithSpec("Translate the README into French.")
	if _, err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := ix.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if b.Spec != "" {
		t.Fatalf("spec %q before anyone gave it", b.Spec)
	}
	tests := []struct {
		name string
		id   uint64
		text string
		want error
	}{
		{"another task's text", id, "Translate the README into French.", escrow.ErrSpecMismatch},
		{"a bounty the index does not have", 999, task, escrow.ErrUnknownBounty},
		{"too long", id, strings.Repeat("x", escrow.MaxSpecBytes+1), escrow.ErrInvalid},
		{"not UTF-8", id, "\xff\xfe", escrow.ErrInvalid},
		{"the posted text", id, task, nil},
		{"the same text again", id, task, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := ix.PutBountySpec(ctx, tt.id, tt.text); !errors.Is(err, tt.want) {
				t.Errorf("PutBountySpec = %v, want %v", err, tt.want)
			}
		})
	}
	if b, err = ix.Get(ctx, id); err != nil || b.Spec != task {
		t.Errorf("Get: spec %q, %v; want the posted text", b.Spec, err)
	}
	if b, err = ix.Get(ctx, other); err != nil || b.Spec != "" {
		t.Errorf("Get other: spec %q, %v; want none (nobody gave it)", b.Spec, err)
	}
	found, err := ix.List(ctx, escrow.Filter{Text: "ARXIV"})
	if err != nil || len(found) != 1 || found[0].ID != id || found[0].Spec != task {
		t.Errorf("List(q=ARXIV) = %v, %v; want bounty %d with its spec", found, err, id)
	}
	if all, err := ix.List(ctx, escrow.Filter{}); err != nil || len(all) != 2 {
		t.Errorf("List() = %d bounties, %v; want both, with or without a spec", len(all), err)
	}
}

// FuzzCheckSpec: any text and hash are judged without a panic, and a text that passes hashes
// to the hash it was given.
func FuzzCheckSpec(f *testing.F) {
	f.Add("task", escrow.SpecHash("task").Bytes())
	f.Add("\xff", make([]byte, 32))
	f.Add("", escrow.SpecHash("").Bytes())
	f.Fuzz(func(t *testing.T, text string, hash []byte) {
		h := common.BytesToHash(hash)
		if err := escrow.CheckSpec(text, h); err == nil && escrow.SpecHash(text) != h {
			t.Fatalf("accepted %q for a hash it does not have", text)
		}
	})
}
