package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/surety-ioa/surety/registry"
)

// Agents is what the agent routes need: the node's registry. Errors are *registry.CardError
// values wrapping the registry's sentinels.
type Agents interface {
	Register(ctx context.Context, raw []byte, source string) (*registry.Agent, error)
	Get(ctx context.Context, did string) (*registry.Agent, error)
	// SearchFollow answers from the node's index at once; the Lookup, when not nil, is the
	// network lookup under way for the query's capability (registry.Registry.SearchFollow).
	SearchFollow(ctx context.Context, q registry.Query) ([]*registry.Agent, *registry.Lookup, error)
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

// searchAgents answers from the node's index at once, saying when a network lookup for the
// capability is under way (discovering). A client that accepts text/event-stream gets the
// answer as server-sent events instead (streamAgents).
func (s *Server) searchAgents(c echo.Context) error {
	// The registry refuses text and capabilities it cannot search (registry.ErrBadQuery).
	q := registry.Query{Text: c.QueryParam("q"), Capability: c.QueryParam("capability"), Mode: c.QueryParam("mode"), Source: "api:" + c.RealIP()}
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return withDetail(ErrBadRequest, "limit must be a non-negative integer")
		}
		q.Limit = n
	}
	stream := acceptsEventStream(c.Request())
	if enc, ok := s.cfg.Agents.(encodedSearcher); ok && !stream {
		if _, pretty := c.QueryParams()["pretty"]; !pretty && !c.Echo().Debug {
			// The body c.JSON would write, kept by the registry with the answer it encodes.
			body, err := enc.SearchEncoded(c.Request().Context(), q, encodeAgentList)
			if err != nil {
				return err
			}
			// Its length known, the body goes out whole (c.JSON's would be chunked past 2 KiB:
			// a frame per write, and the client's reader to take them apart).
			c.Response().Header().Set(echo.HeaderContentLength, strconv.Itoa(len(body)))
			return c.JSONBlob(http.StatusOK, body)
		}
	}
	list, more, err := s.cfg.Agents.SearchFollow(c.Request().Context(), q)
	if err != nil {
		return err
	}
	if stream {
		return s.streamAgents(c, list, more)
	}
	return c.JSON(http.StatusOK, agentList(list, more != nil))
}

// encodedSearcher is a registry that answers a search encoded, keeping the body with the
// answer it kept (registry.Registry.SearchEncoded): a search whose answer is kept then costs
// about what GET /v1/info does.
type encodedSearcher interface {
	SearchEncoded(ctx context.Context, q registry.Query, encode func(list []*registry.Agent, discovering bool) ([]byte, error)) ([]byte, error)
}

var _ encodedSearcher = (*registry.Registry)(nil)

// encodeAgentList is the body of GET /v1/agents as c.JSON writes it (echo's
// DefaultJSONSerializer: a json.Encoder, so with a newline at the end).
func encodeAgentList(list []*registry.Agent, discovering bool) ([]byte, error) {
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(agentList(list, discovering)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// agentList is the body of GET /v1/agents, and the data of its agents events.
func agentList(list []*registry.Agent, discovering bool) map[string]any {
	if list == nil {
		list = []*registry.Agent{}
	}
	out := map[string]any{"agents": list}
	if discovering {
		out["discovering"] = true
	}
	return out
}

// streamAgents sends the search's answer as server-sent events: an agents event with the
// local answer at once, another with the whole answer, merged and ranked again, each time
// the network lookup stored cards that change it, then done. The stream lasts as long as the
// lookup (at most searchStreamTimeout), and ends when the client leaves, stops reading (an
// event not written within streamWriteTimeout) or the server shuts down.
func (s *Server) streamAgents(c echo.Context, list []*registry.Agent, more *registry.Lookup) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), searchStreamTimeout)
	defer cancel()
	defer context.AfterFunc(s.closing, cancel)()
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	// Each event is written within streamWriteTimeout: a client that stops reading frees the
	// handler (the server sets no write timeout of its own, for the streams' sake).
	rc := http.NewResponseController(w)
	send := func(event string, data any) error {
		b, err := json.Marshal(data)
		if err != nil {
			return err
		}
		if err := rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err // a writer without deadlines (a test's recorder) has no client to stall it
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return err
		}
		return rc.Flush()
	}
	if err := send("agents", agentList(list, more != nil)); err != nil {
		return nil // the client left
	}
	for more != nil {
		next, err := more.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if c.Request().Context().Err() != nil {
				return nil // the client left
			}
			if ctx.Err() == nil && !errors.Is(err, registry.ErrBusy) {
				s.log.Warn("agent search: follow the network lookup", "capability", more.Capability(), "err", err)
			}
			break // out of time (or the server shutting down): the last answer sent stands
		}
		if err := send("agents", agentList(next, true)); err != nil {
			return nil
		}
	}
	_ = send("done", struct{}{})
	return nil
}

// acceptsEventStream reports whether the request asks for server-sent events.
func acceptsEventStream(r *http.Request) bool {
	for _, v := range r.Header.Values(echo.HeaderAccept) {
		for part := range strings.SplitSeq(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err == nil && mt == "text/event-stream" && params["q"] != "0" {
				return true
			}
		}
	}
	return false
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
