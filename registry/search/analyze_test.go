package search

import (
	"slices"
	"testing"
	"unicode/utf8"
)

func TestTerms(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"Translations", []string{"translat"}},
		{"translating translator", []string{"translat", "translat"}},
		{"Übersetzerin ÉTÉ", []string{"ubersetzerin", "ete"}},
		{"someone who can turn French contracts into English", []string{"turn", "french", "contract", "english"}},
		{"I need my Solidity vault checked for reentrancy before launch", []string{"solid", "vault", "check", "reentranc", "launch"}},
		{"code-review, l10n/fr-en", []string{"code", "review", "l10n", "fr", "en"}},
		{"ERC-8004", []string{"erc", "8004"}},
		{"日本語の翻訳", []string{"日本語の翻訳"}},
		{"", nil},
		{"the and of", nil},
	} {
		if got := Terms(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("Terms(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzTerms(f *testing.F) {
	for _, s := range []string{"Translations", "Übersetzerin", "a\x00b", "\xff\xfe", "日本語", "x-y/z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		terms := Terms(s)
		for _, term := range terms {
			if term == "" || !utf8.ValidString(term) && utf8.ValidString(s) {
				t.Fatalf("Terms(%q) has term %q", s, term)
			}
		}
		if again := Terms(s); !slices.Equal(terms, again) {
			t.Fatalf("Terms(%q) not deterministic", s)
		}
	})
}
