package registry

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/a2a"
	"github.com/surety-ioa/surety/identity"
)

// A card travels in one of two signed forms, and every path that takes one (the API, gossip,
// the DHT, anti-entropy) goes through Parse, so both meet the same checks, quotas and stake
// rules: Surety's own compact JWS (typ surety-card+jws), or an A2A v1.0 AgentCard (JSON)
// signed as A2A §8.4 says by the agent's DID key, carrying Surety's trust extension with the
// agent's DID, wallet, sequence number and time (a2a.AgentParams). The A2A form is stored
// and spread as its canonical JSON with the one signature that verified.

// defaultModes are the media types of a card made from a Surety card, which names none.
var defaultModes = []string{"text/plain", "application/json"}

// ToA2A maps a Surety card onto an A2A card, unsigned: capabilities become skills (the id
// is the capability; its tags are the capability and each of its parents, so
// translation/fr-en is tagged translation/fr-en and translation), endpoints become
// supportedInterfaces (a2a → JSONRPC, mcp → MCP, http → HTTP), the sequence number is the
// version, and DID, wallet, sequence and time go into the trust extension. FromA2A maps it
// back to the same card. A2A requires a description: a card without one gets a stock line.
func ToA2A(c Card) *a2a.AgentCard {
	out := &a2a.AgentCard{
		Name:               c.Name,
		Description:        c.Description,
		Version:            strconv.FormatUint(c.Seq, 10),
		DefaultInputModes:  defaultModes,
		DefaultOutputModes: defaultModes,
		Capabilities: &a2a.AgentCapabilities{Extensions: []a2a.AgentExtension{{
			URI:         a2a.TrustExtensionURI,
			Description: a2a.TrustExtensionDescription,
			Params: map[string]any{
				a2a.ParamDID: c.DID, a2a.ParamWallet: c.Wallet.Hex(),
				a2a.ParamSeq: float64(c.Seq), a2a.ParamUpdated: float64(c.Updated),
			},
		}}},
	}
	if out.Description == "" {
		out.Description = "An agent registered with Surety as " + c.DID
	}
	for _, e := range c.Endpoints {
		in := a2a.AgentInterface{URL: e.URL}
		switch e.Kind {
		case "a2a":
			in.ProtocolBinding, in.ProtocolVersion = a2a.BindingJSONRPC, a2a.ProtocolVersion
		case "mcp":
			in.ProtocolBinding = a2a.BindingMCP
		default:
			in.ProtocolBinding = a2a.BindingHTTP
		}
		out.SupportedInterfaces = append(out.SupportedInterfaces, in)
	}
	for _, cap := range c.Capabilities {
		out.Skills = append(out.Skills, a2a.AgentSkill{ID: cap, Name: cap, Description: "Capability " + cap, Tags: capabilityTags(cap)})
	}
	return out
}

// capabilityTags is the capability and each of its parents in the / hierarchy.
func capabilityTags(cap string) []string {
	tags := []string{cap}
	for i := strings.LastIndexByte(cap, '/'); i > 0; i = strings.LastIndexByte(cap[:i], '/') {
		tags = append(tags, cap[:i])
	}
	return tags
}

// FromA2A reads the Surety card an A2A card describes: DID, wallet, sequence and time from
// the trust extension (which may hold nothing else), name and description, a capability per
// skill id, an endpoint per supported interface (MCP → mcp, HTTP → http, any A2A binding →
// a2a). The card is not checked here (Parse does).
func FromA2A(ac *a2a.AgentCard) (Card, error) {
	var c Card
	ext := ac.Extension(a2a.TrustExtensionURI)
	if ext == nil {
		return c, cardErr("", ErrMalformed, "no Surety trust extension (%s) in capabilities.extensions", a2a.TrustExtensionURI)
	}
	// One entry only: a second one would ride unread into the cards a node serves and signs,
	// where a client could take its params for the node's.
	n := 0
	for _, e := range ac.Capabilities.Extensions {
		if e.URI == a2a.TrustExtensionURI {
			n++
		}
	}
	if n > 1 {
		return c, cardErr("", ErrMalformed, "the trust extension is listed %d times", n)
	}
	for k := range ext.Params {
		if !contains(a2a.AgentParams, k) {
			return c, cardErr("", ErrMalformed, "trust extension param %q: an agent signs only %s", truncateStr(k, 40), strings.Join(a2a.AgentParams, ", "))
		}
	}
	did, _ := ext.Params[a2a.ParamDID].(string)
	if did == "" {
		return c, cardErr("", ErrMalformed, "the trust extension names no did")
	}
	wallet, _ := ext.Params[a2a.ParamWallet].(string)
	if !common.IsHexAddress(wallet) {
		return c, cardErr(did, ErrMalformed, "the trust extension's wallet is not an address")
	}
	seq, ok := wholeNumber(ext.Params[a2a.ParamSeq])
	if !ok {
		return c, cardErr(did, ErrMalformed, "the trust extension's seq must be a whole number up to 2^53")
	}
	updated, ok := wholeNumber(ext.Params[a2a.ParamUpdated])
	if !ok {
		return c, cardErr(did, ErrMalformed, "the trust extension's updated must be a unix time")
	}
	c = Card{DID: did, Name: ac.Name, Description: ac.Description, Wallet: common.HexToAddress(wallet), Seq: seq, Updated: int64(updated), Capabilities: []string{}}
	for _, s := range ac.Skills {
		c.Capabilities = append(c.Capabilities, s.ID)
	}
	for _, in := range ac.SupportedInterfaces {
		kind := "a2a"
		switch in.ProtocolBinding {
		case a2a.BindingMCP:
			kind = "mcp"
		case a2a.BindingHTTP:
			kind = "http"
		}
		c.Endpoints = append(c.Endpoints, Endpoint{Kind: kind, URL: in.URL})
	}
	return c, nil
}

