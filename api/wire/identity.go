package wire

import (
	"encoding/json"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
)

// MaxEnvelopeSize bounds the envelopes a node parses (identity.MaxEnvelopeSize): a client
// reading a thread needs lines this long.
const MaxEnvelopeSize = 256 << 10

// Challenge is the body of GET /v1/challenge: a one-time value to sign, for the node's DID.
type Challenge struct {
	Challenge string    `json:"challenge"`
	Expires   time.Time `json:"expires"`
	Audience  string    `json:"audience"`
}

// RegisterRequest is the body of POST /v1/dids/register.
type RegisterRequest struct {
	// Proof is an envelope (compact JWS) signed by the DID's key, addressed to the node,
	// whose body is {"challenge": "<from GET /v1/challenge>"}.
	Proof string `json:"proof"`
}

// Issued is the answer of POST /v1/dids and /v1/dids/register: a DID the node issued or
// registered (identity.Issued).
type Issued struct {
	DID      string    `json:"did"`
	Kind     string    `json:"kind"` // hosted or registered
	Document *Document `json:"didDocument"`
	// Credential is the registration VC-JWT, signed by the node's DID.
	Credential string `json:"credential"`
}

// Document is a DID document (identity.Document).
type Document struct {
	Context              []string             `json:"@context"`
	ID                   string               `json:"id"`
	VerificationMethod   []VerificationMethod `json:"verificationMethod"`
	Authentication       []string             `json:"authentication,omitempty"`
	AssertionMethod      []string             `json:"assertionMethod,omitempty"`
	CapabilityInvocation []string             `json:"capabilityInvocation,omitempty"`
	CapabilityDelegation []string             `json:"capabilityDelegation,omitempty"`
	KeyAgreement         []string             `json:"keyAgreement,omitempty"`
}

// VerificationMethod is one key (or account) of a DID document.
type VerificationMethod struct {
	ID                  string            `json:"id"`
	Type                string            `json:"type"`
	Controller          string            `json:"controller"`
	PublicKeyMultibase  string            `json:"publicKeyMultibase,omitempty"`
	PublicKeyBase58     string            `json:"publicKeyBase58,omitempty"`
	PublicKeyJwk        map[string]string `json:"publicKeyJwk,omitempty"`
	BlockchainAccountID string            `json:"blockchainAccountId,omitempty"`
}

// VerifyResponse is the body of a successful POST /v1/envelopes/verify.
type VerifyResponse struct {
	Valid   bool            `json:"valid"`
	Sender  string          `json:"sender"`
	Signers []string        `json:"signers"`
	Payload json.RawMessage `json:"payload"`
}

// BindingStatement says that an agent DID and a wallet belong together, for one stake
// registry on one chain (identity.BindingStatement): both keys sign it.
type BindingStatement struct {
	DID      string         `json:"did"`
	Wallet   common.Address `json:"wallet"`
	ChainID  uint64         `json:"chainId"`
	Registry common.Address `json:"registry"`
	IssuedAt int64          `json:"iat"`
	Nonce    string         `json:"nonce"`
}

// BindingRequest is the body of POST /v1/bindings: a statement with both signatures
// (identity.Binding).
type BindingRequest struct {
	Statement BindingStatement `json:"statement"`
	// AgentJWS is a compact JWS by the DID's key whose payload is the statement.
	AgentJWS string `json:"agentJws"`
	// WalletSignature is the wallet's 65-byte EIP-712 signature (r || s || v, v = 27/28).
	WalletSignature hexutil.Bytes `json:"walletSignature"`
}

// BindingAnswer says where a binding stands on chain.
type BindingAnswer struct {
	Statement BindingStatement `json:"statement"`
	// OnChain: the node's index holds the binding, verified; the wallet acts for the DID
	// through any node.
	OnChain bool `json:"onChain"`
	// TxHash and Block are the bind transaction the node just sent from the wallet.
	TxHash string `json:"txHash,omitempty"`
	Block  uint64 `json:"block,omitempty"`
	// To and Data are the call for the wallet to send itself, when the node does not hold it
	// (StakeRegistry.bind(agentId, binding)).
	To   *common.Address `json:"to,omitempty"`
	Data hexutil.Bytes   `json:"data,omitempty"`
}

// RevokeBody is the envelope body of POST /v1/dids/revoke: Op "revoke" (a signature for
// another write cannot be spent on this one) and the wallet, held by the node, that bound the
// signer's DID on chain and revokes it.
type RevokeBody struct {
	Op     string         `json:"op"`
	Wallet common.Address `json:"wallet"`
}

// RotateBody is the envelope body of POST /v1/dids/rotate: Op "rotate", the wallet, held by
// the node, that bound the signer's DID on chain, and the successor's half of its binding to
// that wallet: the statement (the new DID, the wallet, this node's chain and registry) and
// the new key's JWS over it (identity.SignBindingAgent). The node signs the wallet's half
// with the wallet, so StakeRegistry.rotate records a binding both keys signed, as bind does.
type RotateBody struct {
	Op           string           `json:"op"`
	Wallet       common.Address   `json:"wallet"`
	Successor    BindingStatement `json:"successor"`
	SuccessorJWS string           `json:"successorJws"`
}

// KeyChange answers POST /v1/dids/revoke and /v1/dids/rotate: the transaction, the stake
// the wallet holds after it (the successor's, for a rotation), and the key status of the
// signer's DID as the node's index then has it.
type KeyChange struct {
	StakeResult
	Key KeyState `json:"key"`
}

// KeyStatus is what the chain says of a DID's key: active unless a controller the DID bound
// revoked it or rotated it away.
type KeyStatus string

// The key statuses.
const (
	KeyActive  KeyStatus = "active"
	KeyRevoked KeyStatus = "revoked"
	KeyRotated KeyStatus = "rotated"
)

// KeyState is a DID's key status with where it came from (stake.KeyState).
type KeyState struct {
	DID    string    `json:"did"`
	Status KeyStatus `json:"status"`
	// Successor is the DID a verified rotation moved to ("" for a revocation, or a rotation
	// whose new proof does not verify).
	Successor string `json:"successor,omitempty"`
	// Controller closed the DID in Block.
	Controller common.Address `json:"controller,omitzero"`
	Block      uint64         `json:"block,omitempty"`
}
