package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"
)

// suggest is the candidate closest to typed, when one is close enough to be what was meant
// (an edit distance of at most a third of its length, and at most 3), else "".
func suggest(typed string, candidates []string) string {
	best, bestDist := "", 0
	for _, c := range candidates {
		d := editDistance(typed, c)
		if d <= min(3, max(1, len(c)/3)) && (best == "" || d < bestDist) {
			best, bestDist = c, d
		}
	}
	if best == "" {
		// A prefix counts too: "stak" for "stake", "--conf" for "--confirmations".
		for _, c := range candidates {
			if len(typed) >= 3 && strings.HasPrefix(c, typed) {
				return c
			}
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b (short strings only).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// didYouMean is " (did you mean X?)" when a candidate is close to typed, else "".
func didYouMean(typed string, candidates []string, format func(string) string) string {
	if s := suggest(typed, candidates); s != "" {
		return fmt.Sprintf(" (did you mean %s?)", format(s))
	}
	return ""
}

// flagSuggestion turns the flag package's "flag provided but not defined: -x" into a hint
// naming the closest flag the command has.
func (f *flags) flagSuggestion(err error) string {
	const undefined = "flag provided but not defined: -"
	msg := err.Error()
	if !strings.HasPrefix(msg, undefined) {
		return ""
	}
	typed := strings.TrimLeft(strings.TrimPrefix(msg, undefined), "-")
	var names []string
	f.VisitAll(func(fl *flag.Flag) {
		if !strings.HasPrefix(fl.Usage, "deprecated") && !strings.HasPrefix(fl.Usage, "alias of") {
			names = append(names, fl.Name)
		}
	})
	slices.Sort(names)
	return didYouMean(typed, names, func(s string) string { return "--" + s })
}

// commandNames are a command map's names, sorted.
func commandNames[T any](m map[string]T) []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
