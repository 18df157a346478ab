package jobs_test

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/google/go-cmp/cmp"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/jobs"
	"github.com/surety-ioa/surety/txn"
)

var eth = big.NewInt(1e18)

// fixture is an embedded chain with a JobEscrow (owned by dev account 0, its treasury), a
// DevToken, and senders for the client (1), the provider (2) and the evaluator (3).
type fixture struct {
	t                           testing.TB
	c                           *chain.Embedded
	escrow, token               common.Address
	start                       uint64
	abi                         *contracts.JobEscrow
	client, provider, evaluator *txn.Sender
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(5, chain.DefaultDevBalance)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx := context.Background()
	f := &fixture{t: t, c: c, abi: contracts.NewJobEscrow()}
	head, err := c.BlockNumber(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.start = head + 1
	if f.token, err = contracts.DeployDevToken(ctx, c, chain.DevKey(0), "Dev", "DEV"); err != nil {
		t.Fatal(err)
	}
	owner := txn.NewKeySigner(chain.DevKey(0)).Address()
	opts := bind.NewKeyedTransactor(chain.DevKey(0), big.NewInt(chain.EmbeddedChainID))
	addr, tx, err := bind.DeployContract(opts, common.FromHex(contracts.JobEscrowMetaData.Bin), c, f.abi.PackConstructor(owner, owner))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chain.WaitMined(ctx, c, tx.Hash()); err != nil {
		t.Fatal(err)
	}
	f.escrow = addr
	for i, dst := range []**txn.Sender{&f.client, &f.provider, &f.evaluator} {
		s, err := txn.NewSender(ctx, c, txn.NewKeySigner(chain.DevKey(i+1)), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		*dst = s
	}
	tok := contracts.NewDevToken()
	f.send(f.client, f.token, tok.PackMint(f.client.Address(), new(big.Int).Mul(eth, big.NewInt(100))))
	f.send(f.client, f.token, tok.PackApprove(f.escrow, new(big.Int).Lsh(big.NewInt(1), 255)))
	return f
}

func (f *fixture) send(s *txn.Sender, to common.Address, data []byte) *types.Receipt {
	f.t.Helper()
	r, err := s.Send(context.Background(), txn.Call{To: to, Data: data, Decode: jobs.Decoder(0, "")})
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

// create opens a job from the client (provider zero: none yet) and returns its id.
func (f *fixture) create(provider common.Address, desc string) uint64 {
	f.t.Helper()
	head, err := f.c.HeaderByNumber(context.Background(), nil)
	if err != nil {
		f.t.Fatal(err)
	}
	r := f.send(f.client, f.escrow, f.abi.PackCreateJob(provider, f.evaluator.Address(), new(big.Int).SetUint64(head.Time+3600), desc, common.Address{}, big.NewInt(42)))
	id, ok := jobs.CreatedID(r, f.escrow)
	if !ok {
		f.t.Fatal("createJob recorded no job")
	}
	return id
}

// funded creates a job with the provider, sets its budget and funds it.
func (f *fixture) funded(amount *big.Int) uint64 {
	f.t.Helper()
	id := f.create(f.provider.Address(), "summarize the paper")
	jid := new(big.Int).SetUint64(id)
	f.send(f.client, f.escrow, f.abi.PackSetBudget(jid, f.token, amount, nil))
	f.send(f.client, f.escrow, f.abi.PackFund(jid, amount, nil))
	return id
}

func (f *fixture) indexer(db *testutil.SQL, confirmations uint64) *jobs.Indexer {
	f.t.Helper()
	ctx := context.Background()
	row, err := sqlite.EnterChain(ctx, db.DB, sqlite.Chain{Key: "test", ChainID: chain.EmbeddedChainID, Genesis: "g", Contracts: "{}"})
	if err != nil {
		f.t.Fatal(err)
	}
	ix, err := jobs.NewIndexer(ctx, jobs.IndexerConfig{DB: db.DB, Chain: row, Client: f.c, Caller: f.c, JobEscrow: f.escrow,
		StartBlock: f.start, Confirmations: confirmations})
	if err != nil {
		f.t.Fatal(err)
	}
	return ix
}

func statuses(t *testing.T, ix *jobs.Indexer, filter jobs.Filter) map[uint64]jobs.Status {
	t.Helper()
	list, err := ix.List(context.Background(), filter)
	if err != nil {
		t.Fatal(err)
	}
	out := map[uint64]jobs.Status{}
	for _, j := range list {
		out[j.ID] = j.Status
	}
	return out
}

func names(h []jobs.Event) []string {
	var out []string
	for _, e := range h {
		out = append(out, e.Name)
	}
	return out
}

func TestIndexerFollowsEveryTransition(t *testing.T) {
	f := newFixture(t)
	db := testutil.OpenSQL(t)
	ix := f.indexer(db, 0)
	ctx := context.Background()

	completed := f.funded(eth)
	f.send(f.provider, f.escrow, f.abi.PackSubmit(new(big.Int).SetUint64(completed), [32]byte{2}, nil))
	f.send(f.evaluator, f.escrow, f.abi.PackComplete(new(big.Int).SetUint64(completed), [32]byte{3}, nil))

	rejected := f.funded(new(big.Int).Mul(eth, big.NewInt(2)))
	f.send(f.evaluator, f.escrow, f.abi.PackReject(new(big.Int).SetUint64(rejected), [32]byte{4}, nil))

	long := "no provider yet: " + strings.Repeat("a description longer than a storage slot, ", 8)
	open := f.create(common.Address{}, long)
	f.send(f.client, f.escrow, f.abi.PackSetProvider(new(big.Int).SetUint64(open), f.provider.Address(), big.NewInt(7)))

	expired := f.funded(eth)
	if err := f.c.AdvanceTime(2 * time.Hour); err != nil {
		t.Fatal(err)
	}
	f.send(f.evaluator, f.escrow, f.abi.PackClaimRefund(new(big.Int).SetUint64(expired)))

	if _, err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[uint64]jobs.Status{completed: jobs.StatusCompleted, rejected: jobs.StatusRejected, open: jobs.StatusOpen, expired: jobs.StatusExpired}
	if diff := cmp.Diff(want, statuses(t, ix, jobs.Filter{})); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	j, err := ix.Get(ctx, completed)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"JobCreated", "BudgetSet", "JobFunded", "JobSubmitted", "JobCompleted", "PaymentReleased"}, names(j.History)); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	// A job's answer lists its latest events, in chain order, when it has more than the cap.
	if last, err := jobs.LatestEvents(ix, ctx, completed, 2); err != nil || !cmp.Equal([]string{"JobCompleted", "PaymentReleased"}, names(last)) {
		t.Errorf("the latest 2 events: %v, %v", names(last), err)
	}
	if j.Client != f.client.Address() || j.Provider != f.provider.Address() || j.Evaluator != f.evaluator.Address() || j.Token != f.token ||
		j.Budget != eth.String() || j.Payout != eth.String() || j.Description != "summarize the paper" || j.ProviderAgentID != "42" ||
		j.Deliverable != (common.Hash{2}).Hex() || j.Reason != (common.Hash{3}).Hex() {
		t.Errorf("completed job = %+v", j)
	}
	if j, _ = ix.Get(ctx, rejected); j.Refund != "2000000000000000000" || j.RejectedBy != f.evaluator.Address() {
		t.Errorf("rejected job: refund %s by %s", j.Refund, j.RejectedBy)
	}
	if j, _ = ix.Get(ctx, open); j.Provider != f.provider.Address() || j.ProviderAgentID != "7" || j.Description != long {
		t.Errorf("open job after setProvider: provider %s, agent %s, %q", j.Provider, j.ProviderAgentID, j.Description)
	}
	if j, _ = ix.Get(ctx, expired); j.Refund != eth.String() || names(j.History)[len(j.History)-1] != "JobExpired" {
		t.Errorf("expired job: refund %s, history %v", j.Refund, names(j.History))
	}
	// Filters and pages.
	if got := statuses(t, ix, jobs.Filter{Status: jobs.StatusOpen}); len(got) != 1 || got[open] != jobs.StatusOpen {
		t.Errorf("status open: %v", got)
	}
	if got := statuses(t, ix, jobs.Filter{Client: f.provider.Address()}); len(got) != 0 {
		t.Errorf("client = the provider: %v", got)
	}
	if got := statuses(t, ix, jobs.Filter{Provider: f.provider.Address(), After: completed, Limit: 2}); len(got) != 2 || got[completed] != "" {
		t.Errorf("provider's second page of 2: %v", got)
	}
	if _, err := ix.Get(ctx, 99); !errors.Is(err, jobs.ErrUnknownJob) {
		t.Errorf("Get(99) = %v, want ErrUnknownJob", err)
	}
}

func TestIndexerResumesWithoutDuplicates(t *testing.T) {
	f := newFixture(t)
	db := testutil.OpenSQL(t)
	ctx := context.Background()
	ix := f.indexer(db, 0)
	f.funded(eth)
	f.create(common.Address{}, "two")
	if _, err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	at := ix.Indexed()
	again := f.indexer(db, 0)
	if again.Indexed() != at {
		t.Fatalf("reopened index starts at %d, want %d", again.Indexed(), at)
	}
	id := f.funded(eth)
	f.send(f.evaluator, f.escrow, f.abi.PackReject(new(big.Int).SetUint64(id), [32]byte{}, nil))
	for range 2 { // a second sync changes nothing
		if _, err := again.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	logs, err := f.c.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: new(big.Int).SetUint64(f.start), Addresses: []common.Address{f.escrow}})
	if err != nil {
		t.Fatal(err)
	}
	n, events, err := again.Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 || events != len(logs) {
		t.Errorf("index holds %d jobs and %d events, want 3 and %d", n, events, len(logs))
	}
}

