// Package jobs is the Go side of ERC-8183 jobs (JobEscrow, the standard's job escrow, and
// SuretyHook, the hook that brings Surety's extras to it): an index of both contracts' events
// in SQLite, followed crash- and reorg-safely through internal/chainlog like the bounty index,
// and the queries the API and the CLI read (a job with its plan, entries and milestones; a
// list filtered by client, provider and status, paged). It also builds the contracts' calls
// for a client's own wallet and decodes their reverts into its own errors.
//
// Every event is kept as it came (its arguments as JSON, under the job it names), and the job
// rows are a projection of them: a reorganization deeper than the confirmation depth rolls
// the events back and rebuilds the rows from what remains. A job's description and its
// provider's agent id are not in any event of the standard; the index reads them with
// getJob at the block that created the job, when it has a chain to call.
package jobs
