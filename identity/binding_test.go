package identity

import (
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	ethcrypto "github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
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

// TestSignBindingWithChecksTheWallet: a wallet signer elsewhere (Clef) that fails, signs as
// another account, or signs other data makes no binding.
func TestSignBindingWithChecksTheWallet(t *testing.T) {
	agent := testKey(t, Ed25519, 33)
	wallet, _ := ethcrypto.ToECDSA(common.LeftPadBytes([]byte{10}, 32))
	other, _ := ethcrypto.ToECDSA(common.LeftPadBytes([]byte{11}, 32))
	s := BindingStatement{DID: agent.DID.String(), Wallet: ethcrypto.PubkeyToAddress(wallet.PublicKey), ChainID: 1, Nonce: "n"}
	signAs := func(key *ecdsa.PrivateKey, data apitypes.TypedData) ([]byte, error) {
		h, _, err := apitypes.TypedDataAndHash(data)
		if err != nil {
			return nil, err
		}
		sig, err := ethcrypto.Sign(h, key)
		if err == nil {
			sig[64] += 27
		}
		return sig, err
	}
	denied := errors.New("request denied")
	for _, tc := range []struct {
		name string
		sign func(apitypes.TypedData) ([]byte, error)
		want error
	}{
		{"the wallet", func(d apitypes.TypedData) ([]byte, error) { return signAs(wallet, d) }, nil},
		{"declined", func(apitypes.TypedData) ([]byte, error) { return nil, denied }, denied},
		{"another account", func(d apitypes.TypedData) ([]byte, error) { return signAs(other, d) }, ErrBadProof},
		{"other data", func(d apitypes.TypedData) ([]byte, error) {
			d.Message["nonce"] = "m"
			return signAs(wallet, d)
		}, ErrBadProof},
		{"short", func(apitypes.TypedData) ([]byte, error) { return make([]byte, 64), nil }, ErrBadProof},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := SignBindingWith(s, agent, tc.sign)
			if tc.want == nil {
				if err != nil || b.Verify() != nil {
					t.Fatalf("err %v", err)
				}
				return
			}
			if !errors.Is(err, tc.want) || b != nil {
				t.Errorf("got %v, %v; want %v", b, err, tc.want)
			}
		})
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

// TestCompleteBindingChecksTheAgentFirst: the wallet's half is signed apart from the agent's
// (a node holding the wallet signs it for a rotation); the wallet is not asked to sign for an
// agent JWS that does not verify, and the two halves make the binding SignBinding makes.
func TestCompleteBindingChecksTheAgentFirst(t *testing.T) {
	agent, other := testKey(t, Ed25519, 34), testKey(t, Ed25519, 35)
	wallet, _ := ethcrypto.ToECDSA(common.LeftPadBytes([]byte{12}, 32))
	s := BindingStatement{DID: agent.DID.String(), Wallet: ethcrypto.PubkeyToAddress(wallet.PublicKey), ChainID: 1, Nonce: "n"}
	asked := 0
	sign := func(d apitypes.TypedData) ([]byte, error) {
		asked++
		h, _, err := apitypes.TypedDataAndHash(d)
		if err != nil {
			return nil, err
		}
		sig, err := ethcrypto.Sign(h, wallet)
		if err == nil {
			sig[64] += 27
		}
		return sig, err
	}
	byOther, _ := json.Marshal(s)
	otherJWS, _ := other.SignDocument(byOther, BindingType)
	if _, err := SignBindingAgent(s, other); !errors.Is(err, ErrBadProof) {
		t.Errorf("another key's half: %v, want ErrBadProof", err)
	}
	if b, err := CompleteBinding(s, otherJWS, sign); !errors.Is(err, ErrBadProof) || b != nil || asked != 0 {
		t.Errorf("completing a JWS by another key: %v, %v; the wallet was asked %d times", b, err, asked)
	}
	jws, err := SignBindingAgent(s, agent)
	if err != nil {
		t.Fatal(err)
	}
	b, err := CompleteBinding(s, jws, sign)
	if err != nil || asked != 1 {
		t.Fatalf("CompleteBinding: %v (asked %d)", err, asked)
	}
	raw, _ := json.Marshal(b)
	if _, err := ParseBinding(raw); err != nil {
		t.Errorf("the completed binding does not parse: %v", err)
	}
}
