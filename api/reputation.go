package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/reputation"
)

// Reputation is what the audit and reputation routes need. Refusals are
// *reputation.AuditError values wrapping reputation's sentinels.
type Reputation interface {
	Submit(ctx context.Context, v *identity.Verified, raw []byte) (*reputation.Submitted, error)
	Reputation(ctx context.Context, did string) (*reputation.Reputation, error)
	Top(ctx context.Context, n int) []*reputation.Reputation
}

var _ Reputation = (*reputation.Service)(nil)

// submitAudit takes an audit envelope (compact or JSON serialization) as the body.
func (s *Server) submitAudit(c echo.Context) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	v, err := s.cfg.Identity.VerifyEnvelope(c.Request().Context(), body)
	if err != nil {
		return err
	}
	res, err := s.cfg.Reputation.Submit(c.Request().Context(), v, body)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, res)
}

func (s *Server) getReputation(c echo.Context) error {
	did, err := url.PathUnescape(c.Param("did"))
	if err != nil {
		return withDetail(ErrBadRequest, "DID: %v", err)
	}
	if _, err := identity.ParseDID(did); err != nil {
		return withDetail(ErrBadRequest, "%v", err)
	}
	r, err := s.cfg.Reputation.Reputation(c.Request().Context(), did)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, r)
}

// topReputation lists the best-scored agents: ?top=N (default 20, at most 1000).
func (s *Server) topReputation(c echo.Context) error {
	n := 20
	if v := c.QueryParam("top"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 || n > 1000 {
			return withDetail(ErrBadRequest, "top must be an integer from 1 to 1000")
		}
	}
	list := s.cfg.Reputation.Top(c.Request().Context(), n)
	if list == nil {
		list = []*reputation.Reputation{}
	}
	return c.JSON(http.StatusOK, map[string]any{"agents": list})
}
