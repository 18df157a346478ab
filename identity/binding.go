package identity

import (
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/common/math"
	ethcrypto "github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
)

// BindingStatement says that an agent DID and a wallet belong together, for one stake
// registry on one chain. Both keys sign it: the agent key as a JWS, the wallet as EIP-712
// typed data. The wallet then records it on chain with StakeRegistry.bind, carrying the
// signed binding as the proof every node checks.
type BindingStatement struct {
	DID      string         `json:"did"`
	Wallet   common.Address `json:"wallet"`
	ChainID  uint64         `json:"chainId"`
	Registry common.Address `json:"registry"`
	IssuedAt int64          `json:"iat"`
	Nonce    string         `json:"nonce"`
}

// Binding is a statement with both signatures.
type Binding struct {
	Statement BindingStatement `json:"statement"`
	// AgentJWS is a compact JWS by the DID's key whose payload is the statement.
	AgentJWS string `json:"agentJws"`
	// WalletSignature is the wallet's 65-byte EIP-712 signature (r || s || v, v = 27/28).
	WalletSignature hexutil.Bytes `json:"walletSignature"`
}

// AgentID is the id StakeRegistry keys an agent by: keccak256 of its DID.
func AgentID(did string) common.Hash { return ethcrypto.Keccak256Hash([]byte(did)) }

// TypedData is the EIP-712 form of the statement the wallet signs (what a wallet or an
// external signer such as Clef is asked to sign).
func (s BindingStatement) TypedData() apitypes.TypedData {
	return apitypes.TypedData{
		Types: apitypes.Types{
			"EIP712Domain": {
				{Name: "name", Type: "string"}, {Name: "version", Type: "string"},
				{Name: "chainId", Type: "uint256"}, {Name: "verifyingContract", Type: "address"},
			},
			"AgentBinding": {
				{Name: "did", Type: "string"}, {Name: "agentId", Type: "bytes32"}, {Name: "wallet", Type: "address"},
				{Name: "issuedAt", Type: "uint256"}, {Name: "nonce", Type: "string"},
			},
		},
		PrimaryType: "AgentBinding",
		Domain: apitypes.TypedDataDomain{
			Name: "Surety StakeRegistry", Version: "1",
			ChainId:           (*math.HexOrDecimal256)(new(big.Int).SetUint64(s.ChainID)),
			VerifyingContract: s.Registry.Hex(),
		},
		Message: apitypes.TypedDataMessage{
			"did": s.DID, "agentId": AgentID(s.DID).Hex(), "wallet": s.Wallet.Hex(),
			"issuedAt": (*math.HexOrDecimal256)(big.NewInt(s.IssuedAt)), "nonce": s.Nonce,
		},
	}
}

// Hash is the EIP-712 digest the wallet signs.
func (s BindingStatement) Hash() (common.Hash, error) {
	h, _, err := apitypes.TypedDataAndHash(s.TypedData())
	if err != nil {
		return common.Hash{}, fmt.Errorf("binding: EIP-712: %w", err)
	}
	return common.BytesToHash(h), nil
}

// BindingType is the typ of the agent key's JWS over a binding statement: a binding is no
// envelope, card or credential, and none of those passes for one.
const BindingType = "surety-binding+jws"

// SignBinding signs a statement with the agent key and the wallet key.
func SignBinding(s BindingStatement, agent *Key, wallet *ecdsa.PrivateKey) (*Binding, error) {
	if ethcrypto.PubkeyToAddress(wallet.PublicKey) != s.Wallet {
		return nil, fmt.Errorf("%w: statement names wallet %s, key is %s", ErrBadProof, s.Wallet, ethcrypto.PubkeyToAddress(wallet.PublicKey))
	}
	return SignBindingWith(s, agent, func(data apitypes.TypedData) ([]byte, error) {
		h, _, err := apitypes.TypedDataAndHash(data)
		if err != nil {
			return nil, err
		}
		sig, err := ethcrypto.Sign(h, wallet)
		if err != nil {
			return nil, err
		}
		sig[64] += 27
		return sig, nil
	})
}

// SignBindingWith signs a statement with the agent key, and has signWallet sign its EIP-712
// form (TypedData) as the statement's wallet: a wallet whose key is elsewhere, behind an
// external signer, signs this way. The signature must be 65 bytes, v 27 or 28; the binding is
// verified before it is returned, so a signer that signed other data, or as another account,
// is caught here.
func SignBindingWith(s BindingStatement, agent *Key, signWallet func(apitypes.TypedData) ([]byte, error)) (*Binding, error) {
	jws, err := SignBindingAgent(s, agent)
	if err != nil {
		return nil, err
	}
	return CompleteBinding(s, jws, signWallet)
}

