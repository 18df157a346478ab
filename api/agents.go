package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/surety-ioa/surety/registry"
)

// Agents is what the agent routes need: the node's registry. Errors are *registry.CardError
// values wrapping the registry's sentinels.
type Agents interface {
	Register(ctx context.Context, raw []byte, source string) (*registry.Agent, error)
	Get(ctx context.Context, did string) (*registry.Agent, error)
	Search(ctx context.Context, q registry.Query) ([]*registry.Agent, error)
	CheckStatus(ctx context.Context, did string) (*registry.StatusResult, error)
}

var _ Agents = (*registry.Registry)(nil)

// registerAgent takes a signed Agent Card (compact JWS) as the body.
func (s *Server) registerAgent(c echo.Context) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	// registry.Parse refuses a card over registry.MaxCardSize before anything else
	// (card-too-large); the body read is capped at the API's own limit.
	a, err := s.cfg.Agents.Register(c.Request().Context(), body, "api:"+c.RealIP())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, a)
}

func (s *Server) getAgent(c echo.Context) error {
	did, err := url.PathUnescape(c.Param("did"))
	if err != nil {
		return withDetail(ErrBadRequest, "DID: %v", err)
	}
	ctx := c.Request().Context()
	a, err := s.cfg.Agents.Get(ctx, did)
	if err != nil {
		return err
	}
	out := AgentAnswer{Agent: *a}
	if s.cfg.ERC8004 != nil {
		ids, err := s.cfg.ERC8004.VerifiedAgents(ctx, did)
		if err != nil {
			return err
		}
		for _, id := range ids {
			out.ERC8004AgentIDs = append(out.ERC8004AgentIDs, id.ID)
		}
	}
	return c.JSON(http.StatusOK, out)
}

// AgentAnswer is GET /v1/agents/{did}: the card as the node holds it, and beside the DID the
// ERC-8004 agent ids that are its (their owner or agent wallet is bound to the DID).
type AgentAnswer struct {
	registry.Agent
	ERC8004AgentIDs []uint64 `json:"erc8004AgentIds,omitempty"`
}

func (s *Server) searchAgents(c echo.Context) error {
	// The registry refuses text and capabilities it cannot search (registry.ErrBadQuery).
	q := registry.Query{Text: c.QueryParam("q"), Capability: c.QueryParam("capability")}
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return withDetail(ErrBadRequest, "limit must be a non-negative integer")
		}
		q.Limit = n
	}
	list, err := s.cfg.Agents.Search(c.Request().Context(), q)
	if err != nil {
		return err
	}
	if list == nil {
		list = []*registry.Agent{}
	}
	return c.JSON(http.StatusOK, map[string]any{"agents": list})
}

// checkAgentStatus answers the agent's key status as this node's index of the chain has it,
// bringing the card the node holds in line on the way (dropped when the DID was revoked or
// rotated, re-staked otherwise). Nodes follow the chain by themselves; this route only
// re-reads the index, so calling it changes nothing the chain does not say.
func (s *Server) checkAgentStatus(c echo.Context) error {
	did, err := pathDID(c)
	if err != nil {
		return err
	}
	res, err := s.cfg.Agents.CheckStatus(c.Request().Context(), did)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, res)
}
