package api

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/surety-ioa/surety/a2a"
	"github.com/surety-ioa/surety/registry"
)

// A2A Agent Cards (docs/a2a.md). The node serves two kinds, both signed by the node's DID key
// as A2A §8.4 says (JWS over the RFC 8785 form of the card without signatures; kid = the
// node's DID URL; typ JOSE):
//
//   - its own card at /.well-known/agent-card.json, whose trust extension describes the
//     node (role "node", its DID, chain, the log and the API);
//   - each registered agent's card at /v1/agents/{did}/agent-card.json: the card the agent
//     signed (in A2A form, or its Surety card mapped onto A2A) with the trust extension's
//     params completed by what only the node knows now (stake, reputation, chain, links,
//     asOf). The agent cannot sign live values, and a signature covers every param, so the
//     served card carries the node's signature alone; the agent's own signed form stays at
//     registrationUrl (GET /v1/agents/{did}, field jws), where anyone checks it offline.

// cardMediaType is what the card routes answer with (A2A serves cards as JSON).
const cardMediaType = "application/json"

// nodeCardPath is where A2A clients look for an agent's card (A2A §8.2, RFC 8615).
const nodeCardPath = "/.well-known/agent-card.json"

func (s *Server) url(path string) string {
	return strings.TrimRight(s.cfg.PublicURL, "/") + path
}

func (s *Server) signCard(c *a2a.AgentCard) ([]byte, error) {
	if err := a2a.Sign(c, func(p []byte) (string, error) { return s.cfg.Identity.SignAsNode(p, a2a.SignatureType) }); err != nil {
		return nil, err
	}
	return a2a.Encode(c)
}

// nodeCard builds and signs the node's own card. Nothing in it changes while the node runs,
// so it is signed once.
func (s *Server) nodeCard() ([]byte, error) {
	s.nodeCardOnce.Do(func() {
		did := s.cfg.Identity.NodeDID()
		params := map[string]any{a2a.ParamRole: "node", a2a.ParamDID: did, a2a.ParamChainID: float64(s.cfg.Chain.ID)}
		version := s.cfg.Version
		if version == "" {
			version = "dev"
		}
		c := &a2a.AgentCard{
			Name:               "Surety node",
			Description:        "A Surety node: DIDs for agents, a registry of A2A cards weighted by on-chain stake, peer-audited reputation with Merkle proofs, and escrow settlement. Node DID " + did,
			Version:            version,
			DefaultInputModes:  []string{"application/json"},
			DefaultOutputModes: []string{"application/json"},
			Capabilities:       &a2a.AgentCapabilities{Extensions: []a2a.AgentExtension{{URI: a2a.TrustExtensionURI, Description: a2a.TrustExtensionDescription, Params: params}}},
			Skills: []a2a.AgentSkill{{ID: "surety/identity", Name: "DIDs", Description: "Resolves did:key and did:pkh DIDs, registers agents' DIDs and verifies signed envelopes",
				Tags: []string{"surety/identity", "did", "surety"}}},
		}
		if s.cfg.PublicURL != "" {
			c.SupportedInterfaces = []a2a.AgentInterface{{URL: s.url("/v1"), ProtocolBinding: a2a.BindingHTTP}}
			if s.mcp.mounted.Load() {
				c.SupportedInterfaces = append(c.SupportedInterfaces, a2a.AgentInterface{URL: s.url("/mcp"), ProtocolBinding: a2a.BindingMCP})
			}
			c.DocumentationURL = s.url("/v1/openapi.json")
			params[a2a.ParamNodeCard] = s.url(nodeCardPath)
			if s.cfg.AuditLog != nil {
				params[a2a.ParamLogURL] = s.url("/v1/log/checkpoint")
			}
		}
		if s.cfg.Agents != nil {
			c.Skills = append(c.Skills, a2a.AgentSkill{ID: "surety/registry", Name: "Agent registry", Description: "Registers signed A2A and Surety Agent Cards and finds agents by text and capability, ranked by stake and reputation",
				Tags: []string{"surety/registry", "discovery", "surety"}})
		}
		if s.cfg.Reputation != nil {
			c.Skills = append(c.Skills, a2a.AgentSkill{ID: "surety/reputation", Name: "Reputation", Description: "Takes signed audits and answers reputation scores with the audits that feed them and their log proofs",
				Tags: []string{"surety/reputation", "audit", "surety"}})
		}
		if s.cfg.Bounties != nil {
			c.Skills = append(c.Skills, a2a.AgentSkill{ID: "surety/escrow", Name: "Bounties", Description: "Posts, claims, settles and disputes bounties held in escrow on chain",
				Tags: []string{"surety/escrow", "bounty", "surety"}})
		}
		s.nodeCardJSON, s.nodeCardErr = s.signCard(c)
	})
	return s.nodeCardJSON, s.nodeCardErr
}

