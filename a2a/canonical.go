package a2a

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/surety-ioa/surety/internal/jcs"
)

// Errors of decoding and checking cards.
var (
	// ErrMalformed: not an A2A card: not JSON, a field of the wrong type, a required field
	// missing, or a part this package cannot sign the way A2A SDKs do.
	ErrMalformed = errors.New("a2a: malformed agent card")
	// ErrUnsigned: no signature verifies for the signer asked for.
	ErrUnsigned = errors.New("a2a: no valid signature")
)

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// The A2A v1.0 schema as @a2a-js/sdk 1.3.0 reads a card before it signs or verifies
// (AgentCard.fromJSON → toJSON, then every empty string, list and object dropped): only
// these members count, under exactly these names. Anything else in a card is outside what
// a signature covers, so Normalize drops it, and the node never serves it.
type kind int

const (
	kString kind = iota
	kBool
	kStrings
	kObject  // a free JSON object (extension params, unprotected header)
	kNested  // one object of a schema
	kNesteds // a list of objects of a schema
	kRefused // a member this package does not sign (security schemes): refused
)

type member struct {
	kind   kind
	schema map[string]member
}

var (
	interfaceSchema = map[string]member{"url": {kind: kString}, "protocolBinding": {kind: kString}, "tenant": {kind: kString}, "protocolVersion": {kind: kString}}
	providerSchema  = map[string]member{"url": {kind: kString}, "organization": {kind: kString}}
	extensionSchema = map[string]member{"uri": {kind: kString}, "description": {kind: kString}, "required": {kind: kBool}, "params": {kind: kObject}}
	capsSchema      = map[string]member{"streaming": {kind: kBool}, "pushNotifications": {kind: kBool}, "extensions": {kind: kNesteds, schema: extensionSchema}, "extendedAgentCard": {kind: kBool}}
	skillSchema     = map[string]member{"id": {kind: kString}, "name": {kind: kString}, "description": {kind: kString}, "tags": {kind: kStrings}, "examples": {kind: kStrings},
		"inputModes": {kind: kStrings}, "outputModes": {kind: kStrings}, "securityRequirements": {kind: kRefused}, "security_requirements": {kind: kRefused}}
	signatureSchema = map[string]member{"protected": {kind: kString}, "signature": {kind: kString}, "header": {kind: kObject}}
	cardSchema      = map[string]member{
		"name": {kind: kString}, "description": {kind: kString}, "supportedInterfaces": {kind: kNesteds, schema: interfaceSchema},
		"provider": {kind: kNested, schema: providerSchema}, "version": {kind: kString}, "documentationUrl": {kind: kString},
		"capabilities": {kind: kNested, schema: capsSchema}, "defaultInputModes": {kind: kStrings}, "defaultOutputModes": {kind: kStrings},
		"skills": {kind: kNesteds, schema: skillSchema}, "signatures": {kind: kNesteds, schema: signatureSchema}, "iconUrl": {kind: kString},
		"securitySchemes": {kind: kRefused}, "securityRequirements": {kind: kRefused}, "security_schemes": {kind: kRefused}, "security_requirements": {kind: kRefused},
		// The SDK also reads these snake_case spellings; a card that uses them would be
		// signed over members this package does not read, so it is refused, not misread.
		"supported_interfaces": {kind: kRefused}, "documentation_url": {kind: kRefused}, "default_input_modes": {kind: kRefused},
		"default_output_modes": {kind: kRefused}, "icon_url": {kind: kRefused},
	}
)

func init() {
	capsSchema["push_notifications"] = member{kind: kRefused}
	capsSchema["extended_agent_card"] = member{kind: kRefused}
	interfaceSchema["protocol_binding"] = member{kind: kRefused}
	interfaceSchema["protocol_version"] = member{kind: kRefused}
	skillSchema["input_modes"] = member{kind: kRefused}
	skillSchema["output_modes"] = member{kind: kRefused}
}

