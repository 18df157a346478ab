package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/api/wire"
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
		Verifier: identity.NewVerifier(identity.VerifierConfig{Started: time.Now().Add(-time.Minute), Keys: ix}), StatusCacheTTL: time.Nanosecond})
	staking := stake.NewService(stake.ServiceConfig{Tx: txs, Chain: c, Registry: dep.Contracts.StakeRegistry, Index: ix})
	s, err := api.New(api.Config{Version: "v-test", Chain: api.ChainInfo{ID: chain.EmbeddedChainID, Kind: "embedded",
		Contracts: []api.Contract{{Name: "StakeRegistry", Address: dep.Contracts.StakeRegistry}}},
		Blocks: c, DB: db, Identity: ids, Bounties: bodyBounties{}, Senders: txs, Wallets: ids, Stakes: ix,
		Staking: staking, Credentials: ids, CredentialStakes: ix, StakeHistory: staking})
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

// envelopeTo signs body as an envelope from k addressed to the node n on its chain.
func envelopeTo(t *testing.T, n *chainNode, k *identity.Key, body any) []byte {
	t.Helper()
	return signed(t, k, map[string]any{"body": body, "to": []string{n.ids.NodeDID()}, "aud": n.ids.NodeDID(), "chain_id": chain.EmbeddedChainID})
}

