package semantic

// Exact says whether Search compares a query with every row the index holds now (it holds
// at most prefilterRows), so that its answer is SearchExact's: the k best by score, key and
// id, which a row changes only by entering them or leaving them.
func (x *Index) Exact() bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.ids) <= prefilterRows
}
