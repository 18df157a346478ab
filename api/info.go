package api

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/surety-ioa/surety/reputation"
)

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
	AuditLog *reputation.LogSync `json:"auditLog,omitempty"`
}

// logSyncer is the part of the reputation service /v1/info reads.
type logSyncer interface{ LogSync() reputation.LogSync }

var _ logSyncer = (*reputation.Service)(nil)

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

func (s *Server) info(c echo.Context) error {
	block, err := s.cfg.Blocks.BlockNumber(c.Request().Context())
	if err != nil {
		return fmt.Errorf("%w: %v", ErrChainUnavailable, err)
	}
	ch := s.cfg.Chain
	out := Info{
		Version: s.cfg.Version,
		Chain: InfoChain{
			ID: ch.ID, Kind: ch.Kind, Genesis: ch.Genesis.Hex(), BlockNumber: block, StateKey: ch.Key, Confirmations: ch.Confirmations,
		},
		Contracts: make(map[string]string, len(ch.Contracts)),
		NodeDID:   s.cfg.Identity.NodeDID(),
	}
	if ls, ok := s.cfg.Reputation.(logSyncer); ok {
		sync := ls.LogSync()
		out.AuditLog = &sync
	}
	if s.cfg.Peers != nil {
		id, addrs := s.cfg.Peers.Self()
		out.Peer = &PeerInfo{ID: id, Addrs: addrs, Binding: s.cfg.PeerBinding}
	}
	for _, k := range ch.Contracts {
		out.Contracts[k.Name] = k.Address.Hex()
	}
	if ch.MinStake != nil {
		out.Chain.MinStake = ch.MinStake.String()
	}
	for i, idx := range s.cfg.Indexes {
		if b := idx.Indexed(); i == 0 || b < *out.Chain.IndexedBlock {
			out.Chain.IndexedBlock = &b
		}
	}
	return c.JSON(http.StatusOK, out)
}

// Index is a chain index the node keeps (a chainlog follower).
type Index interface {
	// Indexed is the highest block whose events are all in the index.
	Indexed() uint64
}

// Health is the body of GET /healthz.
type Health struct {
	Status string `json:"status"`
}

// health answers 200 when the database and the chain both respond, 503 otherwise.
func (s *Server) health(c echo.Context) error {
	ctx := c.Request().Context()
	if err := s.cfg.DB.PingContext(ctx); err != nil {
		return fmt.Errorf("%w: database: %v", ErrUnhealthy, err)
	}
	if _, err := s.cfg.Blocks.BlockNumber(ctx); err != nil {
		return fmt.Errorf("%w: chain: %v", ErrUnhealthy, err)
	}
	return c.JSON(http.StatusOK, Health{Status: "ok"})
}

// Peers is what GET /v1/peers and the peer part of /v1/info need from the p2p host.
type Peers interface {
	// Self is this node's peer id and full multiaddrs.
	Self() (id string, addrs []string)
	// Connected lists the peers this node is connected to.
	Connected() []Peer
	// Meshes is the gossip mesh of each topic the node joined.
	Meshes() []Mesh
	// PendingPuts is how many DHT puts of agent cards are under way.
	PendingPuts() int
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

func (s *Server) peers(c echo.Context) error {
	out := PeerList{Peers: s.cfg.Peers.Connected(), Topics: s.cfg.Peers.Meshes(), PendingPuts: s.cfg.Peers.PendingPuts()}
	if out.Peers == nil {
		out.Peers = []Peer{}
	}
	if out.Topics == nil {
		out.Topics = []Mesh{}
	}
	return c.JSON(http.StatusOK, out)
}
