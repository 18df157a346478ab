package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/surety-ioa/surety/identity"
)

// GET /1.0/identifiers/{did} follows the HTTP(S) binding of W3C DID Resolution v1 (Candidate
// Recommendation Snapshot of 23 July 2026), which the DIF Universal Resolver also serves.

// Media types of DID resolution.
const (
	// contentResolution is the resolution result: document and both metadata.
	contentResolution = "application/did-resolution"
	// contentDID is a DID document (DID v1.1); contentDIDLD and contentDIDJSON are the
	// JSON-LD and JSON representations of DID v1.0.
	contentDID     = "application/did"
	contentDIDLD   = "application/did+ld+json"
	contentDIDJSON = "application/did+json"
	contentLDJSON  = "application/ld+json"
	// resolutionProfile on application/ld+json asked for the resolution result before
	// application/did-resolution existed (the Universal Resolver still takes it).
	resolutionProfile = "https://w3id.org/did-resolution"
	resolutionContext = "https://w3id.org/did-resolution/v1"
)

// representation is one answer the resolver can give.
type representation struct {
	mediaType string // type/subtype, lower case
	profile   string // its profile parameter, if it has one
	result    bool   // the resolution result, not the bare document
	context   bool   // the document keeps its @context (JSON-LD, and DID v1.1)
}

// representations are the answers the resolver gives, in its order of preference between
// Accept values of the same weight: the resolution result first, so that no Accept or */*
// gets it, as from the Universal Resolver.
var representations = []representation{
	{mediaType: contentResolution, result: true},
	{mediaType: contentLDJSON, profile: resolutionProfile, result: true},
	{mediaType: contentDID, context: true},
	{mediaType: contentDIDLD, context: true},
	{mediaType: contentDIDJSON},
	{mediaType: contentLDJSON, context: true},
}

// contentType is the Content-Type of an answer in r.
func (r representation) contentType() string {
	if r.profile != "" {
		return r.mediaType + `;profile="` + r.profile + `"`
	}
	return r.mediaType
}

// resolutionResult is the application/did-resolution body. An error has no document and
// empty document metadata.
type resolutionResult struct {
	Context            string                    `json:"@context"`
	DIDDocument        *identity.Document        `json:"didDocument"`
	ResolutionMetadata resolutionMetadata        `json:"didResolutionMetadata"`
	DocumentMetadata   identity.DocumentMetadata `json:"didDocumentMetadata"`
}

// resolutionMetadata is didResolutionMetadata: the media type of the document in the
// result, or the error (an RFC 9457 problem whose type is a W3C DID error type).
type resolutionMetadata struct {
	ContentType string   `json:"contentType,omitempty"`
	Error       *Problem `json:"error,omitempty"`
}

// resolutionFailure is an error of the resolver: the mapper answers it as a resolution
// result whose didResolutionMetadata.error is the problem, not as a bare problem.
type resolutionFailure struct{ err error }

func (f *resolutionFailure) Error() string { return "resolve DID: " + f.err.Error() }
func (f *resolutionFailure) Unwrap() error { return f.err }

// resolveDID checks, in the order of the spec's algorithm, the DID, the representation
// asked for and the options, then resolves.
func (s *Server) resolveDID(c echo.Context) error {
	did, err := url.PathUnescape(c.Param("did"))
	if err != nil {
		return &resolutionFailure{withDetail(identity.ErrInvalidDID, "the DID is not percent-encoded correctly")}
	}
	if _, err := identity.ParseDID(did); err != nil {
		return &resolutionFailure{err}
	}
	repr, ok := negotiate(c.Request().Header.Get(echo.HeaderAccept))
	if !ok {
		types := make([]string, len(representations))
		for i, r := range representations {
			types[i] = r.contentType()
		}
		return &resolutionFailure{withDetail(errRepresentationNotSupported, "Accept one of %s", strings.Join(types, ", "))}
	}
	format, err := resolutionOptions(c.QueryParams())
	if err != nil {
		return &resolutionFailure{err}
	}
	res, err := s.cfg.Identity.Resolve(c.Request().Context(), did, format)
	if errors.Is(err, identity.ErrDeactivated) {
		// The spec's algorithm returns no document for a deactivated DID, and says so in
		// its document metadata, answered with 410 (whatever representation was asked:
		// only the result can say it).
		meta := identity.DocumentMetadata{Deactivated: true}
		if res != nil {
			meta = res.Metadata
		}
		return c.Blob(http.StatusGone, contentResolution, mustJSON(resolutionResult{Context: resolutionContext, DocumentMetadata: meta}))
	}
	if err != nil {
		return &resolutionFailure{err}
	}
	if !repr.result {
		return c.Blob(http.StatusOK, repr.contentType(), documentIn(res.Document, repr))
	}
	return c.Blob(http.StatusOK, repr.contentType(), mustJSON(resolutionResult{Context: resolutionContext, DIDDocument: res.Document,
		ResolutionMetadata: resolutionMetadata{ContentType: contentDID}, DocumentMetadata: res.Metadata}))
}

