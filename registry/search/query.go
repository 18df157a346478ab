package search

import (
	"errors"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrQuery refuses query text that is not UTF-8 or holds control characters (other than
// spaces). Nothing else in the text is an error: unknown syntax is read as words.
var ErrQuery = errors.New("search: query text must be UTF-8 without control characters")

// Query is parsed query text (see ParseQuery).
type Query struct {
	// Terms are the stems of the query's words and of its phrases' words, sorted, each once.
	// A card matching any of them is a match (OR); bm25 ranks one matching more above.
	Terms []string
	// Prefixes are the folded (not stemmed) prefixes written as word*, sorted, each once.
	// Each matches the indexed terms that start with it (see MaxPrefixExpansions).
	Prefixes []string
	// Phrases are the stems of each quoted phrase of two or more terms, in order. A card
	// must hold every phrase as consecutive terms of one field (stop words skipped). An
	// empty phrase (ParseQuery makes none) asks nothing.
	Phrases [][]string
}

// Empty says whether the query has nothing to match: no text, or only stop words and
// punctuation.
func (q Query) Empty() bool { return len(q.Terms) == 0 && len(q.Prefixes) == 0 }

// ParseQuery reads query text:
//
//   - words are analyzed like cards (Terms: folded, stop words dropped, stemmed) and OR-ed;
//     a word written twice counts once;
//   - "a quoted phrase" must appear as consecutive terms (stop words skipped, so
//     "state of the art" is "state art"); a phrase of one term is that term; a quote left
//     open is read as a plain quote character, its words as plain words;
//   - word* is a prefix (at least MinPrefix letters; a shorter one is a plain word);
//   - at most MaxQueryTerms terms and prefixes are kept, the first ones written; a phrase
//     that does not fit whole is dropped;
//   - a phrase is checked on its first MaxPhraseTerms terms (the rest are plain words), at
//     most MaxPhrases phrases are kept, and their positions together are at most
//     MaxQueryTerms (a phrase over the bound is read as plain words): the phrase check's
//     work grows with them.
//
// It returns ErrQuery only for text that is not UTF-8 or holds control characters.
func ParseQuery(text string) (Query, error) {
	if !utf8.ValidString(text) || strings.ContainsFunc(text, func(r rune) bool { return unicode.IsControl(r) && !unicode.IsSpace(r) }) {
		return Query{}, ErrQuery
	}
	text = strings.NewReplacer("“", `"`, "”", `"`, "„", `"`).Replace(text)
	p := parser{seen: map[string]bool{}}
	segments := strings.Split(text, `"`)
	for i, seg := range segments {
		// Odd segments are quoted, unless the last quote has no partner (an even count of
		// segments): then the last segment is plain text.
		quoted := i%2 == 1 && !(len(segments)%2 == 0 && i == len(segments)-1)
		if quoted {
			p.phrase(seg)
		} else {
			p.plain(seg)
		}
	}
	q := p.q
	slices.Sort(q.Terms)
	slices.Sort(q.Prefixes)
	return q, nil
}

// MinPrefix is the shortest prefix, in letters, that word* expands: shorter ones would
// match most of the vocabulary.
const MinPrefix = 2

type parser struct {
	q         Query
	seen      map[string]bool // "t:" + term, "p:" + prefix
	n         int
	positions int // the terms of the phrases kept, repeats included
}

func (p *parser) add(key string) bool {
	if p.seen[key] {
		return true
	}
	if p.n >= MaxQueryTerms {
		return false
	}
	p.seen[key] = true
	p.n++
	return true
}

func (p *parser) term(t string) {
	if t != "" && p.add("t:"+t) && !slices.Contains(p.q.Terms, t) {
		p.q.Terms = append(p.q.Terms, t)
	}
}

func (p *parser) plain(seg string) {
	for _, field := range strings.Fields(seg) {
		words := Words(field)
		if len(words) == 0 {
			continue
		}
		last := len(words) - 1
		if strings.HasSuffix(field, "*") && utf8.RuneCountInString(words[last]) >= MinPrefix && len(words[last]) <= maxWord {
			for _, w := range words[:last] {
				p.term(Stem(w))
			}
			if pre := words[last]; p.add("p:" + pre) {
				if !slices.Contains(p.q.Prefixes, pre) {
					p.q.Prefixes = append(p.q.Prefixes, pre)
				}
			}
			continue
		}
		for _, w := range words {
			p.term(Stem(w))
		}
	}
}

func (p *parser) phrase(seg string) {
	var stems []string
	for _, w := range Words(seg) {
		if t := Stem(w); t != "" {
			stems = append(stems, t)
		}
	}
	switch {
	case len(stems) == 0:
		return
	case len(stems) == 1:
		p.term(stems[0])
		return
	}
	rest := stems[min(len(stems), MaxPhraseTerms):]
	stems = stems[:min(len(stems), MaxPhraseTerms)]
	if len(p.q.Phrases) >= MaxPhrases || p.positions+len(stems) > MaxQueryTerms {
		for _, t := range stems {
			p.term(t)
		}
	} else {
		if !p.fits(stems) {
			return
		}
		for _, t := range stems {
			p.term(t)
		}
		p.q.Phrases = append(p.q.Phrases, stems)
		p.positions += len(stems)
	}
	for _, t := range rest {
		p.term(t)
	}
}

// fits says whether the phrase's new terms fit in MaxQueryTerms.
func (p *parser) fits(stems []string) bool {
	fresh := 0
	for i, t := range stems {
		if !p.seen["t:"+t] && !slices.Contains(stems[:i], t) {
			fresh++
		}
	}
	return p.n+fresh <= MaxQueryTerms
}
