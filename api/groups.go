package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/groups"
	"github.com/surety-ioa/surety/identity"
)

// Groups is what the group thread routes need. Refusals are *groups.Error values
// wrapping identity's group sentinels.
type Groups interface {
	SetMembers(ctx context.Context, id string, v *identity.Verified, raw []byte) (*groups.Group, error)
	Group(ctx context.Context, id string) (*groups.Group, error)
	Post(ctx context.Context, id string, v *identity.Verified, raw []byte) (*groups.Posted, error)
	Envelopes(ctx context.Context, id string, after int64, limit int) ([]*groups.Envelope, error)
	Watch(id string) (<-chan struct{}, func())
}

var _ Groups = (*groups.Service)(nil)

// verifiedBody reads the request body as an envelope and verifies it.
func (s *Server) verifiedBody(c echo.Context) (*identity.Verified, []byte, error) {
	body, err := readBody(c)
	if err != nil {
		return nil, nil, err
	}
	v, err := s.cfg.Identity.VerifyEnvelope(c.Request().Context(), body)
	return v, body, err
}

// setGroupMembers takes a membership envelope from the group's creator.
func (s *Server) setGroupMembers(c echo.Context) error {
	v, body, err := s.verifiedBody(c)
	if err != nil {
		return err
	}
	g, err := s.cfg.Groups.SetMembers(c.Request().Context(), c.Param("group_id"), v, body)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, g)
}

func (s *Server) getGroup(c echo.Context) error {
	g, err := s.cfg.Groups.Group(c.Request().Context(), c.Param("group_id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, g)
}

// postGroupEnvelope takes a member's envelope: 201 when stored here, 202 when the group
// lives on another node and the envelope was forwarded there.
func (s *Server) postGroupEnvelope(c echo.Context) error {
	v, body, err := s.verifiedBody(c)
	if err != nil {
		return err
	}
	p, err := s.cfg.Groups.Post(c.Request().Context(), c.Param("group_id"), v, body)
	if err != nil {
		return err
	}
	if p.Envelope == nil {
		return c.JSON(http.StatusAccepted, p)
	}
	return c.JSON(http.StatusCreated, p)
}

// after reads the position to continue from: ?after=SEQ, or the Last-Event-ID header of a
// reconnecting event stream.
func after(c echo.Context) (int64, error) {
	v := c.QueryParam("after")
	if v == "" {
		v = c.Request().Header.Get("Last-Event-ID")
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, withDetail(ErrBadRequest, "after must be a seq (a whole number ≥ 0), not %.40q", v)
	}
	return n, nil
}

// listGroupEnvelopes pages through a thread: ?after=SEQ&limit=N (default and at most 500).
func (s *Server) listGroupEnvelopes(c echo.Context) error {
	from, err := after(c)
	if err != nil {
		return err
	}
	limit := groups.MaxPage
	if v := c.QueryParam("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > groups.MaxPage {
			return withDetail(ErrBadRequest, "limit must be 1-%d", groups.MaxPage)
		}
	}
	page, err := s.cfg.Groups.Envelopes(c.Request().Context(), c.Param("group_id"), from, limit)
	if err != nil {
		return err
	}
	next := from
	if len(page) > 0 {
		next = page[len(page)-1].Seq
	}
	out := GroupPage{Next: next}
	if page != nil {
		out.Envelopes = make([]*wire.GroupEnvelope, len(page))
	}
	for i, e := range page {
		out.Envelopes[i] = (*wire.GroupEnvelope)(e)
	}
	return c.JSON(http.StatusOK, out)
}

// streamGroup sends a thread as server-sent events (event "envelope", id = seq), from
// ?after= or Last-Event-ID, and then each envelope as it arrives, until the client leaves.
func (s *Server) streamGroup(c echo.Context) error {
	from, err := after(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	id := c.Param("group_id")
	if _, err := s.cfg.Groups.Group(ctx, id); err != nil {
		return err
	}
	grew, stop := s.cfg.Groups.Watch(id)
	defer stop()
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	w.Flush()
	for {
		page, err := s.cfg.Groups.Envelopes(ctx, id, from, groups.MaxPage)
		if err != nil {
			return nil // the response has started: end the stream; the client resumes
		}
		for _, e := range page {
			b, _ := json.Marshal(e)
			if _, err := fmt.Fprintf(w, "id: %d\nevent: envelope\ndata: %s\n\n", e.Seq, b); err != nil {
				return nil
			}
			from = e.Seq
		}
		w.Flush()
		if len(page) == groups.MaxPage {
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-grew:
		}
	}
}
