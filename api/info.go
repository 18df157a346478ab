package api

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/reputation"
)

// logSyncer is the part of the reputation service /v1/info reads.
type logSyncer interface{ LogSync() reputation.LogSync }

var _ logSyncer = (*reputation.Service)(nil)

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
		out.AuditLog = (*wire.LogSync)(&sync)
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
