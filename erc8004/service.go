package erc8004

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	gmath "github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/txn"
)

// OpKind is what an Op does.
type OpKind string

// The registry calls Service sends.
const (
	// OpRegister mints an agent to Op.From with Op.AgentURI and, when Op.DID is set, the
	// metadata "did" = Op.DID (IdentityRegistry.register).
	OpRegister OpKind = "register"
	// OpSetAgentURI points agent Op.AgentID at Op.AgentURI.
	OpSetAgentURI OpKind = "set-uri"
	// OpSetWallet sets agent Op.AgentID's wallet to Op.Wallet with the wallet's signature
	// Op.Signature over (agent, wallet, owner, Op.Deadline) (WalletSignature makes it).
	OpSetWallet OpKind = "set-wallet"
	// OpFeedback gives agent Op.AgentID the feedback Op.Feedback from Op.From.
	OpFeedback OpKind = "feedback"
)

// Op is one registry call from a wallet.
type Op struct {
	Kind     OpKind
	From     common.Address
	AgentID  uint64
	AgentURI string
	DID      string
	// Wallet, Deadline (unix seconds) and Signature: OpSetWallet's.
	Wallet    common.Address
	Deadline  uint64
	Signature []byte
	Feedback  FeedbackInput
}

// FeedbackInput is what giveFeedback records: a value with 0-18 decimals, tags, and where
// the evidence is (its URI and hash).
type FeedbackInput struct {
	Value         *big.Int
	ValueDecimals uint8
	Tag1, Tag2    string
	Endpoint      string
	FeedbackURI   string
	FeedbackHash  common.Hash
}

// Bounds of a feedback value (the reputation registry's).
var (
	// MaxAbsValue is the largest |value| the registry takes (1e38).
	MaxAbsValue = new(big.Int).Exp(big.NewInt(10), big.NewInt(38), nil)
)

// MaxValueDecimals is the most decimals a value may have.
const MaxValueDecimals = 18

// MaxWalletDeadline is how far ahead a wallet signature's deadline may be (the registry's
// MAX_DEADLINE_DELAY).
const MaxWalletDeadline = 5 * time.Minute

// Sentinels of registry calls, found before sending or decoded from the registries' errors.
var (
	ErrInvalid       = errors.New("erc8004: invalid argument")
	ErrNotAuthorized = errors.New("erc8004: the wallet is not the agent's owner or operator")
	ErrSelfFeedback  = errors.New("erc8004: an agent's owner and operators cannot rate it")
	ErrBadSignature  = errors.New("erc8004: the wallet signature does not verify or expired")
)

// Result is what an op returns.
type Result struct {
	TxHash  string `json:"txHash"`
	Block   uint64 `json:"block"`
	GasUsed uint64 `json:"gasUsed"`
	// AgentID is the agent the call registered or acted on; FeedbackIndex the index of the
	// feedback OpFeedback gave.
	AgentID       uint64 `json:"agentId"`
	FeedbackIndex uint64 `json:"feedbackIndex,omitempty"`
}

// ServiceConfig wires a Service.
type ServiceConfig struct {
	Tx    *txn.Service
	Chain bind.ContractBackend
	// ChainID is the chain's id (the EIP-712 domain of wallet signatures).
	ChainID                                                  uint64
	IdentityRegistry, ReputationRegistry, ValidationRegistry common.Address
	// Index, when set, is waited for after each op, so the node's reads see it.
	Index *Indexer
}

// Service sends registry calls from wallets the node holds (Do), or from a wallet its caller
// holds (Run), through package txn, refusing first what the registries would refuse.
type Service struct {
	cfg ServiceConfig
	id  *contracts.IdentityRegistry
	rep *contracts.ReputationRegistry
}

// NewService builds the service.
func NewService(cfg ServiceConfig) *Service {
	return &Service{cfg: cfg, id: contracts.NewIdentityRegistry(), rep: contracts.NewReputationRegistry()}
}

