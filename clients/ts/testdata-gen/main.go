//go:build ignore

// Command main writes clients/ts/test/fixtures/go.json: keys, envelopes, cards, bindings,
// audits, signed tree heads and Merkle proofs made by Surety's Go code from fixed seeds, so
// that the TypeScript client's tests check it against the Go implementation byte for byte
// (Ed25519 and ES256K, per RFC 6979, are deterministic). Run from the repository root:
//
//	go run ./clients/ts/testdata-gen/main.go
//
// TestTypeScriptFixturesCurrent (testnet/e2e) fails when the committed file is not what this
// writes.
//
// The conformance vectors in testdata/conformance cover the verdicts; these fixtures cover
// signing (the same bytes out of the same key and payload).
package main

import (
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math/big"
	"os"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/registry"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/reputation/merkle"
)

type keyFixture struct {
	Type    string `json:"type"`
	Seed    string `json:"seed"`
	KeyFile string `json:"keyFile"`
	DID     string `json:"did"`
	Kid     string `json:"kid"`
}

type signed struct {
	Key     int    `json:"key"`
	Payload string `json:"payload"` // the exact payload bytes signed
	JWS     string `json:"jws"`
}

type fixtures struct {
	Now       int64            `json:"now"`
	Keys      []keyFixture     `json:"keys"`
	Envelopes []signed         `json:"envelopes"`
	Cards     []signed         `json:"cards"`
	Audits    []signed         `json:"audits"`
	Heads     []signed         `json:"heads"`
	Bindings  []bindingFixture `json:"bindings"`
	Merkle    merkleFixture    `json:"merkle"`
	Calls     callsFixture     `json:"calls"`
}

// callsFixture is the calldata Go packs for a wallet's own transactions (escrow.ActionData,
// the abigen bindings), for a bounty as the node shows it.
type callsFixture struct {
	Bounty  json.RawMessage   `json:"bounty"`
	AgentID string            `json:"agentId"`
	Result  string            `json:"resultHash"`
	Actions map[string]string `json:"actions"`
	Post    string            `json:"post"`
	Bind    string            `json:"bind"`
	Stake   string            `json:"stake"`
	Proof   string            `json:"proof"`
}

type bindingFixture struct {
	Key       int               `json:"key"`
	WalletKey string            `json:"walletKey"`
	Binding   *identity.Binding `json:"binding"`
	Digest    string            `json:"digest"` // the EIP-712 hash the wallet signed
}

type merkleFixture struct {
	Leaves []string              `json:"leaves"` // leaf bytes, as text
	Roots  []string              `json:"roots"`  // root of the first i+1 leaves
	Proofs []map[string][]string `json:"proofs"` // proofs[size-1]["index"] = path
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func main() {
	out := flag.String("out", "clients/ts/test/fixtures/go.json", "where to write the fixtures")
	flag.Parse()
	now := int64(1764000000)
	var f fixtures
	f.Now = now
	var keys []*identity.Key
	for i, t := range []identity.KeyType{identity.Ed25519, identity.Secp256k1, identity.Ed25519} {
		seed := crypto.Keccak256([]byte(fmt.Sprintf("surety ts fixture key %d", i)))
		k := must(identity.KeyFromSeed(t, seed))
		keys = append(keys, k)
		f.Keys = append(f.Keys, keyFixture{Type: string(t), Seed: hex.EncodeToString(seed), KeyFile: string(must(k.MarshalKeyFile())), DID: k.DID.String(), Kid: k.DID.KeyID()})
	}
	node := keys[2]
	escrow := "0x5FbDB2315678afecb367f032d93F642f64180aa3"
	for i, k := range keys[:2] {
		for j, body := range []string{
			`{"body":{"text":"hello <&>"},"to":["` + node.DID.String() + `"],"aud":"` + node.DID.String() + `","chain_id":31337,"state":"discussion"}`,
			`{"body":{"wallet":"0x70997970c51812dc3a010c7d01b50e0d17dc79c8","amount":"1000"},"bounty":{"chain_id":31337,"escrow":"` + escrow + `","id":7},"unknown_field":[1,2,3]}`,
		} {
			p := []byte(body)
			filled := must(identity.FillEnvelope(p, k, time.Unix(now, 0), 5*time.Minute))
			// Fixed nonce and id, so that a regenerate writes the same bytes.
			var m map[string]any
			_ = json.Unmarshal(filled, &m)
			m["nonce"], m["id"] = fmt.Sprintf("nonce-%d-%d", i, j), fmt.Sprintf("id-%d-%d", i, j)
			filled = must(json.Marshal(m))
			f.Envelopes = append(f.Envelopes, signed{Key: i, Payload: string(filled), JWS: must(k.SignCompact(filled))})
		}
		card := registry.Card{DID: k.DID.String(), Name: fmt.Sprintf("agent %d", i), Description: "audits & builds <contracts>",
			Capabilities: []string{"solidity", "audit"}, Endpoints: []registry.Endpoint{{Kind: "a2a", URL: "https://agent.example/a2a"}},
			Wallet: common.HexToAddress("0x70997970C51812dc3A010C7d01b50e0d17dc79C8"), Seq: 3, Updated: now}
		sc := must(registry.Sign(card, k))
		f.Cards = append(f.Cards, signed{Key: i, Payload: string(must(json.Marshal(card))), JWS: sc.JWS})
		audit := fmt.Sprintf(`{"bounty":{"chain_id":31337,"escrow":"%s","id":7},"body":{"kind":"%s","subject":"%s","score":0.75,"evidence":{"hash":"0x%s","uri":"https://evidence.example/r"}}}`,
			escrow, reputation.AuditKind, keys[1-i].DID.String(), hex.EncodeToString(crypto.Keccak256([]byte("report"))))
		filled := must(identity.FillEnvelope([]byte(audit), k, time.Unix(now, 0), 5*time.Minute))
		var m map[string]any
		_ = json.Unmarshal(filled, &m)
		m["nonce"], m["id"] = fmt.Sprintf("audit-nonce-%d", i), fmt.Sprintf("audit-id-%d", i)
		filled = must(json.Marshal(m))
		f.Audits = append(f.Audits, signed{Key: i, Payload: string(filled), JWS: must(k.SignCompact(filled))})
		wallet := must(crypto.ToECDSA(crypto.Keccak256([]byte(fmt.Sprintf("surety ts fixture wallet %d", i)))))
		st := identity.BindingStatement{DID: k.DID.String(), Wallet: crypto.PubkeyToAddress(wallet.PublicKey), ChainID: 31337,
			Registry: common.HexToAddress("0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512"), IssuedAt: now, Nonce: fmt.Sprintf("binding-nonce-%d", i)}
		b := must(identity.SignBinding(st, k, wallet))
		f.Bindings = append(f.Bindings, bindingFixture{Key: i, WalletKey: hex.EncodeToString(crypto.FromECDSA(wallet)), Binding: b, Digest: must(st.Hash()).Hex()})
	}
	var tree merkle.Tree
	for i := range 9 {
		leaf := fmt.Sprintf("leaf %d", i)
		f.Merkle.Leaves = append(f.Merkle.Leaves, leaf)
		tree.Append(merkle.LeafHash([]byte(leaf)))
		size := tree.Size()
		root := must(tree.Root(size))
		f.Merkle.Roots = append(f.Merkle.Roots, root.String())
		proofs := map[string][]string{}
		for idx := range size {
			var path []string
			for _, h := range must(tree.InclusionProof(idx, size)) {
				path = append(path, h.String())
			}
			if path == nil {
				path = []string{}
			}
			proofs[fmt.Sprint(idx)] = path
		}
		f.Merkle.Proofs = append(f.Merkle.Proofs, proofs)
		if size == 5 || size == 9 {
			for ki, k := range []*identity.Key{keys[2], keys[1]} {
				payload := must(json.Marshal(struct {
					Size   uint64      `json:"size"`
					Root   merkle.Hash `json:"root"`
					Epoch  int64       `json:"epoch"`
					Closed int64       `json:"closed"`
				}{size, root, int64(size), now}))
				f.Heads = append(f.Heads, signed{Key: []int{2, 1}[ki], Payload: string(payload), JWS: must(k.SignDocument(payload, reputation.HeadType))})
			}
		}
	}
	f.Calls = calls(keys[0], f.Bindings[0].Binding)
	b := must(json.MarshalIndent(f, "", "  "))
	if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
		panic(err)
	}
}

