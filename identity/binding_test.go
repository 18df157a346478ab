package identity

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	ethcrypto "github.com/ethereum/go-ethereum/crypto"
)

func testBinding(t testing.TB) (*Binding, *Key) {
	t.Helper()
	agent := testKey(t, Ed25519, 30)
	wallet, _ := ethcrypto.ToECDSA(common.LeftPadBytes([]byte{7}, 32))
	s := BindingStatement{DID: agent.DID.String(), Wallet: ethcrypto.PubkeyToAddress(wallet.PublicKey),
		ChainID: 31337, Registry: common.HexToAddress("0x7b92eF80Ae4851c4f4d24EA387e76C30dE7AD104"), IssuedAt: testNow.Unix(), Nonce: "n-1"}
	b, err := SignBinding(s, agent, wallet)
	if err != nil {
		t.Fatal(err)
	}
	return b, agent
}

func TestBindingVerifies(t *testing.T) {
	b, _ := testBinding(t)
	raw, _ := json.Marshal(b)
	got, err := ParseBinding(raw)
	if err != nil {
		t.Fatal(err)
	}
	if got.Statement != b.Statement {
		t.Errorf("round trip changed the statement")
	}
}

func TestBindingRefusals(t *testing.T) {
	other := testKey(t, Ed25519, 31)
	otherWallet, _ := ethcrypto.ToECDSA(common.LeftPadBytes([]byte{8}, 32))
	tests := []struct {
		name   string
		mutate func(b *Binding)
	}{
		{"statement names another wallet", func(b *Binding) { b.Statement.Wallet = common.HexToAddress("0x01") }},
		{"statement on another chain", func(b *Binding) { b.Statement.ChainID = 1 }},
		{"statement for another registry", func(b *Binding) { b.Statement.Registry = common.HexToAddress("0x02") }},
		{"wallet signature by another wallet", func(b *Binding) {
			h, _ := b.Statement.Hash()
			sig, _ := ethcrypto.Sign(h.Bytes(), otherWallet)
			b.WalletSignature = sig
		}},
		{"short wallet signature", func(b *Binding) { b.WalletSignature = b.WalletSignature[:64] }},
		{"agent JWS by another DID", func(b *Binding) {
			p, _ := json.Marshal(b.Statement)
			b.AgentJWS, _ = other.SignDocument(p, BindingType)
		}},
		{"agent JWS over another statement", func(b *Binding) {
			s := b.Statement
			s.Nonce = "other"
			p, _ := json.Marshal(s)
			k := testKey(t, Ed25519, 30)
			b.AgentJWS, _ = k.SignDocument(p, BindingType)
		}},
		{"agent JWS of another kind (an envelope's typ)", func(b *Binding) {
			p, _ := json.Marshal(b.Statement)
			k := testKey(t, Ed25519, 30)
			b.AgentJWS, _ = k.SignCompact(p)
		}},
		{"agent JWS garbage", func(b *Binding) { b.AgentJWS = "x.y.z" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := testBinding(t)
			tt.mutate(b)
			if err := b.Verify(); !errors.Is(err, ErrBadProof) {
				t.Errorf("Verify = %v, want ErrBadProof", err)
			}
		})
	}
}

func TestSignBindingChecksTheKeys(t *testing.T) {
	agent := testKey(t, Ed25519, 32)
	wallet, _ := ethcrypto.ToECDSA(common.LeftPadBytes([]byte{9}, 32))
	s := BindingStatement{DID: "did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp", Wallet: ethcrypto.PubkeyToAddress(wallet.PublicKey), ChainID: 1}
	if _, err := SignBinding(s, agent, wallet); !errors.Is(err, ErrBadProof) {
		t.Errorf("statement for another DID: %v", err)
	}
}

func FuzzParseBinding(f *testing.F) {
	b, _ := testBinding(f)
	raw, _ := json.Marshal(b)
	f.Add(raw)
	f.Add([]byte(`{"statement":{},"agentJws":"","walletSignature":"0x"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ParseBinding(data)
		if err != nil {
			return
		}
		// Whatever verifies names a did:key and a wallet that really signed.
		if got.Statement.Wallet == (common.Address{}) || got.Statement.DID == "" {
			t.Fatalf("accepted a binding without parties: %+v", got.Statement)
		}
	})
}
