package search

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// stakedCorpus is the corpus with some cards staked.
func stakedCorpus() *Index {
	x := New()
	for i, d := range corpus {
		d.DID = did(i)
		if i%2 == 1 || i == 4 {
			d.Staked, d.StakeWeight = true, float64(1+i%3)
		}
		x.Put(int64(i+1), d)
	}
	return x
}

func stakedHits(hits []Hit) []Hit {
	var out []Hit
	for _, h := range hits {
		if h.ID <= int64(len(corpus)) && (h.ID-1)%2 == 1 || h.ID == 5 {
			out = append(out, h)
		}
	}
	return out
}

func searchAll(t *testing.T, x *Index, text, capability string) []Hit {
	t.Helper()
	q, err := ParseQuery(text)
	if err != nil {
		t.Fatal(err)
	}
	return x.Search(q, Options{Capability: capability, Limit: 100_000})
}

var m4Queries = []string{"solidity audit", "translation", "solidity audit contracts", `"legal contracts"`, "transl*", "so*", "vat bookkeeping", "localization robots", "contract"}

// TestFreeCardsDoNotMoveStakedScores: 5,000 unstaked cards saying "audit" (and one scoring
// far above everyone) leave the staked cards' hits and scores the same bits: the collection
// statistics and the text normalization are the staked cards'.
func TestFreeCardsDoNotMoveStakedScores(t *testing.T) {
	x := stakedCorpus()
	before := map[string][]Hit{}
	for _, q := range m4Queries {
		before[q] = stakedHits(searchAll(t, x, q, ""))
	}
	for i := range 5000 {
		x.Put(int64(1000+i), Doc{DID: fmt.Sprintf("did:free:%04d", i), Name: "audit", Description: fmt.Sprintf("audit audit w%d solidity", i%7)})
	}
	x.Put(99999, Doc{DID: "did:free:big", Name: "solidity audit contracts translation", Description: "solidity solidity audit audit contracts vat", Capabilities: []string{"audit/solidity"}})
	for _, q := range m4Queries {
		if diff := cmp.Diff(before[q], stakedHits(searchAll(t, x, q, ""))); diff != "" {
			t.Errorf("%q: staked hits moved by free cards (-before +after):\n%s", q, diff)
		}
	}
}

// TestSameStakedSameBits: two indexes with the same staked cards and different unstaked
// ones give the staked cards the same hits and scores.
func TestSameStakedSameBits(t *testing.T) {
	x, y := stakedCorpus(), stakedCorpus()
	for i := range 300 {
		x.Put(int64(1000+i), Doc{DID: fmt.Sprintf("did:x:%03d", i), Name: "translator", Description: "legal contracts audit"})
		if i%3 == 0 {
			y.Put(int64(5000+i), Doc{DID: fmt.Sprintf("did:y:%03d", i), Name: "solidity", Description: fmt.Sprintf("vat robots %d", i)})
		}
	}
	x.Delete(1) // an unstaked corpus card
	for _, q := range m4Queries {
		if diff := cmp.Diff(stakedHits(searchAll(t, x, q, "")), stakedHits(searchAll(t, y, q, ""))); diff != "" {
			t.Errorf("%q (-x +y):\n%s", q, diff)
		}
	}
}
