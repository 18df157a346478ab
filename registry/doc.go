// Package registry keeps the Agent Cards that agents sign with their DIDs, spreads them over a
// libp2p Kademlia DHT and gossipsub with validators that check signature, sequence and on-chain
// stake, stores what the node has seen in SQLite, and searches it with an in-memory index
// (registry/search) kept in step with every write.
//
// Discovery ranks by score = rel × stakeFactor × reputationWeight: rel is the card's BM25F
// text score over the query's words (OR-ed; name ×2, capabilities ×2, description ×1; aliases
// at half weight) divided by the best among the matches, 0.75 of it, plus 0.25 of the cosine
// of the card's and the query's vectors of meaning (registry/semantic); stakeFactor is
// units.StakeWeight of the stake for a staked card and 0.5 for an unstaked one; ties by DID.
// docs/SEARCH.md is the full contract.
package registry