// normalize keeps the schema's members of obj, checks their types, and drops what the SDK
// drops: null, empty strings, empty lists and objects (recursively, free objects too).
func normalize(obj map[string]any, schema map[string]member, path string) (map[string]any, error) {
	out := map[string]any{}
	for name, v := range obj {
		m, ok := schema[name]
		if !ok || v == nil {
			continue
		}
		at := path + name
		switch m.kind {
		case kRefused:
			return nil, malformed("%s is not supported in a card Surety signs or verifies", at)
		case kString:
			s, ok := v.(string)
			if !ok {
				return nil, malformed("%s must be a string", at)
			}
			if s != "" {
				out[name] = s
			}
		case kBool:
			b, ok := v.(bool)
			if !ok {
				return nil, malformed("%s must be true or false", at)
			}
			if name == "required" && !b {
				continue // the SDK writes a false `required` as absent
			}
			out[name] = b
		case kStrings:
			list, ok := v.([]any)
			if !ok {
				return nil, malformed("%s must be a list of strings", at)
			}
			var kept []any
			for _, e := range list {
				s, ok := e.(string)
				if !ok {
					return nil, malformed("%s must be a list of strings", at)
				}
				if s != "" {
					kept = append(kept, s)
				}
			}
			if len(kept) > 0 {
				out[name] = kept
			}
		case kObject:
			o, ok := v.(map[string]any)
			if !ok {
				return nil, malformed("%s must be an object", at)
			}
			if c := clean(o); c != nil {
				out[name] = c
			}
		case kNested:
			o, ok := v.(map[string]any)
			if !ok {
				return nil, malformed("%s must be an object", at)
			}
			n, err := normalize(o, m.schema, at+".")
			if err != nil {
				return nil, err
			}
			if len(n) > 0 {
				out[name] = n
			}
		case kNesteds:
			list, ok := v.([]any)
			if !ok {
				return nil, malformed("%s must be a list", at)
			}
			var kept []any
			for i, e := range list {
				o, ok := e.(map[string]any)
				if !ok {
					return nil, malformed("%s[%d] must be an object", at, i)
				}
				n, err := normalize(o, m.schema, fmt.Sprintf("%s[%d].", at, i))
				if err != nil {
					return nil, err
				}
				if len(n) > 0 {
					kept = append(kept, n)
				}
			}
			if len(kept) > 0 {
				out[name] = kept
			}
		}
	}
	return out, nil
}

