package stake_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/stake"
)

// FuzzCheckProof feeds the proof rule the bytes anyone can put in a Bound or Rotated event:
// it never panics, and whatever it accepts is a binding of the record's own agent and
// controller on this chain and registry.
func FuzzCheckProof(f *testing.F) {
	agent, err := identity.GenerateKey(identity.Ed25519)
	if err != nil {
		f.Fatal(err)
	}
	wallet := chain.DevKey(1)
	registry := common.HexToAddress("0x0e")
	b, err := identity.SignBinding(identity.BindingStatement{DID: agent.DID.String(), Wallet: addr(wallet), ChainID: chain.EmbeddedChainID,
		Registry: registry, IssuedAt: 1_800_000_000, Nonce: "n"}, agent, wallet)
	if err != nil {
		f.Fatal(err)
	}
	good, _ := json.Marshal(b)
	f.Add(good)
	f.Add([]byte(nil))
	f.Add([]byte(`{"statement":{},"agentJws":"a.b.c","walletSignature":"0x00"}`))
	f.Add(good[:len(good)/2])
	id := identity.AgentID(agent.DID.String())
	f.Fuzz(func(t *testing.T, proof []byte) {
		got, err := stake.CheckProof(proof, id, addr(wallet), chain.EmbeddedChainID, registry)
		if err != nil {
			if !errors.Is(err, stake.ErrProof) {
				t.Fatalf("refusal %v does not wrap ErrProof", err)
			}
			return
		}
		st := got.Statement
		if identity.AgentID(st.DID) != id || st.Wallet != addr(wallet) || st.ChainID != chain.EmbeddedChainID || st.Registry != registry {
			t.Fatalf("accepted a binding of something else: %+v", st)
		}
	})
}