func TestIndexerSurvivesReorg(t *testing.T) {
	f := newFixture(t)
	db := testutil.OpenSQL(t)
	ctx := context.Background()
	ix := f.indexer(db, 0)
	first := f.create(f.provider.Address(), "first")
	base, err := f.c.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	replaced := f.create(f.provider.Address(), "replaced")
	if _, err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	// Fork before the second job and make the fork win with another job, which takes the
	// same id: the first version of job 2 is gone.
	if err := f.c.Fork(base.Hash()); err != nil {
		t.Fatal(err)
	}
	client, err := txn.NewSender(ctx, f.c, txn.NewKeySigner(chain.DevKey(1)), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	f.client = client
	again := f.create(f.provider.Address(), "the fork's")
	f.c.Mine()
	if again != replaced || first == again {
		t.Fatalf("fork's job got id %d, want %d", again, replaced)
	}
	if _, err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	j, err := ix.Get(ctx, replaced)
	if err != nil {
		t.Fatal(err)
	}
	if j.Description != "the fork's" || len(j.History) != 1 {
		t.Errorf("after the reorg job %d = %q with %d events, want the fork's alone", replaced, j.Description, len(j.History))
	}
}

func TestWaitsForConfirmations(t *testing.T) {
	f := newFixture(t)
	db := testutil.OpenSQL(t)
	ctx := context.Background()
	ix := f.indexer(db, 2)
	id := f.create(f.provider.Address(), "x")
	if _, err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := statuses(t, ix, jobs.Filter{})[id]; ok {
		t.Fatal("indexed a job with no confirmations")
	}
	// The service tells a job the chain has from one it does not.
	svc := jobs.NewService(jobs.ServiceConfig{Indexer: ix, Chain: f.c, JobEscrow: f.escrow})
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err := svc.Get(cctx, id)
	var je *jobs.JobError
	if !errors.As(err, &je) || !errors.Is(err, jobs.ErrUnknownJob) || je.Msg != "job 1 exists on chain but is not indexed yet on this node; try again shortly" {
		t.Errorf("Get of a job the chain has and the index not yet: %v", err)
	}
	if _, err := svc.Get(cctx, id+1); err == nil || err.Error() != "job 2 does not exist" {
		t.Errorf("Get of a job nobody has: %v", err)
	}
	f.c.Mine()
	f.c.Mine()
	if _, err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if statuses(t, ix, jobs.Filter{})[id] != jobs.StatusOpen {
		t.Error("job not indexed after 2 confirmations")
	}
}

// TestRevertsDecode: a refused call is refused before anything is sent, with the contract's
// custom error decoded into the package's errors.
func TestRevertsDecode(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	id := f.funded(eth)
	jid := new(big.Int).SetUint64(id)
	for _, tt := range []struct {
		name string
		from *txn.Sender
		data []byte
		want error
	}{
		{"complete before submit", f.evaluator, f.abi.PackComplete(jid, [32]byte{}, nil), jobs.ErrWrongStatus},
		{"submit by the client", f.client, f.abi.PackSubmit(jid, [32]byte{}, nil), jobs.ErrNotAllowed},
		{"unknown job", f.client, f.abi.PackClaimRefund(big.NewInt(99)), jobs.ErrUnknownJob},
		{"refund before expiry", f.client, f.abi.PackClaimRefund(jid), jobs.ErrWrongStatus},
		{"provider is evaluator", f.client, f.abi.PackCreateJob(f.evaluator.Address(), f.evaluator.Address(), big.NewInt(1<<40), "", common.Address{}, big.NewInt(0)), jobs.ErrInvalid},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.from.Send(ctx, txn.Call{To: f.escrow, Data: tt.data, Decode: jobs.Decoder(id, jobs.StatusFunded)})
			var je *jobs.JobError
			if !errors.Is(err, tt.want) || !errors.As(err, &je) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
		})
	}
}

