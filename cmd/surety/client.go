package main

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/api/client"
)

// defaultWriteTimeout is how long the CLI waits for the node's answer to a write by
// default: several blocks and confirmations on a chain with 12 s blocks.
const defaultWriteTimeout = 5 * time.Minute

// newNodeClient is the typed API client for --node; a URL that is not one is a usage error.
func newNodeClient(raw string) (*client.Client, error) {
	c, err := client.New(raw)
	if errors.Is(err, client.ErrBadURL) {
		return nil, usagef("--node %q is not a URL like http://127.0.0.1:7746", raw)
	}
	return c, err
}

// dialNode connects to the node at nodeURL and reads its /v1/info (chain, contracts, DID).
func dialNode(ctx context.Context, nodeURL string) (*client.Client, api.Info, error) {
	c, err := newNodeClient(nodeURL)
	if err != nil {
		return nil, api.Info{}, err
	}
	info, err := c.Info(ctx)
	if err != nil {
		return nil, info, err
	}
	return c, info, nil
}

// recode copies v into out through its JSON: a node package's type into its api/wire shape or
// back, which have the same JSON (api's TestWireMirrorsDomainTypes holds them to it).
func recode(v, out any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}
