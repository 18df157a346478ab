package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/stake"
	"github.com/surety-ioa/surety/txn"
)

// Fakes for the write routes' bodies: the node holds no wallet, so every request whose body
// parses stops at the wallet check, before anything would be sent.
type (
	noWallets     struct{}
	bodyBounties  struct{ api.Bounties }
	bodyStaking   struct{ api.Staking }
	notBoundIndex struct{ api.StakeIndex }
)

var (
	fuzzEscrow   = common.HexToAddress("0xe5c0")
	fuzzRegistry = common.HexToAddress("0x5ea0")
)

func (noWallets) HasWallet(common.Address) bool { return false }
func (noWallets) SignTypedData(context.Context, common.Address, apitypes.TypedData) ([]byte, error) {
	return nil, txn.ErrUnknownWallet
}
func (bodyBounties) Escrow() common.Address { return fuzzEscrow }
func (bodyBounties) Relay(context.Context, []byte) (*escrow.Result, error) {
	return nil, errors.New("not relayed in this test")
}
func (bodyBounties) Broadcast(context.Context, []byte) (*types.Transaction, error) {
	return nil, errors.New("not relayed in this test")
}
func (bodyStaking) Registry() common.Address { return fuzzRegistry }
func (bodyStaking) Broadcast(context.Context, []byte) (*types.Transaction, error) {
	return nil, errors.New("not relayed in this test")
}
func (bodyStaking) Relay(context.Context, []byte) (*stake.Result, error) {
	return nil, errors.New("not relayed in this test")
}
func (notBoundIndex) Bound(context.Context, string, common.Address) (bool, error) { return false, nil }
func (notBoundIndex) CatchUp(context.Context) error                               { return nil }

// writeRoutes are the routes whose bodies clients write; envelope says the body travels in a
// signed envelope (the rest take JSON as it is).
var writeRoutes = []struct {
	path     string
	envelope bool
}{
	{"/v1/bounties", true}, {"/v1/bounties/1/claim", true}, {"/v1/bounties/1/resolve", true}, {"/v1/withdraw", true},
	{"/v1/stake", true}, {"/v1/stake/unbond", true}, {"/v1/stake/withdraw", true}, {"/v1/dids/revoke", true}, {"/v1/dids/rotate", true},
	{"/v1/bindings", false}, {"/v1/tx/raw", false}, {"/v1/dids/register", false}, {"/v1/envelopes/verify", false},
	{"/v1/credentials/verify", false},
}

// FuzzRequestBodies posts any body to every write route, bare and inside an envelope the
// node accepts (signed, addressed to it, naming bounty 1): the node never answers 5xx and
// never panics, and every refusal is problem+json.
func FuzzRequestBodies(f *testing.F) {
	db := testutil.DB(f)
	ids := newIdentity(f, db)
	s, err := api.New(api.Config{Version: "v-test", Chain: api.ChainInfo{ID: chain.EmbeddedChainID,
		Contracts: []api.Contract{{Name: "BountyEscrow", Address: fuzzEscrow}, {Name: "StakeRegistry", Address: fuzzRegistry}}},
		Blocks: stubBlocks{}, DB: db, Identity: ids, Bounties: bodyBounties{}, Staking: bodyStaking{}, Senders: noWallets{},
		Wallets: ids, Stakes: notBoundIndex{}, Credentials: ids, WriteRate: 1e9, WriteBurst: 1 << 30})
	if err != nil {
		f.Fatal(err)
	}
	agent, err := identity.GenerateKey(identity.Ed25519)
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		`{"wallet":"0x0000000000000000000000000000000000000001","amount":"1000","arbiter":"0x0000000000000000000000000000000000000002","deadline":1,"reviewWindow":60}`,
		`{"op":"stake","wallet":"0x0000000000000000000000000000000000000001","amount":"1"}`,
		`{"wallet":"0x0000000000000000000000000000000000000001","slash":"-1","workerBps":70000}`,
		`{"rawTx":"0x02f8"}`, `{"proof":"a.b.c"}`, `{}`, `[]`, `null`, `"x"`, `{"amount":"1e400"}`,
	} {
		for i := range writeRoutes {
			f.Add(uint8(i), []byte(seed))
		}
	}
	node := ids.NodeDID()
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		r := writeRoutes[int(route)%len(writeRoutes)]
		raw, contentType := body, "application/json"
		if r.envelope && json.Valid(body) {
			payload, _ := json.Marshal(map[string]any{"body": json.RawMessage(body), "to": []string{node}, "aud": node,
				"chain_id": chain.EmbeddedChainID, "bounty": identity.BountyRef{ChainID: chain.EmbeddedChainID, Escrow: fuzzEscrow.Hex(), ID: 1}})
			filled, err := identity.FillEnvelope(payload, agent, time.Now(), time.Minute)
			if err != nil {
				return
			}
			jws, err := agent.SignCompact(filled)
			if err != nil {
				t.Fatal(err)
			}
			raw, contentType = []byte(jws), "application/jose"
		}
		req := httptest.NewRequest(http.MethodPost, r.path, bytes.NewReader(raw))
		req.Header.Set("Content-Type", contentType)
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("POST %s %q: %d %s", r.path, body, rec.Code, rec.Body)
		}
		if rec.Code >= 400 && !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/problem+json") {
			t.Fatalf("POST %s %q: %d without problem+json: %s", r.path, body, rec.Code, rec.Body)
		}
	})
}
