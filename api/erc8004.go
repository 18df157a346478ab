package api

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/labstack/echo/v4"

	"github.com/surety-ioa/surety/a2a"
	"github.com/surety-ioa/surety/erc8004"
	"github.com/surety-ioa/surety/registry"
)

// ERC8004 is the node's index of the ERC-8004 registries (erc8004.Indexer).
type ERC8004 interface {
	IdentityRegistry() common.Address
	Agent(ctx context.Context, id uint64) (*erc8004.Agent, error)
	AgentsClaiming(ctx context.Context, did string) ([]erc8004.Agent, error)
	VerifiedAgents(ctx context.Context, did string) ([]erc8004.Agent, error)
	Feedback(ctx context.Context, agent uint64, f erc8004.FeedbackFilter) ([]erc8004.Feedback, error)
	Validations(ctx context.Context, agent uint64, limit int) ([]erc8004.Validation, error)
}

var _ ERC8004 = (*erc8004.Indexer)(nil)

// ERC8004Relay relays calls of the ERC-8004 registries that wallets signed themselves
// (erc8004.Service), through POST /v1/rpc's eth_sendRawTransaction.
type ERC8004Relay interface {
	Registries() []common.Address
	Broadcast(ctx context.Context, raw []byte) (*types.Transaction, error)
}

var _ ERC8004Relay = (*erc8004.Service)(nil)

// maxERC8004Feedback bounds the feedback, or the validations, one GET lists.
const maxERC8004Feedback = 1000

// ERC8004DID is GET /v1/erc8004/dids/{did}: the agent ids that are the DID's (their owner or
// agent wallet is bound to it) and every agent id whose metadata claims it.
type ERC8004DID struct {
	DID      string          `json:"did"`
	Agents   []erc8004.Agent `json:"agents"`
	Claiming []erc8004.Agent `json:"claiming"`
}

// ERC8004Feedback is GET /v1/erc8004/agents/{id}/feedback.
type ERC8004Feedback struct {
	AgentID  uint64             `json:"agentId"`
	Feedback []erc8004.Feedback `json:"feedback"`
}

func (s *Server) routeERC8004(v1 *echo.Group) {
	v1.GET("/erc8004/registration/:did", s.erc8004Registration)
	v1.GET("/erc8004/dids/:did", s.erc8004DID)
	v1.GET("/erc8004/agents/:id", s.erc8004Agent)
	v1.GET("/erc8004/agents/:id/feedback", s.erc8004Feedback)
	v1.GET("/erc8004/agents/:id/validations", s.erc8004Validations)
}

func agentIDParam(c echo.Context) (uint64, error) {
	id, err := strconv.ParseUint(c.Param("id"), 10, 63)
	if err != nil {
		return 0, withDetail(ErrBadRequest, "agent id must be a decimal number below 2^63")
	}
	return id, nil
}

// erc8004Registration serves the DID's ERC-8004 registration file: its card's name and
// description, its A2A card and MCP endpoint on this node, its DID, and the agent ids that
// are the DID's in the deployment's IdentityRegistry.
func (s *Server) erc8004Registration(c echo.Context) error {
	did, err := pathDID(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	agents, err := s.cfg.ERC8004.VerifiedAgents(ctx, did)
	if err != nil {
		return err
	}
	in := erc8004.RegistrationInput{Name: did, DID: did, ChainID: s.cfg.Chain.ID, IdentityRegistry: s.cfg.ERC8004.IdentityRegistry(),
		A2AVersion: a2a.ProtocolVersion}
	for _, a := range agents {
		in.AgentIDs = append(in.AgentIDs, a.ID)
	}
	var card *registry.Agent
	if s.cfg.Agents != nil {
		if card, err = s.cfg.Agents.Get(ctx, did); err != nil && !errors.Is(err, registry.ErrUnknownAgent) {
			return err
		}
	}
	if card == nil && len(agents) == 0 {
		return withDetail(registry.ErrUnknownAgent, "the node has no card and no ERC-8004 agent for %s", did)
	}
	if card != nil {
		in.Name, in.Description, in.Active = card.Name, card.Description, true
		for _, e := range card.Endpoints {
			if e.Kind == "mcp" && in.MCP == "" {
				in.MCP = e.URL
			}
			if e.Kind == "http" && in.Web == "" {
				in.Web = e.URL
			}
		}
		if s.cfg.PublicURL != "" {
			in.A2ACard = s.cfg.PublicURL + "/v1/agents/" + url.PathEscape(did) + "/agent-card.json"
		}
	}
	return c.JSON(http.StatusOK, erc8004.BuildRegistration(in))
}

func (s *Server) erc8004DID(c echo.Context) error {
	did, err := pathDID(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	out := ERC8004DID{DID: did}
	if out.Agents, err = s.cfg.ERC8004.VerifiedAgents(ctx, did); err != nil {
		return err
	}
	if out.Claiming, err = s.cfg.ERC8004.AgentsClaiming(ctx, did); err != nil {
		return err
	}
	if out.Agents == nil {
		out.Agents = []erc8004.Agent{}
	}
	if out.Claiming == nil {
		out.Claiming = []erc8004.Agent{}
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Server) erc8004Agent(c echo.Context) error {
	id, err := agentIDParam(c)
	if err != nil {
		return err
	}
	a, err := s.cfg.ERC8004.Agent(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, a)
}

// erc8004Feedback: ?client=0x…&tag1=…&revoked=true (revoked feedback too); at most
// maxERC8004Feedback, in chain order.
func (s *Server) erc8004Feedback(c echo.Context) error {
	id, err := agentIDParam(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if _, err := s.cfg.ERC8004.Agent(ctx, id); err != nil {
		return err
	}
	f := erc8004.FeedbackFilter{Tag1: c.QueryParam("tag1"), Limit: maxERC8004Feedback}
	if v := c.QueryParam("client"); v != "" {
		if !common.IsHexAddress(v) {
			return withDetail(ErrBadRequest, "client must be an address")
		}
		a := common.HexToAddress(v)
		f.Client = &a
	}
	switch c.QueryParam("revoked") {
	case "", "false":
	case "true":
		f.IncludeRevoked = true
	default:
		return withDetail(ErrBadRequest, "revoked must be true or false")
	}
	fb, err := s.cfg.ERC8004.Feedback(ctx, id, f)
	if err != nil {
		return err
	}
	if fb == nil {
		fb = []erc8004.Feedback{}
	}
	return c.JSON(http.StatusOK, ERC8004Feedback{AgentID: id, Feedback: fb})
}

func (s *Server) erc8004Validations(c echo.Context) error {
	id, err := agentIDParam(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if _, err := s.cfg.ERC8004.Agent(ctx, id); err != nil {
		return err
	}
	vs, err := s.cfg.ERC8004.Validations(ctx, id, maxERC8004Feedback)
	if err != nil {
		return err
	}
	if vs == nil {
		vs = []erc8004.Validation{}
	}
	return c.JSON(http.StatusOK, map[string]any{"agentId": id, "validations": vs})
}
