package search

import (
	"strings"
	"unicode"

	"github.com/kljensen/snowball/english"
	"golang.org/x/text/unicode/norm"
)

// Terms is the analysis every card and every query goes through, so that both meet on the
// same terms: accents and case folded (NFKD, combining marks dropped, lower case), split at
// every rune that is not a letter or a digit, stop words dropped, each word reduced to its
// English stem (Snowball's Porter2, github.com/kljensen/snowball). "Traductrice", "translating"
// and "Translations" give "traductric", "translat" and "translat". It is deterministic and
// depends on nothing but the text, so every node indexes the same card the same way.
func Terms(text string) []string {
	var out []string
	for _, w := range Words(text) {
		if t := Stem(w); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// Words is the first half of Terms: the folded words of text, stop words included, in order
// (a phrase query compares positions over them).
func Words(text string) []string {
	return strings.FieldsFunc(Fold(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// Stem is the second half of Terms for one folded word: "" for a stop word, else its stem.
func Stem(word string) string {
	if len(word) > maxWord || stopWords[word] {
		return ""
	}
	if !isASCIILetters(word) {
		return word // the stemmer is English's: other scripts and words with digits stay whole
	}
	return english.Stem(word, false)
}

// maxWord bounds the bytes of a word that is indexed: longer ones are not words anyone
// searches for (hashes, base64), and the stemmer's work grows with length.
const maxWord = 64

// Fold lower-cases text and takes the accents off its letters: "Übersetzerin" is
// "ubersetzerin", "ÉTÉ" is "ete".
func Fold(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	for _, r := range norm.NFKD.String(text) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

func isASCIILetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// stopWords are dropped from cards and queries alike: English function words, and the words
// a person asking for help puts around what they need ("I need someone who can ..."), which
// say nothing of the work. The list is part of the protocol of ranking: every node uses this
// one.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its itself
just me more most my myself no nor not now of off on once only or other our ours ourselves out
over own same she should so some such than that the their theirs them themselves then there
these they this those through to too under until up very was we were what when where which
while who whom why will with would you your yours yourself yourselves
im ive id youre dont cant wont isnt its lets
anyone anybody someone somebody something anything everyone
need needs needed want wants wanted looking look find get got please help helps thanks
would like could should might must shall may also via etc e g eg ie`) {
		m[w] = true
	}
	return m
}()
