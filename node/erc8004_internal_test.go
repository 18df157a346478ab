package node

import (
	"context"
	"math/big"
	"testing"
	"time"

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
	got, err := erc8004Feedback{ix}.Feedback(ctx)
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
