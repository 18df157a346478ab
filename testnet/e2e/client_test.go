package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
)

// party is an agent or marketplace: a DID key bound to a dev wallet the node holds.
type party struct {
	key    *identity.Key
	wallet common.Address
}

// bountyClient talks to one node's API as the tests' agents do: raw requests with signed
// envelopes (cmd/surety's test client, for the tests that moved here).
type bountyClient struct {
	t    testing.TB
	base string
	info wire.Info
}

func (bc *bountyClient) request(method, path string, body []byte, header map[string]string) (int, []byte) {
	bc.t.Helper()
	req, err := http.NewRequest(method, bc.base+path, bytes.NewReader(body))
	if err != nil {
		bc.t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		bc.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// newParty makes a DID and binds it to dev wallet i on chain through POST /v1/bindings.
func (bc *bountyClient) newParty(i int) *party {
	bc.t.Helper()
	k, err := identity.GenerateKey(identity.Ed25519)
	if err != nil {
		bc.t.Fatal(err)
	}
	wallet := chain.DevKey(i)
	raw := bindingJSON(bc.t, k, wallet, bc.info.Chain.ID, common.HexToAddress(bc.info.Contracts["StakeRegistry"]))
	if code, body := bc.request("POST", "/v1/bindings", raw, nil); code != http.StatusCreated {
		bc.t.Fatalf("binding: %d %s", code, body)
	}
	return &party{key: k, wallet: crypto.PubkeyToAddress(wallet.PublicKey)}
}

// envelope signs body (and, for actions, a reference to bounty id) as p.
func (bc *bountyClient) envelope(p *party, id uint64, body any) []byte {
	bc.t.Helper()
	m := map[string]any{"body": body, "to": []string{bc.info.NodeDID}, "aud": bc.info.NodeDID, "chain_id": bc.info.Chain.ID}
	if id != 0 {
		m["bounty"] = identity.BountyRef{ChainID: bc.info.Chain.ID, Escrow: bc.info.Contracts["BountyEscrow"], ID: id}
	}
	raw, _ := json.Marshal(m)
	filled, err := identity.FillEnvelope(raw, p.key, time.Now(), time.Minute)
	if err != nil {
		bc.t.Fatal(err)
	}
	s, err := p.key.SignCompact(filled)
	if err != nil {
		bc.t.Fatal(err)
	}
	return []byte(s)
}

func (bc *bountyClient) act(p *party, id uint64, action string, body map[string]any) (int, []byte) {
	bc.t.Helper()
	body["wallet"] = p.wallet
	return bc.request("POST", fmt.Sprintf("/v1/bounties/%d/%s", id, action), bc.envelope(p, id, body), nil)
}

// signForNode signs body as k in an envelope for the node info describes (and, for bounty
// actions, a reference to bounty id), as cmd/surety's signer does.
func signForNode(k *identity.Key, info wire.Info, id uint64, body any) (string, error) {
	m := map[string]any{"body": body, "to": []string{info.NodeDID}, "aud": info.NodeDID, "chain_id": info.Chain.ID}
	if id != 0 {
		m["bounty"] = identity.BountyRef{ChainID: info.Chain.ID, Escrow: info.Contracts["BountyEscrow"], ID: id}
	}
	raw, _ := json.Marshal(m)
	filled, err := identity.FillEnvelope(raw, k, time.Now(), 5*time.Minute)
	if err != nil {
		return "", err
	}
	return k.SignCompact(filled)
}

func decodeResult(t testing.TB, b []byte) escrow.Result {
	t.Helper()
	var r escrow.Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return r
}

// getJSON decodes a 200 answer from url into v, and says whether it got one.
func getJSON(url string, v any) bool {
	resp, err := http.Get(url)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(v) == nil
}
