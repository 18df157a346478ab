package erc8004

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"
)

// RegistrationType is the "type" of an ERC-8004 registration file.
const RegistrationType = "https://eips.ethereum.org/EIPS/eip-8004#registration-v1"

// Limits on a registration file read from elsewhere (ParseRegistration).
const (
	// MaxRegistrationBytes bounds the file.
	MaxRegistrationBytes = 64 << 10
	// MaxServices and MaxRegistrations bound its lists.
	MaxServices      = 64
	MaxRegistrations = 64
)

// Service names of the registration file that Surety writes (the spec's examples).
const (
	ServiceA2A = "A2A"
	ServiceMCP = "MCP"
	ServiceDID = "DID"
	ServiceWeb = "web"
)

// Trust models of supportedTrust that a Surety agent has: reputation from settled work, and
// stake locked per claim (crypto-economic).
var SuretyTrust = []string{"reputation", "crypto-economic"}

// ErrBadRegistration reports a registration file that is not one.
var ErrBadRegistration = errors.New("erc8004: bad registration file")

// RegistrationService is one entry of a registration file's services: an endpoint by name
// (A2A, MCP, DID, web, ENS, email, OASF...), its version where the protocol has one.
type RegistrationService struct {
	Name     string   `json:"name"`
	Endpoint string   `json:"endpoint"`
	Version  string   `json:"version,omitempty"`
	Skills   []string `json:"skills,omitempty"`
	Domains  []string `json:"domains,omitempty"`
}

// RegistrationRef names the agent on one chain: its id in an identity registry written
// "eip155:<chainId>:<address>".
type RegistrationRef struct {
	AgentID       uint64 `json:"agentId"`
	AgentRegistry string `json:"agentRegistry"`
}

// Registration is an ERC-8004 registration file: what an agentURI resolves to.
type Registration struct {
	Type           string                `json:"type"`
	Name           string                `json:"name"`
	Description    string                `json:"description"`
	Image          string                `json:"image"`
	Services       []RegistrationService `json:"services"`
	X402Support    bool                  `json:"x402Support"`
	Active         bool                  `json:"active"`
	Registrations  []RegistrationRef     `json:"registrations"`
	SupportedTrust []string              `json:"supportedTrust,omitempty"`
}

// AgentRegistry writes an identity registry's global name, "eip155:<chainId>:<address>"
// (the address checksummed).
func AgentRegistry(chainID uint64, registry common.Address) string {
	return "eip155:" + strconv.FormatUint(chainID, 10) + ":" + registry.Hex()
}

// ParseAgentRegistry reads "eip155:<chainId>:<address>"; other namespaces are refused.
func ParseAgentRegistry(s string) (chainID uint64, registry common.Address, err error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 || parts[0] != "eip155" {
		return 0, common.Address{}, fmt.Errorf("%w: agentRegistry %q is not eip155:<chainId>:<address>", ErrBadRegistration, s)
	}
	if chainID, err = strconv.ParseUint(parts[1], 10, 64); err != nil || chainID == 0 || parts[1] != strconv.FormatUint(chainID, 10) {
		return 0, common.Address{}, fmt.Errorf("%w: agentRegistry %q: bad chain id", ErrBadRegistration, s)
	}
	if !common.IsHexAddress(parts[2]) || !strings.HasPrefix(parts[2], "0x") {
		return 0, common.Address{}, fmt.Errorf("%w: agentRegistry %q: bad address", ErrBadRegistration, s)
	}
	return chainID, common.HexToAddress(parts[2]), nil
}

// RegistrationInput is what BuildRegistration writes into a file.
type RegistrationInput struct {
	Name, Description, Image string
	// DID is the agent's DID; A2ACard the URL of its A2A Agent Card; MCP its MCP endpoint;
	// Web a web page (each left out when empty but the DID).
	DID, A2ACard, MCP, Web string
	// A2AVersion is the A2A protocol version of the card.
	A2AVersion string
	// ChainID and IdentityRegistry say where the agent ids in AgentIDs live.
	ChainID          uint64
	IdentityRegistry common.Address
	AgentIDs         []uint64
	// Active says the agent takes work now.
	Active bool
}