// Do performs op once per Idempotency (txn.Do).
func (s *Service) Do(ctx context.Context, op Op, idem txn.Idempotency) (*Result, error) {
	return txn.Do(ctx, s.cfg.Tx, idem, s.request(op))
}

// Run performs op from snd's wallet with no request store (a client such as the CLI).
func (s *Service) Run(ctx context.Context, snd *txn.Sender, op Op) (*Result, error) {
	op.From = snd.Address()
	return txn.Run(ctx, snd, s.request(op))
}

// Registries are the registries' addresses (those Broadcast relays calls to).
func (s *Service) Registries() []common.Address {
	return []common.Address{s.cfg.IdentityRegistry, s.cfg.ReputationRegistry, s.cfg.ValidationRegistry}
}

// Broadcast sends a registry call an external wallet signed, without waiting for it to be
// mined (txn.Service.Broadcast): the node's JSON-RPC relay.
func (s *Service) Broadcast(ctx context.Context, raw []byte) (*types.Transaction, error) {
	return s.cfg.Tx.Broadcast(ctx, raw, s.Registries(), decodeRevert)
}

func (s *Service) request(op Op) txn.Request[*Result] {
	return txn.Request[*Result]{
		From: op.From,
		Prepare: func(ctx context.Context, snd *txn.Sender) (txn.Call, error) {
			to, data, err := s.call(ctx, snd.Address(), op)
			return txn.Call{To: to, Data: data, Decode: decodeRevert}, err
		},
		Finish: func(ctx context.Context, r *types.Receipt) (*Result, error) {
			res := &Result{TxHash: r.TxHash.Hex(), Block: r.BlockNumber.Uint64(), GasUsed: r.GasUsed, AgentID: op.AgentID}
			for _, l := range r.Logs {
				switch {
				case op.Kind == OpRegister && l.Address == s.cfg.IdentityRegistry:
					if e, err := s.id.UnpackRegisteredEvent(l); err == nil && e.AgentId.IsUint64() {
						res.AgentID = e.AgentId.Uint64()
					}
				case op.Kind == OpFeedback && l.Address == s.cfg.ReputationRegistry:
					if e, err := s.rep.UnpackNewFeedbackEvent(l); err == nil {
						res.FeedbackIndex = e.FeedbackIndex
					}
				}
			}
			if s.cfg.Index != nil {
				if err := s.cfg.Index.WaitIndexed(ctx, res.Block); err != nil {
					return res, err
				}
			}
			return res, nil
		},
	}
}

func (s *Service) identity() *bind.BoundContract {
	return s.id.Instance(s.cfg.Chain, s.cfg.IdentityRegistry)
}

// authorized reads whether from may act for agent (owner, operator, approved); a missing
// agent is ErrInvalid.
func (s *Service) authorized(ctx context.Context, from common.Address, agent uint64) (bool, error) {
	ok, err := bind.Call(s.identity(), &bind.CallOpts{Context: ctx}, s.id.PackIsAuthorizedOrOwner(from, new(big.Int).SetUint64(agent)), s.id.UnpackIsAuthorizedOrOwner)
	if err != nil {
		if _, missing := contracts.Revert[contracts.IdentityRegistryERC721NonexistentToken](err); missing {
			return false, fmt.Errorf("%w: no agent %d in the identity registry", ErrInvalid, agent)
		}
		return false, fmt.Errorf("read the identity registry: %w", err)
	}
	return ok, nil
}

