package testutil

// StakedAsANodeHolds says whether card i of a benchmark's n cards is staked, the cards staked
// as a node holds them: a DID costs nothing, so a node keeps at most maxUnstaked unstaked
// cards (registry.MaxUnstakedCards), and every card past them is staked. A tenth of the cards
// is unstaked, at most maxUnstaked in all, chosen by a hash of i so that neither side takes
// the cards of any one word. The registry's, the API's and the node's benchmarks build their
// cards with it, so they measure the same corpus.
func StakedAsANodeHolds(i, n, maxUnstaked int) bool {
	every := max(10, (n+maxUnstaked-1)/maxUnstaked)
	return uint32(i)*2654435761>>16%uint32(every) != 0
}
