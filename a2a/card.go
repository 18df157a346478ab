package a2a

// The A2A v1.0 AgentCard and the types it holds, in their JSON form (camelCase names, as
// the A2A JSON schema and @a2a-js/sdk write them). Fields the A2A SDKs treat as empty
// (an empty string, list or object, a false `required`) are left out when encoded, so the
// Go encoding of a card is already its normalized form.

// AgentCard is an A2A agent card. Required by A2A: Name, Description, SupportedInterfaces,
// Version, Capabilities, DefaultInputModes, DefaultOutputModes, Skills.
type AgentCard struct {
	Name                string               `json:"name,omitempty"`
	Description         string               `json:"description,omitempty"`
	SupportedInterfaces []AgentInterface     `json:"supportedInterfaces,omitempty"`
	Provider            *AgentProvider       `json:"provider,omitempty"`
	Version             string               `json:"version,omitempty"`
	DocumentationURL    string               `json:"documentationUrl,omitempty"`
	Capabilities        *AgentCapabilities   `json:"capabilities,omitempty"`
	DefaultInputModes   []string             `json:"defaultInputModes,omitempty"`
	DefaultOutputModes  []string             `json:"defaultOutputModes,omitempty"`
	Skills              []AgentSkill         `json:"skills,omitempty"`
	Signatures          []AgentCardSignature `json:"signatures,omitempty"`
	IconURL             string               `json:"iconUrl,omitempty"`
}

// AgentInterface is one URL the agent answers at and the protocol binding it speaks there
// (A2A's JSONRPC, GRPC, HTTP+JSON, or an open string such as MCP).
type AgentInterface struct {
	URL             string `json:"url,omitempty"`
	ProtocolBinding string `json:"protocolBinding,omitempty"`
	Tenant          string `json:"tenant,omitempty"`
	ProtocolVersion string `json:"protocolVersion,omitempty"`
}

// AgentProvider is the organization behind the agent.
type AgentProvider struct {
	URL          string `json:"url,omitempty"`
	Organization string `json:"organization,omitempty"`
}

// AgentCapabilities are the optional A2A features the agent supports and the extensions
// it speaks. A nil bool is "not said", which A2A reads as false, but which is signed
// differently from an explicit false.
type AgentCapabilities struct {
	Streaming         *bool            `json:"streaming,omitempty"`
	PushNotifications *bool            `json:"pushNotifications,omitempty"`
	Extensions        []AgentExtension `json:"extensions,omitempty"`
	ExtendedAgentCard *bool            `json:"extendedAgentCard,omitempty"`
}

// AgentExtension declares an extension of A2A the agent speaks, by URI, with its params.
type AgentExtension struct {
	URI         string         `json:"uri,omitempty"`
	Description string         `json:"description,omitempty"`
	Required    bool           `json:"required,omitempty"`
	Params      map[string]any `json:"params,omitempty"`
}

// AgentSkill is something the agent does well.
type AgentSkill struct {
	ID          string   `json:"id,omitempty"`
	Name        string   `json:"name,omitempty"`
	Description string   `json:"description,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	Examples    []string `json:"examples,omitempty"`
	InputModes  []string `json:"inputModes,omitempty"`
	OutputModes []string `json:"outputModes,omitempty"`
}

// AgentCardSignature is one JWS over the card (RFC 7515 flattened JSON serialization with
// a detached payload: the payload is the card's canonical form, see Canonical).
type AgentCardSignature struct {
	// Protected is the base64url protected header: alg, kid (a DID URL), typ "JOSE".
	Protected string `json:"protected,omitempty"`
	// Signature is the base64url signature over protected "." base64url(payload).
	Signature string         `json:"signature,omitempty"`
	Header    map[string]any `json:"header,omitempty"`
}

// Extension returns the card's extension of this URI, or nil.
func (c *AgentCard) Extension(uri string) *AgentExtension {
	if c.Capabilities == nil {
		return nil
	}
	for i := range c.Capabilities.Extensions {
		if c.Capabilities.Extensions[i].URI == uri {
			return &c.Capabilities.Extensions[i]
		}
	}
	return nil
}
