package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/txn"
)

// The node's side of a write, as far as the checks before sending go: it holds one wallet,
// the chain binds that wallet to one DID, and an op that gets through is recorded, not sent.
type (
	heldWallet common.Address
	boundTo    struct {
		api.StakeIndex
		did    string
		wallet common.Address
	}
	sentOps struct {
		bodyBounties
		ops []escrow.Op
	}
)

func (w heldWallet) HasWallet(a common.Address) bool { return a == common.Address(w) }
func (heldWallet) SignTypedData(context.Context, common.Address, apitypes.TypedData) ([]byte, error) {
	return nil, txn.ErrUnknownWallet
}
func (b boundTo) Bound(_ context.Context, did string, w common.Address) (bool, error) {
	return did == b.did && w == b.wallet, nil
}
func (boundTo) CatchUp(context.Context) error { return nil }
func (s *sentOps) Do(_ context.Context, op escrow.Op, _ txn.Idempotency) (*escrow.Result, error) {
	s.ops = append(s.ops, op)
	return &escrow.Result{TxHash: "0x01"}, nil
}
func (s *sentOps) Retry(context.Context, escrow.Op, txn.Idempotency) (*escrow.Result, error) {
	return nil, txn.ErrNoSuchRequest
}

// TestWritesActOnlyHereFromBoundWallets: a signed write acts only at the node and chain it
// names, and only from a wallet the chain binds to its signer; a refused one sends nothing.
// An old envelope under an Idempotency-Key (which may fetch a stored answer) is held to its
// aud as well. At 5ab6450 only the slow end-to-end tests refused these.
func TestWritesActOnlyHereFromBoundWallets(t *testing.T) {
	db := testutil.DB(t)
	ids := newIdentity(t, db)
	agent, _ := identity.GenerateKey(identity.Ed25519)
	stranger, _ := identity.GenerateKey(identity.Ed25519)
	wallet := common.HexToAddress("0x0000000000000000000000000000000000000001")
	sent := &sentOps{}
	s, err := api.New(api.Config{Version: "v-test", Chain: api.ChainInfo{ID: chain.EmbeddedChainID}, Blocks: stubBlocks{}, DB: db, Identity: ids,
		Bounties: sent, Staking: bodyStaking{}, Senders: heldWallet(wallet), Wallets: ids, Stakes: boundTo{did: agent.DID.String(), wallet: wallet}})
	if err != nil {
		t.Fatal(err)
	}
	here, elsewhere := ids.NodeDID(), stranger.DID.String() // any DID but this node's
	past := time.Now().Add(-10 * time.Minute)
	for _, tt := range []struct {
		name    string
		signer  *identity.Key
		fill    map[string]any // aud, and what else differs from a good request
		idemKey string
		status  int
		problem string // the problem type's slug, when refused
	}{
		{"addressed here, from the signer's wallet", agent, map[string]any{"aud": here}, "", http.StatusOK, ""},
		{"addressed to another node", agent, map[string]any{"aud": elsewhere}, "", http.StatusForbidden, "envelope-wrong-audience"},
		{"addressed to no node", agent, map[string]any{}, "", http.StatusForbidden, "envelope-wrong-audience"},
		{"for another chain", agent, map[string]any{"aud": here, "chain_id": 1}, "", http.StatusForbidden, "envelope-wrong-chain"},
		{"an old envelope for another node, under an Idempotency-Key", agent,
			map[string]any{"aud": elsewhere, "iat": past.Unix(), "exp": past.Add(5 * time.Minute).Unix()}, "k1", http.StatusForbidden, "envelope-wrong-audience"},
		{"from a wallet bound to another DID", stranger, map[string]any{"aud": here}, "", http.StatusForbidden, "wallet-not-bound"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fill := map[string]any{"chain_id": chain.EmbeddedChainID, "body": map[string]any{"wallet": wallet}}
			for k, v := range tt.fill {
				fill[k] = v
			}
			req := httptest.NewRequest(http.MethodPost, "/v1/withdraw", strings.NewReader(string(signed(t, tt.signer, fill))))
			if tt.idemKey != "" {
				req.Header.Set("Idempotency-Key", tt.idemKey)
			}
			before := len(sent.ops)
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, req)
			if rec.Code != tt.status {
				t.Fatalf("%d %s, want %d %s", rec.Code, rec.Body, tt.status, tt.problem)
			}
			if tt.problem != "" && !strings.HasSuffix(problemOf(t, rec).Type, "/"+tt.problem) {
				t.Errorf("refused as %s, want %s", rec.Body, tt.problem)
			}
			want := 0
			if tt.problem == "" {
				want = 1
			}
			if got := len(sent.ops) - before; got != want {
				t.Errorf("%d ops sent, want %d", got, want)
			}
		})
	}
}
