package search

import (
	"slices"
	"strings"
)

// AliasWeight is what a term found through an alias weighs against the query's own terms: a
// card saying "localization" answers "translation", but one saying "translation" answers it
// better.
const AliasWeight = 0.5

// aliasGroups are words that name the same service on an agent marketplace: a query term in
// a group also matches the group's other terms, at AliasWeight. The table is general domain
// knowledge (spelling variants, the role and the activity, common abbreviations), not tuned
// to any test set, with one exception: "check" joined the audit group when the issue's own
// sentence "I need my Solidity vault checked for reentrancy before launch" (in the judged
// set's dev split) put a Solidity development shop above the auditors. Entries are words; they go through Stem, so the table meets the index on
// its own terms whatever the stemmer does. One word per entry: a phrase cannot be an alias.
// A word whose stem is also an everyday word of another sense stays out ("booking" is
// "book", "marketing" is "market", "editing" is also video editing, "hiring" is how a
// request starts); stems shared by two senses cannot be told apart
// ("localization" is "local", so "local" finds translators at half weight). Changing the
// table changes the ranking of every node: it is part of the protocol of ranking
// (docs/SEARCH.md).
var aliasGroups = []string{
	"translation translator translate localization localisation localize localise l10n interpreter interpreting",
	"audit auditor auditing review reviewer inspection assessment check",
	"pentest pentester pentesting penetration",
	"tax taxes taxation vat gst",
	"accounting accountant bookkeeping bookkeeper",
	"lawyer attorney solicitor barrister counsel legal paralegal",
	"programmer programming coder coding developer",
	"test tester testing qa",
	"summary summarize summarise summarization summarisation tldr",
	"transcription transcribe transcript dictation stt asr",
	"voiceover narration narrator tts",
	"image picture photo photograph",
	"scraping scrape scraper crawler crawling",
	"analytics analysis analyst analyze analyse",
	"visualization visualisation chart dashboard",
	"medical medicine clinical clinician physician doctor healthcare",
	"proofreading proofread proofreader copyediting",
	"copywriting copywriter writer ghostwriter",
	"advertising advertisement ads",
	"scheduling schedule calendar appointment",
	"monitoring monitor observability alerting",
	"deployment deploy devops",
	"recruiting recruiter recruitment",
	"optimization optimisation optimize optimise",
	"video footage",
}

// aliases maps a stem to the other stems of its groups, sorted.
var aliases = func() map[string][]string {
	m := map[string][]string{}
	for _, g := range aliasGroups {
		var stems []string
		for _, w := range strings.Fields(g) {
			if s := Stem(Fold(w)); s != "" && !slices.Contains(stems, s) {
				stems = append(stems, s)
			}
		}
		for _, s := range stems {
			for _, o := range stems {
				if o != s && !slices.Contains(m[s], o) {
					m[s] = append(m[s], o)
				}
			}
		}
	}
	for _, v := range m {
		slices.Sort(v)
	}
	return m
}()

// Aliases returns the stems a query term also matches at AliasWeight (nil for none).
func Aliases(stem string) []string { return aliases[stem] }
