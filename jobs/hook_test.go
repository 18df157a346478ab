package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/jobs"
	"github.com/surety-ioa/surety/txn"
)

// suretyFixture is a whole deployment (JobEscrow and SuretyHook as contracts.Deploy makes
// them) on an embedded chain, a DevToken the client (dev account 1) holds, an arbiter (2) and
// four workers (3-6).
type suretyFixture struct {
	t             testing.TB
	c             *chain.Embedded
	dep           *contracts.Deployment
	token, pool   common.Address
	client, arbit *txn.Sender
	workers       []*txn.Sender
	escrow        *contracts.JobEscrow
	hook          *contracts.SuretyHook
	ix            *jobs.Indexer
}

func newSuretyFixture(t *testing.T) *suretyFixture {
	t.Helper()
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(8, chain.DefaultDevBalance)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx := context.Background()
	dep, err := contracts.Deploy(ctx, c, chain.DevKey(0), contracts.DeployConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &suretyFixture{t: t, c: c, dep: dep, escrow: contracts.NewJobEscrow(), hook: contracts.NewSuretyHook()}
	if f.token, err = contracts.DeployDevToken(ctx, c, chain.DevKey(0), "Dev", "DEV"); err != nil {
		t.Fatal(err)
	}
	if f.pool, err = bind.Call(f.hook.Instance(c, dep.Contracts.SuretyHook), nil, f.hook.PackPool(), f.hook.UnpackPool); err != nil {
		t.Fatal(err)
	}
	sender := func(i int) *txn.Sender {
		s, err := txn.NewSender(ctx, c, txn.NewKeySigner(chain.DevKey(i)), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	f.client, f.arbit = sender(1), sender(2)
	for i := 3; i < 7; i++ {
		f.workers = append(f.workers, sender(i))
	}
	tok := contracts.NewDevToken()
	f.send(f.client, f.token, tok.PackMint(f.client.Address(), new(big.Int).Mul(eth, big.NewInt(100))))
	f.send(f.client, f.token, tok.PackApprove(dep.Contracts.JobEscrow, new(big.Int).Lsh(big.NewInt(1), 255)))
	db := testutil.OpenSQL(t)
	row, err := sqlite.EnterChain(ctx, db.DB, sqlite.Chain{Key: "test", ChainID: chain.EmbeddedChainID, Genesis: "g", Contracts: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	if f.ix, err = jobs.NewIndexer(ctx, jobs.IndexerConfig{DB: db.DB, Chain: row, Client: c, Caller: c, JobEscrow: dep.Contracts.JobEscrow,
		Hook: dep.Contracts.SuretyHook, StartBlock: dep.Block}); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *suretyFixture) send(s *txn.Sender, to common.Address, data []byte) {
	f.t.Helper()
	if _, err := s.Send(context.Background(), txn.Call{To: to, Data: data, Decode: jobs.Decoder(0, "")}); err != nil {
		f.t.Fatal(err)
	}
}

// open creates a Surety job with the plan and budget, funds it, and returns its id.
func (f *suretyFixture) open(budget *big.Int, plan jobs.Plan) uint64 {
	f.t.Helper()
	ctx := context.Background()
	head, err := f.c.HeaderByNumber(ctx, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	data, err := jobs.SuretyCreate(jobs.CreateRequest{ExpiredAt: head.Time + 7*24*3600, Description: "a Surety job"}, f.dep.Contracts.SuretyHook, f.pool)
	if err != nil {
		f.t.Fatal(err)
	}
	r, err := f.client.Send(ctx, txn.Call{To: f.dep.Contracts.JobEscrow, Data: data})
	if err != nil {
		f.t.Fatal(err)
	}
	id, ok := jobs.CreatedID(r, f.dep.Contracts.JobEscrow)
	if !ok {
		f.t.Fatal("no job created")
	}
	plan.Arbiter = f.arbit.Address()
	if plan.ReviewWindow == 0 {
		plan.ReviewWindow, plan.ArbiterTime = 3600, 3600
	}
	opt, err := jobs.PlanData(plan)
	if err != nil {
		f.t.Fatal(err)
	}
	j := &jobs.Job{ID: id, Status: jobs.StatusOpen, Provider: f.pool, Budget: budget.String()}
	for _, a := range []struct {
		action jobs.Action
		args   jobs.ActionArgs
	}{{jobs.ActionBudget, jobs.ActionArgs{Token: f.token, Amount: budget, OptParams: opt}}, {jobs.ActionFund, jobs.ActionArgs{}}} {
		data, err := jobs.ActionData(j, a.action, a.args)
		if err != nil {
			f.t.Fatal(err)
		}
		f.send(f.client, f.dep.Contracts.JobEscrow, data)
	}
	return id
}

// act sends a hook call on job id from s.
func (f *suretyFixture) act(s *txn.Sender, id uint64, action jobs.Action, a jobs.HookArgs) {
	f.t.Helper()
	data, err := jobs.HookActionData(&jobs.Job{ID: id}, action, a)
	if err != nil {
		f.t.Fatal(err)
	}
	f.send(s, f.dep.Contracts.SuretyHook, data)
}

func (f *suretyFixture) get(id uint64) *jobs.Job {
	f.t.Helper()
	ctx := context.Background()
	if _, err := f.ix.Sync(ctx); err != nil {
		f.t.Fatal(err)
	}
	j, err := f.ix.Get(ctx, id)
	if err != nil {
		f.t.Fatal(err)
	}
	return j
}

// TestCompetingWorkersShareTheBudget: three workers join and submit one job, the client picks
// two and splits the budget 60/40; the index shows every entry, the awards, the settlement,
// and a list by provider finds the job for each worker who entered.
func TestCompetingWorkersShareTheBudget(t *testing.T) {
	f := newSuretyFixture(t)
	id := f.open(new(big.Int).Mul(eth, big.NewInt(10)), jobs.Plan{MaxEntries: 3, MaxWinners: 2})
	for i, w := range f.workers[:3] {
		f.act(w, id, jobs.ActionJoin, jobs.HookArgs{})
		f.act(w, id, jobs.ActionSubmit, jobs.HookArgs{Hash: common.Hash{byte(i + 1)}})
	}
	if j := f.get(id); j.Status != jobs.StatusSubmitted || j.Surety == nil || j.Surety.Phase != "open" || len(j.Surety.Entries) != 3 {
		t.Fatalf("after three entries: status %s, surety %+v", j.Status, j.Surety)
	}
	a, b := f.workers[0].Address(), f.workers[2].Address()
	f.act(f.client, id, jobs.ActionPick, jobs.HookArgs{Winners: []common.Address{a, b}, Bps: []uint16{6000, 4000}})
	j := f.get(id)
	if j.Status != jobs.StatusCompleted || j.Surety.Phase != "settled" || j.Surety.Settlement == nil || j.Surety.Settlement.Outcome != "approved" ||
		j.Surety.Settlement.ToWorkers != "10000000000000000000" {
		t.Fatalf("after the pick: status %s, surety %+v", j.Status, j.Surety)
	}
	paid := map[common.Address]string{}
	for _, e := range j.Surety.Entries {
		paid[e.Worker] = e.Amount
		if e.Deliverable == "" {
			t.Errorf("entry of %s has no deliverable", e.Worker)
		}
	}
	if paid[a] != "6000000000000000000" || paid[b] != "4000000000000000000" || paid[f.workers[1].Address()] != "" {
		t.Errorf("awards = %v, want 6 and 4 tokens to the winners, nothing to the loser", paid)
	}
	if len(j.Workers) != 3 || j.Workers[0] != a {
		t.Errorf("workers = %v", j.Workers)
	}
	for _, w := range f.workers[:3] {
		list, err := f.ix.List(context.Background(), jobs.Filter{Provider: w.Address()})
		if err != nil || len(list) != 1 || list[0].ID != id {
			t.Errorf("jobs of worker %s: %v %v", w.Address(), list, err)
		}
	}
}

// TestDisputeIsSplitByTheArbiter: the client's rejection through the hook opens a dispute, and
// the arbiter's ruling splits the budget; the index shows both.
func TestDisputeIsSplitByTheArbiter(t *testing.T) {
	f := newSuretyFixture(t)
	w := f.workers[0]
	id := f.open(new(big.Int).Mul(eth, big.NewInt(4)), jobs.Plan{MaxEntries: 1, MaxWinners: 1})
	f.act(w, id, jobs.ActionJoin, jobs.HookArgs{})
	f.act(w, id, jobs.ActionSubmit, jobs.HookArgs{Hash: common.Hash{7}})
	f.act(f.client, id, jobs.ActionDispute, jobs.HookArgs{Hash: common.Hash{8}})
	if j := f.get(id); j.Surety.Phase != "disputed" || j.Surety.Dispute == nil || j.Surety.Dispute.By != f.client.Address() {
		t.Fatalf("after the rejection: %+v", j.Surety)
	}
	if list, err := f.ix.List(context.Background(), jobs.Filter{}); err != nil || len(list) != 1 || list[0].Surety == nil || list[0].Surety.Phase != "disputed" {
		t.Errorf("the list shows no phase: %v %+v", err, list)
	}
	f.act(f.arbit, id, jobs.ActionResolve, jobs.HookArgs{Winners: []common.Address{w.Address()}, Bps: []uint16{2500}})
	j := f.get(id)
	st := j.Surety.Settlement
	if st == nil || st.Outcome != "resolved" || st.ToWorkers != "1000000000000000000" || st.ToClient != "3000000000000000000" || j.Status != jobs.StatusCompleted {
		t.Errorf("after the ruling: status %s, settlement %+v", j.Status, st)
	}
}

// TestMilestonesPayEachPart: a job of three parts chained by prevPart; the worker of the first
// joins each, and each part is approved and paid on its own; every part lists the parts.
func TestMilestonesPayEachPart(t *testing.T) {
	f := newSuretyFixture(t)
	w := f.workers[0]
	var ids []uint64
	for i := range 3 {
		plan := jobs.Plan{MaxEntries: 1, MaxWinners: 1, Worker: w.Address()}
		if i > 0 {
			plan.PrevPart = new(big.Int).SetUint64(ids[i-1])
		}
		ids = append(ids, f.open(new(big.Int).Mul(eth, big.NewInt(int64(i+1))), plan))
	}
	for i, id := range ids {
		f.act(w, id, jobs.ActionJoin, jobs.HookArgs{})
		f.act(w, id, jobs.ActionSubmit, jobs.HookArgs{Hash: common.Hash{byte(i)}})
		f.act(f.client, id, jobs.ActionApprove, jobs.HookArgs{})
		j := f.get(id)
		want := new(big.Int).Mul(eth, big.NewInt(int64(i+1))).String()
		if j.Status != jobs.StatusCompleted || j.Surety.Settlement == nil || j.Surety.Entries[0].Amount != want {
			t.Errorf("part %d: status %s, surety %+v", i+1, j.Status, j.Surety)
		}
		if len(j.Surety.Parts) != 3 || j.Surety.Parts[0] != ids[0] || j.Surety.Parts[2] != ids[2] {
			t.Errorf("part %d lists parts %v, want %v", i+1, j.Surety.Parts, ids)
		}
		if i+1 < len(ids) {
			if next := f.get(ids[i+1]); next.Status != jobs.StatusFunded {
				t.Errorf("part %d is %s before its turn, want funded and waiting", i+2, next.Status)
			}
		}
	}
	var plan map[string]any
	if err := json.Unmarshal(f.get(ids[1]).Surety.Plan, &plan); err != nil || plan["prevPart"] == nil {
		t.Errorf("part 2's plan = %v (%v), want its prevPart", plan, err)
	}
}

// TestStakeGateRefusesAnUnstakedWorker: a plan with a minStake locks the joining worker's
// agent stake; an agent with none under the worker's wallet is refused before anything is
// sent, decoded as ErrInsufficientStake with a message that says why.
func TestStakeGateRefusesAnUnstakedWorker(t *testing.T) {
	f := newSuretyFixture(t)
	id := f.open(eth, jobs.Plan{MaxEntries: 1, MaxWinners: 1, MinStake: big.NewInt(1e17)})
	data, err := jobs.HookActionData(&jobs.Job{ID: id}, jobs.ActionJoin, jobs.HookArgs{AgentID: common.Hash{9}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.workers[0].Send(context.Background(), txn.Call{To: f.dep.Contracts.SuretyHook, Data: data, Decode: jobs.Decoder(id, jobs.StatusFunded)})
	var je *jobs.JobError
	if !errors.Is(err, jobs.ErrInsufficientStake) || !errors.As(err, &je) || !strings.Contains(je.Msg, "no stake to lock") {
		t.Errorf("join without stake: %v", err)
	}
	if j := f.get(id); len(j.Surety.Entries) != 0 {
		t.Errorf("the refused join left entries: %+v", j.Surety.Entries)
	}
}

// TestPlanDataIsCasts: a plan's optParams are the bytes cast abi-encodes for the Plan tuple
// (clients/ts's encodePlan is held to the same bytes): what a cast user, the TypeScript
// client and surety job send to SuretyHook is one encoding.
func TestPlanDataIsCasts(t *testing.T) {
	// cast abi-encode "f((address,uint32,uint32,uint16,uint16,uint128,address,uint256))" \
	//   "(0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC,3600,86400,3,2,1000000000000000000,0x0000000000000000000000000000000000000000,7)"
	const cast = "0x0000000000000000000000003c44cdddb6a900fa2b585dd299e03d12fa4293bc0000000000000000000000000000000000000000000000000000000000000e100000000000000000000000000000000000000000000000000000000000015180000000000000000000000000000000000000000000000000000000000000000300000000000000000000000000000000000000000000000000000000000000020000000000000000000000000000000000000000000000000de0b6b3a764000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000007"
	got, err := jobs.PlanData(jobs.Plan{Arbiter: common.HexToAddress("0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"), ReviewWindow: 3600, ArbiterTime: 86400,
		MaxEntries: 3, MaxWinners: 2, MinStake: eth, PrevPart: big.NewInt(7)})
	if err != nil {
		t.Fatal(err)
	}
	if hexutil.Encode(got) != cast {
		t.Errorf("PlanData = %s, want cast's %s", hexutil.Encode(got), cast)
	}
}

// TestSubmitWithoutJoining: on a job without a stake gate a worker may submit without
// joining first; the submission is its entry, and a list by provider finds the job for it.
func TestSubmitWithoutJoining(t *testing.T) {
	f := newSuretyFixture(t)
	id := f.open(eth, jobs.Plan{MaxEntries: 2, MaxWinners: 1})
	w := f.workers[1]
	f.act(w, id, jobs.ActionSubmit, jobs.HookArgs{Hash: common.Hash{5}})
	j := f.get(id)
	if len(j.Surety.Entries) != 1 || j.Surety.Entries[0].Worker != w.Address() || j.Surety.Entries[0].Deliverable != (common.Hash{5}).Hex() {
		t.Fatalf("entries after a submission without a join: %+v", j.Surety.Entries)
	}
	if list, err := f.ix.List(context.Background(), jobs.Filter{Provider: w.Address()}); err != nil || len(list) != 1 {
		t.Errorf("jobs of the worker: %v %v", list, err)
	}
	f.act(f.client, id, jobs.ActionPick, jobs.HookArgs{Winners: []common.Address{w.Address()}, Bps: []uint16{10_000}})
	if j := f.get(id); j.Surety.Entries[0].Amount != eth.String() {
		t.Errorf("award of the worker who never joined: %+v", j.Surety.Entries)
	}
}
