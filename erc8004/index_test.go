package erc8004_test

import (
	"context"
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/go-cmp/cmp"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/erc8004"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/txn"
)

const did = "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK"

// fixture is an embedded chain with Surety deployed, senders for dev accounts 1-4 and the
// registries' service.
type fixture struct {
	t                     testing.TB
	c                     *chain.Embedded
	dep                   *contracts.Deployment
	svc                   *erc8004.Service
	owner, alice, bob, vd *txn.Sender
	walletKey             txn.KeySigner
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(6, chain.DefaultDevBalance)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx := context.Background()
	dep, err := contracts.Deploy(ctx, c, chain.DevKey(0), contracts.DeployConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, c: c, dep: dep, walletKey: txn.NewKeySigner(chain.DevKey(5))}
	for i, dst := range []**txn.Sender{&f.owner, &f.alice, &f.bob, &f.vd} {
		s, err := txn.NewSender(ctx, c, txn.NewKeySigner(chain.DevKey(i+1)), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		*dst = s
	}
	f.svc = erc8004.NewService(erc8004.ServiceConfig{Chain: c, ChainID: dep.ChainID,
		IdentityRegistry: dep.Contracts.IdentityRegistry, ReputationRegistry: dep.Contracts.ReputationRegistry})
	return f
}

// bindings is a fake of the stake index's: which wallets control which DID.
type bindings map[string][]common.Address

func (b bindings) WalletsOf(_ context.Context, did string) ([]common.Address, error) {
	return b[did], nil
}

func (f *fixture) indexer(db *testutil.SQL, b erc8004.Bindings) *erc8004.Indexer {
	f.t.Helper()
	ctx := context.Background()
	row, err := sqlite.EnterChain(ctx, db.DB, sqlite.Chain{Key: "test", ChainID: chain.EmbeddedChainID, Genesis: "g", Contracts: "{}"})
	if err != nil {
		f.t.Fatal(err)
	}
	ix, err := erc8004.NewIndexer(ctx, erc8004.IndexerConfig{DB: db.DB, Chain: row, Client: f.c,
		IdentityRegistry: f.dep.Contracts.IdentityRegistry, ReputationRegistry: f.dep.Contracts.ReputationRegistry,
		ValidationRegistry: f.dep.Contracts.ValidationRegistry, StartBlock: f.dep.Block, Bindings: b})
	if err != nil {
		f.t.Fatal(err)
	}
	return ix
}

func (f *fixture) run(snd *txn.Sender, op erc8004.Op) *erc8004.Result {
	f.t.Helper()
	r, err := f.svc.Run(context.Background(), snd, op)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func (f *fixture) feedback(snd *txn.Sender, agent uint64, value int64, decimals uint8, tag1 string) *erc8004.Result {
	f.t.Helper()
	return f.run(snd, erc8004.Op{Kind: erc8004.OpFeedback, AgentID: agent,
		Feedback: erc8004.FeedbackInput{Value: big.NewInt(value), ValueDecimals: decimals, Tag1: tag1, FeedbackURI: "https://x/1", FeedbackHash: common.HexToHash("0xfeed")}})
}

func sync(t *testing.T, ix *erc8004.Indexer) {
	t.Helper()
	if _, err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestIndexFollowsTheRegistries(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	db := testutil.OpenSQL(t)
	ix := f.indexer(db, bindings{did: {f.owner.Address()}})

	uri := erc8004.RegistrationURL("https://node.example/", did)
	reg := f.run(f.owner, erc8004.Op{Kind: erc8004.OpRegister, AgentURI: uri, DID: did})
	if reg.AgentID != 0 {
		t.Fatalf("first agent id = %d, want 0", reg.AgentID)
	}
	// A stranger registers an agent claiming the same DID: a claim alone proves nothing.
	squat := f.run(f.bob, erc8004.Op{Kind: erc8004.OpRegister, AgentURI: "https://evil/", DID: did})

	// The wallet consents to become the agent's wallet.
	head, _ := f.c.HeaderByNumber(ctx, nil)
	deadline := head.Time + 60
	sig, err := f.svc.WalletSignature(ctx, f.walletKey, reg.AgentID, f.owner.Address(), deadline)
	if err != nil {
		t.Fatal(err)
	}
	f.run(f.owner, erc8004.Op{Kind: erc8004.OpSetWallet, AgentID: reg.AgentID, Wallet: f.walletKey.Address(), Deadline: deadline, Signature: sig})

	first := f.feedback(f.alice, reg.AgentID, 8000, 2, erc8004.AuditTag)
	if first.FeedbackIndex != 1 {
		t.Errorf("feedback index = %d, want 1", first.FeedbackIndex)
	}
	f.feedback(f.bob, reg.AgentID, 1, 0, "reachable")
	revoked := f.feedback(f.alice, reg.AgentID, -5, 0, "starred")
	if _, err := f.alice.Send(ctx, txn.Call{To: f.dep.Contracts.ReputationRegistry,
		Data: contracts.NewReputationRegistry().PackRevokeFeedback(big.NewInt(int64(reg.AgentID)), revoked.FeedbackIndex)}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.owner.Send(ctx, txn.Call{To: f.dep.Contracts.ReputationRegistry,
		Data: contracts.NewReputationRegistry().PackAppendResponse(big.NewInt(int64(reg.AgentID)), f.alice.Address(), 1, "ipfs://refund", common.HexToHash("0x01"))}); err != nil {
		t.Fatal(err)
	}
	f.feedback(f.alice, squat.AgentID, 100, 0, "starred")
	val := contracts.NewValidationRegistry()
	reqHash := crypto.Keccak256Hash([]byte("request"))
	if _, err := f.owner.Send(ctx, txn.Call{To: f.dep.Contracts.ValidationRegistry,
		Data: val.PackValidationRequest(f.vd.Address(), big.NewInt(int64(reg.AgentID)), "ipfs://req", reqHash)}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.vd.Send(ctx, txn.Call{To: f.dep.Contracts.ValidationRegistry,
		Data: val.PackValidationResponse(reqHash, 90, "ipfs://resp", common.HexToHash("0x02"), "hard")}); err != nil {
		t.Fatal(err)
	}
	sync(t, ix)

	a, err := ix.Agent(ctx, reg.AgentID)
	if err != nil {
		t.Fatal(err)
	}
	want := erc8004.Agent{ID: 0, Owner: f.owner.Address(), Wallet: f.walletKey.Address(), URI: uri, DID: did,
		RegisteredBlock: reg.Block, UpdatedBlock: a.UpdatedBlock}
	if diff := cmp.Diff(want, *a); diff != "" {
		t.Errorf("agent (-want +got):\n%s", diff)
	}
	if _, err := ix.Agent(ctx, 99); !errors.Is(err, erc8004.ErrNoAgent) {
		t.Errorf("Agent(99) = %v, want ErrNoAgent", err)
	}
	claims, err := ix.AgentsClaiming(ctx, did)
	if err != nil || len(claims) != 2 {
		t.Fatalf("AgentsClaiming = %d agents, %v; want 2", len(claims), err)
	}
	verified, err := ix.VerifiedAgents(ctx, did)
	if err != nil || len(verified) != 1 || verified[0].ID != reg.AgentID {
		t.Fatalf("VerifiedAgents = %+v, %v; want agent %d alone (the squatter's owner is not bound to the DID)", verified, err, reg.AgentID)
	}
	mine, err := ix.AgentsOf(ctx, f.walletKey.Address())
	if err != nil || len(mine) != 1 {
		t.Errorf("AgentsOf(wallet) = %v, %v", mine, err)
	}

	fb, err := ix.Feedback(ctx, reg.AgentID, erc8004.FeedbackFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(fb) != 2 || fb[0].Client != f.alice.Address() || fb[0].Value.Int64() != 8000 || fb[0].ValueDecimals != 2 ||
		fb[0].Tag1 != erc8004.AuditTag || fb[0].FeedbackHash != common.HexToHash("0xfeed") || fb[1].Client != f.bob.Address() {
		t.Errorf("unrevoked feedback = %+v", fb)
	}
	all, _ := ix.Feedback(ctx, reg.AgentID, erc8004.FeedbackFilter{IncludeRevoked: true})
	if len(all) != 3 || !all[2].Revoked || all[2].Value.Int64() != -5 {
		t.Errorf("all feedback = %+v", all)
	}
	alice := f.alice.Address()
	if byAlice, _ := ix.Feedback(ctx, reg.AgentID, erc8004.FeedbackFilter{Client: &alice}); len(byAlice) != 1 {
		t.Errorf("alice's unrevoked feedback = %d, want 1", len(byAlice))
	}
	if tagged, _ := ix.Feedback(ctx, reg.AgentID, erc8004.FeedbackFilter{Tag1: "reachable"}); len(tagged) != 1 {
		t.Errorf("tag1 reachable = %d, want 1", len(tagged))
	}
	// As of the block before the revocation, the revoked feedback still stood.
	revokedAt := all[2].RevokedBlock
	if revokedAt == 0 {
		t.Fatalf("revoked feedback has no revocation block: %+v", all[2])
	}
	then, err := ix.Feedback(ctx, reg.AgentID, erc8004.FeedbackFilter{UpTo: revokedAt - 1})
	if err != nil || len(then) != 3 || then[2].Revoked {
		t.Errorf("feedback up to block %d = %+v, %v; want all three unrevoked", revokedAt-1, then, err)
	}
	if early, _ := ix.Feedback(ctx, reg.AgentID, erc8004.FeedbackFilter{UpTo: first.Block}); len(early) != 1 {
		t.Errorf("feedback up to the first one's block = %d, want 1", len(early))
	}
	forDID, err := ix.FeedbackFor(ctx, did)
	if err != nil {
		t.Fatal(err)
	}
	if len(forDID) != 2 {
		t.Errorf("FeedbackFor(did) = %d feedback, want the verified agent's 2 unrevoked (not the squatter's)", len(forDID))
	}
	for i := 1; i < len(forDID); i++ {
		if forDID[i].Block < forDID[i-1].Block || forDID[i].Block == forDID[i-1].Block && forDID[i].LogIndex <= forDID[i-1].LogIndex {
			t.Errorf("FeedbackFor is not in chain order: %+v", forDID)
		}
	}
	// Every unrevoked feedback of agents claiming a DID, with the claim, owner and wallet.
	allOf, err := ix.AllFeedback(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(allOf) != 3 || allOf[0].DID != did || allOf[0].Owner != f.owner.Address() || allOf[0].Wallet != f.walletKey.Address() ||
		allOf[2].AgentID != squat.AgentID || allOf[2].Owner != f.bob.Address() {
		t.Errorf("AllFeedback = %+v", allOf)
	}
	for i, fo := range allOf {
		h, err := f.c.HeaderByNumber(ctx, new(big.Int).SetUint64(fo.Block))
		if err != nil || fo.Time != int64(h.Time) || fo.Time == 0 {
			t.Errorf("AllFeedback[%d] time %d, its block's %v (%v)", i, fo.Time, h, err)
		}
		if i > 0 && (fo.Block < allOf[i-1].Block || fo.Block == allOf[i-1].Block && fo.LogIndex <= allOf[i-1].LogIndex) {
			t.Errorf("AllFeedback not in chain order at %d", i)
		}
	}
	resp, err := ix.Responses(ctx, reg.AgentID, f.alice.Address(), 1)
	if err != nil || len(resp) != 1 || resp[0].Responder != f.owner.Address() || resp[0].ResponseURI != "ipfs://refund" {
		t.Errorf("responses = %+v, %v", resp, err)
	}
	vs, err := ix.Validations(ctx, reg.AgentID, 0)
	if err != nil || len(vs) != 1 || !vs[0].Responded || vs[0].Response != 90 || vs[0].Tag != "hard" || vs[0].Validator != f.vd.Address() {
		t.Errorf("validations = %+v, %v", vs, err)
	}
	if none, err := ix.Validations(ctx, reg.AgentID, -1); err != nil || len(none) != 1 {
		t.Errorf("validations with no limit = %+v, %v", none, err)
	}

	// A transfer moves the agent and clears its wallet; the new owner is not bound to the
	// DID, so the agent stops being the DID's.
	if _, err := f.owner.Send(ctx, txn.Call{To: f.dep.Contracts.IdentityRegistry,
		Data: contracts.NewIdentityRegistry().PackTransferFrom(f.owner.Address(), f.bob.Address(), big.NewInt(0))}); err != nil {
		t.Fatal(err)
	}
	sync(t, ix)
	a, _ = ix.Agent(ctx, 0)
	if a.Owner != f.bob.Address() || a.Wallet != (common.Address{}) {
		t.Errorf("after transfer: owner %s wallet %s", a.Owner, a.Wallet)
	}
	if forDID, _ := ix.FeedbackFor(ctx, did); len(forDID) != 0 {
		t.Errorf("FeedbackFor after the agent left the DID's wallets = %d, want 0", len(forDID))
	}
	// Replayed at a block before the transfer, the agent is still the owner's, with its wallet.
	before, err := ix.AgentAt(ctx, 0, first.Block)
	if err != nil || before.Owner != f.owner.Address() || before.Wallet != f.walletKey.Address() || before.DID != did || before.URI != uri {
		t.Errorf("AgentAt(0, %d) = %+v, %v", first.Block, before, err)
	}
	if _, err := ix.AgentAt(ctx, 0, reg.Block-1); !errors.Is(err, erc8004.ErrNoAgent) {
		t.Errorf("AgentAt before registration: %v, want ErrNoAgent", err)
	}
	if now, err := ix.AgentAt(ctx, 0, 1<<40); err != nil || now.Owner != f.bob.Address() || now.Wallet != (common.Address{}) {
		t.Errorf("AgentAt now = %+v, %v; want bob's, no wallet", now, err)
	}
}

func TestFeedbackForNeedsBindings(t *testing.T) {
	f := newFixture(t)
	ix := f.indexer(testutil.OpenSQL(t), nil)
	if _, err := ix.FeedbackFor(context.Background(), did); !errors.Is(err, erc8004.ErrNoBindings) {
		t.Errorf("FeedbackFor without bindings = %v, want ErrNoBindings", err)
	}
}

func TestIndexResumesWithoutDuplicates(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	db := testutil.OpenSQL(t)
	ix := f.indexer(db, bindings{})
	reg := f.run(f.owner, erc8004.Op{Kind: erc8004.OpRegister, AgentURI: "ipfs://a", DID: did})
	f.feedback(f.alice, reg.AgentID, 1, 0, "")
	sync(t, ix)
	// A second indexer on the same database (a restart) reads on from the cursor.
	f.feedback(f.bob, reg.AgentID, 2, 0, "")
	again := f.indexer(db, bindings{})
	sync(t, again)
	fb, err := again.Feedback(ctx, reg.AgentID, erc8004.FeedbackFilter{})
	if err != nil || len(fb) != 2 {
		t.Fatalf("feedback after restart = %d, %v; want 2", len(fb), err)
	}
}

func TestIndexSurvivesReorg(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	db := testutil.OpenSQL(t)
	ix := f.indexer(db, bindings{})
	reg := f.run(f.owner, erc8004.Op{Kind: erc8004.OpRegister, AgentURI: "ipfs://a", DID: did})
	base, err := f.c.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.feedback(f.alice, reg.AgentID, 1, 0, "gone")
	f.run(f.owner, erc8004.Op{Kind: erc8004.OpSetAgentURI, AgentID: reg.AgentID, AgentURI: "ipfs://gone"})
	sync(t, ix)
	if fb, _ := ix.Feedback(ctx, reg.AgentID, erc8004.FeedbackFilter{}); len(fb) != 1 {
		t.Fatalf("before the reorg: %d feedback", len(fb))
	}
	if err := f.c.Fork(base.Hash()); err != nil {
		t.Fatal(err)
	}
	for _, dst := range []**txn.Sender{&f.alice, &f.owner} {
		s, err := txn.NewSender(ctx, f.c, txn.NewKeySigner(chain.DevKey(map[**txn.Sender]int{&f.alice: 2, &f.owner: 1}[dst])), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		*dst = s
	}
	f.feedback(f.alice, reg.AgentID, 7, 0, "kept")
	f.c.Mine()
	f.c.Mine()
	f.c.Mine()
	sync(t, ix)
	fb, err := ix.Feedback(ctx, reg.AgentID, erc8004.FeedbackFilter{IncludeRevoked: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(fb) != 1 || fb[0].Tag1 != "kept" || fb[0].Value.Int64() != 7 {
		t.Errorf("after the reorg: %+v, want the fork's feedback alone", fb)
	}
	a, err := ix.Agent(ctx, reg.AgentID)
	if err != nil || a.URI != "ipfs://a" {
		t.Errorf("after the reorg the agent's URI = %v (%v), want the pre-fork ipfs://a", a, err)
	}
}

func TestServiceRefusesBeforeSending(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	reg := f.run(f.owner, erc8004.Op{Kind: erc8004.OpRegister, AgentURI: "ipfs://a"})
	tests := []struct {
		name string
		snd  *txn.Sender
		op   erc8004.Op
		want error
	}{
		{"owner rates itself", f.owner, erc8004.Op{Kind: erc8004.OpFeedback, AgentID: reg.AgentID, Feedback: erc8004.FeedbackInput{Value: big.NewInt(1)}}, erc8004.ErrSelfFeedback},
		{"19 decimals", f.alice, erc8004.Op{Kind: erc8004.OpFeedback, AgentID: reg.AgentID, Feedback: erc8004.FeedbackInput{Value: big.NewInt(1), ValueDecimals: 19}}, erc8004.ErrInvalid},
		{"value past 1e38", f.alice, erc8004.Op{Kind: erc8004.OpFeedback, AgentID: reg.AgentID, Feedback: erc8004.FeedbackInput{Value: new(big.Int).Add(erc8004.MaxAbsValue, big.NewInt(1))}}, erc8004.ErrInvalid},
		{"no such agent", f.alice, erc8004.Op{Kind: erc8004.OpFeedback, AgentID: 9, Feedback: erc8004.FeedbackInput{Value: big.NewInt(1)}}, erc8004.ErrInvalid},
		{"stranger sets the URI", f.alice, erc8004.Op{Kind: erc8004.OpSetAgentURI, AgentID: reg.AgentID, AgentURI: "x"}, erc8004.ErrNotAuthorized},
		{"wallet without signature", f.owner, erc8004.Op{Kind: erc8004.OpSetWallet, AgentID: reg.AgentID, Wallet: f.bob.Address()}, erc8004.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := f.svc.Run(ctx, tt.snd, tt.op); !errors.Is(err, tt.want) {
				t.Errorf("Run = %v, want %v", err, tt.want)
			}
		})
	}
	// A signature from another key reverts on chain, decoded.
	head, _ := f.c.HeaderByNumber(ctx, nil)
	sig, err := f.svc.WalletSignature(ctx, txn.NewKeySigner(chain.DevKey(4)), reg.AgentID, f.owner.Address(), head.Time+60)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.Run(ctx, f.owner, erc8004.Op{Kind: erc8004.OpSetWallet, AgentID: reg.AgentID, Wallet: f.walletKey.Address(), Deadline: head.Time + 60, Signature: sig})
	if !errors.Is(err, erc8004.ErrBadSignature) {
		t.Errorf("wrong key's signature: %v, want ErrBadSignature", err)
	}
}

// TestOnFeedback: the watchers hear of a batch that gives feedback, moves an agent or changes
// its claim, and of none that only touches what AllFeedback does not answer.
func TestOnFeedback(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ix := f.indexer(testutil.OpenSQL(t), bindings{})
	calls := 0
	ix.OnFeedback(func() { calls++ })
	reg := f.run(f.owner, erc8004.Op{Kind: erc8004.OpRegister, AgentURI: "ipfs://a", DID: did})
	sync(t, ix)
	if calls != 1 {
		t.Fatalf("after a registration with a DID claim: %d calls, want 1", calls)
	}
	f.run(f.owner, erc8004.Op{Kind: erc8004.OpSetAgentURI, AgentID: reg.AgentID, AgentURI: "ipfs://b"})
	sync(t, ix)
	if calls != 1 {
		t.Errorf("after a new agentURI alone: %d calls, want still 1", calls)
	}
	f.feedback(f.alice, reg.AgentID, 5, 0, "starred")
	sync(t, ix)
	if calls != 2 {
		t.Errorf("after feedback: %d calls, want 2", calls)
	}
	if _, err := f.owner.Send(ctx, txn.Call{To: f.dep.Contracts.IdentityRegistry,
		Data: contracts.NewIdentityRegistry().PackSetMetadata(big.NewInt(int64(reg.AgentID)), erc8004.DIDKey, []byte("did:key:other"))}); err != nil {
		t.Fatal(err)
	}
	sync(t, ix)
	if calls != 3 {
		t.Errorf("after a new DID claim: %d calls, want 3", calls)
	}
}