// SignBindingAgent is the agent key's half of a binding: its JWS over the statement. The
// wallet's half may be signed elsewhere, by whoever holds the wallet (CompleteBinding): a
// node rotating an agent from a wallet it holds signs it so.
func SignBindingAgent(s BindingStatement, agent *Key) (string, error) {
	if s.DID != agent.DID.String() {
		return "", fmt.Errorf("%w: statement names %s, key is %s", ErrBadProof, s.DID, agent.DID)
	}
	payload, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	return agent.SignDocument(payload, BindingType)
}

// CompleteBinding adds the wallet's half to a statement and the agent's JWS over it: the
// agent's half is checked first (the wallet signs nothing for a JWS that does not verify),
// then signWallet signs the statement's EIP-712 form as the statement's wallet, and the whole
// binding is verified before it is returned (see SignBindingWith).
func CompleteBinding(s BindingStatement, agentJWS string, signWallet func(apitypes.TypedData) ([]byte, error)) (*Binding, error) {
	b := &Binding{Statement: s, AgentJWS: agentJWS}
	if err := b.verifyAgent(); err != nil {
		return nil, err
	}
	sig, err := signWallet(s.TypedData())
	if err != nil {
		return nil, fmt.Errorf("binding: the wallet's signature: %w", err)
	}
	b.WalletSignature = sig
	if err := b.Verify(); err != nil {
		return nil, err
	}
	return b, nil
}

// Verify checks both signatures: the JWS by the statement's DID over exactly the statement,
// and the EIP-712 signature by the statement's wallet. It returns an error wrapping
// ErrBadProof, or one of the DID parsing errors.
func (b *Binding) Verify() error {
	if err := b.verifyAgent(); err != nil {
		return err
	}
	if len(b.WalletSignature) != 65 {
		return fmt.Errorf("%w: wallet signature is %d bytes, want 65", ErrBadProof, len(b.WalletSignature))
	}
	h, err := b.Statement.Hash()
	if err != nil {
		return err
	}
	sig := append([]byte(nil), b.WalletSignature...)
	if sig[64] >= 27 {
		sig[64] -= 27
	}
	pub, err := ethcrypto.SigToPub(h.Bytes(), sig)
	if err != nil {
		return fmt.Errorf("%w: wallet signature: %v", ErrBadProof, err)
	}
	if got := ethcrypto.PubkeyToAddress(*pub); got != b.Statement.Wallet {
		return fmt.Errorf("%w: wallet signature is by %s, not %s", ErrBadProof, got, b.Statement.Wallet)
	}
	return nil
}

// verifyAgent checks the agent's half: the JWS by the statement's did:key over exactly the
// statement.
func (b *Binding) verifyAgent() error {
	d, err := ParseDID(b.Statement.DID)
	if err != nil {
		return err
	}
	if d.Method != "key" {
		return fmt.Errorf("%w: only a did:key agent signs a binding", ErrBadProof)
	}
	sigs, payload, err := parseCompact([]byte(b.AgentJWS))
	if err != nil {
		return fmt.Errorf("%w: agent JWS: %v", ErrBadProof, err)
	}
	if typ := sigs[0].header.Typ; typ != BindingType {
		return fmt.Errorf("%w: agent JWS has typ %q, want %q", ErrBadProof, truncate(typ, 40), BindingType)
	}
	keys := newKeyCache(1)
	v := &Verifier{keys: keys}
	signer, err := v.checkSignature(sigs[0])
	if err != nil {
		return fmt.Errorf("%w: agent JWS: %v", ErrBadProof, err)
	}
	if signer != d.String() {
		return fmt.Errorf("%w: agent JWS is signed by %s, not %s", ErrBadProof, signer, d)
	}
	var signed BindingStatement
	if err := json.Unmarshal(payload, &signed); err != nil || signed != b.Statement {
		return fmt.Errorf("%w: agent JWS does not sign this statement", ErrBadProof)
	}
	return nil
}

// ParseBinding decodes a binding (the proof bytes StakeRegistry.bind records) and verifies it.
func ParseBinding(data []byte) (*Binding, error) {
	var b Binding
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("%w: not a binding: %v", ErrBadProof, err)
	}
	if err := b.Verify(); err != nil {
		return nil, err
	}
	return &b, nil
}