// call builds op's call, refusing what the registries would refuse.
func (s *Service) call(ctx context.Context, from common.Address, op Op) (common.Address, []byte, error) {
	agent := new(big.Int).SetUint64(op.AgentID)
	switch op.Kind {
	case OpRegister:
		if op.DID == "" {
			return s.cfg.IdentityRegistry, s.id.PackRegister1(op.AgentURI), nil
		}
		md := []contracts.IIdentityRegistryMetadataEntry{{MetadataKey: DIDKey, MetadataValue: []byte(op.DID)}}
		return s.cfg.IdentityRegistry, s.id.PackRegister0(op.AgentURI, md), nil
	case OpSetAgentURI, OpSetWallet:
		ok, err := s.authorized(ctx, from, op.AgentID)
		if err != nil {
			return common.Address{}, nil, err
		}
		if !ok {
			return common.Address{}, nil, fmt.Errorf("%w: %s may not act for agent %d", ErrNotAuthorized, from.Hex(), op.AgentID)
		}
		if op.Kind == OpSetAgentURI {
			return s.cfg.IdentityRegistry, s.id.PackSetAgentURI(agent, op.AgentURI), nil
		}
		if op.Wallet == (common.Address{}) || len(op.Signature) == 0 {
			return common.Address{}, nil, fmt.Errorf("%w: a wallet and its signature are needed", ErrInvalid)
		}
		return s.cfg.IdentityRegistry, s.id.PackSetAgentWallet(agent, op.Wallet, new(big.Int).SetUint64(op.Deadline), op.Signature), nil
	case OpFeedback:
		f := op.Feedback
		if err := CheckFeedback(f); err != nil {
			return common.Address{}, nil, err
		}
		self, err := s.authorized(ctx, from, op.AgentID)
		if err != nil {
			return common.Address{}, nil, err
		}
		if self {
			return common.Address{}, nil, fmt.Errorf("%w: %s is agent %d's owner or operator", ErrSelfFeedback, from.Hex(), op.AgentID)
		}
		return s.cfg.ReputationRegistry, s.rep.PackGiveFeedback(agent, f.Value, f.ValueDecimals, f.Tag1, f.Tag2, f.Endpoint, f.FeedbackURI, f.FeedbackHash), nil
	}
	return common.Address{}, nil, fmt.Errorf("%w: unknown op %q", ErrInvalid, op.Kind)
}

// CheckFeedback refuses a value the reputation registry refuses: more than 18 decimals, or
// |value| above 1e38.
func CheckFeedback(f FeedbackInput) error {
	if f.Value == nil {
		return fmt.Errorf("%w: no value", ErrInvalid)
	}
	if f.ValueDecimals > MaxValueDecimals {
		return fmt.Errorf("%w: %d decimals, at most %d", ErrInvalid, f.ValueDecimals, MaxValueDecimals)
	}
	if new(big.Int).Abs(f.Value).Cmp(MaxAbsValue) > 0 {
		return fmt.Errorf("%w: |value| %s is above 1e38", ErrInvalid, f.Value)
	}
	return nil
}

// WalletTypedData is the EIP-712 message a wallet signs to become agent's wallet: the
// registry's AgentWalletSet(agentId, newWallet, owner, deadline) in the domain
// ("ERC8004IdentityRegistry", "1", chainID, registry).
func WalletTypedData(chainID uint64, registry common.Address, agent uint64, wallet, owner common.Address, deadline uint64) apitypes.TypedData {
	return apitypes.TypedData{
		Types: apitypes.Types{
			"EIP712Domain": {
				{Name: "name", Type: "string"}, {Name: "version", Type: "string"},
				{Name: "chainId", Type: "uint256"}, {Name: "verifyingContract", Type: "address"},
			},
			"AgentWalletSet": {
				{Name: "agentId", Type: "uint256"}, {Name: "newWallet", Type: "address"},
				{Name: "owner", Type: "address"}, {Name: "deadline", Type: "uint256"},
			},
		},
		PrimaryType: "AgentWalletSet",
		Domain: apitypes.TypedDataDomain{
			Name: "ERC8004IdentityRegistry", Version: "1",
			ChainId:           (*gmath.HexOrDecimal256)(new(big.Int).SetUint64(chainID)),
			VerifyingContract: registry.Hex(),
		},
		Message: apitypes.TypedDataMessage{
			"agentId": (*gmath.HexOrDecimal256)(new(big.Int).SetUint64(agent)), "newWallet": wallet.Hex(),
			"owner": owner.Hex(), "deadline": (*gmath.HexOrDecimal256)(new(big.Int).SetUint64(deadline)),
		},
	}
}

