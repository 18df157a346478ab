package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
)

// FuzzJSONRPC posts any body to POST /v1/rpc, backed by a real (embedded) chain: the node
// never answers 5xx and never panics; it answers a JSON-RPC 2.0 object with exactly one of
// result and error, or a 413 problem for a body too large.
func FuzzJSONRPC(f *testing.F) {
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(1, chain.DefaultDevBalance)})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(c.Close)
	db := testutil.DB(f)
	s, err := api.New(api.Config{Version: "v-test", Chain: api.ChainInfo{ID: chain.EmbeddedChainID}, Blocks: c, DB: db, Identity: newIdentity(f, db),
		Bounties: bodyBounties{}, Staking: bodyStaking{}, Senders: noWallets{}, Wallets: newIdentity(f, db), Stakes: notBoundIndex{}, ChainRPC: c,
		WriteRate: 1e9, WriteBurst: 1 << 30, RPCRate: 1e9, RPCBurst: 1 << 30})
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}`,
		`{"jsonrpc":"2.0","id":"a","method":"eth_getBlockByNumber","params":["latest",false]}`,
		`{"jsonrpc":"2.0","id":2,"method":"eth_getBalance","params":["0x0000000000000000000000000000000000000001","pending"]}`,
		`{"jsonrpc":"2.0","id":3,"method":"eth_call","params":[{"to":"0x0000000000000000000000000000000000000001","input":"0x"},"0x1"]}`,
		`{"jsonrpc":"2.0","id":4,"method":"eth_estimateGas","params":[{"from":"0x0000000000000000000000000000000000000002","value":"0x1"}]}`,
		`{"jsonrpc":"2.0","id":5,"method":"eth_feeHistory","params":["0x2","latest",[10,50]]}`,
		`{"jsonrpc":"2.0","id":6,"method":"eth_getTransactionReceipt","params":["0x00"]}`,
		`{"jsonrpc":"2.0","id":7,"method":"eth_sendRawTransaction","params":["0x02f8"]}`,
		`{"jsonrpc":"2.0","id":8,"method":"eth_getTransactionByHash","params":["0x0000000000000000000000000000000000000000000000000000000000000001"]}`,
		`{"jsonrpc":"2.0","id":9,"method":"eth_getTransactionByHash","params":[7]}`,
		`{"jsonrpc":"2.0","id":10,"method":"eth_getLogs","params":[{"address":"0x0000000000000000000000000000000000000001","fromBlock":"0x0","toBlock":"latest","topics":[null,["0x0000000000000000000000000000000000000000000000000000000000000001"]]}]}`,
		`{"jsonrpc":"2.0","id":11,"method":"eth_getLogs","params":[{"address":["0x0000000000000000000000000000000000000001"],"fromBlock":"earliest","topics":[1]}]}`,
		`{"jsonrpc":"2.0","method":"eth_chainId"}`, `{"jsonrpc":"2.0","id":null,"method":"eth_chainId"}`,
		`[{"jsonrpc":"2.0"}]`, `{}`, `null`, ``,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/v1/rpc", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		s.Handler().ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%q: %d %s", body, rec.Code, rec.Body)
		}
		if rec.Code == http.StatusRequestEntityTooLarge {
			return
		}
		var sent struct { // as the node reads a request
			JSONRPC string            `json:"jsonrpc"`
			ID      json.RawMessage   `json:"id"` // "null" when the id is null, nil when absent
			Method  string            `json:"method"`
			Params  []json.RawMessage `json:"params"`
		}
		if json.Unmarshal([]byte(body), &sent) == nil && sent.JSONRPC == "2.0" && sent.ID == nil && strings.HasPrefix(strings.TrimSpace(body), "{") {
			// A notification: no reply.
			if rec.Code != http.StatusNoContent || rec.Body.Len() != 0 {
				t.Fatalf("%q: %d %s: a notification was answered", body, rec.Code, rec.Body)
			}
			return
		}
		var out struct {
			JSONRPC string           `json:"jsonrpc"`
			Result  *json.RawMessage `json:"result"`
			Error   *json.RawMessage `json:"error"`
		}
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &out) != nil || out.JSONRPC != "2.0" {
			t.Fatalf("%q: %d %s: not a JSON-RPC answer", body, rec.Code, rec.Body)
		}
		if hasResult := strings.Contains(rec.Body.String(), `"result":`); hasResult == (out.Error != nil) {
			t.Fatalf("%q: %s: want exactly one of result and error", body, rec.Body)
		}
	})
}
