package auditor

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/erc8004"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/txn"
)

// TestERC8004FeedbackSource: the node hands reputation every unrevoked feedback of an agent
// id claiming a DID, with the claim, the agent's owner and wallet, and the block's time.
func TestERC8004FeedbackSource(t *testing.T) {
	ctx := context.Background()
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(4, chain.DefaultDevBalance)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	dep, err := contracts.Deploy(ctx, c, chain.DevKey(0), contracts.DeployConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	db := testutil.DB(t)
	row, err := sqlite.EnterChain(ctx, db, sqlite.Chain{Key: "test", ChainID: chain.EmbeddedChainID, Genesis: "g", Contracts: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := erc8004.NewIndexer(ctx, erc8004.IndexerConfig{DB: db, Chain: row, Client: c, IdentityRegistry: dep.Contracts.IdentityRegistry,
		ReputationRegistry: dep.Contracts.ReputationRegistry, ValidationRegistry: dep.Contracts.ValidationRegistry, StartBlock: dep.Block})
	if err != nil {
		t.Fatal(err)
	}
	svc := erc8004.NewService(erc8004.ServiceConfig{Chain: c, ChainID: dep.ChainID, IdentityRegistry: dep.Contracts.IdentityRegistry,
		ReputationRegistry: dep.Contracts.ReputationRegistry})
	sender := func(i int) *txn.Sender {
		s, err := txn.NewSender(ctx, c, txn.NewKeySigner(chain.DevKey(i)), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	const did = "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK"
	owner, client := sender(1), sender(2)
	claimed, err := svc.Run(ctx, owner, erc8004.Op{Kind: erc8004.OpRegister, AgentURI: "ipfs://a", DID: did})
	if err != nil {
		t.Fatal(err)
	}
	unclaimed, err := svc.Run(ctx, owner, erc8004.Op{Kind: erc8004.OpRegister, AgentURI: "ipfs://b"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []uint64{claimed.AgentID, unclaimed.AgentID} {
		if _, err := svc.Run(ctx, client, erc8004.Op{Kind: erc8004.OpFeedback, AgentID: id,
			Feedback: erc8004.FeedbackInput{Value: big.NewInt(875), ValueDecimals: 1, Tag1: "starred", Tag2: "x"}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	// Only the clients asked for: a wallet that paid no fee is never read.
	if none, err := (Feedback{Index: ix}).Feedback(ctx, []common.Address{owner.Address()}); err != nil || len(none) != 0 {
		t.Fatalf("feedback of a wallet that gave none = %+v, %v", none, err)
	}
	got, err := Feedback{Index: ix}.Feedback(ctx, []common.Address{owner.Address(), client.Address()})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("feedback = %+v, want the claimed agent's alone", got)
	}
	f := got[0]
	h, _ := c.HeaderByNumber(ctx, new(big.Int).SetUint64(f.Block))
	want := reputation.Feedback{DID: did, Owner: owner.Address(), Wallet: owner.Address(), Client: client.Address(), Value: big.NewInt(875),
		Decimals: 1, Tag1: "starred", Tag2: "x", Time: int64(h.Time), Block: f.Block, LogIndex: f.LogIndex}
	if f.Value.Cmp(want.Value) != 0 || f.DID != want.DID || f.Owner != want.Owner || f.Wallet != want.Wallet || f.Client != want.Client ||
		f.Decimals != 1 || f.Tag1 != "starred" || f.Tag2 != "x" || f.Time != want.Time || f.Time == 0 {
		t.Errorf("feedback = %+v, want %+v", f, want)
	}
}

// TestFactsReadFeedbackAtTheirBlock: the facts at a block hold the ERC-8004 feedback given by
// then, and none given after, so a head's scores import what the chain held at its anchor.
func TestFactsReadFeedbackAtTheirBlock(t *testing.T) {
	ctx := context.Background()
	c, dep := deployed(t)
	svc := erc8004.NewService(erc8004.ServiceConfig{Chain: c, ChainID: dep.ChainID, IdentityRegistry: dep.Contracts.IdentityRegistry,
		ReputationRegistry: dep.Contracts.ReputationRegistry})
	sender := func(i int) *txn.Sender {
		s, err := txn.NewSender(ctx, c, txn.NewKeySigner(chain.DevKey(i)), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	const did = "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK"
	owner, client := sender(1), sender(2)
	agent, err := svc.Run(ctx, owner, erc8004.Op{Kind: erc8004.OpRegister, AgentURI: "ipfs://a", DID: did})
	if err != nil {
		t.Fatal(err)
	}
	give := func(v int64) uint64 {
		t.Helper()
		res, err := svc.Run(ctx, client, erc8004.Op{Kind: erc8004.OpFeedback, AgentID: agent.AgentID,
			Feedback: erc8004.FeedbackInput{Value: big.NewInt(v), Tag1: "starred"}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Block
	}
	first := give(90)
	give(10)
	facts, err := ReadFacts(ctx, c, dep, first, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer facts.Close()
	got, err := Feedback{Index: facts.ERC8004}.Feedback(ctx, []common.Address{client.Address()})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Value.Int64() != 90 || got[0].Block != first {
		t.Fatalf("feedback at block %d = %+v, want the first rating alone", first, got)
	}
}
