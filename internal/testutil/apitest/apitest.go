// Package apitest is the test client that tests of whole nodes share (cmd/surety's, which
// start a node in process, and testnet/e2e's, which talk to node processes): raw requests to
// a node's API, parties whose DIDs are bound to dev wallets the node holds, and envelopes
// signed for that node.
package apitest

import (
	"bytes"
	"crypto/ecdsa"
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

// Party is an agent or marketplace: a DID key bound to a dev wallet the node holds.
type Party struct {
	Key    *identity.Key
	Wallet common.Address
}

// Client talks to one node's API as the tests' agents do: raw requests with signed envelopes.
type Client struct {
	T    testing.TB
	Base string
	Info wire.Info
}

// NewClient is a client of the node at base, with the node's /v1/info.
func NewClient(t testing.TB, base string) *Client {
	t.Helper()
	return &Client{T: t, Base: base, Info: GetInfo(t, base)}
}

// Request sends a request to the node and returns its status and body.
func (c *Client) Request(method, path string, body []byte, header map[string]string) (int, []byte) {
	c.T.Helper()
	req, err := http.NewRequest(method, c.Base+path, bytes.NewReader(body))
	if err != nil {
		c.T.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.T.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// NewParty makes a DID and binds it to dev wallet i on chain through POST /v1/bindings.
func (c *Client) NewParty(i int) *Party {
	c.T.Helper()
	k, err := identity.GenerateKey(identity.Ed25519)
	if err != nil {
		c.T.Fatal(err)
	}
	wallet := chain.DevKey(i)
	raw := BindingJSON(c.T, k, wallet, c.Info.Chain.ID, common.HexToAddress(c.Info.Contracts["StakeRegistry"]))
	if code, body := c.Request("POST", "/v1/bindings", raw, nil); code != http.StatusCreated {
		c.T.Fatalf("binding: %d %s", code, body)
	}
	return &Party{Key: k, Wallet: crypto.PubkeyToAddress(wallet.PublicKey)}
}

// Audience is the node as the envelopes signed for it name it.
func Audience(info wire.Info) identity.Audience {
	return identity.Audience{Node: info.NodeDID, ChainID: info.Chain.ID, Escrow: info.Contracts["BountyEscrow"]}
}

// Envelope signs body (and, for actions, a reference to bounty id) as p, for the node,
// living a minute.
func (c *Client) Envelope(p *Party, id uint64, body any) []byte {
	c.T.Helper()
	s, err := identity.SignRequest(p.Key, Audience(c.Info), id, body, time.Now(), time.Minute)
	if err != nil {
		c.T.Fatal(err)
	}
	return []byte(s)
}

// Act has p take action on bounty id from its wallet.
func (c *Client) Act(p *Party, id uint64, action string, body map[string]any) (int, []byte) {
	c.T.Helper()
	body["wallet"] = p.Wallet
	return c.Request("POST", fmt.Sprintf("/v1/bounties/%d/%s", id, action), c.Envelope(p, id, body), nil)
}

// GetInfo is a node's GET /v1/info.
func GetInfo(t testing.TB, base string) wire.Info {
	t.Helper()
	resp, err := http.Get(base + "/v1/info")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/info: %s", resp.Status)
	}
	var info wire.Info
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		t.Fatal(err)
	}
	return info
}

// BindingJSON is k's binding to wallet on the registry, as POST /v1/bindings takes it.
func BindingJSON(t testing.TB, k *identity.Key, wallet *ecdsa.PrivateKey, chainID uint64, registry common.Address) []byte {
	t.Helper()
	b, err := identity.SignBinding(identity.BindingStatement{DID: k.DID.String(), Wallet: crypto.PubkeyToAddress(wallet.PublicKey), ChainID: chainID,
		Registry: registry, IssuedAt: time.Now().Unix(), Nonce: identity.NewNonce()}, k, wallet)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(b)
	return raw
}

// DecodeResult reads a bounty action's answer.
func DecodeResult(t testing.TB, b []byte) escrow.Result {
	t.Helper()
	var r escrow.Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return r
}
