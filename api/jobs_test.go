package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/jobs"
)

// missingJobs holds no job: job 5 is on chain and not indexed yet, the rest do not exist.
type missingJobs struct{ stubJobs }

func (missingJobs) Get(_ context.Context, id uint64) (*jobs.Job, error) {
	return nil, jobs.Unknown(id, id == 5)
}

func (missingJobs) List(context.Context, jobs.Filter) ([]*jobs.Job, error) { return []*jobs.Job{}, nil }

// TestJobRoutesAnswerProblems: a job the node does not hold is a 404 unknown-job whose detail
// tells "not indexed yet on this node" from "does not exist", and bad parameters are 400s.
func TestJobRoutesAnswerProblems(t *testing.T) {
	s, err := api.New(api.Config{Blocks: stubBlocks{}, DB: stubDB{}, Identity: stubIdentity{}, Jobs: missingJobs{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path, slug, detail string
		status             int
	}{
		{"/v1/jobs/5", "unknown-job", "job 5 exists on chain but is not indexed yet on this node; try again shortly", http.StatusNotFound},
		{"/v1/jobs/6", "unknown-job", "job 6 does not exist", http.StatusNotFound},
		{"/v1/jobs/0", "bad-request", `job id "0" must be a positive integer`, http.StatusBadRequest},
		{"/v1/jobs?status=paid", "bad-request", `unknown status "paid" (open, funded, submitted, completed, rejected or expired)`, http.StatusBadRequest},
		{"/v1/jobs?provider=nobody", "bad-request", `provider "nobody" is not an address`, http.StatusBadRequest},
	} {
		t.Run(tt.path, func(t *testing.T) {
			rec := do(t, s.Handler(), http.MethodGet, tt.path, "", nil)
			p := problemOf(t, rec)
			if rec.Code != tt.status || p.Type != "https://surety.dev/problems/"+tt.slug || p.Detail != tt.detail {
				t.Errorf("%d %+v; want %d %s %q", rec.Code, p, tt.status, tt.slug, tt.detail)
			}
		})
	}
	if rec := do(t, s.Handler(), http.MethodGet, "/v1/jobs?status=funded", "", nil); rec.Code != http.StatusOK || rec.Body.String() != "{\"jobs\":[]}\n" {
		t.Errorf("an empty list: %d %s", rec.Code, rec.Body)
	}
}