func wholeNumber(v any) (uint64, bool) {
	f, ok := v.(float64)
	if !ok || f < 0 || f > 1<<53 || f != math.Trunc(f) {
		return 0, false
	}
	return uint64(f), true
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// SignA2A maps the card onto A2A (ToA2A) and signs it with its agent's key as A2A §8.4 says
// (a JWS over the canonical card, kid = the key's DID URL, typ JOSE). raw is the card as it
// is posted and stored.
func SignA2A(c Card, k *identity.Key) (card *a2a.AgentCard, raw []byte, err error) {
	if c.DID != k.DID.String() {
		return nil, nil, cardErr(c.DID, ErrWrongDID, "the key is %s", k.DID)
	}
	card = ToA2A(c)
	if err := a2a.Sign(card, func(p []byte) (string, error) { return k.SignDocument(p, a2a.SignatureType) }); err != nil {
		return nil, nil, err
	}
	raw, err = a2a.Encode(card)
	return card, raw, err
}

// verifyCardJWS checks one A2A card signature (as a compact JWS with its payload put back):
// typ JOSE, kid a did:key URL, EdDSA or ES256K.
func verifyCardJWS(compact []byte) (string, error) {
	_, signer, err := identity.VerifyJWS(compact, a2a.SignatureType)
	return signer, err
}

// parseA2A is Parse for a card in A2A form.
func parseA2A(raw []byte, now time.Time) (*SignedCard, error) {
	ac, canon, err := a2a.Decode(raw)
	if err != nil {
		return nil, cardErr("", ErrMalformed, "%v", err)
	}
	if err := ac.Validate(); err != nil {
		return nil, cardErr("", ErrMalformed, "%v", err)
	}
	c, err := FromA2A(ac)
	if err != nil {
		return nil, err
	}
	// The card's other links are served in node-signed cards too: web URLs only.
	links := map[string]string{"documentationUrl": ac.DocumentationURL, "iconUrl": ac.IconURL}
	if ac.Provider != nil {
		links["provider.url"] = ac.Provider.URL
	}
	for name, link := range links {
		if u, err := url.Parse(link); link != "" && (err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || len(link) > 512) {
			return nil, cardErr(c.DID, ErrMalformed, "%s %q is not an http(s) URL", name, truncateStr(link, 80))
		}
	}
	i, err := a2a.VerifyBy(ac, canon, c.DID, maxCardSignatures, verifyCardJWS)
	if err != nil {
		var wrong *a2a.WrongSignerError
		switch {
		case errors.As(err, &wrong):
			return nil, cardErr(c.DID, ErrWrongDID, "signed by %s", wrong.Signer)
		case errors.Is(err, identity.ErrBadSignature):
			return nil, cardErr(c.DID, ErrForged, "signature does not verify")
		default:
			return nil, cardErr(c.DID, ErrMalformed, "%v", err)
		}
	}
	if err := c.validate(now); err != nil {
		return nil, err
	}
	ac.Signatures = ac.Signatures[i : i+1]
	stored, err := a2a.Encode(ac)
	if err != nil {
		return nil, cardErr(c.DID, ErrMalformed, "%v", err)
	}
	if len(stored) > MaxCardSize {
		return nil, cardErr(c.DID, ErrOversize, "%d bytes, at most %d", len(stored), MaxCardSize)
	}
	return &SignedCard{Card: c, JWS: string(stored)}, nil
}

// IsA2A says whether a stored signed card (SignedCard.JWS) is in A2A form.
func IsA2A(signed string) bool { return strings.HasPrefix(signed, "{") }

// A2A is the agent's card as A2A, without signatures: the card it signed in A2A form, or its
// Surety card mapped by ToA2A.
func (a *Agent) A2A() (*a2a.AgentCard, error) {
	if !IsA2A(a.JWS) {
		return ToA2A(a.Card), nil
	}
	ac, _, err := a2a.Decode([]byte(a.JWS))
	if err != nil {
		return nil, fmt.Errorf("registry: stored A2A card: %w", err)
	}
	ac.Signatures = nil
	return ac, nil
}