// documentIn writes doc in the representation r: application/did+json, plain JSON, has no
// @context (a JSON-LD entry that representation does not produce).
func documentIn(doc *identity.Document, r representation) []byte {
	b := mustJSON(doc)
	if r.context {
		return b
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err) // we just wrote it
	}
	delete(m, "@context")
	return mustJSON(m)
}

// resolutionOptions reads the resolution options of the query: format (a Surety option:
// how verification methods are written), expandRelativeUrls (a no-op: documents hold
// absolute URLs only), and versionId and versionTime, which this node does not support (it
// resolves the current document only).
func resolutionOptions(q url.Values) (identity.DocFormat, error) {
	for _, name := range []string{"versionId", "versionTime"} {
		if q.Has(name) {
			return "", withDetail(errFeatureNotSupported, "%s: this node resolves only the current DID document", name)
		}
	}
	if q.Has("expandRelativeUrls") {
		if _, err := strconv.ParseBool(q.Get("expandRelativeUrls")); err != nil {
			return "", withDetail(errInvalidOptions, "expandRelativeUrls must be true or false")
		}
	}
	switch strings.ToLower(q.Get("format")) {
	case "", "multikey":
		return identity.FormatMultikey, nil
	case "jwk", "jsonwebkey2020":
		return identity.FormatJWK, nil
	case "legacy":
		return identity.FormatLegacy, nil
	}
	return "", withDetail(errInvalidOptions, "format must be multikey, jwk or legacy")
}

// negotiate picks the representation to answer an Accept header with (RFC 9110, section
// 12.5.1): the one of highest weight, each weighed by the most specific media range that
// matches it, the resolver's preference between equals. No Accept means the first; false
// means none is acceptable.
func negotiate(accept string) (representation, bool) {
	if strings.TrimSpace(accept) == "" {
		return representations[0], true
	}
	ranges := parseAccept(accept)
	best, bestQ := -1, 0.0
	for i, r := range representations {
		q, specificity := 0.0, -1
		for _, mr := range ranges {
			if s := mr.match(r); s > specificity {
				q, specificity = mr.q, s
			}
		}
		if q > bestQ {
			best, bestQ = i, q
		}
	}
	if best < 0 {
		return representation{}, false
	}
	return representations[best], true
}

// mediaRange is one element of an Accept header.
type mediaRange struct {
	typ, subtype string // lower case; "*" for a wildcard
	profile      string
	q            float64
}

// match says how specifically m matches r: -1 not at all, 0 for */*, 1 for type/*, 2 for
// the media type, 3 for the media type and its profile. A media type matches only the
// representation with the same profile, or none; other parameters (charset) are not
// weighed.
func (m mediaRange) match(r representation) int {
	typ, subtype, _ := strings.Cut(r.mediaType, "/")
	switch {
	case m.typ == "*" && m.subtype == "*":
		return 0
	case m.typ == typ && m.subtype == "*":
		return 1
	case m.typ != typ || m.subtype != subtype || m.profile != r.profile:
		return -1
	case m.profile != "":
		return 3
	}
	return 2
}

// parseAccept reads an Accept header's media ranges, leaving out those that do not parse.
func parseAccept(accept string) []mediaRange {
	var out []mediaRange
	for _, part := range strings.Split(accept, ",") {
		params := strings.Split(part, ";")
		typ, subtype, ok := strings.Cut(strings.ToLower(strings.TrimSpace(params[0])), "/")
		if !ok || !isToken(typ) || !isToken(subtype) || (typ == "*" && subtype != "*") {
			continue
		}
		m := mediaRange{typ: typ, subtype: subtype, q: 1}
		for _, p := range params[1:] {
			k, v, _ := strings.Cut(p, "=")
			k, v = strings.ToLower(strings.TrimSpace(k)), strings.Trim(strings.TrimSpace(v), `"`)
			switch k {
			case "q":
				q, err := strconv.ParseFloat(v, 64)
				if err != nil || q < 0 || q > 1 {
					ok = false
				}
				m.q = q
			case "profile":
				m.profile = v
			}
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

// isToken says whether s is an RFC 9110 token (the characters of a media type's names).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}