// WalletSignature has wallet sign its consent to become agent's wallet under owner, valid
// until deadline (at most MaxWalletDeadline after the chain's time when it is sent).
func (s *Service) WalletSignature(ctx context.Context, wallet txn.TypedDataSigner, agent uint64, owner common.Address, deadline uint64) ([]byte, error) {
	return wallet.SignTypedData(ctx, WalletTypedData(s.cfg.ChainID, s.cfg.IdentityRegistry, agent, wallet.Address(), owner, deadline))
}

// AuditTag is tag1 of the feedback Surety publishes for an audit.
const AuditTag = "surety/audit"

// AuditDecimals is the valueDecimals of an audit's feedback: the score in [0, 1] as a
// percentage with two decimals (0.8 is 8000: 80.00).
const AuditDecimals = 2

// AuditValue scales an audit score in [0, 1] to its feedback value (AuditDecimals), rounding
// half away from zero.
func AuditValue(score float64) (*big.Int, error) {
	if math.IsNaN(score) || score < 0 || score > 1 {
		return nil, fmt.Errorf("%w: score %v is not in [0, 1]", ErrInvalid, score)
	}
	return big.NewInt(int64(math.Round(score * 10000))), nil
}

// AuditFeedback is the feedback that publishes a settled bounty's audit: value the score
// (AuditValue), tag1 "surety/audit", tag2 the bounty ("bounty:<id>"), feedbackURI the node's
// inclusion proof of the audit in its log (AuditProofURL), and feedbackHash the audit's leaf
// hash in that log. The leaf hash, not keccak256 of the proof document, is the hash: it
// names the audit itself, which anyone checks against the proof and the log's anchored root;
// the proof document at the URI is JSON whose bytes a node may format differently.
func AuditFeedback(score float64, bountyID uint64, proofURL string, leaf common.Hash) (FeedbackInput, error) {
	v, err := AuditValue(score)
	if err != nil {
		return FeedbackInput{}, err
	}
	return FeedbackInput{Value: v, ValueDecimals: AuditDecimals, Tag1: AuditTag, Tag2: fmt.Sprintf("bounty:%d", bountyID),
		FeedbackURI: proofURL, FeedbackHash: leaf}, nil
}

// AuditProofURL is the node's URL of the inclusion proof of leaf in its log at tree size.
func AuditProofURL(nodeURL string, leaf common.Hash, size uint64) string {
	return fmt.Sprintf("%s/v1/log/proof/inclusion?leaf=%x&size=%d", trimSlash(nodeURL), leaf[:], size)
}

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}

// decodeRevert turns the registries' errors into the package's sentinels.
func decodeRevert(err error) error {
	ce := contracts.DecodeRevert(err)
	if ce == nil {
		return err
	}
	switch ce.Value.(type) {
	case *contracts.IdentityRegistryNotAuthorized:
		return fmt.Errorf("%w: %s", ErrNotAuthorized, ce.Error())
	case *contracts.ReputationRegistrySelfFeedback:
		return fmt.Errorf("%w: %s", ErrSelfFeedback, ce.Error())
	case *contracts.IdentityRegistryInvalidWalletSignature, *contracts.IdentityRegistrySignatureExpired, *contracts.IdentityRegistryDeadlineTooFar:
		return fmt.Errorf("%w: %s", ErrBadSignature, ce.Error())
	case *contracts.ReputationRegistryValueDecimalsTooLarge, *contracts.ReputationRegistryValueOutOfRange,
		*contracts.IdentityRegistryZeroWallet, *contracts.IdentityRegistryReservedMetadataKey, *contracts.IdentityRegistryERC721NonexistentToken:
		return fmt.Errorf("%w: %s", ErrInvalid, ce.Error())
	}
	return err
}
