package api

import (
	"context"
	"math"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/reputation/merkle"
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
	did, err := pathDID(c)
	if err != nil {
		return err
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

// AuditLog is what the log routes need: the Merkle log of accepted audits.
type AuditLog interface {
	Head() reputation.Head
	InclusionProof(ctx context.Context, leaf merkle.Hash, size uint64) (index uint64, proof []merkle.Hash, err error)
	ConsistencyProof(from, to uint64) ([]merkle.Hash, error)
	// Leaves reads a page of the log's contents; a size past the latest head is
	// reputation.ErrNotLogged.
	Leaves(ctx context.Context, q reputation.LeafQuery) (*reputation.LeafPage, error)
	// Heads reads a page of the log's signed heads of epochs before before (0: all), newest
	// first, at most limit (0: reputation.MaxHeadsPage).
	Heads(ctx context.Context, before int64, limit int) (*reputation.HeadPage, error)
}

var _ AuditLog = (*reputation.Log)(nil)

func (s *Server) logHead(c echo.Context) error {
	return c.JSON(http.StatusOK, s.cfg.AuditLog.Head())
}

// inclusionProof: ?leaf=<hex leaf hash>[&size=N] (default: the latest head's size).
func (s *Server) inclusionProof(c echo.Context) error {
	var leaf merkle.Hash
	if err := leaf.UnmarshalText([]byte(c.QueryParam("leaf"))); err != nil {
		return withDetail(ErrBadRequest, "leaf: %v", err)
	}
	size, err := uintParam(c, "size", 0)
	if err != nil {
		return err
	}
	if size == 0 {
		size = s.cfg.AuditLog.Head().Size
	}
	idx, path, err := s.cfg.AuditLog.InclusionProof(c.Request().Context(), leaf, size)
	if err != nil {
		return err
	}
	if path == nil {
		path = []merkle.Hash{}
	}
	return c.JSON(http.StatusOK, InclusionProof{Leaf: leaf, Index: idx, Size: size, Path: path})
}

// consistencyProof: ?from=M&to=N (to defaults to the latest head's size).
func (s *Server) consistencyProof(c echo.Context) error {
	from, err := uintParam(c, "from", 0)
	if err != nil {
		return err
	}
	to, err := uintParam(c, "to", s.cfg.AuditLog.Head().Size)
	if err != nil {
		return err
	}
	path, err := s.cfg.AuditLog.ConsistencyProof(from, to)
	if err != nil {
		return withDetail(ErrBadRequest, "%v", err)
	}
	if path == nil {
		path = []merkle.Hash{}
	}
	return c.JSON(http.StatusOK, ConsistencyProof{From: from, To: to, Path: path})
}

// logLeaves: ?from=&limit=&size=&subject= — a page of the log's leaves (the signed audit
// envelopes) from index from, below size (default the latest head's), of one subject or all,
// with the heads and anchors they belong to. Anyone may ask: a page is at most
// reputation.MaxLeavesPage leaves and MaxLeavesPageBytes of envelopes, each read from an
// index in log order.
func (s *Server) logLeaves(c echo.Context) error {
	from, err := uintParam(c, "from", 0)
	if err != nil {
		return err
	}
	size, err := uintParam(c, "size", 0)
	if err != nil {
		return err
	}
	limit, err := uintParam(c, "limit", reputation.MaxLeavesPage)
	if err != nil {
		return err
	}
	if limit < 1 || limit > reputation.MaxLeavesPage {
		return withDetail(ErrBadRequest, "limit must be from 1 to %d", reputation.MaxLeavesPage)
	}
	head := s.cfg.AuditLog.Head().Size
	if size == 0 {
		size = head
	}
	if size > head {
		return withDetail(reputation.ErrNotLogged, "the log's latest head has size %d, not %d", head, size)
	}
	if from > size {
		return withDetail(ErrBadRequest, "from %d is past size %d", from, size)
	}
	subject := c.QueryParam("subject")
	if subject != "" {
		if _, err := identity.ParseDID(subject); err != nil {
			return withDetail(ErrBadRequest, "subject: %v", err)
		}
	}
	page, err := s.cfg.AuditLog.Leaves(c.Request().Context(), reputation.LeafQuery{From: from, Size: size, Subject: subject, Limit: int(limit)})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, page)
}

// logHeads: ?before=&limit= — a page of the log's signed heads, newest first, each with the
// transaction that anchored it on chain: the epochs an auditor can check the log at. Anyone
// may ask: a page is one range read of at most reputation.MaxHeadsPage heads.
func (s *Server) logHeads(c echo.Context) error {
	before, err := uintParam(c, "before", 0)
	if err != nil {
		return err
	}
	if before > math.MaxInt64 {
		return withDetail(ErrBadRequest, "before must be an epoch")
	}
	limit, err := uintParam(c, "limit", reputation.MaxHeadsPage)
	if err != nil {
		return err
	}
	if limit < 1 || limit > reputation.MaxHeadsPage {
		return withDetail(ErrBadRequest, "limit must be 1-%d", reputation.MaxHeadsPage)
	}
	page, err := s.cfg.AuditLog.Heads(c.Request().Context(), int64(before), int(limit))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, page)
}

