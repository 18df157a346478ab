// Package registry keeps the Agent Cards that agents sign with their DIDs, spreads them over a
// libp2p Kademlia DHT and gossipsub with validators that check signature, sequence and on-chain
// stake, indexes what the node has seen in SQLite, and ranks discovery results by relevance,
// stake and reputation.
package registry
