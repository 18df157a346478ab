package api

import (
	"context"
	"net/http"
	"strconv"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/labstack/echo/v4"

	"github.com/surety-ioa/surety/jobs"
)

// Jobs is what the job routes need: the index of ERC-8183 jobs (JobEscrow and SuretyHook).
// Get returns a *jobs.JobError wrapping jobs.ErrUnknownJob for a job the node does not hold,
// saying whether the chain has it (not indexed yet on this node) or not.
type Jobs interface {
	List(ctx context.Context, f jobs.Filter) ([]*jobs.Job, error)
	Get(ctx context.Context, id uint64) (*jobs.Job, error)
	// Contracts are the job contracts (JobEscrow, SuretyHook) whose calls POST /v1/rpc
	// relays with Broadcast, as it relays the escrow's and the stake registry's.
	Contracts() []common.Address
	Broadcast(ctx context.Context, raw []byte) (*types.Transaction, error)
}

// listJobs answers GET /v1/jobs: indexed jobs by id, filtered by status, client, provider
// (the provider of record or a worker who entered through the hook) and evaluator, paged
// with after and limit.
func (s *Server) listJobs(c echo.Context) error {
	var f jobs.Filter
	q := c.QueryParams()
	if st := q.Get("status"); st != "" {
		f.Status = jobs.Status(st)
		if !f.Status.Valid() {
			return withDetail(ErrBadRequest, "unknown status %q (open, funded, submitted, completed, rejected or expired)", st)
		}
	}
	for name, dst := range map[string]*common.Address{"client": &f.Client, "provider": &f.Provider, "evaluator": &f.Evaluator} {
		if v := q.Get(name); v != "" {
			if !common.IsHexAddress(v) {
				return withDetail(ErrBadRequest, "%s %q is not an address", name, v)
			}
			*dst = common.HexToAddress(v)
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return withDetail(ErrBadRequest, "limit must be a non-negative integer")
		}
		f.Limit = n
	}
	if v := q.Get("after"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return withDetail(ErrBadRequest, "after must be a job id")
		}
		f.After = n
	}
	list, err := s.cfg.Jobs.List(c.Request().Context(), f)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, JobList{Jobs: list})
}

// JobList is the body of GET /v1/jobs.
type JobList struct {
	Jobs []*jobs.Job `json:"jobs"`
}

// getJob answers GET /v1/jobs/{id}: the job with its workers and its events in chain order.
func (s *Server) getJob(c echo.Context) error {
	id, err := strconv.ParseUint(c.Param("id"), 10, 64)
	if err != nil || id == 0 {
		return withDetail(ErrBadRequest, "job id %q must be a positive integer", c.Param("id"))
	}
	j, err := s.cfg.Jobs.Get(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, j)
}