func uintParam(c echo.Context, name string, def uint64) (uint64, error) {
	v := c.QueryParam(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, withDetail(ErrBadRequest, "%s must be a non-negative integer", name)
	}
	return n, nil
}

// ScoredHeads serves the scores the node computed for each head anchored on chain from the log
// and the chain alone (package auditor; reputation.Store holds them).
type ScoredHeads interface {
	ScoredHead(ctx context.Context, q reputation.ScoresQuery) (*reputation.ScoredHead, error)
	ScoreHistory(ctx context.Context, did string) ([]reputation.ScorePoint, error)
}

var _ ScoredHeads = (*reputation.Store)(nil)

// logScores: ?size=&did=&after=&limit=&inputs=1 — the scores of an anchored head (size;
// default the latest the node scored): one agent's, or a page of every agent's in DID order
// (next names the page after), with the head's inputs on the first page when asked. Anyone
// may ask; a page is at most reputation.MaxScoresPage rows of an index, and the inputs one
// stored document of at most reputation.MaxScoreInputs audits.
func (s *Server) logScores(c echo.Context) error {
	size, err := uintParam(c, "size", 0)
	if err != nil {
		return err
	}
	limit, err := uintParam(c, "limit", reputation.MaxScoresPage)
	if err != nil {
		return err
	}
	if limit < 1 || limit > reputation.MaxScoresPage {
		return withDetail(ErrBadRequest, "limit must be from 1 to %d", reputation.MaxScoresPage)
	}
	q := reputation.ScoresQuery{Size: size, DID: c.QueryParam("did"), After: c.QueryParam("after"), Limit: int(limit)}
	for name, v := range map[string]string{"did": q.DID, "after": q.After} {
		if v != "" {
			if _, err := identity.ParseDID(v); err != nil {
				return withDetail(ErrBadRequest, "%s: %v", name, err)
			}
		}
	}
	switch c.QueryParam("inputs") {
	case "", "0", "false":
	case "1", "true":
		q.Inputs = true
	default:
		return withDetail(ErrBadRequest, "inputs must be 1 or 0")
	}
	sh, err := s.cfg.ScoredHeads.ScoredHead(c.Request().Context(), q)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, sh)
}

// scoreHistory: the agent's score at each scored head the node keeps, oldest first.
func (s *Server) scoreHistory(c echo.Context) error {
	did, err := pathDID(c)
	if err != nil {
		return err
	}
	points, err := s.cfg.ScoredHeads.ScoreHistory(c.Request().Context(), did)
	if err != nil {
		return err
	}
	out := wire.ScoreHistory{DID: did, Points: make([]wire.ScorePoint, len(points))}
	for i, p := range points {
		out.Points[i] = wire.ScorePoint(p)
	}
	return c.JSON(http.StatusOK, out)
}