// prunedChain answers calls at the head only, as a chain node that keeps no old state does;
// with dead set, it answers none.
type prunedChain struct {
	*chain.Embedded
	dead bool
}

func (p prunedChain) CallContract(ctx context.Context, call ethereum.CallMsg, block *big.Int) ([]byte, error) {
	if p.dead || block != nil {
		return nil, errors.New("missing trie node")
	}
	return p.Embedded.CallContract(ctx, call, nil)
}

// TestDescriptionNeverStallsTheIndex: a chain that cannot answer getJob at the creation block
// is asked at its head (a description never changes); one that cannot answer at all leaves
// the description out, and the index goes on.
func TestDescriptionNeverStallsTheIndex(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	id := f.create(f.provider.Address(), "kept at the head")
	for _, tt := range []struct {
		name string
		dead bool
		want string
	}{{"pruned", false, "kept at the head"}, {"dead", true, ""}} {
		t.Run(tt.name, func(t *testing.T) {
			db := testutil.OpenSQL(t)
			row, err := sqlite.EnterChain(ctx, db.DB, sqlite.Chain{Key: "test", ChainID: chain.EmbeddedChainID, Genesis: "g", Contracts: "{}"})
			if err != nil {
				t.Fatal(err)
			}
			ix, err := jobs.NewIndexer(ctx, jobs.IndexerConfig{DB: db.DB, Chain: row, Client: f.c, Caller: prunedChain{f.c, tt.dead}, JobEscrow: f.escrow, StartBlock: f.start})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ix.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			j, err := ix.Get(ctx, id)
			if err != nil || j.Description != tt.want {
				t.Errorf("job %d: %v, description %q, want %q", id, err, j.Description, tt.want)
			}
		})
	}
}

