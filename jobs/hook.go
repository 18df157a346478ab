package jobs

import (
	"context"
	"database/sql"
	"errors"

	"github.com/ethereum/go-ethereum/accounts/abi"
)

// hookABI is SuretyHook's ABI.
func hookABI() (*abi.ABI, error) {
	return nil, errors.New("jobs: this build knows no SuretyHook ABI")
}

// projectHook applies a SuretyHook event to its job's rows: a worker it names joins the
// job's workers (a list by provider finds the jobs a worker competes in).
func (ix *Indexer) projectHook(ctx context.Context, tx *sql.Tx, ev Event, a Args, set func(string, ...any) error, exec func(string, ...any) error) error {
	if w := a.Address("worker"); w != ([20]byte{}) {
		return exec(`INSERT INTO jobs_workers (chain, job_id, worker) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, ix.cfg.Chain, int64(ev.JobID), w.Hex())
	}
	return nil
}

// revertUnpackers are the generated error decoders of the job contracts, JobEscrow's first.
func revertUnpackers() []func([]byte) (any, error) {
	return []func([]byte) (any, error){contractsJobEscrow().UnpackError}
}

// decodeHookValue maps SuretyHook's custom errors (nil for one it has no sentinel for).
func decodeHookValue(v any, id uint64, status Status) *JobError {
	return nil
}
