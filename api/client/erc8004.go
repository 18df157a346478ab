package client

import (
	"context"
	"strconv"

	"github.com/surety-ioa/surety/api/wire"
)

// ERC8004Agent is GET /v1/erc8004/agents/{id}: an agent of the ERC-8004 identity registry.
func (c *Client) ERC8004Agent(ctx context.Context, id uint64) (*wire.ERC8004Agent, error) {
	var out wire.ERC8004Agent
	return &out, c.get(ctx, "/v1/erc8004/agents/"+strconv.FormatUint(id, 10), &out)
}

// ERC8004DID is GET /v1/erc8004/dids/{did}: the DID's agent ids, and every one claiming it.
func (c *Client) ERC8004DID(ctx context.Context, did string) (*wire.ERC8004DID, error) {
	var out wire.ERC8004DID
	return &out, c.get(ctx, "/v1/erc8004/dids/"+esc(did), &out)
}

// ERC8004Feedback is GET /v1/erc8004/agents/{id}/feedback: the agent's feedback in chain
// order, revoked too when revoked is set.
func (c *Client) ERC8004Feedback(ctx context.Context, id uint64, revoked bool) (*wire.ERC8004FeedbackList, error) {
	path := "/v1/erc8004/agents/" + strconv.FormatUint(id, 10) + "/feedback"
	if revoked {
		path += "?revoked=true"
	}
	var out wire.ERC8004FeedbackList
	return &out, c.get(ctx, path, &out)
}
