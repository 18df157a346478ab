package search

import (
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParseQuery(t *testing.T) {
	tests := []struct {
		in   string
		want Query
	}{
		{"translation", Query{Terms: []string{"translat"}}},
		{"Translator TRANSLATING translation", Query{Terms: []string{"translat", "translat"}[:1]}},
		{"who can audit my vault", Query{Terms: []string{"audit", "vault"}}},
		{`"code review" rust`, Query{Terms: []string{"code", "review", "rust"}, Phrases: [][]string{{"code", "review"}}}},
		{`"state of the art" models`, Query{Terms: []string{"art", "model", "state"}, Phrases: [][]string{{"state", "art"}}}},
		{`"solidity audit`, Query{Terms: []string{"audit", "solid"}}},
		{`a "b" c"`, Query{Terms: []string{"b", "c"}}},
		{`"audit"`, Query{Terms: []string{"audit"}}},
		{"transl* fr", Query{Terms: []string{"fr"}, Prefixes: []string{"transl"}}},
		{"t* x-y*", Query{Terms: []string{"t", "x", "y"}}},
		{"code-rev*", Query{Terms: []string{"code"}, Prefixes: []string{"rev"}}},
		{"“smart contract” audit", Query{Terms: []string{"audit", "contract", "smart"}, Phrases: [][]string{{"smart", "contract"}}}},
		{"", Query{}},
		{"the of and", Query{}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseQuery(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ParseQuery(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseQueryBounds(t *testing.T) {
	var words []string
	for i := range 50 {
		words = append(words, fmt.Sprintf("w%d", i))
	}
	q, err := ParseQuery(strings.Join(words, " ") + ` "alpha beta"`)
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Terms) != MaxQueryTerms || len(q.Phrases) != 0 {
		t.Errorf("%d terms, %d phrases; want %d and none (the phrase does not fit)", len(q.Terms), len(q.Phrases), MaxQueryTerms)
	}
	for _, bad := range []string{"a\x00b", "\xff", "x\x1by"} {
		if _, err := ParseQuery(bad); err != ErrQuery {
			t.Errorf("ParseQuery(%q) = %v, want ErrQuery", bad, err)
		}
	}
	if _, err := ParseQuery("tab\tand\nnewline"); err != nil {
		t.Errorf("spaces refused: %v", err)
	}
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{`"code review" rust`, `"open`, "transl*", "***", `""`, "a\x00b", "日本語*", `"x*" y`, "“a b”", `"⑴⑴⑴⑴⑴⑴⑴⑴⑴⑴⑴"`, `"a1 a1 a1 a1" "b2 b2 b2 b2" "c3 c3 c3 c3" "d4 d4 d4 d4" "e5 e5 e5 e5"`} {
		f.Add(s)
	}
	x := build(inOrder())
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ParseQuery(s)
		if err != nil {
			if utf8.ValidString(s) && !strings.ContainsFunc(s, isBadControl) {
				t.Fatalf("ParseQuery(%q) refused valid text: %v", s, err)
			}
			return
		}
		if n := len(q.Terms) + len(q.Prefixes); n > MaxQueryTerms {
			t.Fatalf("ParseQuery(%q): %d terms and prefixes", s, n)
		}
		positions := 0
		for _, p := range q.Phrases {
			positions += len(p)
			if len(p) > MaxPhraseTerms {
				t.Fatalf("ParseQuery(%q): a phrase of %d terms", s, len(p))
			}
		}
		if positions > MaxQueryTerms || len(q.Phrases) > MaxPhrases {
			t.Fatalf("ParseQuery(%q): %d phrases of %d positions", s, len(q.Phrases), positions)
		}
		for _, p := range q.Phrases {
			if len(p) < 2 {
				t.Fatalf("ParseQuery(%q): phrase %q", s, p)
			}
			for _, w := range p {
				if !contains(q.Terms, w) {
					t.Fatalf("ParseQuery(%q): phrase term %q not among the terms", s, w)
				}
			}
		}
		for _, term := range append(q.Terms, q.Prefixes...) {
			if term == "" {
				t.Fatalf("ParseQuery(%q): empty term", s)
			}
		}
		again, _ := ParseQuery(s)
		if !cmp.Equal(q, again) {
			t.Fatalf("ParseQuery(%q) not deterministic", s)
		}
		x.Search(q, Options{Limit: 10, Capability: "translation"})
		x.Search(q, Options{Limit: 10})
	})
}

func isBadControl(r rune) bool { return unicode.IsControl(r) && !unicode.IsSpace(r) }

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
