// Package search is the registry's discovery index: text analysis shared by cards and
// queries (folding, stop words, stemming), kept in memory beside the cards SQLite stores.
package search
