package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/stake"
	"github.com/surety-ioa/surety/txn"
)

// chainNode is one node on a chain it shares with others: its own database, stake index,
// wallets, stake service and identity, and the API over them. Its index reads the chain
// only when something waits on it (as a node's index does between two polls): a block
// another node just wrote is not in it until then.
type chainNode struct {
	api   *api.Server
	index *stake.Index
	tx    *txn.Service
	ids   *identity.Service
}

// newChainNode starts a node on c holding the dev wallets given, its index caught up with
// the chain's head.
func newChainNode(t *testing.T, c *chain.Embedded, dep *contracts.Deployment, wallets ...int) *chainNode {
	t.Helper()
	ctx := context.Background()
	db := testutil.DB(t)
	row, err := sqlite.EnterChain(ctx, db, sqlite.Chain{Key: "test", ChainID: chain.EmbeddedChainID, Genesis: "g", Contracts: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := stake.NewIndex(ctx, stake.Config{DB: db, Chain: row, Client: c, ChainID: chain.EmbeddedChainID,
		Registry: dep.Contracts.StakeRegistry, StartBlock: dep.Block, Poll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = ix.Run(runCtx) })
	t.Cleanup(func() { stop(); wg.Wait() })
	head, err := c.BlockNumber(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The first sync (Run's own, nudged by nobody) reads up to the head; after it the index
	// sleeps until nudged.
	for ix.Indexed() < head {
		time.Sleep(10 * time.Millisecond)
	}
	txs, err := txn.New(ctx, txn.Config{DB: db, Chain: row, Client: c, ReceiptTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range wallets {
		if _, err := txs.AddKey(ctx, chain.DevKey(i)); err != nil {
			t.Fatal(err)
		}
	}
	store, err := identity.OpenStore(ctx, db, identity.StoreConfig{Passphrase: []byte("test"), KDF: identity.KDFParams{N: 1 << 10, R: 8, P: 1}})
	if err != nil {
		t.Fatal(err)
	}
	nodeKey, _, err := store.NodeKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids := identity.NewService(identity.ServiceConfig{Store: store, Node: nodeKey, ChainID: chain.EmbeddedChainID, Registry: dep.Contracts.StakeRegistry,
		Verifier: identity.NewVerifier(identity.VerifierConfig{Started: time.Now().Add(-time.Minute), Keys: ix})})
	s, err := api.New(api.Config{Version: "v-test", Chain: api.ChainInfo{ID: chain.EmbeddedChainID, Kind: "embedded",
		Contracts: []api.Contract{{Name: "StakeRegistry", Address: dep.Contracts.StakeRegistry}}},
		Blocks: c, DB: db, Identity: ids, Bounties: bodyBounties{}, Senders: txs, Wallets: ids, Stakes: ix,
		Staking: stake.NewService(stake.ServiceConfig{Tx: txs, Chain: c, Registry: dep.Contracts.StakeRegistry, Index: ix})})
	if err != nil {
		t.Fatal(err)
	}
	return &chainNode{api: s, index: ix, tx: txs, ids: ids}
}

// sharedChain is an embedded chain with the contracts deployed and dev wallets 0-4 funded.
func sharedChain(t *testing.T) (*chain.Embedded, *contracts.Deployment) {
	t.Helper()
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(5, chain.DefaultDevBalance)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	dep, err := contracts.Deploy(context.Background(), c, chain.DevKey(0), contracts.DeployConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c, dep
}

// bindingOf signs the binding of a fresh agent key to dev wallet n for dep's registry.
func bindingOf(t *testing.T, dep *contracts.Deployment, n int) (*identity.Key, []byte) {
	t.Helper()
	k, err := identity.GenerateKey(identity.Ed25519)
	if err != nil {
		t.Fatal(err)
	}
	wallet := chain.DevKey(n)
	b, err := identity.SignBinding(identity.BindingStatement{DID: k.DID.String(), Wallet: crypto.PubkeyToAddress(wallet.PublicKey),
		ChainID: chain.EmbeddedChainID, Registry: dep.Contracts.StakeRegistry, IssuedAt: time.Now().Unix(), Nonce: identity.NewNonce()}, k, wallet)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(b)
	return k, raw
}

// TestBindingAlreadyOnChainIs200OnEveryNode: a DID bound on chain through node A, then
// posted to node B before B's index has read the bind's block, answers 200 on chain at B,
// which sends nothing: B reads its index up to the chain's head instead of sending a bind the
// registry refuses (AlreadyBound) and answering 422, or answering the call for the user's
// own wallet to send, which would revert.
func TestBindingAlreadyOnChainIs200OnEveryNode(t *testing.T) {
	tests := []struct {
		name   string
		wallet int   // bound through A, which holds wallets 1 and 2
		atB    []int // the wallets B holds
	}{
		{"node B holds the wallet", 1, []int{1}},
		{"the wallet is not node B's", 2, []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c, dep := sharedChain(t)
			a, b := newChainNode(t, c, dep, 1, 2), newChainNode(t, c, dep, tt.atB...)
			_, raw := bindingOf(t, dep, tt.wallet)
			if rec := do(t, a.api.Handler(), http.MethodPost, "/v1/bindings", "", raw); rec.Code != http.StatusCreated {
				t.Fatalf("bind through node A: %d %s", rec.Code, rec.Body)
			}
			wallet := crypto.PubkeyToAddress(chain.DevKey(tt.wallet).PublicKey)
			nonce, err := c.NonceAt(ctx, wallet, nil)
			if err != nil {
				t.Fatal(err)
			}
			if head, _ := c.BlockNumber(ctx); b.index.Indexed() >= head {
				t.Fatalf("node B's index holds block %d already: it does not lag", head)
			}
			rec := do(t, b.api.Handler(), http.MethodPost, "/v1/bindings", "", raw)
			var ans api.BindingAnswer
			if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &ans) != nil || !ans.OnChain || ans.TxHash != "" || ans.To != nil {
				t.Fatalf("the same binding through node B: %d %s, want 200 on chain, no transaction and no call to send", rec.Code, rec.Body)
			}
			if after, _ := c.NonceAt(ctx, wallet, nil); after != nonce {
				t.Errorf("node B sent a transaction (nonce %d → %d)", nonce, after)
			}
		})
	}
}
