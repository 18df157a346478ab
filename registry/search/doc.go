// Package search is the registry's discovery index: text analysis shared by cards and
// queries (folding, stop words, stemming), query parsing (words OR-ed, "phrases", prefix*),
// and an in-memory inverted index that ranks cards by BM25F over name, description and
// capabilities, with aliases and the capability hierarchy, times a stake factor. It is kept
// beside the cards SQLite stores, and is deterministic: the same cards give the same
// ranking, bit for bit, whatever order they arrived in. docs/SEARCH.md is its contract.
package search