// BuildRegistration writes the registration file of a Surety agent: its services (the
// A2A card, the MCP endpoint, a web page, and the DID), its registrations in the identity
// registry, and the trust models Surety brings (reputation, crypto-economic).
func BuildRegistration(in RegistrationInput) Registration {
	r := Registration{Type: RegistrationType, Name: in.Name, Description: in.Description, Image: in.Image, Active: in.Active,
		Services: []RegistrationService{}, Registrations: []RegistrationRef{}, SupportedTrust: append([]string(nil), SuretyTrust...)}
	if in.Web != "" {
		r.Services = append(r.Services, RegistrationService{Name: ServiceWeb, Endpoint: in.Web})
	}
	if in.A2ACard != "" {
		r.Services = append(r.Services, RegistrationService{Name: ServiceA2A, Endpoint: in.A2ACard, Version: in.A2AVersion})
	}
	if in.MCP != "" {
		r.Services = append(r.Services, RegistrationService{Name: ServiceMCP, Endpoint: in.MCP})
	}
	r.Services = append(r.Services, RegistrationService{Name: ServiceDID, Endpoint: in.DID, Version: "v1"})
	for _, id := range in.AgentIDs {
		r.Registrations = append(r.Registrations, RegistrationRef{AgentID: id, AgentRegistry: AgentRegistry(in.ChainID, in.IdentityRegistry)})
	}
	return r
}

// DID is the endpoint of the file's first "DID" service ("" when none).
func (r *Registration) DID() string {
	for _, s := range r.Services {
		if s.Name == ServiceDID {
			return s.Endpoint
		}
	}
	return ""
}

// Names reports whether the file names agent id in the registry (chain, address).
func (r *Registration) Names(chainID uint64, registry common.Address, id uint64) bool {
	for _, ref := range r.Registrations {
		c, a, err := ParseAgentRegistry(ref.AgentRegistry)
		if err == nil && c == chainID && a == registry && ref.AgentID == id {
			return true
		}
	}
	return false
}

// ParseRegistration reads a registration file from elsewhere: at most MaxRegistrationBytes
// of JSON with the registration-v1 type, a name, at most MaxServices services each named,
// and at most MaxRegistrations registrations each with an eip155 agentRegistry. Fields the
// spec does not name are ignored (it lets files carry more).
func ParseRegistration(data []byte) (*Registration, error) {
	if len(data) > MaxRegistrationBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrBadRegistration, len(data), MaxRegistrationBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var r Registration
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRegistration, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data", ErrBadRegistration)
	}
	switch {
	case r.Type != RegistrationType:
		return nil, fmt.Errorf("%w: type %q, want %q", ErrBadRegistration, r.Type, RegistrationType)
	case strings.TrimSpace(r.Name) == "":
		return nil, fmt.Errorf("%w: no name", ErrBadRegistration)
	case len(r.Services) > MaxServices:
		return nil, fmt.Errorf("%w: %d services, at most %d", ErrBadRegistration, len(r.Services), MaxServices)
	case len(r.Registrations) > MaxRegistrations:
		return nil, fmt.Errorf("%w: %d registrations, at most %d", ErrBadRegistration, len(r.Registrations), MaxRegistrations)
	}
	for i, s := range r.Services {
		if s.Name == "" || s.Endpoint == "" {
			return nil, fmt.Errorf("%w: services[%d] needs a name and an endpoint", ErrBadRegistration, i)
		}
	}
	for _, ref := range r.Registrations {
		if _, _, err := ParseAgentRegistry(ref.AgentRegistry); err != nil {
			return nil, err
		}
	}
	return &r, nil
}

// RegistrationPath is the node's route of a DID's registration file.
const RegistrationPath = "/v1/erc8004/registration/"

// RegistrationURL is the agentURI Surety registers for did on a node at nodeURL: the node
// serves the file there, with the agent ids it indexed for the DID.
func RegistrationURL(nodeURL, did string) string {
	return strings.TrimSuffix(nodeURL, "/") + RegistrationPath + url.PathEscape(did)
}