// clean drops null, "", and empty lists and objects, recursively, as the SDK's cleanEmpty
// does; it returns nil for a value that is itself empty.
func clean(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		if x == "" {
			return nil
		}
		return x
	case []any:
		var out []any
		for _, e := range x {
			if c := clean(e); c != nil {
				out = append(out, c)
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if c := clean(e); c != nil {
				out[k] = c
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	default:
		return x
	}
}

// Decode reads a card as it travels (JSON), keeps what A2A's schema holds (see above), and
// returns it with its canonical form (what its signatures sign). It refuses what is not
// I-JSON (jcs.Parse), a member of the wrong type, and the parts it cannot sign as the SDKs
// do (security schemes and requirements, snake_case spellings).
func Decode(raw []byte) (*AgentCard, []byte, error) {
	v, err := jcs.Parse(raw)
	if err != nil {
		return nil, nil, malformed("%v", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, nil, malformed("a card is a JSON object")
	}
	n, err := normalize(obj, cardSchema, "")
	if err != nil {
		return nil, nil, err
	}
	b, err := json.Marshal(n)
	if err != nil {
		return nil, nil, malformed("%v", err)
	}
	var c AgentCard
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, nil, malformed("%v", err)
	}
	delete(n, "signatures")
	canon, err := jcs.Append(nil, n)
	if err != nil {
		return nil, nil, malformed("%v", err)
	}
	return &c, canon, nil
}

// Canonical is what a signature over the card signs: the card without its signatures,
// normalized and written in RFC 8785 form.
func Canonical(c *AgentCard) ([]byte, error) {
	raw, err := json.Marshal(c)
	if err != nil {
		return nil, malformed("%v", err)
	}
	_, canon, err := Decode(raw)
	return canon, err
}

// Encode writes the card with its signatures in canonical JSON: the one byte form Surety
// stores, gossips and serves, so two copies of one card are the same bytes.
func Encode(c *AgentCard) ([]byte, error) {
	raw, err := json.Marshal(c)
	if err != nil {
		return nil, malformed("%v", err)
	}
	return jcs.Transform(raw)
}

// Validate checks the members A2A v1.0 requires: name, description, version, at least one
// supported interface (each with url and protocolBinding), capabilities, default input and
// output modes, and skills each with id, name, description and tags.
func (c *AgentCard) Validate() error {
	switch {
	case c.Name == "":
		return malformed("name is required")
	case c.Description == "":
		return malformed("description is required")
	case c.Version == "":
		return malformed("version is required")
	case len(c.SupportedInterfaces) == 0:
		return malformed("supportedInterfaces is required")
	case c.Capabilities == nil:
		return malformed("capabilities is required")
	case len(c.DefaultInputModes) == 0:
		return malformed("defaultInputModes is required")
	case len(c.DefaultOutputModes) == 0:
		return malformed("defaultOutputModes is required")
	}
	for i, in := range c.SupportedInterfaces {
		if in.URL == "" || in.ProtocolBinding == "" {
			return malformed("supportedInterfaces[%d] needs url and protocolBinding", i)
		}
	}
	for i, s := range c.Skills {
		if s.ID == "" || s.Name == "" || s.Description == "" || len(s.Tags) == 0 {
			return malformed("skills[%d] needs id, name, description and tags", i)
		}
	}
	return nil
}

// Header is a signature's protected header, as far as Surety reads it.
type Header struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
	Typ string `json:"typ"`
	Jku string `json:"jku,omitempty"`
}

// SignatureType is the typ of the protected header Surety signs cards with, as A2A's SDKs
// recommend.
const SignatureType = "JOSE"

// ProtectedHeader decodes a signature's protected header.
func (s AgentCardSignature) ProtectedHeader() (Header, error) {
	var h Header
	b, err := base64.RawURLEncoding.Strict().DecodeString(s.Protected)
	if err != nil {
		return h, malformed("signature's protected header is not base64url")
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return h, malformed("signature's protected header is not JSON")
	}
	return h, nil
}

// Compact is the signature as a compact JWS with the card's canonical form as its payload
// (RFC 7515 Appendix F, the detached payload put back), for a verifier of compact JWS.
func (s AgentCardSignature) Compact(canonical []byte) []byte {
	return []byte(s.Protected + "." + base64.RawURLEncoding.EncodeToString(canonical) + "." + s.Signature)
}

// SignFunc signs a payload as a compact JWS with protected header {alg, kid, typ} (the
// node's identity.Key.SignDocument(payload, SignatureType)).
type SignFunc func(payload []byte) (string, error)

// Sign adds a signature by sign over the card's canonical form.
func Sign(c *AgentCard, sign SignFunc) error {
	canon, err := Canonical(c)
	if err != nil {
		return err
	}
	compact, err := sign(canon)
	if err != nil {
		return err
	}
	parts := strings.Split(compact, ".")
	if len(parts) != 3 || parts[1] != base64.RawURLEncoding.EncodeToString(canon) {
		return fmt.Errorf("a2a: the signer did not sign the card's canonical form")
	}
	c.Signatures = append(c.Signatures, AgentCardSignature{Protected: parts[0], Signature: parts[2]})
	return nil
}

// VerifyFunc verifies a compact JWS and returns the DID that signed it (identity.VerifyJWS
// with typ SignatureType on the node side).
type VerifyFunc func(compact []byte) (signer string, err error)

// VerifyBy checks that one of the card's signatures (at most max are tried) is by signer:
// it verifies over canonical (what Decode returned) with verify, and returns the index of
// the first that is. It returns ErrUnsigned when none is, wrapping the last reason.
func VerifyBy(c *AgentCard, canonical []byte, signer string, max int, verify VerifyFunc) (int, error) {
	if len(c.Signatures) == 0 {
		return -1, fmt.Errorf("%w: the card carries no signature", ErrUnsigned)
	}
	if len(c.Signatures) > max {
		return -1, malformed("more than %d signatures", max)
	}
	last := fmt.Errorf("no signature by %s", signer)
	for i, s := range c.Signatures {
		got, err := verify(s.Compact(canonical))
		switch {
		case err != nil:
			last = err
		case got != signer:
			last = &WrongSignerError{Signer: got, Want: signer}
		default:
			return i, nil
		}
	}
	return -1, fmt.Errorf("%w: %w", ErrUnsigned, last)
}

// WrongSignerError: a signature verifies, but by another DID than the one asked for.
type WrongSignerError struct{ Signer, Want string }

// Error reads like "signed by did:key:…, not did:key:…".
func (e *WrongSignerError) Error() string {
	return fmt.Sprintf("signed by %s, not %s", e.Signer, e.Want)
}
