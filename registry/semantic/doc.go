// Package semantic gives cards and queries vectors of their meaning, computed on the node from
// a small model committed in the repository, and finds the cards nearest a query.
//
// The model maps the stems search.Terms produces to 128-dimensional word vectors learned
// offline from WordNet 3.0 (Debian's wordnet-base) by internal/train: each word's synsets
// (most frequent sense weighing most), their synonyms, hypernyms, related synsets and
// idf-weighted gloss words, projected into 128 dimensions by pseudo-random ±1 vectors
// (random indexing), centred, and quantized to 4 bits a component. Stems WordNet lacks get a
// vector from their hashed character trigrams (Subword), the same on every node. A card's or
// a query's vector is the normalized, optionally weighted sum of its terms' vectors, summed in
// a fixed order so that every node computes the same bits. Index is a brute-force
// nearest-neighbour index over int8 vectors; docs/SEMANTIC.md has the method, the recipe and
// the figures.
package semantic
