package erc8004

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/surety-ioa/surety/contracts"
)

// Registry names which of the three registries emitted an event.
type Registry string

// The registries.
const (
	RegistryIdentity   Registry = "identity"
	RegistryReputation Registry = "reputation"
	RegistryValidation Registry = "validation"
)

// Event is one registry event as the index keeps it.
type Event struct {
	Registry Registry `json:"registry"`
	Name     string   `json:"name"`
	AgentID  uint64   `json:"agentId"`
	Block    uint64   `json:"block"`
	// Time is the block's time (unix seconds).
	Time     uint64          `json:"time"`
	TxHash   string          `json:"txHash"`
	LogIndex uint            `json:"logIndex"`
	Data     json.RawMessage `json:"data"`
}

// The JSON shapes of the events' fields (the indexed hashes of strings are left out: each
// event carries the string too).
type (
	transferData struct {
		From common.Address `json:"from"`
		To   common.Address `json:"to"`
	}
	registeredData struct {
		AgentURI string         `json:"agentURI"`
		Owner    common.Address `json:"owner"`
	}
	uriData struct {
		URI       string         `json:"newURI"`
		UpdatedBy common.Address `json:"updatedBy"`
	}
	metadataData struct {
		Key   string        `json:"metadataKey"`
		Value hexutil.Bytes `json:"metadataValue"`
	}
	feedbackData struct {
		Client        common.Address `json:"clientAddress"`
		FeedbackIndex uint64         `json:"feedbackIndex"`
		Value         string         `json:"value"`
		ValueDecimals uint8          `json:"valueDecimals"`
		Tag1          string         `json:"tag1"`
		Tag2          string         `json:"tag2"`
		Endpoint      string         `json:"endpoint"`
		FeedbackURI   string         `json:"feedbackURI"`
		FeedbackHash  common.Hash    `json:"feedbackHash"`
	}
	revokedData struct {
		Client        common.Address `json:"clientAddress"`
		FeedbackIndex uint64         `json:"feedbackIndex"`
	}
	responseData struct {
		Client        common.Address `json:"clientAddress"`
		FeedbackIndex uint64         `json:"feedbackIndex"`
		Responder     common.Address `json:"responder"`
		ResponseURI   string         `json:"responseURI"`
		ResponseHash  common.Hash    `json:"responseHash"`
	}
	validationRequestData struct {
		Validator   common.Address `json:"validatorAddress"`
		RequestURI  string         `json:"requestURI"`
		RequestHash common.Hash    `json:"requestHash"`
	}
	validationResponseData struct {
		Validator    common.Address `json:"validatorAddress"`
		RequestHash  common.Hash    `json:"requestHash"`
		Response     uint8          `json:"response"`
		ResponseURI  string         `json:"responseURI"`
		ResponseHash common.Hash    `json:"responseHash"`
		Tag          string         `json:"tag"`
	}
)

// AgentWalletKey is the metadata key the identity registry reserves for the agent's wallet.
const AgentWalletKey = "agentWallet"

// decoder turns the three registries' logs into Events.
type decoder struct {
	addrs      map[common.Address]Registry
	identity   *contracts.IdentityRegistry
	reputation *contracts.ReputationRegistry
	validation *contracts.ValidationRegistry
	topics     map[common.Hash]string
}

func newDecoder(identity, reputation, validation common.Address) (*decoder, error) {
	d := &decoder{
		addrs:    map[common.Address]Registry{identity: RegistryIdentity, reputation: RegistryReputation, validation: RegistryValidation},
		identity: contracts.NewIdentityRegistry(), reputation: contracts.NewReputationRegistry(), validation: contracts.NewValidationRegistry(),
		topics: map[common.Hash]string{},
	}
	for _, meta := range []*bind.MetaData{&contracts.IdentityRegistryMetaData, &contracts.ReputationRegistryMetaData, &contracts.ValidationRegistryMetaData} {
		parsed, err := meta.ParseABI()
		if err != nil {
			return nil, err
		}
		for _, ev := range parsed.Events {
			d.topics[ev.ID] = ev.Name
		}
	}
	return d, nil
}

