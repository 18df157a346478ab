package search

// Accessors for the tests: sizes of the index's inner tables.

// sizes are the lengths of the dictionary, the live term table (terms not on the free list)
// and the prefix table's lists summed.
func (x *Index) sizes() (dict, terms, prefixes int) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	for _, l := range x.prefixes {
		prefixes += len(l)
	}
	return len(x.dict), len(x.terms) - len(x.termFree), prefixes
}

// fieldLens are the indexed lengths of id's fields.
func (x *Index) fieldLens(id int64) [numFields]uint16 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.docs[x.byID[id]].len
}

// capKeys is the number of capability keys the index holds.
func (x *Index) capKeys() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.caps)
}