// TestRotateAndRevokeFromAWalletTheNodeHolds: the DID bound to a wallet the node holds
// rotates to a new key, the node signing the wallet's half of the successor's binding (the
// new key signed its own), then the successor revokes itself. After each, the closed DID's
// envelopes are refused at the node, and the successor acts at once. What would not count,
// or that the signer may not do, is refused before anything is sent.
func TestRotateAndRevokeFromAWalletTheNodeHolds(t *testing.T) {
	ctx := context.Background()
	c, dep := sharedChain(t)
	n := newChainNode(t, c, dep, 1, 2)
	h := n.api.Handler()
	old, raw := bindingOf(t, dep, 1)
	if rec := do(t, h, http.MethodPost, "/v1/bindings", "", raw); rec.Code != http.StatusCreated {
		t.Fatalf("bind: %d %s", rec.Code, rec.Body)
	}
	wallet := crypto.PubkeyToAddress(chain.DevKey(1).PublicKey)
	next, err := identity.GenerateKey(identity.Ed25519)
	if err != nil {
		t.Fatal(err)
	}
	statement := func(did string, w common.Address) identity.BindingStatement {
		return identity.BindingStatement{DID: did, Wallet: w, ChainID: chain.EmbeddedChainID, Registry: dep.Contracts.StakeRegistry,
			IssuedAt: time.Now().Unix(), Nonce: identity.NewNonce()}
	}
	rotation := func(signer *identity.Key, st identity.BindingStatement, w common.Address) api.RotateBody {
		jws, err := identity.SignBindingAgent(st, signer)
		if err != nil {
			t.Fatal(err)
		}
		return api.RotateBody{Op: "rotate", Wallet: w, Successor: wire.BindingStatement(st), SuccessorJWS: jws}
	}
	nonce := func() uint64 {
		v, err := c.NonceAt(ctx, wallet, nil)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	other, err := identity.GenerateKey(identity.Ed25519)
	if err != nil {
		t.Fatal(err)
	}
	byOther := rotation(next, statement(next.DID.String(), wallet), wallet)
	byOther.SuccessorJWS, _ = identity.SignBindingAgent(statement(other.DID.String(), wallet), other)
	before := nonce()
	for _, tt := range []struct {
		name   string
		path   string
		body   any
		status int
		slug   string
	}{
		{"revoke from a wallet the DID is not bound to", "/v1/dids/revoke", api.RevokeBody{Op: "revoke", Wallet: crypto.PubkeyToAddress(chain.DevKey(2).PublicKey)}, http.StatusForbidden, "wallet-not-bound"},
		{"a revocation's signature on the rotate route", "/v1/dids/rotate", api.RevokeBody{Op: "revoke", Wallet: wallet}, http.StatusBadRequest, "bad-request"},
		{"a successor bound to another wallet", "/v1/dids/rotate", rotation(next, statement(next.DID.String(), common.Address{7}), wallet), http.StatusBadRequest, "bad-request"},
		{"a successor that is the DID itself", "/v1/dids/rotate", rotation(old, statement(old.DID.String(), wallet), wallet), http.StatusBadRequest, "bad-request"},
		{"the successor's half signed by another key", "/v1/dids/rotate", byOther, http.StatusBadRequest, "bad-proof"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := do(t, h, http.MethodPost, tt.path, "", envelopeTo(t, n, old, tt.body))
			if p := problemOf(t, rec); rec.Code != tt.status || !strings.HasSuffix(p.Type, "/"+tt.slug) {
				t.Errorf("%d %s, want %d %s", rec.Code, rec.Body, tt.status, tt.slug)
			}
		})
	}
	if nonce() != before {
		t.Fatal("a refused request sent a transaction")
	}

	rec := do(t, h, http.MethodPost, "/v1/dids/rotate", "", envelopeTo(t, n, old, rotation(next, statement(next.DID.String(), wallet), wallet)))
	var rotated api.KeyChange
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &rotated) != nil {
		t.Fatalf("rotate: %d %s", rec.Code, rec.Body)
	}
	if k := rotated.Key; k.Status != stake.KeyRotated || k.Successor != next.DID.String() || k.Controller != wallet || rotated.Stake == nil ||
		rotated.Stake.Agent != identity.AgentID(next.DID.String()) || rotated.Stake.Status != stake.StatusBound {
		t.Errorf("rotate answered %s", rec.Body)
	}
	// The old key is refused from now on; the new one acts at once.
	check := func(k *identity.Key) *httptest.ResponseRecorder {
		return do(t, h, http.MethodPost, "/v1/envelopes/verify", "", signed(t, k, map[string]any{"body": map[string]string{"q": "ready?"}}))
	}
	if rec := check(old); rec.Code != http.StatusForbidden || problemOf(t, rec).Reason != "rotated" {
		t.Errorf("an envelope from the rotated key: %d %s, want 403 rotated", rec.Code, rec.Body)
	}
	if rec := check(next); rec.Code != http.StatusOK {
		t.Errorf("an envelope from the successor: %d %s", rec.Code, rec.Body)
	}
	if rec := do(t, h, http.MethodPost, "/v1/dids/revoke", "", envelopeTo(t, n, old, api.RevokeBody{Op: "revoke", Wallet: wallet})); rec.Code != http.StatusForbidden || problemOf(t, rec).Reason != "rotated" {
		t.Errorf("revoke the rotated DID: %d %s, want 403 rotated", rec.Code, rec.Body)
	}

	rec = do(t, h, http.MethodPost, "/v1/dids/revoke", "", envelopeTo(t, n, next, api.RevokeBody{Op: "revoke", Wallet: wallet}))
	var revoked api.KeyChange
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &revoked) != nil || revoked.Key.Status != stake.KeyRevoked || revoked.Stake.Status != stake.StatusRevoked {
		t.Fatalf("revoke the successor: %d %s", rec.Code, rec.Body)
	}
	if rec := check(next); rec.Code != http.StatusForbidden || problemOf(t, rec).Reason != "revoked" {
		t.Errorf("an envelope from the revoked key: %d %s, want 403 revoked", rec.Code, rec.Body)
	}
	if rec := do(t, h, http.MethodPost, "/v1/dids/revoke", "", envelopeTo(t, n, next, api.RevokeBody{Op: "revoke", Wallet: wallet})); rec.Code != http.StatusForbidden || problemOf(t, rec).Reason != "revoked" {
		t.Errorf("revoke again: %d %s, want 403 revoked", rec.Code, rec.Body)
	}
}
