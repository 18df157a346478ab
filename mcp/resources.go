package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/surety-ioa/surety/identity"
)

// The resource URI templates: an agent's card and a bounty. A DID holds colons, so the
// agent's is a reserved expansion ({+did}).
const (
	agentPrefix  = "surety://agents/"
	bountyPrefix = "surety://bounties/"
)

// errBadURI reports a resource URI that names no Surety resource.
var errBadURI = errors.New("not a Surety resource URI (surety://agents/{did} or surety://bounties/{id})")

// resourceRef is what a resource URI names: an agent (DID) or a bounty (ID).
type resourceRef struct {
	DID string
	ID  uint64
}

// parseResourceURI reads a resource URI a client sent: surety://agents/{did} with a DID
// identity parses, or surety://bounties/{id} with a positive decimal id.
func parseResourceURI(uri string) (resourceRef, error) {
	if len(uri) > maxResourceURI {
		return resourceRef{}, fmt.Errorf("%w: longer than %d bytes", errBadURI, maxResourceURI)
	}
	switch {
	case strings.HasPrefix(uri, agentPrefix):
		did := strings.TrimPrefix(uri, agentPrefix)
		if _, err := identity.ParseDID(did); err != nil {
			return resourceRef{}, fmt.Errorf("%w: %v", errBadURI, err)
		}
		return resourceRef{DID: did}, nil
	case strings.HasPrefix(uri, bountyPrefix):
		raw := strings.TrimPrefix(uri, bountyPrefix)
		id, err := strconv.ParseUint(raw, 10, 64)
		if err != nil || id == 0 || raw != strconv.FormatUint(id, 10) {
			return resourceRef{}, fmt.Errorf("%w: bounty id %q is not a positive integer", errBadURI, raw)
		}
		return resourceRef{ID: id}, nil
	}
	return resourceRef{}, errBadURI
}

func (s *server) addResources(srv *sdk.Server) {
	srv.AddResourceTemplate(&sdk.ResourceTemplate{Name: "agent-card", Title: "Agent card", URITemplate: agentPrefix + "{+did}", MIMEType: "application/json",
		Description: "A registered agent's signed card (JSON: the card, its JWS, stake)."}, s.readResource)
	srv.AddResourceTemplate(&sdk.ResourceTemplate{Name: "bounty", Title: "Bounty", URITemplate: bountyPrefix + "{id}", MIMEType: "application/json",
		Description: "A bounty's terms, status, history and its task text (checked against the hash on chain)."}, s.readResource)
}

func (s *server) readResource(ctx context.Context, req *sdk.ReadResourceRequest) (res *sdk.ReadResourceResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("%w: resources/read: %v", errPanic, r)
		}
	}()
	ref, err := parseResourceURI(req.Params.URI)
	if err != nil {
		return nil, sdk.ResourceNotFoundError(req.Params.URI)
	}
	c := s.node(req.Extra)
	var v any
	if ref.DID != "" {
		v, err = c.Agent(ctx, ref.DID)
	} else {
		v, err = bountyView(ctx, c, ref.ID)
	}
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(data)}}}, nil
}