// decode turns one log into an Event; ok is false for logs the index does not keep (another
// contract's, approvals, ERC-4906 notices) and for agent ids past int64 (no registry that
// counts ids up from 0 gets there).
func (d *decoder) decode(l *types.Log) (ev Event, ok bool, err error) {
	reg, known := d.addrs[l.Address]
	if !known || len(l.Topics) == 0 {
		return ev, false, nil
	}
	name, known := d.topics[l.Topics[0]]
	if !known {
		return ev, false, nil
	}
	var agent *big.Int
	var data any
	switch {
	case reg == RegistryIdentity && name == "Transfer":
		e, err := d.identity.UnpackTransferEvent(l)
		if err != nil {
			return ev, false, fmt.Errorf("decode %s: %w", name, err)
		}
		agent, data = e.TokenId, transferData{From: e.From, To: e.To}
	case reg == RegistryIdentity && name == "Registered":
		e, err := d.identity.UnpackRegisteredEvent(l)
		if err != nil {
			return ev, false, fmt.Errorf("decode %s: %w", name, err)
		}
		agent, data = e.AgentId, registeredData{AgentURI: e.AgentURI, Owner: e.Owner}
	case reg == RegistryIdentity && name == "URIUpdated":
		e, err := d.identity.UnpackURIUpdatedEvent(l)
		if err != nil {
			return ev, false, fmt.Errorf("decode %s: %w", name, err)
		}
		agent, data = e.AgentId, uriData{URI: e.NewURI, UpdatedBy: e.UpdatedBy}
	case reg == RegistryIdentity && name == "MetadataSet":
		e, err := d.identity.UnpackMetadataSetEvent(l)
		if err != nil {
			return ev, false, fmt.Errorf("decode %s: %w", name, err)
		}
		agent, data = e.AgentId, metadataData{Key: e.MetadataKey, Value: e.MetadataValue}
	case reg == RegistryReputation && name == "NewFeedback":
		e, err := d.reputation.UnpackNewFeedbackEvent(l)
		if err != nil {
			return ev, false, fmt.Errorf("decode %s: %w", name, err)
		}
		agent, data = e.AgentId, feedbackData{Client: e.ClientAddress, FeedbackIndex: e.FeedbackIndex, Value: e.Value.String(),
			ValueDecimals: e.ValueDecimals, Tag1: e.Tag1, Tag2: e.Tag2, Endpoint: e.Endpoint, FeedbackURI: e.FeedbackURI, FeedbackHash: e.FeedbackHash}
	case reg == RegistryReputation && name == "FeedbackRevoked":
		e, err := d.reputation.UnpackFeedbackRevokedEvent(l)
		if err != nil {
			return ev, false, fmt.Errorf("decode %s: %w", name, err)
		}
		agent, data = e.AgentId, revokedData{Client: e.ClientAddress, FeedbackIndex: e.FeedbackIndex}
	case reg == RegistryReputation && name == "ResponseAppended":
		e, err := d.reputation.UnpackResponseAppendedEvent(l)
		if err != nil {
			return ev, false, fmt.Errorf("decode %s: %w", name, err)
		}
		agent, data = e.AgentId, responseData{Client: e.ClientAddress, FeedbackIndex: e.FeedbackIndex, Responder: e.Responder,
			ResponseURI: e.ResponseURI, ResponseHash: e.ResponseHash}
	case reg == RegistryValidation && name == "ValidationRequest":
		e, err := d.validation.UnpackValidationRequestEvent(l)
		if err != nil {
			return ev, false, fmt.Errorf("decode %s: %w", name, err)
		}
		agent, data = e.AgentId, validationRequestData{Validator: e.ValidatorAddress, RequestURI: e.RequestURI, RequestHash: e.RequestHash}
	case reg == RegistryValidation && name == "ValidationResponse":
		e, err := d.validation.UnpackValidationResponseEvent(l)
		if err != nil {
			return ev, false, fmt.Errorf("decode %s: %w", name, err)
		}
		agent, data = e.AgentId, validationResponseData{Validator: e.ValidatorAddress, RequestHash: e.RequestHash, Response: e.Response,
			ResponseURI: e.ResponseURI, ResponseHash: e.ResponseHash, Tag: e.Tag}
	default:
		return ev, false, nil
	}
	if agent == nil || !agent.IsUint64() || agent.Uint64() > math.MaxInt64 {
		return ev, false, nil
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return ev, false, err
	}
	return Event{Registry: reg, Name: name, AgentID: agent.Uint64(), Block: l.BlockNumber, TxHash: l.TxHash.Hex(), LogIndex: l.Index, Data: raw}, true, nil
}
