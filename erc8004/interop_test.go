package erc8004_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/erc8004"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
)

// TestViemRoundTripOnAnvil: an independent client (viem, with a human-readable ABI written
// from the ERC-8004 specification, clients/ts/interop/erc8004-viem.mjs) registers an agent in
// the registries Surety deploys on Anvil, sets its wallet with an EIP-712 signature viem makes,
// and gives it feedback; viem reads it all back from the chain, and the node's index
// (erc8004.Indexer) holds the same agent and feedback.
func TestViemRoundTripOnAnvil(t *testing.T) {
	nodeJS, script := testutil.NodeScript(t, "erc8004-viem.mjs", "viem")
	a := testutil.Anvil(t)
	ctx := context.Background()
	c, err := chain.Dial(ctx, a.URL, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	dep, err := contracts.Deploy(ctx, c, chain.DevKey(0), contracts.DeployConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	key := func(i int) string { return "0x" + hex.EncodeToString(crypto.FromECDSA(chain.DevKey(i))) }
	addr := func(i int) common.Address { return crypto.PubkeyToAddress(chain.DevKey(i).PublicKey) }
	leaf := common.HexToHash("0x5eed000000000000000000000000000000000000000000000000000000000001")
	proof := erc8004.AuditProofURL("http://127.0.0.1:7746", leaf, 12)
	input := map[string]any{
		"rpc": a.URL, "chainId": dep.ChainID, "identity": dep.Contracts.IdentityRegistry.Hex(), "reputation": dep.Contracts.ReputationRegistry.Hex(),
		"owner": key(1), "wallet": key(2), "client": key(3),
		"agentURI": erc8004.RegistrationURL("http://127.0.0.1:7746", did), "did": did,
		"feedback": map[string]any{"value": "8000", "valueDecimals": erc8004.AuditDecimals, "tag1": erc8004.AuditTag, "tag2": "bounty:1",
			"endpoint": "", "feedbackURI": proof, "feedbackHash": leaf.Hex()},
	}
	in, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "input.json")
	if err := os.WriteFile(path, in, 0o600); err != nil {
		t.Fatal(err)
	}
	cmdCtx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	out, err := exec.CommandContext(cmdCtx, nodeJS, script, path).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", filepath.Base(script), err, out)
	}
	var got struct {
		AgentID, AgentURI, DID, FeedbackIndex string
		Owner, AgentWallet                    common.Address
		Stored                                struct {
			Value         string
			ValueDecimals uint8
			Tag1, Tag2    string
			IsRevoked     bool
		}
		Summary struct {
			Count, Value  string
			ValueDecimals uint8
		}
		Clients []common.Address
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.AgentID != "0" || got.Owner != addr(1) || got.AgentWallet != addr(2) || got.DID != did || got.FeedbackIndex != "1" ||
		got.Stored.Value != "8000" || got.Stored.ValueDecimals != 2 || got.Stored.Tag1 != erc8004.AuditTag || got.Stored.Tag2 != "bounty:1" || got.Stored.IsRevoked ||
		got.Summary.Count != "1" || got.Summary.Value != "8000" || got.Summary.ValueDecimals != 2 || len(got.Clients) != 1 || got.Clients[0] != addr(3) {
		t.Errorf("viem read back %s", out)
	}

	// The node's index of the same chain holds what viem wrote.
	db := testutil.OpenSQL(t)
	row, err := sqlite.EnterChain(ctx, db.DB, sqlite.Chain{Key: "anvil", ChainID: dep.ChainID, Genesis: "g", Contracts: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := erc8004.NewIndexer(ctx, erc8004.IndexerConfig{DB: db.DB, Chain: row, Client: c, IdentityRegistry: dep.Contracts.IdentityRegistry,
		ReputationRegistry: dep.Contracts.ReputationRegistry, ValidationRegistry: dep.Contracts.ValidationRegistry, StartBlock: dep.Block,
		Bindings: bindings{did: {addr(2)}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	agent, err := ix.Agent(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if agent.Owner != addr(1) || agent.Wallet != addr(2) || agent.DID != did || agent.URI != input["agentURI"] {
		t.Errorf("indexed agent = %+v", agent)
	}
	fb, err := ix.FeedbackFor(ctx, did) // the DID's wallet is the agent wallet viem set
	if err != nil {
		t.Fatal(err)
	}
	if len(fb) != 1 || fb[0].Client != addr(3) || fb[0].Value.Int64() != 8000 || fb[0].ValueDecimals != 2 || fb[0].Tag1 != erc8004.AuditTag ||
		fb[0].FeedbackURI != proof || fb[0].FeedbackHash != leaf || fb[0].FeedbackIndex != 1 {
		t.Errorf("indexed feedback = %+v", fb)
	}
}