// lockProbe is a chain whose every call first writes to the database, as another index or a
// request would while the job index reads getJob: it records whether that write got through.
type lockProbe struct {
	*chain.Embedded
	db     *testutil.SQL
	writes []error
}

func (p *lockProbe) CallContract(ctx context.Context, call ethereum.CallMsg, block *big.Int) ([]byte, error) {
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err := p.db.DB.ExecContext(wctx, `CREATE TABLE IF NOT EXISTS probe (x INTEGER); INSERT INTO probe VALUES (1)`)
	p.writes = append(p.writes, err)
	return p.Embedded.CallContract(ctx, call, block)
}

// TestChainReadsHoldNoLock: the index reads getJob before its batch's write transaction, so
// a slow chain never holds the database lock every index and request shares.
func TestChainReadsHoldNoLock(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.create(f.provider.Address(), "one")
	f.create(f.provider.Address(), "two")
	db := testutil.OpenSQL(t)
	row, err := sqlite.EnterChain(ctx, db.DB, sqlite.Chain{Key: "test", ChainID: chain.EmbeddedChainID, Genesis: "g", Contracts: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	probe := &lockProbe{Embedded: f.c, db: db}
	ix, err := jobs.NewIndexer(ctx, jobs.IndexerConfig{DB: db.DB, Chain: row, Client: f.c, Caller: probe, JobEscrow: f.escrow, StartBlock: f.start})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if len(probe.writes) != 2 {
		t.Fatalf("%d getJob reads, want 2", len(probe.writes))
	}
	for i, err := range probe.writes {
		if err != nil {
			t.Errorf("a write during getJob read %d: %v (the index held the database)", i, err)
		}
	}
	if j, err := ix.Get(ctx, 2); err != nil || j.Description != "two" {
		t.Errorf("job 2: %v %+v", err, j)
	}
}
