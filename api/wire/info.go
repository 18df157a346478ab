package wire

import "time"

// Info is the body of GET /v1/info.
type Info struct {
	Version string    `json:"version"`
	Chain   InfoChain `json:"chain"`
	// Contracts maps each contract's name to its address.
	Contracts map[string]string `json:"contracts"`
	// NodeDID is the node's own DID, once the node has one.
	NodeDID string `json:"nodeDid,omitempty"`
	// Peer is the node's libp2p identity, when it takes part in the network.
	Peer *PeerInfo `json:"peer,omitempty"`
	// AuditLog says whether the node's audit log keeps step with its peers' (a node whose
	// peers offer only epochs no quorum of staked nodes signed keeps its own).
	AuditLog *LogSync `json:"auditLog,omitempty"`
}

// LogSync is how the audit log's catch-up from peers last went (reputation.LogSync).
type LogSync struct {
	// State is "in-step" (the last round adopted what peers offered, or there was nothing to
	// adopt), "alone" (peers offered epochs no quorum of staked nodes signed, or that other
	// peers contradicted: the node keeps its own log), or "" before the first round.
	State string `json:"state,omitempty"`
	// Detail says what the last refused head was, and why.
	Detail string    `json:"detail,omitempty"`
	Since  time.Time `json:"since,omitzero"`
	// Quorum is how many distinct staked nodes must sign a head before it is adopted.
	Quorum int `json:"quorum"`
}

// PeerInfo ties the node's DID to its libp2p peer: Binding is a JWS by the node's DID over
// {"did": ..., "peerId": ...}.
type PeerInfo struct {
	ID      string   `json:"id"`
	Addrs   []string `json:"addrs"`
	Binding string   `json:"binding"`
}

// InfoChain describes the chain in GET /v1/info.
type InfoChain struct {
	ID          uint64 `json:"id"`
	Kind        string `json:"kind"`
	Genesis     string `json:"genesis"`
	BlockNumber uint64 `json:"blockNumber"`
	StateKey    string `json:"stateKey"`
	// IndexedBlock is the highest block whose events every chain index of the node holds
	// (bounties and stakes): what the node answers reflects the chain up to it. Absent when
	// the node keeps no index.
	IndexedBlock *uint64 `json:"indexedBlock,omitempty"`
	// Confirmations is how many blocks the node's indexes wait before trusting an event: a
	// transaction mined in block B is indexed once the head reaches B+Confirmations.
	Confirmations uint64 `json:"confirmations"`
	// MinStake is the deployment's minimum stake in base units (StakeRegistry.minStake):
	// below it an agent ranks, pre-trusts and weighs as unstaked, on every node alike.
	MinStake string `json:"minStake,omitempty"`
}

// Health is the body of GET /healthz.
type Health struct {
	Status string `json:"status"`
}

// PeerList is the body of GET /v1/peers: the connected peers, each gossip topic's mesh, and
// the DHT writes under way. An operator (or a test) sees from it whether a message published
// now reaches every node, and whether a card registered here has reached the DHT.
type PeerList struct {
	Peers  []Peer `json:"peers"`
	Topics []Mesh `json:"topics"`
	// PendingPuts is how many DHT puts of cards registered here are under way (0: every one
	// landed or failed).
	PendingPuts int `json:"pendingPuts"`
}

// Mesh is one gossip topic's mesh here: Peers connected peers joined it, InMesh of them are
// in this node's mesh, and Formed says a message published now reaches every node.
type Mesh struct {
	Topic  string `json:"topic"`
	Peers  int    `json:"peers"`
	InMesh int    `json:"inMesh"`
	Formed bool   `json:"formed"`
}

// Peer is a connected peer, with the gossip score this node gives it (gossipsub peer
// scoring: invalid cards or notices from it push it down; below -80 it is ignored) when it
// has been scored, and the penalty this node holds against it outside gossip (anti-entropy
// items that failed their checks, answers it stalled reading), which that score includes:
// absent when none. An operator (or a load test) tells from it whether a peer was punished.
type Peer struct {
	ID      string   `json:"id"`
	Addrs   []string `json:"addrs"`
	Score   *float64 `json:"score,omitempty"`
	Penalty *float64 `json:"penalty,omitempty"`
}