func (s *Server) getNodeCard(c echo.Context) error {
	b, err := s.nodeCard()
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, cardMediaType, b)
}

// getAgentCard answers the agent's card as A2A with live trust params, signed by the node.
func (s *Server) getAgentCard(c echo.Context) error {
	did, err := pathDID(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	a, err := s.cfg.Agents.Get(ctx, did)
	if err != nil {
		return err
	}
	switch form := c.QueryParam("form"); form {
	case "", "live":
	case "registered":
		// The card as the agent signed it, with its own signature: nothing to sign here.
		if !registry.IsA2A(a.JWS) {
			return withDetail(ErrNotA2A, "the agent registered a Surety JWS card; its signed form is the jws of /v1/agents/{did}")
		}
		return c.Blob(http.StatusOK, cardMediaType, []byte(a.JWS))
	default:
		return withDetail(ErrBadRequest, "form must be live or registered")
	}
	// What the served card says besides the stored card: stake and score. While neither has
	// changed, the card signed before is served, before anything decodes the stored card.
	var rep map[string]any
	if s.cfg.Reputation != nil {
		if r, err := s.cfg.Reputation.Reputation(ctx, did); err == nil {
			rep = map[string]any{"score": r.Score, "confidence": r.Confidence, "audits": float64(r.Audits)}
		}
	}
	key := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%t\x00%v", a.JWS, a.Stake, a.Staked, rep))
	if b, ok := s.agentCards.lookup(did, key); ok {
		return c.Blob(http.StatusOK, cardMediaType, b)
	}
	card, err := a.A2A()
	if err != nil {
		return err
	}
	ext := card.Extension(a2a.TrustExtensionURI)
	if ext == nil { // Parse refuses a card without it: a stored one always has it
		return fmt.Errorf("api: the stored card of %s has no trust extension", did)
	}
	p := map[string]any{}
	for _, k := range a2a.AgentParams {
		if v, ok := ext.Params[k]; ok {
			p[k] = v
		}
	}
	p[a2a.ParamNode] = s.cfg.Identity.NodeDID()
	p[a2a.ParamChainID] = float64(s.cfg.Chain.ID)
	p[a2a.ParamStake] = a.Stake
	p[a2a.ParamStaked] = a.Staked
	if rep != nil {
		p[a2a.ParamReputation] = rep
	}
	if s.cfg.PublicURL != "" {
		p[a2a.ParamRegistration] = s.url("/v1/agents/" + url.PathEscape(did))
		if registry.IsA2A(a.JWS) {
			p[a2a.ParamRegistration] = s.url("/v1/agents/" + url.PathEscape(did) + "/agent-card.json?form=registered")
		}
		p[a2a.ParamNodeCard] = s.url(nodeCardPath)
		if s.cfg.Reputation != nil {
			p[a2a.ParamReputationURL] = s.url("/v1/reputation/" + url.PathEscape(did))
		}
		if s.cfg.AuditLog != nil {
			p[a2a.ParamLogURL] = s.url("/v1/log/checkpoint")
		}
	}
	// The node signs the served card: the extension's words are its own, not the agent's.
	ext.Description, ext.Required, ext.Params = a2a.TrustExtensionDescription, false, p
	p[a2a.ParamAsOf] = float64(time.Now().Unix())
	b, err := s.signCard(card)
	if err != nil {
		return err
	}
	s.agentCards.store(did, key, b)
	return c.Blob(http.StatusOK, cardMediaType, b)
}

// agentCardCache keeps the last card signed for each DID under the content it says (the stored
// card, stake, score), so a GET costs the node a signature only when one of them changed since
// the last (anyone may ask, as often as they like), and a hit decodes nothing. asOf is when
// the node signed the card. At most maxCachedAgentCards DIDs: a new one past them takes the
// place of one held, so many DIDs asked for in turn cost each other their entry, not everyone
// theirs. Signing happens outside the lock.
type agentCardCache struct {
	mu sync.Mutex
	m  map[string]cachedCard
}

type cachedCard struct {
	content [sha256.Size]byte
	signed  []byte
}

// lookup returns the card signed for did over content, if it is held.
func (c *agentCardCache) lookup(did string, content [sha256.Size]byte) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[did]
	return e.signed, ok && e.content == content
}

// store holds signed as did's card over content.
func (c *agentCardCache) store(did string, content [sha256.Size]byte, signed []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]cachedCard, maxCachedAgentCards)
	}
	if _, held := c.m[did]; !held && len(c.m) >= maxCachedAgentCards {
		for other := range c.m { // one entry goes, whichever the map gives first
			delete(c.m, other)
			break
		}
	}
	c.m[did] = cachedCard{content: content, signed: signed}
}