func calls(k *identity.Key, binding *identity.Binding) callsFixture {
	raw := []byte(`{"id":3196390329584394,"status":"submitted","poster":"0x3e0b132733920f128af23ea439f92b1cfc33ee0e",` +
		`"worker":"0x61f8c24c7feb94fd49f6ac901e21ac37c15396fe","token":"0x0000000000000000000000000000000000000000",` +
		`"amount":"2000000000000000000","arbiter":"0x70997970c51812dc3a010c7d01b50e0d17dc79c8","deadline":1764003600,` +
		`"reviewWindow":600,"feeBps":50,"minStake":"500000000000000000",` +
		`"specHash":"0x1c8aff950685c2ed4bc3174f3472287b56d9517b9c948127319a09a7a8d8d726","payout":"0","fee":"0","posterRefund":"0",` +
		`"postedBlock":7,"updatedBlock":9}`)
	var b escrow.Bounty
	if err := json.Unmarshal(raw, &b); err != nil {
		panic(err)
	}
	agent := identity.AgentID(k.DID.String())
	result := crypto.Keccak256Hash([]byte("report"))
	c := callsFixture{Bounty: raw, AgentID: agent.Hex(), Result: result.Hex(), Actions: map[string]string{}}
	args := escrow.ActionArgs{AgentID: agent, Worker: common.HexToAddress("0x61f8c24c7feb94fd49f6ac901e21ac37c15396fe"), ResultHash: result, ReasonHash: result}
	for _, a := range []escrow.Action{escrow.ActionClaim, escrow.ActionAssign, escrow.ActionSubmit, escrow.ActionAccept, escrow.ActionReject,
		escrow.ActionDispute, escrow.ActionRelease, escrow.ActionRefund, escrow.ActionCancel, escrow.ActionUnclaim} {
		c.Actions[string(a)] = hexutil.Encode(must(escrow.ActionData(&b, a, args)))
	}
	e := contracts.NewBountyEscrow()
	amount, _ := new(big.Int).SetString("2000000000000000000", 10)
	c.Post = hexutil.Encode(e.PackPost(common.Address{}, amount, common.HexToAddress("0x70997970c51812dc3a010c7d01b50e0d17dc79c8"), 1764003600, 600,
		big.NewInt(5e17), common.HexToHash("0x1c8aff950685c2ed4bc3174f3472287b56d9517b9c948127319a09a7a8d8d726"), crypto.Keccak256Hash([]byte("salt"))))
	proof := must(json.Marshal(binding))
	c.Proof = string(proof)
	r := contracts.NewStakeRegistry()
	c.Bind = hexutil.Encode(r.PackBind(identity.AgentID(binding.Statement.DID), proof))
	c.Stake = hexutil.Encode(r.PackStake(agent, big.NewInt(1e18)))
	return c
}
